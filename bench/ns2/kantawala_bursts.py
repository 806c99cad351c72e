#!/usr/bin/env python3
"""Seed 000's short bursts with two RTT classes (Fig 3.14, kantawala.e3_short) in ns-2.

The report has QSDRR and TDRR give the 200 ms bursts more than twice RED's and Blue's share
of the 40 ms bursts' goodput, and Tail Drop well above RED and Blue. ns-2 has no QSDRR or
Blue, but it has the report's RED and Tail Drop. This runs the experiment's paper-fidelity
scenarios for those two (1000 on-off sources, 100 s; a fresh connection per burst, which
the translator writes as both agents' ``reset``) through ``aqmlab crosscheck ns2`` and
prints each class's mean goodput and the ratio, in aqmlab, in aqmlab with ns-2's choices,
and in ns-2 2.35.

    python bench/ns2/kantawala_bursts.py                      # B = 200 and 1000: about 4 minutes
    python bench/ns2/kantawala_bursts.py --buffers 200 --keep # the connection kept instead

What it found is in docs/experiments/kantawala.md, "kantawala.e3_short".
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import polars as pl

from aqmlab.crosscheck import crosscheck_ns2
from aqmlab.experiments.kantawala import common

SIMULATORS = ("aqmlab", "aqmlab_ns2", "ns2")


def class_goodputs(flows: pl.DataFrame) -> dict[str, tuple[float, float, float]]:
    """Mean goodput (Mb/s) of the 40 ms and 200 ms sources, and their ratio, by simulator."""
    by_rtt = flows.group_by("base_rtt_s").agg(pl.col(f"{s}_bps").mean() for s in SIMULATORS).sort("base_rtt_s")
    out = {}
    for s in SIMULATORS:
        fast, slow = by_rtt[f"{s}_bps"].to_list()
        out[s] = (fast / 1e6, slow / 1e6, slow / fast)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--buffers", default="200,1000")
    ap.add_argument("--policies", default="red,droptail")
    ap.add_argument("--keep", action="store_true", help="keep the connection from burst to burst")
    args = ap.parse_args()
    print("policy, B: 40 ms / 200 ms sources (Mb/s), ratio -- aqmlab | aqmlab with ns-2's choices | ns-2")
    for policy in args.policies.split(","):
        for b in (int(x) for x in args.buffers.split(",")):
            s = common.multi_rtt(policy, b, common.Scale(), 1, "short")
            if args.keep:
                for f in s["flows"]:
                    f["keep_connection"] = True
            with tempfile.TemporaryDirectory() as tmp:
                check = crosscheck_ns2(s, Path(tmp))
            cells = [f"{a:.3f} / {c:.3f}, {r:.3f}" for a, c, r in class_goodputs(check.flows).values()]
            print(f"{policy}, {b}: " + " | ".join(cells))


if __name__ == "__main__":
    main()
