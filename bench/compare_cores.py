"""Compare builds of the whole Python package and its core on one scenario, run interleaved.

    git worktree add /tmp/before <commit>     # and build its core there, e.g.
    (cd /tmp/before && AQMLAB_PGO=0 maturin develop --release)
    python bench/compare_cores.py scenarios/bench-dumbbell-1000.toml /tmp/before/python python --runs 12

Each argument after the scenario is a directory holding an ``aqmlab`` package with
its built ``_core.abi3.so``. The runs take turns (A, B, A, B, ...), each in a fresh
process with that directory first on ``PYTHONPATH``, so that a busy or slow spell
of the machine hits every build alike; printed are each build's best and median
core wall time (``Results.timing["wall_time_s"]``) and data packets per second.
With ``--and OTHER.toml`` each build also runs OTHER in turn with the first scenario
(the same network with another discipline, say), and its rate is printed as a share of
the first's: how the issue's "QSDRR no more than 30% slower than DropTail" is measured,
both cases in the same spells of the machine.

    python bench/compare_cores.py scenarios/bench-dumbbell-1000.toml python \
        --and scenarios/bench-dumbbell-1000-qsdrr.toml --runs 8

``bench/compare.py`` does the same for builds of the Rust-only ``dumbbell_bench``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = """
import json, sys, aqmlab
r = aqmlab.run(sys.argv[1])
print(json.dumps({"core_s": r.timing["wall_time_s"], "packets": r.summary["data_packets_delivered"]}))
"""


def run(scenario: str, package_dir: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(package_dir)}
    out = subprocess.run([sys.executable, "-c", CHILD, scenario], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{package_dir}: the run failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument("packages", nargs="+", help="directories holding an aqmlab package with its core")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--and", dest="others", action="append", default=[], metavar="SCENARIO",
                    help="also run this scenario, in turn with the first (the same network with another "
                         "discipline, say), and print its rate as a share of the first's")
    args = ap.parse_args()

    cases = [(s, p) for p in args.packages for s in [args.scenario, *args.others]]
    times: dict[tuple[str, str], list[float]] = {c: [] for c in cases}
    packets: dict[tuple[str, str], int] = {}
    for _ in range(args.runs):
        for c in cases:
            r = run(*c)
            times[c].append(r["core_s"])
            packets[c] = r["packets"]
            print(f"  {label(c, args.others)}: {r['core_s']:.3f} s", flush=True)
    rates = {}
    for c, t in times.items():
        best, median = min(t), statistics.median(t)
        rates[c] = (packets[c] / best, packets[c] / median)
        print(f"{label(c, args.others)}: core best {best:.3f} s ({rates[c][0] / 1e6:.2f} M data packets/s), "
              f"median {median:.3f} s ({rates[c][1] / 1e6:.2f} M/s), {len(t)} runs")
    for p in args.packages:
        for other in args.others:
            (b, m), (b0, m0) = rates[(other, p)], rates[(args.scenario, p)]
            print(f"{label((other, p), args.others)}: {b / b0:.1%} of {args.scenario}'s rate at best "
                  f"({1 - b / b0:.1%} slower), {m / m0:.1%} at the median")


def label(case: tuple[str, str], others: list[str]) -> str:
    """A package, and its scenario when there are several."""
    scenario, package = case
    return f"{package} {scenario}" if others else package

if __name__ == "__main__":
    main()
