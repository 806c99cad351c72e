#!/usr/bin/env python3
"""aqmlab's side of the Pareto question (docs/experiments/appenzeller.md, appenzeller.fig5_9):
the experiment's large-buffer run with other flow lengths or loads, one line per variant.

    python bench/ns2/appenzeller_pareto_lengths.py load=1.3 mean_packets=100,load=1.3 shape=1.5,load=1.05

Each argument is a comma-separated list of ParetoParams fields (mean_packets, shape, load,
seed, ...) and optionally buffer= (default 1650), over the experiment's paper fidelity. Prints
the means over the measurement of the active flows and the flows in congestion avoidance
(their range), the bottleneck's utilization and loss, the least and mean queue, and the load
the arrived flows offered (realized_load).
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import fields, replace
from pathlib import Path

import polars as pl

import aqmlab
from aqmlab.experiments.appenzeller.chapter5 import Fig59, ParetoParams, interval_series, realized_load


def variant(spec: str) -> tuple[ParetoParams, int]:
    """ParetoParams and the buffer from ``name=value,...``."""
    types = {f.name: f.type for f in fields(ParetoParams)}
    values = dict(item.split("=", 1) for item in spec.split(","))
    buffer = int(values.pop("buffer", 1650))
    if unknown := set(values) - set(types):
        print(f"{spec}: ParetoParams has no {', '.join(sorted(unknown))}", file=sys.stderr)
        sys.exit(2)
    cast = {k: int(v) if types[k] in (int, "int") else float(v) for k, v in values.items()}
    return replace(Fig59.fidelities["paper"], **cast), buffer


def main() -> None:
    for spec in sys.argv[1:] or ["load=1.3"]:
        p, buffer = variant(spec)
        with tempfile.TemporaryDirectory(prefix="pareto-") as tmp:
            out = aqmlab.run(p.scenario(buffer)).write(Path(tmp) / "run")
            s = interval_series(out, p)
            ts = pl.read_parquet(out / "timeseries.parquet")
            active = ts.filter((pl.col("metric") == "active_flows") & (pl.col("time_s") > p.warmup_s))["value"]
            summary = json.loads((out / "summary.json").read_text())
            print(f"{spec} buffer={buffer}: active {active.mean():.0f} ({active.min():.0f}-{active.max():.0f}) "
                  f"ca {s['flows_in_ca'].mean():.0f} ({s['flows_in_ca'].min():.0f}-{s['flows_in_ca'].max():.0f}) "
                  f"util {summary['bottleneck_utilization']:.4f} loss {summary['bottleneck_loss_rate']:.4f} "
                  f"queue_min {s['queue'].min():.0f} queue_mean {s['queue'].mean():.0f} "
                  f"realized_load {realized_load(out, p):.2f}", flush=True)


if __name__ == "__main__":
    main()
