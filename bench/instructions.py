"""Instructions per data packet of the core's dumbbell benchmark, counted.

    cargo build --release -p aqmlab-sim --example dumbbell_bench
    python bench/instructions.py target/release/examples/dumbbell_bench [--flows 1000]
        [--qdisc '{"kind": "qsdrr", "limit": {"packets": 290}}'] [--cache]

A count of instructions does not move with the machine's load, where wall
time on a shared VM spreads by 30% from run to run, so it tells a change's
effect on the work done to the last digit (not on cache misses or branch
mispredictions: ``--cache`` adds cachegrind's simulated L1 data misses).
The binary runs under valgrind's cachegrind for 5 s and for 10 s simulated;
the difference of the two, divided by the difference of the data packets
delivered, leaves out building the network, the flows' start (the
benchmark starts them over its first 2 s, in slow start, when packets
leave in bursts that queue at the access links) and the results: it
counts the steady state that fills most of a 20-s run. (Until the
seventh round it compared 1 s with 5 s, which weighed the start-up more:
2,520 instructions per data packet then, 2,414 for the same build now.)
"""

from __future__ import annotations

import argparse
import re
import subprocess

#: Simulated seconds of the two runs compared: the second minus the first is
#: steady state.
SHORT, LONG = 5, 10


def count(binary: str, flows: int, seconds: int, qdisc: str | None, cache: bool) -> dict[str, int]:
    """Data packets delivered, instructions and (with ``cache``) L1 data misses of one run."""
    cmd = ["valgrind", "--tool=cachegrind", f"--cache-sim={'yes' if cache else 'no'}",
           "--cachegrind-out-file=/dev/null", binary, str(flows), str(seconds)] + ([qdisc] if qdisc else [])
    run = subprocess.run(cmd, capture_output=True, text=True, check=True)
    text = run.stdout + run.stderr

    def number(pattern: str) -> int:
        return int(re.search(pattern, text).group(1).replace(",", ""))

    figures = {"packets": number(r"data packets delivered (\d+)"), "instructions": number(r"I\s+refs:\s+([\d,]+)")}
    if cache:
        figures["l1_misses"] = number(r"D1\s+misses:\s+([\d,]+)")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", help="a build of the dumbbell_bench example")
    parser.add_argument("--flows", type=int, default=1000)
    parser.add_argument("--qdisc", help="the bottleneck's discipline as JSON (default DropTail)")
    parser.add_argument("--cache", action="store_true", help="also count simulated L1 data misses")
    args = parser.parse_args()
    short, long = (count(args.binary, args.flows, s, args.qdisc, args.cache) for s in (SHORT, LONG))
    packets = long["packets"] - short["packets"]
    for key in long:
        if key != "packets":
            print(f"{key.replace('_', ' ')} per data packet: {(long[key] - short[key]) / packets:,.1f}")
    print(f"({packets:,} data packets between the {SHORT}-s and {LONG}-s runs; {args.flows:,} flows)")


if __name__ == "__main__":
    main()
