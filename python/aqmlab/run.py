"""Running a scenario: ``aqmlab.run(scenario) -> Results``.

This module imports nothing heavy at import time (``aqmlab`` imports ``run`` from it
eagerly, so that the name ``aqmlab.run`` is the function, not this module)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .errors import UserError
from .progress import Progress, elapsed

if TYPE_CHECKING:  # imported on use: ``import aqmlab`` stays cheap
    from .results import Results
    from .scenario import Scenario

#: Seconds of wall time before the progress bar appears (short runs stay quiet).
PROGRESS_DELAY_S = 2.0


def _core() -> Any:
    try:
        from . import _core  # type: ignore[attr-defined]
    except ImportError as e:
        raise UserError(
            f"the simulator core (aqmlab._core) is not built ({e}); run `make setup`, "
            "or `maturin develop --release` in the repository"
        ) from None
    return _core


def progress_bar(total_s: float, label: str = "simulating") -> Progress:
    """Progress of simulated seconds (:mod:`aqmlab.progress`), shown once a run has
    taken ``PROGRESS_DELAY_S`` of wall time. Call ``update`` with the seconds done."""

    def columns() -> list[Any]:
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        return [
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        ]

    def line(done: float, total: float, wall: float, _: dict[str, Any]) -> str:
        return f"{done:.1f} of {total:.1f} s simulated, {elapsed(wall)} elapsed"

    return Progress(label, total_s, columns, line, delay=PROGRESS_DELAY_S)


def run(
    scenario: Scenario | str | Path | dict[str, Any],
    progress: bool | Callable[[float], None] = False,
    seed: int | None = None,
    engine: str = "fast",
    force: bool = False,
) -> Results:
    """Run a scenario and return its :class:`~aqmlab.results.Results`.

    ``scenario`` is a :class:`Scenario`, a path to a TOML file or a dict in the TOML's
    shape. ``progress=True`` shows a progress bar of simulated time when the run takes
    more than a couple of seconds; a callable is called with the simulated seconds done
    instead. ``seed`` replaces the scenario's seed. ``engine="reference"`` runs every link
    and host on its own events, skipping none (docs/simulator.md): the results are the
    same to the byte, only slower.

    A run estimated to need more memory than the machine has available, or more
    events than the budget (docs/user-guide.md, "Limits"), is refused before it
    starts unless ``force=True``.

    A mistake in the scenario raises :class:`~aqmlab.errors.UserError`, including one
    that only the simulator detects.
    """
    from .limits import forced
    from .scenario import Scenario

    with forced(force):
        s = Scenario.coerce(scenario, seed)
        return run_resolved(s.resolve(), s, progress, engine)


def run_resolved(
    resolved: dict[str, Any],
    source: Scenario | None = None,
    progress: bool | Callable[[float], None] = False,
    engine: str = "fast",
    force: bool = False,
) -> Results:
    """Run a resolved scenario (the contract, :mod:`aqmlab.contract`); ``source`` is
    the scenario it was resolved from, when known (then resolving it checked its
    estimate; otherwise it is checked here, unless ``force``)."""
    from . import contract, limits
    from .results import Results

    core = _core()
    try:
        text, columns = contract.for_core(resolved)
    except (TypeError, ValueError) as e:  # only a resolved scenario read from a file
        raise UserError(f"not a resolved scenario ({e})") from None
    if source is None:  # read from a file: checked by the core, then estimated
        try:
            core.check(text, columns)
        except ValueError as e:
            raise UserError(f"the simulator refused the scenario: {e}") from None
        with limits.forced(force):
            limits.check(resolved)
    bar: Progress | None = None
    callback: Callable[[float], None] | None
    if callable(progress):
        callback = progress
    elif progress:
        bar = progress_bar(resolved["duration_ns"] / 1e9, label=getattr(source, "name", "scenario"))
        callback = bar.update
    else:
        callback = None
    t0 = time.perf_counter()
    try:
        raw = core.run(text, columns, callback, engine)
    except ValueError as e:
        field, _, message = str(e).partition(": ")
        if field == "engine":
            raise UserError(message, "engine") from None
        raise UserError(f"the simulator refused the scenario: {e}") from None
    finally:
        if bar is not None:
            bar.close()
    timing = {"total_wall_time_s": time.perf_counter() - t0}
    return Results(raw, resolved, source, timing)
