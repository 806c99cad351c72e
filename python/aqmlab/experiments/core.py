"""What an experiment is, how its result is compared with the paper, and where it is written.

An :class:`Experiment` turns one figure of a seed into runs: ``measure`` builds its
scenarios and runs them (through a :class:`~aqmlab.sweeps.Runner`, so every run lands
in the result store and a second reproduction reads them back), ``findings`` reduces
the table to the figures the paper states, and :class:`Reference` sets each beside the
paper's value with a tolerance. ``plot`` draws the figure.

Output of ``aqmlab reproduce ID`` (``<out>/<fidelity>/<id>/``)::

    experiment.json   id, title, source, fidelity and its parameters, runs, wall time
    table.parquet     the experiment's table (one row per point of the figure)
    comparison.json   the paper's values beside ours, deviation, within tolerance
    figure.png        the figure
    scenario.toml     one of its scenarios, as a starting point for your own
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

import polars as pl

Compare = Literal["abs", "factor", "at_least", "at_most"]


@dataclass(frozen=True)
class Reference:
    """One published value (or claim made numeric) and how ours is judged against it.

    ``compare``:
      * ``"abs"``: |ours - paper| <= tolerance;
      * ``"factor"``: ours / paper within [1/tolerance, tolerance];
      * ``"at_least"`` / ``"at_most"``: the paper states a bound: ours >= paper - tolerance
        (or <= paper + tolerance).
    """

    key: str  #: the name of the finding it is compared with
    quantity: str  #: what is compared, in words
    paper: float
    compare: Compare
    tolerance: float
    source: str  #: where the paper says it (figure, section, digest reference)
    paper_text: str = ""  #: how the paper states it, when it is a claim rather than a number
    note: str = ""  #: why a difference is expected, when one is
    acceptance: str = ""  #: the digest's acceptance references it checks, e.g. "R7" or "R15, R22" (digest 003 section 6)


@dataclass
class Comparison:
    key: str
    quantity: str
    paper: float
    paper_text: str
    ours: float | None
    compare: str
    tolerance: float
    deviation: float | None  #: ours - paper ("factor": ours / paper)
    ok: bool
    source: str
    note: str
    acceptance: str = ""

    @staticmethod
    def of(ref: Reference, ours: float | None) -> "Comparison":
        if ours is None or (isinstance(ours, float) and math.isnan(ours)):
            dev, ok = None, False
        elif ref.compare == "factor":
            dev = ours / ref.paper if ref.paper else math.inf
            ok = 1.0 / ref.tolerance <= dev <= ref.tolerance
        else:
            dev = ours - ref.paper
            ok = {
                "abs": abs(dev) <= ref.tolerance,
                "at_least": dev >= -ref.tolerance,
                "at_most": dev <= ref.tolerance,
            }[ref.compare]
        return Comparison(
            ref.key, ref.quantity, ref.paper, ref.paper_text, ours, ref.compare, ref.tolerance,
            dev, bool(ok), ref.source, ref.note, ref.acceptance,
        )

    def judged(self) -> str:
        """The test in words: ``within 0.5 pt``, ``within a factor 2``, ``>= 0.995``."""
        t = self.tolerance
        if self.compare == "factor":
            return f"within a factor {t:g}"
        if self.compare == "abs":
            return f"within ±{t:g}"
        if self.compare == "at_least":
            return f">= {self.paper - t:.4g}"
        return f"<= {self.paper + t:.4g}"


class Experiment(ABC):
    """One figure of a seed. Subclasses set the class attributes and the five methods."""

    id: ClassVar[str]  #: ``module.figure``, e.g. ``appenzeller.fig5_1``
    title: ClassVar[str]
    source: ClassVar[str]  #: seed file, figure, section; digest section and reference
    summary: ClassVar[str]  #: the setup in a paragraph
    differences: ClassVar[str] = ""  #: where we expect to differ from the paper, and why
    fidelities: ClassVar[dict[str, Any]]  #: ``"quick"`` and ``"paper"`` -> parameters (a dataclass)
    #: The acceptance references its references check, by key (``"util_*"``: every key that
    #: starts so; ``"*"``: every key), for references that name none themselves.
    acceptance: ClassVar[dict[str, str]] = {}

    def acceptance_of(self, ref: Reference) -> Reference:
        """``ref`` with its acceptance references, its own or the experiment's for its key."""
        if ref.acceptance:
            return ref
        tags = [tag for key, tag in self.acceptance.items()
                if ref.key == key or (key.endswith("*") and ref.key.startswith(key[:-1]))]
        return replace(ref, acceptance=", ".join(tags)) if tags else ref

    @abstractmethod
    def references(self, params: Any) -> list[Reference]:
        """The paper's values this experiment is judged by (some depend on the points run)."""

    @abstractmethod
    def measure(self, runner: Any, params: Any) -> pl.DataFrame:
        """Run the experiment; one row per point of the figure."""

    @abstractmethod
    def findings(self, table: pl.DataFrame, params: Any) -> dict[str, float | None]:
        """The figures the references compare, by key."""

    @abstractmethod
    def plot(self, table: pl.DataFrame, params: Any, path: Path) -> Path:
        """Draw the figure to ``path``."""

    @abstractmethod
    def example_scenario(self, params: Any) -> dict[str, Any]:
        """One of the experiment's scenarios (written as ``scenario.toml``)."""


@dataclass
class Reproduction:
    """A reproduced experiment, as written to its directory."""

    experiment: Experiment
    fidelity: str
    table: pl.DataFrame
    comparisons: list[Comparison]
    directory: Path
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> int:
        return sum(c.ok for c in self.comparisons)


def reproduce(
    experiment: Experiment,
    fidelity: str = "quick",
    out: str | Path = Path("results") / "reproduce",
    executor: Any = None,
    workers: int | None = None,
    store: str | Path | None = None,
    progress: Any = False,
    force: bool = False,
    engine: str = "sim",
) -> Reproduction:
    """Run ``experiment`` at ``fidelity``, compare with the paper, write ``<out>/<fidelity>/<id>/``.
    ``force`` runs scenarios estimated past the machine's memory or the event budget.
    ``engine="emulator"`` runs its scenarios on the emulator (docs/emulator.md) and
    writes ``<out>/emulator/<fidelity>/<id>/``."""
    from .. import __version__
    from ..limits import forced
    from ..results import PARQUET_OPTIONS, dump_json
    from ..sweeps import Runner
    from ..tomlout import dumps

    params = experiment.fidelities[fidelity]
    t0 = time.perf_counter()
    with forced(force), Runner(executor, workers, store, progress, force, engine) as runner:
        table = experiment.measure(runner, params)
    wall = time.perf_counter() - t0
    found = experiment.findings(table, params)
    refs = [experiment.acceptance_of(r) for r in experiment.references(params)]
    comparisons = [Comparison.of(r, found.get(r.key)) for r in refs]
    directory = Path(out) / ("emulator" if engine == "emulator" else "") / fidelity / experiment.id
    directory.mkdir(parents=True, exist_ok=True)
    table.write_parquet(directory / "table.parquet", **PARQUET_OPTIONS)
    (directory / "comparison.json").write_text(dump_json([asdict(c) for c in comparisons]), encoding="utf-8")
    (directory / "scenario.toml").write_text(dumps(experiment.example_scenario(params)), encoding="utf-8")
    experiment.plot(table, params, directory / "figure.png")
    meta = {
        "id": experiment.id,
        "title": experiment.title,
        "source": experiment.source,
        "summary": experiment.summary,
        "differences": experiment.differences,
        "fidelity": fidelity,
        **({"engine": engine} if engine != "sim" else {}),
        "parameters": asdict(params),
        "findings": found,
        "aqmlab_version": __version__,
    }
    (directory / "experiment.json").write_text(dump_json(meta), encoding="utf-8")
    # wall-clock figures apart, so that the other files are identical on a rerun
    timing = {"wall_time_s": wall, "runs_computed": runner.computed, "runs_from_store": runner.reused}
    (directory / "timing.json").write_text(dump_json(timing), encoding="utf-8")
    return Reproduction(experiment, fidelity, table, comparisons, directory, {**meta, **timing})


def _run(runner: Any, points: list[list[dict[str, Any]]], label: str) -> list[list[tuple[Any, dict[str, Any]]]]:
    """Run every point (a list of scenario dicts, one per seed) in one batch: the
    (task, row) of each run. A failed run is a bug in an experiment: it raises."""
    from ..sweeps import make_task

    tasks = [[make_task(s) for s in point] for point in points]
    rows = runner.run([t for ts in tasks for t in ts], label)
    out = []
    for ts in tasks:
        for t in ts:
            row = rows[t.hash]
            if row["status"] != "ok":
                raise RuntimeError(f"run {t.hash[:12]} ({t.scenario['name']}, seed {t.seed}) failed: {row['error']}")
        out.append([(t, rows[t.hash]) for t in ts])
    return out


def run_points(runner: Any, points: list[list[dict[str, Any]]], label: str) -> list[list[dict[str, Any]]]:
    """The run summaries of each point (see :func:`_run`)."""
    return [[row["summary"] for _, row in runs] for runs in _run(runner, points, label)]


def run_dirs(runner: Any, points: list[list[dict[str, Any]]], label: str) -> list[list[Path]]:
    """The store directories of each point's runs, for analyses that need more than
    the summary (a time series, the flow table)."""
    return [[runner.store_path(t) for t, _ in runs] for runs in _run(runner, points, label)]
