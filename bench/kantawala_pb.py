"""Periodic Balancing under churn (seed 000, Tables 5.6-5.8): two variants of a PB pass.

Runs ``kantawala.e5_churn``'s Periodic Balancing at paper fidelity (1000 sources, 20
queues, 200 filters, 200 s) once per hold time with ``bloom.pb_target`` set, and prints
the average and maximum max/min flows per queue, and the average by the sample's place in
the 200 ms clearing period (a pass runs 50 ms in). docs/experiments/kantawala.md,
"kantawala.e5_churn", reads these figures.

    python bench/kantawala_pb.py                      # Figure 5.8 as printed
    python bench/kantawala_pb.py --target each_move   # the digest's A-BF4 (the default)
"""

import argparse
import tempfile
import time
from pathlib import Path

import polars as pl

import aqmlab
from aqmlab.experiments.kantawala import chapter5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=("each_queue", "each_move"), default="each_queue")
    ap.add_argument("--holds", default="0.5,1,2,5", help="mean hold times in seconds, comma-separated")
    args = ap.parse_args()
    p = chapter5.ChurnParams()
    for hold in (float(h) for h in args.holds.split(",")):
        s = chapter5.churn_scenario("periodic", hold, p)
        s["topology"]["bottleneck"]["qdisc"]["bloom"]["pb_target"] = args.target
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            aqmlab.run(s).write(tmp)
            series = chapter5.imbalance_series(Path(tmp), p.queues).filter(pl.col("time_s") >= p.measure_from_s)
        phase_ms = ((pl.col("time_s") * 1000).round(0).cast(pl.Int64) % 200).alias("phase_ms")
        by_phase = series.group_by(phase_ms).agg(pl.col("ratio").mean()).sort("phase_ms")
        phases = " ".join(f"{ms}:{r:.2f}" for ms, r in by_phase.iter_rows())
        print(f"hold {hold:g} s, {args.target}: average {series['ratio'].mean():.3f}, "
              f"maximum {series['ratio'].max():.2f} ({time.time() - t0:.0f} s)\n  by ms into the period: {phases}")


if __name__ == "__main__":
    main()
