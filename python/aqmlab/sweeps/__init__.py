"""Parameter sweeps: a grid of scenarios, run by an executor, stored by hash.

    import aqmlab
    sw = aqmlab.sweep("scenarios/dumbbell.toml",
                      vary={"topology.bottleneck.qdisc.limit": ["50pkt", "100pkt"]},
                      seeds=3)
    sw.runs       # one row per run (polars)
    sw.summary    # mean, std, 95% CI across seeds, per grid point

Seeds: every grid point runs with the seeds ``s, s+1, ..., s+N-1`` where ``s`` is
the scenario's seed, so ``--seeds 1`` gives the same run as ``aqmlab run``. (The
seed itself is not a ``--vary`` field.)

Every grid point is validated before anything runs. Runs already in the store are
not run again (a stopped sweep resumes where it stopped); a failed run is recorded
with its error and does not stop the others.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import UserError
from ..progress import Progress, elapsed
from . import store as _store
from . import workers as _workers
from .vary import grid, parse_values, set_path, vary_arg

DEFAULT_STORE = Path("results") / "store"


@dataclass
class SweepResult:
    """A finished sweep: ``runs`` (a row per run) and ``summary`` (per grid point)."""

    runs: Any
    summary: Any
    fields: list[str]
    store: Path
    computed: int = 0  #: runs computed by this call (the others came from the store)
    reused: int = 0  #: runs found finished in the store
    timing: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        return int((self.runs["status"] != "ok").sum())

    def write(self, out: str | Path) -> Path:
        """Write ``sweep.parquet``, ``sweep_summary.parquet`` and ``timing.json``."""
        from ..results import PARQUET_OPTIONS, dump_json

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.runs.write_parquet(out / "sweep.parquet", **PARQUET_OPTIONS)
        self.summary.write_parquet(out / "sweep_summary.parquet", **PARQUET_OPTIONS)
        (out / "timing.json").write_text(dump_json(self.timing), encoding="utf-8")
        return out


@dataclass
class Task:
    point: int
    seed: int
    values: dict[str, Any]
    scenario: dict[str, Any]  # the user's dict of this run
    resolved: dict[str, Any]
    hash: str


def _user_dict(scenario: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the user's dict, the same with every default filled in)."""
    from ..scenario import Scenario

    if isinstance(scenario, (str, Path)):
        data = Scenario.read(scenario)
        return data, Scenario.model_validate(copy.deepcopy(data)).to_dict()
    if isinstance(scenario, Scenario):
        return scenario.to_dict(), scenario.to_dict()
    if isinstance(scenario, Mapping):
        s = Scenario.model_validate(dict(scenario))
        return copy.deepcopy(dict(scenario)), s.to_dict()
    raise TypeError(f"expected a Scenario, a path or a dict, got {type(scenario).__name__}")


def plan(
    scenario: Any,
    vary: Mapping[str, Iterable[Any] | str] | None = None,
    seeds: int = 1,
) -> tuple[list[str], list[Task]]:
    """Every run of the sweep, validated, in grid order then seed order.

    A value of ``vary`` may be a list of values or the text of a ``--vary``
    (``"10pkt:100pkt:10pkt"``). Raises UserError naming the --vary at fault."""
    from ..scenario import Scenario

    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
        raise UserError(f"must be a positive integer, got {seeds!r}", "--seeds")
    data, full = _user_dict(scenario)
    varies: list[tuple[str, list[Any]]] = []
    args: dict[str, str] = {}  # field -> the --vary as the user wrote it
    for f, vals in (vary or {}).items():
        if f.strip() == "seed":
            raise UserError(
                "the seed is not varied with --vary: --seeds N runs the seeds s, s+1, ..., s+N-1, "
                "where s is the scenario's seed", f"--vary {f}"
            )
        values = parse_values(f, vals) if isinstance(vals, str) else list(vals)
        if not values:
            raise UserError("no values", f"--vary {f}=")
        varies.append((f, values))
        args[f] = f"--vary {f}={vals.strip()}" if isinstance(vals, str) else vary_arg(f, values)
    fields = [f for f, _ in varies]
    tasks: list[Task] = []
    for point, values in enumerate(grid(varies)):
        d = copy.deepcopy(data)
        for f, v in values.items():
            set_path(d, full, f, v, args[f])
        try:
            s = Scenario.model_validate(d)
        except UserError as e:
            # name the --vary whose field the schema complains about, else all of them
            at_fault = [f for f in fields if e.field is not None and (e.field == f or e.field.startswith((f + ".", f + "[")))]
            where = ", ".join(f"{f}={v}" for f, v in values.items())
            raise UserError(f"grid point {where}: {e}", " ".join(args[f] for f in (at_fault or fields)) or None) from None
        base = s.seed
        for i in range(seeds):
            seed = base + i
            if seed >= 2**64:
                raise UserError("the seeds run past 2^64", "--seeds")
            si = s if i == 0 else s.with_seed(seed)
            resolved = si.resolve()
            tasks.append(Task(point, seed, values, si.to_dict(), resolved, _store.run_hash(resolved)))
    return fields, tasks


def make_task(scenario: Mapping[str, Any], point: int = 0, values: Mapping[str, Any] | None = None) -> Task:
    """One run of a scenario given as a dict (as its TOML would read), for :class:`Runner`."""
    from ..scenario import Scenario

    s = Scenario.model_validate(dict(scenario))
    resolved = s.resolve()
    return Task(point, s.seed, dict(values or {}), s.to_dict(), resolved, _store.run_hash(resolved))


# ---------------------------------------------------------------------------
# executors


class _Executor:
    """submit(fn, *args) -> future; as_completed(futures); workers; close()."""

    def __init__(self, spec: Any, workers: int | None) -> None:
        self._own: list[Any] = []
        self.dask = False
        self.local = False  # our own process pool, whose workers call through workers.call
        self.workers = workers or os.cpu_count() or 1
        if spec is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # forkserver: workers start clean (forking a process that already runs
            # polars' thread pool can deadlock); they die with the sweep (workers.py)
            ctx = multiprocessing.get_context("forkserver")
            self.pool: Any = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=ctx, initializer=_workers.init, initargs=(os.getpid(),)
            )
            self._own.append(self.pool)
            self.local = True
        elif isinstance(spec, str):
            try:
                from distributed import Client, LocalCluster
            except ImportError:  # pragma: no cover - a dependency
                raise UserError("Dask distributed is not installed (pip install 'dask[distributed]')", "--cluster") from None
            if spec == "local":
                cluster = LocalCluster(
                    n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._own.append(cluster)
                client = Client(cluster)
            elif spec.startswith(("tcp://", "tls://", "ws://", "wss://")):
                try:
                    client = Client(spec)  # timeout: distributed.comm.timeouts.connect (30 s)
                except (OSError, TimeoutError) as e:
                    raise UserError(f"cannot connect to the Dask scheduler at {spec}: {e}", "--cluster") from None
            else:
                raise UserError(f"expected 'local' or a scheduler address such as tcp://HOST:8786, got {spec!r}", "--cluster")
            self._own.insert(0, client)
            self.pool = client
            self.dask = True
            n = len(client.scheduler_info().get("workers", {}))
            self.workers = workers or max(n, 1)
        else:  # a concurrent.futures.Executor or a distributed.Client given by the caller
            self.pool = spec
            self.dask = type(spec).__module__.startswith("distributed")

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self.dask:
            return self.pool.submit(fn, *args, pure=False)
        if self.local:
            return self.pool.submit(_workers.call, fn, *args)
        return self.pool.submit(fn, *args)

    def as_completed(self, futures: list[Any]) -> Iterable[Any]:
        if self.dask:
            from distributed import as_completed

            return as_completed(futures)
        return _as_completed(futures)

    def close(self, interrupted: bool = False) -> None:
        """Shut down what this executor started; when ``interrupted``, stop the local
        workers' runs now rather than wait for them."""
        for obj in self._own:
            try:
                if interrupted and self.local:
                    _workers.terminate(obj)
                elif hasattr(obj, "shutdown") and not self.dask:
                    obj.shutdown(cancel_futures=True)
                else:
                    obj.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass


def _as_completed(futures: list[Any]) -> Iterable[Any]:
    """Futures as they complete, waiting a quarter second at a time: a signal that
    the kernel hands to another thread (the pool's own) is then still seen by the
    main thread within that time, where an endless wait would never wake for it."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
        yield from done


# ---------------------------------------------------------------------------
# progress


class _Progress:
    """Progress over the runs to compute (:mod:`aqmlab.progress`; runs found in the
    store are not counted, so the time left is estimated from this sweep's own speed)."""

    def __init__(self, total: int, workers: int, enabled: Any, label: str) -> None:
        self.total, self.done, self.failed, self.workers = total, 0, 0, workers
        self.p: Progress | None = None
        if enabled:
            console = None if enabled is True else enabled
            self.p = Progress(label, total, _columns, _line, console=console)

    def update(self, pending: int) -> None:
        if self.p is not None:
            self.p.update(self.done, running=min(self.workers, pending), failed=self.failed)

    def close(self) -> None:
        if self.p is not None:
            self.p.close()


def _columns() -> list[Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("done, {task.fields[running]} running, {task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TextColumn("elapsed,"),
        TimeRemainingColumn(),
        TextColumn("left"),
    ]


def _line(done: float, total: float, wall: float, fields: dict[str, Any]) -> str:
    return (
        f"{done:.0f} of {total:.0f} runs done, {fields['running']} running, {fields['failed']} failed, "
        f"{elapsed(wall)} elapsed"
    )


# ---------------------------------------------------------------------------
# the sweep


class Runner:
    """Runs tasks through the result store on an executor, one batch at a time.

    A sweep is one batch; an experiment's bisection is a batch per round, on the
    same executor. Runs already in the store are read, not run; a failed run is
    recorded and does not stop the others. ``executor``, ``workers`` and
    ``progress`` are as for :func:`sweep`. Use as a context manager (or ``close()``)."""

    def __init__(
        self,
        executor: Any = None,
        workers: int | None = None,
        store: str | Path | None = None,
        progress: Any = False,
        force: bool = False,
        engine: str = "sim",
    ) -> None:
        if engine not in _store.ENGINES:
            raise UserError(f"one of {', '.join(_store.ENGINES)}, got {engine!r}", "--engine")
        if engine == "emulator":
            # Real time: one emulated run at a time, on this machine.
            executor, workers = None, 1
        self.spec, self.workers, self.progress, self.force = executor, workers, progress, force
        self.engine = engine
        self.root = Path(store if store is not None else DEFAULT_STORE).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self._ex: _Executor | None = None
        self.computed = 0  #: runs computed so far
        self.reused = 0  #: runs found finished in the store so far

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.close(interrupted=exc_type is not None)

    def close(self, interrupted: bool = False) -> None:
        """Shut the executor down; ``interrupted`` (an exception such as Ctrl-C is on
        its way out) stops the runs in progress instead of waiting for them."""
        if self._ex is not None:
            self._ex.close(interrupted)
            self._ex = None

    def store_path(self, task: Task) -> Path:
        """Where the run of ``task`` on this runner's engine is stored."""
        return self.root / (task.hash if self.engine == "sim" else _store.run_hash(task.resolved, self.engine))

    def run(self, tasks: list[Task], label: str) -> dict[str, dict[str, Any]]:
        """The row of every task, by the task's hash."""
        by_hash: dict[str, Task] = {}
        for t in tasks:
            by_hash.setdefault(t.hash, t)
        outcome: dict[str, dict[str, Any]] = {}
        for h in by_hash:
            if (row := _store.reusable_row(self.store_path(by_hash[h]))) is not None:
                outcome[h] = row
        self.reused += sum(1 for t in tasks if t.hash in outcome)
        todo = [h for h in by_hash if h not in outcome]
        if not todo:
            return outcome
        if self._ex is None:
            local = self.spec is None
            self._ex = _Executor(self.spec, min(self.workers or os.cpu_count() or 1, len(todo)) if local else self.workers)
        ex = self._ex
        extra = f" ({len(outcome)} already in the store)" if outcome else ""
        bar = _Progress(len(todo), ex.workers, self.progress, f"{label}{extra}")
        try:
            futures = {
                ex.submit(_store.run_entry, by_hash[h].resolved, str(self.root), by_hash[h].scenario, self.force, self.engine): h
                for h in todo
            }
            pending = len(futures)
            bar.update(pending)
            for fut in ex.as_completed(list(futures)):
                h = futures[fut]
                try:
                    row = fut.result()
                except Exception as e:  # noqa: BLE001 - a worker died: record, go on
                    row = {"hash": h, "status": "failed", "error": f"{type(e).__name__}: {e}", "summary": {}}
                outcome[h] = row
                self.computed += 1
                pending -= 1
                bar.done += 1
                bar.failed += row["status"] != "ok"
                bar.update(pending)
        finally:
            bar.close()
        return outcome


def sweep(
    scenario: Any,
    vary: Mapping[str, Iterable[Any] | str] | None = None,
    seeds: int = 1,
    executor: Any = None,
    workers: int | None = None,
    store: str | Path | None = None,
    progress: Any = False,
    force: bool = False,
    engine: str = "sim",
) -> SweepResult:
    """Run every grid point of ``vary`` (a dict field -> values, or -> the text of a
    ``--vary``) with ``seeds`` seeds, and return the tables.

    ``executor``: None for local processes (``workers``, default one per core);
    ``"local"`` for a Dask LocalCluster; ``"tcp://HOST:PORT"`` for a Dask scheduler;
    or a ``concurrent.futures.Executor`` / ``distributed.Client`` of your own (left
    open). ``store``: the result store (default ``results/store``). ``progress``:
    True for a progress bar on stderr (or a ``rich.console.Console`` to draw it on).
    ``force``: run grid points estimated past the memory available or the event
    budget (docs/user-guide.md, "Limits"), which are otherwise refused before any runs.
    ``engine``: ``"sim"``, or ``"emulator"`` to run each point in real time on the emulator
    (docs/emulator.md; one run at a time, stored apart from the simulator's)."""
    from ..limits import forced
    from .table import runs_table, summary_table

    t0 = time.perf_counter()
    with forced(force):
        fields, tasks = plan(scenario, vary, seeds)
    with Runner(executor, workers, store, progress, force, engine) as runner:
        outcome = runner.run(tasks, f"sweep {_name(scenario)}")
    root = runner.root
    rows = []
    for t in tasks:
        o = outcome[t.hash]
        rows.append(
            {
                "point": t.point,
                "values": t.values,
                "seed": t.seed,
                "status": o["status"],
                "error": o["error"],
                "summary": o["summary"],
                "hash": t.hash,
                "store_path": str(runner.store_path(t)),
            }
        )
    runs = runs_table(fields, rows)
    summary = summary_table(runs, fields)
    return SweepResult(
        runs,
        summary,
        fields,
        root,
        computed=runner.computed,
        reused=runner.reused,
        timing={"wall_time_s": time.perf_counter() - t0},
    )


def _name(scenario: Any) -> str:
    if isinstance(scenario, (str, Path)):
        return Path(scenario).stem
    if isinstance(scenario, Mapping):
        return str(scenario.get("name", "scenario"))
    return str(getattr(scenario, "name", "scenario"))
