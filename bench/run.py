"""Whole-run benchmarks: print figures, never fail on a noisy machine.

    python bench/run.py [--scenario scenarios/bench-dumbbell-1000.toml] [--repeat 3]

Each repeat runs the scenario in a fresh child process through the public
Python API (``aqmlab.run``) and reports the core's wall time (the simulation
only, not scenario resolution or result conversion), data packets delivered
per wall second, events per second, and memory: the child's peak RSS, and the
growth of its RSS across the run set against the budget of 1 KB per flow
plus 100 B per packet at the peak number in flight. The best of the repeats
is reported (the least disturbed by other work on the machine).

If ``bench/ns3/reference/<case>.json`` exists (written by
``bench/ns3/run_reference.py``), the same scenario's ns-3 figure is printed
beside ours with the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
def rss_kb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1])
import aqmlab, polars, pyarrow          # libraries loaded before measuring
scenario = aqmlab.Scenario.load(sys.argv[1])
resolved = scenario.resolve()          # resolve once outside the timed run
before = rss_kb("VmRSS:")
t0 = time.perf_counter()
res = aqmlab.run(scenario)
total = time.perf_counter() - t0
print(json.dumps({"summary": res.summary, "timing": res.timing, "api_wall_s": total,
                  "rss_before_kb": before, "peak_rss_kb": rss_kb("VmHWM:")}))
"""


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def run_once(scenario: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(scenario)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", type=Path, default=ROOT / "scenarios" / "bench-dumbbell-1000.toml")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ns3", type=Path, default=ROOT / "bench" / "ns3" / "reference" / "dumbbell1000_reno.json")
    args = ap.parse_args()

    runs = [run_once(args.scenario) for _ in range(args.repeat)]
    best = min(runs, key=lambda r: r["timing"]["wall_time_s"])
    s, wall = best["summary"], best["timing"]["wall_time_s"]
    flows, in_flight = s["flows"], s["peak_packets_in_flight"]
    grown_kb = best["peak_rss_kb"] - best["rss_before_kb"]
    budget_kb = (1024 * flows + 100 * in_flight) / 1024
    pps = s["data_packets_delivered"] / wall

    print(f"machine      {machine()}")
    print(f"scenario     {args.scenario.relative_to(ROOT) if args.scenario.is_relative_to(ROOT) else args.scenario}")
    print(f"simulated    {s['duration_s']:.0f} s, {flows} flows, bottleneck utilization {s['bottleneck_utilization']:.4f}")
    print(f"wall time    {wall:.2f} s in the core (best of {len(runs)}: "
          + ", ".join(f"{r['timing']['wall_time_s']:.2f}" for r in runs) + f"); {best['api_wall_s']:.2f} s through aqmlab.run")
    print(f"delivered    {s['data_packets_delivered']:,} data packets: {pps / 1e6:.2f} M per wall second")
    print(f"events       {s['events']:,}: {s['events'] / wall / 1e6:.2f} M per wall second")
    print(f"memory       peak RSS {best['peak_rss_kb'] / 1024:.1f} MiB (Python, polars and the core); "
          f"grew {grown_kb / 1024:.1f} MiB during the run")
    print(f"             budget 1 KB x {flows} flows + 100 B x {in_flight:,} packets at peak in flight = "
          f"{budget_kb / 1024:.1f} MiB; growth/budget = {grown_kb / budget_kb:.2f}")
    if args.ns3.exists():
        ref = json.loads(args.ns3.read_text())
        r, p = ref["results"], ref["params"]
        ns3_pps = r["data_packets_delivered"] / r["wall_time_run_s"]
        print(f"ns-3         {r['data_packets_delivered']:,} data packets in {r['wall_time_run_s']:.1f} s of wall time "
              f"({p['duration_s']} s simulated; {r['peak_rss_mb']:.0f} MB peak RSS): {ns3_pps / 1e3:.1f} k per wall second")
        print(f"ratio        aqmlab / ns-3 = {pps / ns3_pps:.0f}x in data packets delivered per wall second")
    else:
        print(f"ns-3         no reference at {args.ns3} (run bench/ns3/run_reference.py --case dumbbell1000)")


if __name__ == "__main__":
    main()
