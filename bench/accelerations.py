"""What each acceleration earns: the suite's cases run with every acceleration, with
each one left out in turn, and with none (the reference engine), interleaved.

    python bench/accelerations.py                      # every case of the suite
    python bench/accelerations.py --cases dumbbell-1000,kantawala-qsdrr --runs 5
    python bench/accelerations.py --cut backbone-50k=12 --json bench/accelerations.json

An acceleration left out takes with it those that need it (`express` without
`reserve` applies nowhere). The runs take turns, configuration after configuration,
each in a fresh process through the public API (`aqmlab.run(..., engine=...)`), so
that a slow spell of the machine hits every configuration alike; the best core wall
time of each is compared. An acceleration's gain on a case is how much slower the
run is without it: `best(without) / best(all) - 1`. The results are the same in
every configuration (tests/test_engines.py, crates/sim/tests/differential.rs); only
the time differs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Each acceleration, and those that need it (accel/mod.rs).
NAMES = ["reserve", "express", "defer", "answer_data", "answer_acks", "gather", "prefetch"]
NEEDS = {"express": ["reserve"], "answer_data": ["reserve"], "answer_acks": ["reserve"],
         "gather": ["express", "answer_data"]}

CASES = ["dumbbell-1000", "dumbbell-1000-qsdrr", "backbone-10k", "backbone-50k",
         "kantawala-droptail", "kantawala-red", "kantawala-qsdrr", "short-flows"]

CHILD = r"""
import json, sys, aqmlab
s = aqmlab.Scenario.load(sys.argv[1])
if len(sys.argv) > 3:
    d = s.to_dict(); d["duration"] = sys.argv[3]; s = aqmlab.Scenario.coerce(d)
r = aqmlab.run(s, engine=sys.argv[2])
print(json.dumps({"core_s": r.timing["wall_time_s"], "events": r.timing["events"],
                  "packets": r.summary["data_packets_delivered"]}))
"""


def without(name: str) -> list[str]:
    """Every acceleration but `name` and those that need it, directly or not."""
    gone = {name}
    while True:
        more = {n for n, needs in NEEDS.items() if gone & set(needs)} - gone
        if not more:
            return [n for n in NAMES if n not in gone]
        gone |= more


def configurations() -> dict[str, str]:
    configs = {"all": "fast"}
    configs.update({f"-{n}": ",".join(without(n)) for n in NAMES})
    configs["reference"] = "reference"
    return configs


def run(scenario: Path, engine: str, duration: str | None) -> dict:
    args = [sys.executable, "-c", CHILD, str(scenario), engine] + ([duration] if duration else [])
    out = subprocess.run(args, capture_output=True, text=True, check=True, env=os.environ)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cut", action="append", default=[], help="CASE=SECONDS: simulate the case this long")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    cuts = dict(c.split("=") for c in args.cut)
    configs = configurations()
    report = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores", "cases": {}}
    for case in args.cases.split(","):
        scenario = ROOT / "scenarios" / f"bench-{case}.toml"
        duration = f"{cuts[case]}s" if case in cuts else None
        times: dict[str, list[float]] = {c: [] for c in configs}
        events: dict[str, int] = {}
        for _ in range(args.runs):
            for name, engine in configs.items():
                r = run(scenario, engine, duration)
                times[name].append(r["core_s"])
                events[name] = r["events"]
        best = {c: min(t) for c, t in times.items()}
        gains = {c: best[c] / best["all"] - 1 for c in configs if c != "all"}
        report["cases"][case] = {"best_s": best, "runs_s": times, "events": events, "gain": gains}
        cut = f" ({duration} simulated)" if duration else ""
        print(f"{case}{cut}: every acceleration {best['all']:.3f} s, {events['all']:,} events")
        for c in configs:
            if c != "all":
                print(f"  {c:>14}: {best[c]:8.3f} s  {gains[c]:+7.1%}  {events[c]:>12,} events")
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
