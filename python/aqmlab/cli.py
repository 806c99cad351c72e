"""The ``aqmlab`` command line.

    aqmlab run SCENARIO|RESULTS_DIR|resolved.json [--out DIR] [--plot] [--seed N] [--engine fast|reference] [--quiet]
    aqmlab emulate SCENARIO [--out DIR] [--plot] [--seed N] [--baseline kernel [--shaper tbf|htb]]
                   [--flow-key five_tuple|host_pair] [--quiet]
    aqmlab validate SCENARIO
    aqmlab sweep SCENARIO --vary FIELD=VALUES [--vary ...] [--seeds N] [--cluster local|tcp://HOST:PORT]
                 [--workers N] [--store DIR] [--out DIR] [--engine sim|emulator] [--quiet]
    aqmlab reproduce --list | ID [--fidelity quick|paper] [--out DIR] [--store DIR] [--cluster ...] [--workers N]
                     [--engine sim|emulator]
    aqmlab report [--results DIR] [--out DIR]
    aqmlab crosscheck ns2 SCENARIO [--draws N] [--packets] [--out DIR]
    aqmlab size ...            (the buffer-sizing calculator, aqmlab.theory.cli)

A mistake in the input prints one message naming the field on stderr and exits
with status 2, without a traceback.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from .errors import UserError

app = typer.Typer(
    name="aqmlab",
    help="aqmlab: a laboratory for router buffer management.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain help: rich's help formatter alone takes a third of a second to import.
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"aqmlab {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """aqmlab: a laboratory for router buffer management."""


#: ``--force``: past the limits of docs/user-guide.md, "Limits".
FORCE_HELP = "Run even when the estimate exceeds the memory available or the event budget."


def _mount_size() -> None:
    """Mount ``aqmlab size`` (the theory's calculator; it imports the theory, and scipy
    with it, only when it computes)."""
    if any(getattr(g, "name", None) == "size" for g in app.registered_groups):
        return
    try:
        from .theory.cli import size_app
    except ModuleNotFoundError as e:  # the theory module not written yet: run without it
        if e.name not in ("aqmlab.theory", "aqmlab.theory.cli"):
            raise
        return
    app.add_typer(size_app, name="size")



def _fmt_rate(bps: float) -> str:
    from .units import format_rate

    return format_rate(bps)


def _fmt_time(ns: float) -> str:
    from .units import format_time

    return format_time(ns)


def _limit(q: dict[str, Any]) -> str:
    lim = q.get("limit")
    if isinstance(lim, dict) and len(lim) == 1:
        (unit, n), = lim.items()
        return f" {n}{'pkt' if unit == 'packets' else 'B'}"
    return ""


def describe(scenario: Any, resolved: dict[str, Any]) -> list[str]:
    """A short text description of what a resolved scenario builds (its columns are
    summed up a group of flows at a time, so a million flows take a moment)."""
    import numpy as np

    from .contract import names

    nodes = names(resolved["nodes"])
    links = resolved["links"]
    link_names = names(links["names"])
    lines = [
        f"scenario {scenario.name}: seed {resolved['seed']}, {_fmt_time(resolved['duration_ns'])} simulated"
        f" (warm-up {_fmt_time(resolved['warmup_ns'])}), samples every {_fmt_time(resolved['sample_interval_ns'])}",
        f"network: {len(nodes)} nodes, {len(link_names)} links ({scenario.topology.kind})",
    ]
    for i in np.nonzero(links["monitor"])[0].tolist():
        q = links["qdiscs"][int(links["qdisc"][i])]
        lines.append(
            f"  monitored {link_names[i]}: {nodes[int(links['from'][i])]} -> {nodes[int(links['to'][i])]}, "
            f"{_fmt_rate(int(links['rate_bps'][i]))}, {_fmt_time(int(links['delay_ns'][i]))}, "
            f"{q['kind']}{_limit(q)}"
        )
    lines.append(f"tcp profiles: {len(resolved['tcp_profiles'])}")

    fl = resolved["flows"]

    def delays(paths: dict[str, Any]) -> Any:
        """Each route's propagation delay."""
        summed = np.concatenate([[0], np.cumsum(links["delay_ns"][paths["links"]])])
        return summed[paths["offsets"][1:]] - summed[paths["offsets"][:-1]]

    rtts = delays(fl["path"]) + delays(fl["reverse_path"])
    for g, group in enumerate(fl["groups"]):
        mine = fl["group"] == g
        count, kind = int(mine.sum()), group["kind"]
        srcs, dsts = len(np.unique(fl["src"][mine])), len(np.unique(fl["dst"][mine]))
        text = f"  {group['label']}: {count} {kind} flow{'s' if count != 1 else ''}, {srcs} source(s) -> {dsts} destination(s)"
        if kind == "tcp":
            lo, hi = int(rtts[mine].min()), int(rtts[mine].max())
            text += f", propagation RTT {_fmt_time(lo)}" + (f"..{_fmt_time(hi)}" if hi != lo else "")
            text += ", long-lived" if group["size_bytes"] is None else ", finite transfers"
            if group["off_time"]:
                text += ", on-off"
        else:
            text += f", {group['source']['model']} at {_fmt_rate(group['source']['rate_bps'])}"
        lo, hi = int(fl["start_ns"][mine].min()), int(fl["start_ns"][mine].max())
        text += f", start {_fmt_time(lo)}" + (f"..{_fmt_time(hi)}" if hi != lo else "")
        lines.append(text)
    if len(fl["group"]):
        lines.insert(len(lines) - len(fl["groups"]), f"flows: {len(fl['group'])}")
    for a in resolved["arrivals"]:
        mean = a["size_bytes"].get("mean", a["size_bytes"].get("value"))
        lines.append(
            f"arrivals {a['group']}: Poisson {a['rate_per_s']:.4g} flows/s, {a['size_bytes']['dist']} size"
            f" (mean {mean:.6g} B), {len(a['routes'])} route(s)"
        )
    return lines


@app.command()
def validate(
    scenario: str = typer.Argument(..., help="Scenario TOML file."),
    force: bool = typer.Option(False, "--force", help="Accept a run estimated past the memory available or the event budget."),
) -> None:
    """Check a scenario file without running it, and say what it would build and take."""
    from .limits import estimate, forced
    from .scenario import Scenario

    with forced(force):
        s = Scenario.load(scenario)
        resolved = s.resolve()
    for line in describe(s, resolved):
        typer.echo(line)
    from .resolve import group_label

    typer.echo(estimate(resolved, {group_label(f, i): f"flows[{i}]" for i, f in enumerate(s.flows)}).describe())
    typer.echo("ok")


def _load_resolved(path: Path) -> dict[str, Any]:
    """A resolved scenario from a results directory or its ``resolved.json``."""
    from .contract import load

    file = path / "resolved.json" if path.is_dir() else path
    try:
        resolved = load(file)
    except OSError as e:
        raise UserError(f"cannot read it ({e.strerror})", str(file)) from None
    except (ValueError, AttributeError) as e:
        raise UserError(f"not a resolved scenario ({e})", str(file)) from None
    if not isinstance(resolved, dict):
        raise UserError("not a resolved scenario (a JSON object)", str(file))
    return resolved


@app.command()
def run(
    scenario: str = typer.Argument(..., help="Scenario TOML file, or a resolved scenario: a results directory or its resolved.json."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Results directory (default results/<name>)."),
    plot: bool = typer.Option(False, "--plot", help="Also write PNG plots into the results directory."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Replace the scenario's seed."),
    engine: str = typer.Option(
        "fast", "--engine", help='"fast" (every acceleration) or "reference" (every event): the same results.'
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no summary: only the line saying where the results are."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """Run a scenario and write its results (Parquet, JSON; PNG with --plot)."""
    from .limits import forced

    with forced(force):
        _run(scenario, out, plot, seed, engine, quiet, force)


def _run(
    scenario: str, out: Optional[Path], plot: bool, seed: Optional[int], engine: str, quiet: bool, force: bool
) -> None:
    from .run import run as run_scenario
    from .run import run_resolved
    from .scenario import Scenario

    if seed is not None and not 0 <= seed < 2**64:
        raise UserError(f"must be in [0, 2^64), got {seed}", "--seed")
    if Path(scenario).is_dir() or scenario.endswith(".json"):
        resolved = _load_resolved(Path(scenario))
        if seed is not None:
            resolved["seed"] = seed
        res = run_resolved(resolved, progress=not quiet, engine=engine, force=force)
        name = Path(scenario).name if Path(scenario).is_dir() else Path(scenario).stem
    else:
        s = Scenario.coerce(scenario, seed)
        res = run_scenario(s, progress=not quiet, engine=engine)
        name = s.name
    _report_written(res, res.write(out if out is not None else Path("results") / name), plot, quiet)


@app.command()
def emulate(
    scenario: str = typer.Argument(..., help="Scenario TOML file (within the emulator's limits, docs/emulator.md)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Results directory (default results/<name>-emulated)."),
    plot: bool = typer.Option(False, "--plot", help="Also write PNG plots into the results directory."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Replace the scenario's seed."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary: only the line saying where the results are."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help='"kernel": the monitored links queued and shaped by Linux\'s tc (the kernel\'s qdisc of the discipline, behind tbf or htb) instead of aqmlab\'s disciplines.'),
    shaper: str = typer.Option("tbf", "--shaper", help='With --baseline kernel: "tbf" or "htb".'),
    flow_key: str = typer.Option("five_tuple", "--flow-key", help='What a flow is to the disciplines: "five_tuple" or "host_pair" (seed 004\'s DCBT option).'),
) -> None:
    """Run a scenario on the emulator (real Linux TCP and UDP through aqmlab's router, as root) and write the
    simulator's result files."""
    from .emulate import emulate as run_emulated
    from .scenario import Scenario

    if seed is not None and not 0 <= seed < 2**64:
        raise UserError(f"must be in [0, 2^64), got {seed}", "--seed")
    s = Scenario.coerce(scenario, seed)
    directory = Path(out) if out is not None else Path("results") / f"{s.name}-emulated"
    res = run_emulated(s, directory, baseline=baseline, shaper=shaper, flow_key=flow_key)
    _report_written(res, res.write(directory), plot, quiet)


def _report_written(res, directory: Path, plot: bool, quiet: bool) -> None:
    """Plot a run's results if asked, print its summary unless quiet, and say where they are."""
    plots: list[Path] = []
    if plot:
        from .plots import plot_all

        plots = plot_all(res, directory)
    if not quiet:
        for line in summary_lines(res):
            typer.echo(line)
    typer.echo(f"results: {directory}/" + (f" (plots: {', '.join(p.name for p in plots)})" if plots else ""))


# The options `sweep` and `reproduce` share: how their runs are executed.
SWEEP_ENGINE = typer.Option(
    "sim", "--engine", help='"sim" (the simulator) or "emulator" (real Linux TCP in namespaces, as root; docs/emulator.md).'
)
WORKERS = typer.Option(None, "--workers", "-j", help="Worker processes (default one per core).")
SWEEP_QUIET = typer.Option(False, "--quiet", "-q", help="No progress and no table: only the last line, the counts of runs.")


def _check_workers(workers: Optional[int]) -> None:
    if workers is not None and workers < 1:
        raise UserError(f"must be at least 1, got {workers}", "--workers")


@app.command()
def sweep(
    scenario: str = typer.Argument(..., help="Scenario TOML file."),
    vary: list[str] = typer.Option(
        [], "--vary", "-v", help="FIELD=VALUES: a list (50pkt,100pkt), a range (10pkt:100pkt:10pkt) or a log range (log:10pkt:1000pkt:5). Repeat for a grid."
    ),
    seeds: int = typer.Option(1, "--seeds", "-n", help="Seeds per grid point: the scenario's seed, +1, ..., +N-1."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Dask: 'local' (a LocalCluster) or a scheduler address tcp://HOST:PORT. Default: local processes."),
    workers: Optional[int] = WORKERS,
    store: Path = typer.Option(Path("results") / "store", "--store", help="The result store."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output directory (default results/sweeps/<name>)."),
    quiet: bool = SWEEP_QUIET,
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    engine: str = SWEEP_ENGINE,
) -> None:
    """Run a scenario over a grid of parameter values and seeds; write sweep.parquet and sweep_summary.parquet."""
    from .scenario import Scenario
    from .sweeps import sweep as run_sweep
    from .sweeps.vary import parse_vary

    _check_workers(workers)
    varies: dict[str, str] = {}
    for expr in vary:
        field, _ = parse_vary(expr)  # checks the expression; the sweep expands it again
        if field in varies:
            raise UserError("the same field is varied twice", f"--vary {expr}")
        varies[field] = expr.partition("=")[2]
    name = Scenario.read(scenario)["name"]
    result = run_sweep(
        scenario, varies, seeds=seeds, executor=cluster, workers=workers, store=store, progress=not quiet, force=force,
        engine=engine,
    )
    directory = result.write(out if out is not None else Path("results") / "sweeps" / name)
    if not quiet:
        _print_sweep(result)
    typer.echo(
        f"{len(result.runs)} runs ({result.computed} computed, {result.reused} from the store, {result.failed} failed); "
        f"tables: {directory}/sweep.parquet, {directory}/sweep_summary.parquet"
    )


@app.command()
def reproduce(
    experiment: Optional[str] = typer.Argument(None, help="Experiment id, e.g. appenzeller.fig5_1 (see --list)."),
    list_: bool = typer.Option(False, "--list", "-l", help="List the experiments and exit."),
    fidelity: str = typer.Option("quick", "--fidelity", "-f", help="quick (under a minute) or paper (the published parameters)."),
    out: Path = typer.Option(Path("results") / "reproduce", "--out", "-o", help="Results root: writes OUT/FIDELITY/ID/."),
    store: Path = typer.Option(Path("results") / "store", "--store", help="The result store (finished runs are reused)."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Dask: 'local' or tcp://HOST:PORT. Default: local processes."),
    workers: Optional[int] = WORKERS,
    quiet: bool = SWEEP_QUIET,
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    engine: str = SWEEP_ENGINE,
) -> None:
    """Reproduce a paper's experiment: run it, compare with the paper, write its table and figure."""
    from . import experiments

    if list_:
        for e in experiments.all_experiments():
            typer.echo(f"{e.id:24} {e.title}\n{'':24} {e.source}")
        return
    if experiment is None:
        raise UserError("give an experiment id, or --list to see them", "ID")
    _check_workers(workers)
    rep = experiments.reproduce(
        experiment, fidelity, out, executor=cluster, workers=workers, store=store, progress=not quiet, force=force,
        engine=engine,
    )
    if not quiet:
        _print_comparison(rep, fidelity)
    typer.echo(
        f"{rep.passed} of {len(rep.comparisons)} within tolerance; "
        f"{rep.meta['runs_computed']} runs computed, {rep.meta['runs_from_store']} from the store, "
        f"{rep.meta['wall_time_s']:.0f} s; written to {rep.directory}"
    )


def _print_comparison(rep: Any, fidelity: str) -> None:
    from dataclasses import asdict

    from rich.table import Table

    from .report import COMPARISON_COLUMNS, comparison_rows

    table = Table(title=f"{rep.experiment.id} ({fidelity}): the paper beside ours")
    for c in COMPARISON_COLUMNS[:6]:
        table.add_column(c, justify="right" if c in ("paper", "ours", "deviation") else "left")
    for row in comparison_rows([asdict(c) for c in rep.comparisons]):
        table.add_row(*row[:6])
    _console().print(table)


@app.command()
def report(
    results: Path = typer.Option(Path("results") / "reproduce", "--results", "-r", help="Where `aqmlab reproduce` wrote."),
    out: Path = typer.Option(Path("results") / "report", "--out", "-o", help="Output directory."),
) -> None:
    """Write report.html (self-contained) and report.md of every reproduced experiment."""
    from .report import write_report

    page = write_report(results, out)
    typer.echo(f"report: {page} and {page.with_suffix('.md')}")


crosscheck_app = typer.Typer(help="Run a scenario in aqmlab and in another simulator, side by side.", no_args_is_help=True)
app.add_typer(crosscheck_app, name="crosscheck")


@crosscheck_app.command("ns2")
def crosscheck_ns2(
    scenario: str = typer.Argument(..., help="Scenario TOML file."),
    draws: int = typer.Option(1, "--draws", "-n", help="Start-time draws (each flow moved by the same 0-200 ms in both)."),
    packets: bool = typer.Option(False, "--packets", help="Also write ns-2's packet trace and cwnd trace."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output directory (default results/crosscheck/<name>)."),
) -> None:
    """Run SCENARIO in aqmlab and in ns-2 2.35; print their figures side by side and
    write crosscheck.parquet (the table), crosscheck_runs.parquet and crosscheck_flows.parquet."""
    from rich.table import Table

    from .crosscheck import crosscheck_ns2 as run_check
    from .crosscheck import write
    from .scenario import Scenario

    if draws < 1:
        raise UserError(f"must be at least 1, got {draws}", "--draws")
    s = Scenario.load(scenario)
    directory = out if out is not None else Path("results") / "crosscheck" / s.name
    check = run_check(s, directory, draws, packets)
    write(check, directory)
    table = Table(
        title=f"{s.name}: aqmlab beside ns-2 2.35 (mean of {draws} draw{'s' * (draws > 1)})",
        caption="with ns-2's choices: aqmlab with ties, RED and RTT estimator as ns-2's",
        box=None, padding=(0, 1), pad_edge=False,
    )
    table.add_column("figure", no_wrap=True)
    for c in ("aqmlab", "with ns-2's\nchoices", "ns-2", "diff", "bound"):
        table.add_column(c, justify="right", no_wrap=True)
    for r in check.table.iter_rows(named=True):
        rel = r["measure"] == "rel"
        diff = "" if r["difference"] is None else (f"{100 * r['difference']:+.1f}%" if rel else _num(r["difference"], "+"))
        bound = "" if r["bound"] is None else (f"{100 * r['bound']:.0f}%" if rel else f"{r['bound']:g}")
        bound += {None: "", True: " ok", False: " MISS"}[r["within"]]
        table.add_row(r["figure"], *(_num(r[k]) for k in ("aqmlab", "aqmlab_ns2", "ns2")), diff, bound)
    _console().print(table)
    for note in check.notes:
        typer.echo(f"differs from ns-2: {note}")
    typer.echo(f"tables: {directory}/crosscheck.parquet, crosscheck_runs.parquet, crosscheck_flows.parquet")


#: The sweep table's figures: summary key, heading, scale to the heading's unit.
SWEEP_FIGURES = [
    ("bottleneck_utilization", "util %", 100.0),
    ("bottleneck_loss_rate", "loss %", 100.0),
    ("bottleneck_mean_delay_s", "delay ms", 1e3),
    ("jain_index", "Jain", 1.0),
    ("goodput_bps", "goodput Mb/s", 1e-6),
]


def _print_sweep(result: Any) -> None:
    """The summary table: each figure's mean over seeds, its 95% CI half-width below it,
    in units that keep the cells narrow enough for 80 columns."""
    from rich.table import Table

    s = result.summary
    shown = [f for f in SWEEP_FIGURES if f"{f[0]}_mean" in s.columns]
    table = Table(title="sweep summary (mean, ± 95% CI over seeds)", box=None, padding=(0, 1), pad_edge=False)
    for c in result.fields:
        table.add_column(c.rsplit(".", 1)[-1], justify="right", overflow="fold")
    table.add_column("runs", justify="right")
    for _, heading, _ in shown:
        table.add_column(heading, justify="right")
    for row in s.iter_rows(named=True):
        cells = [str(row[f]) for f in result.fields]
        cells.append(str(row["runs"]) + (f"\n{row['failed']} failed" if row["failed"] else ""))
        for key, _, scale in shown:
            cells.append(_mean_ci(row[f"{key}_mean"], row[f"{key}_ci95"], scale))
        table.add_row(*cells)
    _console().print(table)


def _num(x: float, sign: str = "") -> str:
    """Three significant digits, the exponent without padding: ``3.33e-5``."""
    text = f"{x:{sign}.3g}"
    return text.replace("e-0", "e-").replace("e+0", "e")


def _mean_ci(mean: float | None, ci: float | None, scale: float) -> str:
    if mean is None:
        return "-"
    return f"{mean * scale:.4g}" + ("" if ci is None else f"\n± {ci * scale:.2g}")


def _console() -> Any:
    """Tables as wide as the terminal; 80 columns in a log or a pipe."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 80)


def summary_lines(res: Any) -> list[str]:
    """A few lines about a finished run."""
    s = res.summary
    lines = []
    head = [f"events {res.timing['events']}"] if "events" in res.timing else []
    head += [f"data_packets_delivered {s['data_packets_delivered']}"] if "data_packets_delivered" in s else []
    if "wall_time_s" in res.timing:
        head.append(f"wall time {res.timing['wall_time_s']:.2f} s")
    if head:
        lines.append(", ".join(head))
    if not res.queues.is_empty() and "link" in res.queues.columns:
        import polars as pl

        from .contract import monitored_links

        # Filtered before the rows become Python objects: a backbone has
        # hundreds of thousands of links, a handful monitored.
        monitored = res.queues.filter(pl.col("link").is_in(monitored_links(res.scenario)))
        for row in monitored.iter_rows(named=True):
            parts = [f"queue {row['link']}:"]
            if row.get("utilization") is not None:
                parts.append(f"utilization {100 * row['utilization']:.2f}%")
            if row.get("loss_rate") is not None:
                parts.append(f"loss {100 * row['loss_rate']:.3f}%")
            if row.get("mean_delay_s") is not None:
                parts.append(f"mean delay {1000 * row['mean_delay_s']:.2f} ms")
            lines.append(" ".join(parts))
    jain = s.get("jain_index")
    if isinstance(jain, (int, float)) and jain == jain:  # not None, not NaN
        lines.append(f"Jain fairness index {s['jain_index']:.4f}")
    if s.get("conservation_ok") is False:
        lines.append("WARNING: packet conservation check failed")
    return lines


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the app; a UserError becomes a message and exit status 2."""
    args = sys.argv[1:] if argv is None else list(argv)
    _mount_size()
    # SIGTERM stops a command as Ctrl-C does (runs end within a second, a sweep's
    # workers are stopped, no half-written store entry is left), not abruptly.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        app(args=args, prog_name="aqmlab")
    except UserError as e:
        sys.stderr.write(f"error: {e}\n")
        sys.exit(e.exit_code)
