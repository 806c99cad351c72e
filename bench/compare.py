"""Compare builds of the core's dumbbell benchmark, run interleaved.

    cargo build --release -p aqmlab-sim --example dumbbell_bench
    cp target/release/examples/dumbbell_bench /tmp/before    # and so on
    python bench/compare.py /tmp/before /tmp/after [--runs 6] [--flows 1000] [--seconds 20]
        [--qdisc '{"kind": "qsdrr", "limit": {"packets": 290}}']

On a shared machine one run says little: another process can take the core
for part of it. The builds are run in turn (A, B, A, B, ...) so that a busy
spell slows them alike, and each one's best and median rates are printed,
with the spread of its runs as a measure of the noise. Beside the rate per
wall second of the run, the rate per CPU second of the whole process (user
and system time, which other jobs' time slices do not inflate; it includes
building the network and the results).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess


def rate(binary: str, flows: int, seconds: int, qdisc: str | None) -> tuple[float, float]:
    """M data packets per wall second of the run, and per CPU second of the process."""
    cmd = [binary, str(flows), str(seconds)] + ([qdisc] if qdisc else [])
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise SystemExit(f"{binary} failed")
    packets = int(re.search(r"data packets delivered (\d+)", out).group(1))
    wall = float(re.search(r"wall ([0-9.]+) s", out).group(1))
    return packets / wall / 1e6, packets / (usage.ru_utime + usage.ru_stime) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--flows", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--qdisc", help="the bottleneck's discipline as JSON (default DropTail)")
    args = ap.parse_args()

    rates: dict[str, list[tuple[float, float]]] = {b: [] for b in args.binaries}
    for _ in range(args.runs):
        for b in args.binaries:
            rates[b].append(rate(b, args.flows, args.seconds, args.qdisc))
    first = max(w for w, _ in rates[args.binaries[0]])
    for b, r in rates.items():
        wall = [w for w, _ in r]
        cpu = [c for _, c in r]
        print(f"{b}: best {max(wall):.2f} M data packets/s ({max(wall) / first - 1:+.0%}), median {statistics.median(wall):.2f}, "
              f"runs {min(wall):.2f}-{max(wall):.2f}; per CPU second best {max(cpu):.2f}, median {statistics.median(cpu):.2f}")


if __name__ == "__main__":
    main()
