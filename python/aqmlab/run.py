"""Running a scenario: ``aqmlab.run(scenario) -> Results``.

This module imports nothing heavy at import time (``aqmlab`` imports ``run`` from it
eagerly, so that the name ``aqmlab.run`` is the function, not this module)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .errors import UserError

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


class ProgressBar:
    """A rich progress bar of simulated seconds, shown once a run has taken
    ``delay`` seconds of wall time. Call it with the simulated seconds done."""

    def __init__(self, total_s: float, delay: float = PROGRESS_DELAY_S, label: str = "simulating") -> None:
        self.total = total_s
        self.delay = delay
        self.label = label
        self.started = time.monotonic()
        self._progress: Any = None
        self._task: Any = None

    def __call__(self, done_s: float) -> None:
        if self._progress is None:
            if time.monotonic() - self.started < self.delay:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=sys.stderr),
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=self.total)
        self._progress.update(self._task, completed=min(float(done_s), self.total))

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


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
        s = Scenario.coerce(scenario)
        if seed is not None:
            s = s.with_seed(seed)
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
    bar: ProgressBar | None = None
    callback: Callable[[float], None] | None
    if callable(progress):
        callback = progress
    elif progress:
        bar = callback = ProgressBar(resolved["duration_ns"] / 1e9, label=getattr(source, "name", "scenario"))
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
