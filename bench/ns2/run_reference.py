#!/usr/bin/env python3
"""Run the speed benchmark's scenarios in ns-2 2.35, for bench/run.py's ratio.

    python bench/ns2/run_reference.py --case dumbbell-1000
    python bench/ns2/run_reference.py --case backbone-10k --duration 3
    python bench/ns2/run_reference.py --all          # every case, each at its DURATIONS

Each case is bench/run.py's own scenario (scenarios/bench-<case>.toml), translated by
aqmlab's translator (aqmlab.ns2) and run in ns-2, one run at a time. Where the
translator refuses the scenario (QSDRR: ns-2 has none), the reference records why.

ns-2 runs twice: the case itself, and an empty run of the same script ending at 2 ns,
which builds the same topology, agents and routes and simulates nothing. The empty
run's time is the setup (Tcl interpreting the script); the difference is the
simulation, the figure set beside aqmlab's core wall time and ns-3's Simulator::Run.
Both wall and CPU time are recorded; bench/run.py uses the CPU time, which is the
wall time of the single-threaded ns-2 on an idle core and which other work on a
shared machine does not stretch (the JSON keeps the load average at the start).

Writes bench/ns2/reference/<case>.json. Needs the project's environment (aqmlab).
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
from run import cases, machine  # noqa: E402  (bench/run.py)

#: Cases shortened because a full-length run would take ns-2 more than about 10
#: minutes on the reference machine (simulated seconds; see README.md).
DURATIONS = {"backbone-50k": 2.0}


def shortened(resolved: dict[str, Any], duration_s: float) -> dict[str, Any]:
    """``resolved`` ending at ``duration_s``; the warm-up kept unless it would leave no
    window, then half the run (as the ns-3 driver does)."""
    out = copy.copy(resolved)
    out["duration_ns"] = round(duration_s * 1e9)
    if out["warmup_ns"] >= out["duration_ns"]:
        out["warmup_ns"] = out["duration_ns"] // 2
    return out


def empty(resolved: dict[str, Any]) -> dict[str, Any]:
    """The same script ending before anything happens: its time is ns-2's setup."""
    out = copy.copy(resolved)
    out["duration_ns"], out["warmup_ns"] = 2, 1
    return out


def arrival_flows(resolved: dict[str, Any], scenario: Any) -> Any:
    """The flows of aqmlab's run past the scenario's own: what ns-2 must run of a
    workload of arrivals (the translator writes them out, never draws them again)."""
    if not resolved["arrivals"]:
        return None
    from aqmlab.run import run_resolved

    flows = run_resolved(resolved, scenario).flows
    return flows.slice(len(resolved["flows"]["src"]))


def ns2_version() -> str:
    done = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "ns2"], capture_output=True, text=True)
    return f"ns-2 2.35 (Debian ns2 {done.stdout.strip() or 'version unknown'})"


def peak_rss_mb() -> float:
    """The largest resident set of a child so far: ns-2's full run, as each case runs
    in a process of its own (main)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def cpu_s() -> float:
    """CPU time of the children so far (ns-2 is one thread: on an idle core its CPU
    time is its wall time, and other work on the machine does not stretch it)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(resolved: dict[str, Any], flows: Any, work: Path) -> tuple[Any, float]:
    """Run ``resolved`` in ns-2: its results and the CPU time it took."""
    from aqmlab.ns2 import run_ns2

    before = cpu_s()
    results = run_ns2(resolved, work, flows)
    return results, cpu_s() - before


def measure(resolved: dict[str, Any], flows: Any, work: Path) -> dict[str, Any]:
    """Run ``resolved`` and its empty twin in ns-2; times and bottleneck counts."""
    full, full_cpu = timed(resolved, flows, work / "run")
    rss = peak_rss_mb()
    setup, setup_cpu = timed(empty(resolved), flows, work / "empty")
    q = full.queues.row(0, named=True)
    return {
        "bottleneck_utilization": q["utilization"],
        "bottleneck_loss_rate": q["loss_rate"],
        # every packet leaving the bottleneck reaches its receiver: nothing else drops
        "data_packets_delivered": q["departures"],
        "process_wall_time_s": full.wall_time_s,
        "setup_wall_time_s": setup.wall_time_s,
        "run_wall_time_s": full.wall_time_s - setup.wall_time_s,
        "process_cpu_time_s": full_cpu,
        "setup_cpu_time_s": setup_cpu,
        "run_cpu_time_s": full_cpu - setup_cpu,
        "data_packets_delivered_per_cpu_s": q["departures"] / (full_cpu - setup_cpu),
        "peak_rss_mb": rss,
    }


def reference(case: str, duration_s: float | None) -> dict[str, Any]:
    """The JSON of one case: its figures, or why ns-2 cannot run it."""
    import aqmlab
    from aqmlab.errors import UserError

    path = ROOT / "scenarios" / f"bench-{case}.toml"
    scenario = aqmlab.Scenario.load(path)
    resolved = scenario.resolve()
    full_s = resolved["duration_ns"] / 1e9
    if duration_s is not None and duration_s < full_s:
        resolved = shortened(resolved, duration_s)
    out: dict[str, Any] = {"simulator": ns2_version(), "case": case, "scenario": str(path.relative_to(ROOT)),
                           # other work on the machine slows the run: its load when the case began
                           "load_average_1_5_15_min": os.getloadavg()}
    try:
        with tempfile.TemporaryDirectory(prefix=f"ns2-{case}-") as work:
            results = measure(resolved, arrival_flows(resolved, scenario), Path(work))
    except UserError as e:
        if e.field == "ns":  # ns-2 itself failed: not a refusal
            raise
        # what ns-2 lacks, as the translator names it
        return {**out, "refused": str(e), "machine": machine()}
    out.update(duration_s=resolved["duration_ns"] / 1e9, warmup_s=resolved["warmup_ns"] / 1e9,
               results=results, machine=machine())
    if resolved["duration_ns"] / 1e9 < full_s:
        out["note"] = (f"duration shortened from {full_s:g} s to {out['duration_s']:g} s to bound wall time; "
                       "compare per simulated second or per data packet")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", choices=cases(), help="a case (repeatable)")
    ap.add_argument("--all", action="store_true", help="every case, each at its DURATIONS")
    ap.add_argument("--duration", type=float, help="shorten the run (simulated s); the default is DURATIONS")
    args = ap.parse_args(argv)
    chosen = cases() if args.all else (args.case or ap.error("give --case or --all"))
    for case in chosen:
        # a fresh process a case, so that its children's peak RSS is this case's alone
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as one:
            ref = one.submit(reference, case, args.duration if args.duration is not None else DURATIONS.get(case)).result()
        target = HERE / "reference" / f"{case}.json"
        target.parent.mkdir(exist_ok=True)
        target.write_text(json.dumps(ref, indent=1) + "\n")
        print(json.dumps({k: ref[k] for k in ("case", "refused", "results", "note") if k in ref}, indent=1))
        print(f"wrote {target.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
