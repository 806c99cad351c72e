"""Compare builds of the core's dumbbell benchmark, run interleaved.

    cargo build --release -p aqmlab-sim --example dumbbell_bench
    cp target/release/examples/dumbbell_bench /tmp/before    # and so on
    python bench/compare.py /tmp/before /tmp/after [--runs 6] [--flows 1000] [--seconds 20]
        [--qdisc '{"kind": "qsdrr", "limit": {"packets": 290}}']

On a shared machine one run says little: another process can take the core
for part of it. The builds are run in turn (A, B, A, B, ...) so that a busy
spell slows them alike, and each one's best and median rates are printed,
with the spread of its runs as a measure of the noise.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess


def rate(binary: str, flows: int, seconds: int, qdisc: str | None) -> float:
    cmd = [binary, str(flows), str(seconds)] + ([qdisc] if qdisc else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"([0-9.]+) M/s", out).group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--flows", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--qdisc", help="the bottleneck's discipline as JSON (default DropTail)")
    args = ap.parse_args()

    rates: dict[str, list[float]] = {b: [] for b in args.binaries}
    for _ in range(args.runs):
        for b in args.binaries:
            rates[b].append(rate(b, args.flows, args.seconds, args.qdisc))
    first = max(rates[args.binaries[0]])
    for b, r in rates.items():
        print(f"{b}: best {max(r):.2f} M data packets/s ({max(r) / first - 1:+.0%}), median {statistics.median(r):.2f}, "
              f"runs {min(r):.2f}-{max(r):.2f}")


if __name__ == "__main__":
    main()
