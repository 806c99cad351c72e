"""Compare builds of the whole Python package and its core on one scenario, run interleaved.

    git worktree add /tmp/before <commit>     # and build its core there, e.g.
    (cd /tmp/before && AQMLAB_PGO=0 maturin develop --release)
    python bench/compare_cores.py scenarios/bench-dumbbell-1000.toml /tmp/before/python python --runs 12

Each argument after the scenario is a directory holding an ``aqmlab`` package with
its built ``_core.abi3.so``. The runs take turns (A, B, A, B, ...), each in a fresh
process with that directory first on ``PYTHONPATH``, so that a busy or slow spell
of the machine hits every build alike; printed are each build's best and median
core wall time (``Results.timing["wall_time_s"]``) and data packets per second.
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
    args = ap.parse_args()

    times: dict[str, list[float]] = {p: [] for p in args.packages}
    packets: dict[str, int] = {}
    for _ in range(args.runs):
        for p in args.packages:
            r = run(args.scenario, p)
            times[p].append(r["core_s"])
            packets[p] = r["packets"]
            print(f"  {p}: {r['core_s']:.3f} s", flush=True)
    for p, t in times.items():
        best, median = min(t), statistics.median(t)
        print(f"{p}: core best {best:.3f} s ({packets[p] / best / 1e6:.2f} M data packets/s), "
              f"median {median:.3f} s ({packets[p] / median / 1e6:.2f} M/s), {len(t)} runs")


if __name__ == "__main__":
    main()
