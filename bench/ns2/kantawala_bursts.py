#!/usr/bin/env python3
"""Seed 000's short bursts (kantawala.e3_short, Figs 3.14 and 3.16) in ns-2.

The report has QSDRR and TDRR give the 200 ms bursts more than twice RED's and Blue's share
of the 40 ms bursts' goodput, and Tail Drop well above RED and Blue; on three hops the
non-DRR policies give the end-to-end bursts about 0.3 of the cross traffic's. ns-2 has no
QSDRR or Blue, but it has the report's RED and Tail Drop. This runs the experiment's
paper-fidelity scenarios for those two (1000 or 2000 on-off sources, 100 s; a fresh
connection per burst, which the translator writes as both agents' ``reset``) through
``aqmlab crosscheck ns2`` and prints each class's mean goodput and the ratio (200 ms / 40
ms, or end-to-end / cross traffic at R1), in aqmlab, in aqmlab with ns-2's choices, and in
ns-2 2.35.

    python bench/ns2/kantawala_bursts.py                      # two RTTs, B = 200, 1000: 4 minutes
    python bench/ns2/kantawala_bursts.py --topology mh --policies droptail --buffers 1000,5000
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
from aqmlab.names import NameList
from aqmlab.scenario import Scenario

SIMULATORS = ("aqmlab", "aqmlab_ns2", "ns2")


def classes(s: dict) -> pl.DataFrame:
    """Each flow's class: ``high`` (40 ms, or cross traffic entering at R1) or ``low``
    (200 ms, or end-to-end), as the experiment reads them; other cross traffic none."""
    r = Scenario.coerce(s).resolve()
    names = NameList.from_contract(r["nodes"])
    src = [names[int(i)] for i in r["flows"]["src"]]
    label = [g["label"] for g in r["flows"]["groups"]]
    group = [label[int(g)] for g in r["flows"]["group"]]
    high = {"rtt40": lambda n: True, "cross": lambda n: n.startswith("x1_src")}
    cls = [("low" if g in ("rtt200", "through") else "high" if high[g](n) else None) for g, n in zip(group, src)]
    return pl.DataFrame({"flow_id": range(len(cls)), "class": cls})


def class_goodputs(flows: pl.DataFrame, cls: pl.DataFrame) -> dict[str, tuple[float, float, float]]:
    """Mean goodput (Mb/s) of the advantaged and disadvantaged sources, and their ratio."""
    by = flows.join(cls, on="flow_id").filter(pl.col("class").is_not_null())
    means = by.group_by("class").agg(pl.col(f"{s}_bps").mean() for s in SIMULATORS).sort("class")
    out = {}
    for s in SIMULATORS:
        high, low = means[f"{s}_bps"].to_list()
        out[s] = (high / 1e6, low / 1e6, low / high)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topology", choices=("mrtt", "mh"), default="mrtt")
    ap.add_argument("--buffers", default="200,1000")
    ap.add_argument("--policies", default="red,droptail")
    ap.add_argument("--keep", action="store_true", help="keep the connection from burst to burst")
    args = ap.parse_args()
    pair = "40 ms / 200 ms" if args.topology == "mrtt" else "cross at R1 / end-to-end"
    print(f"policy, B: {pair} sources (Mb/s), ratio -- aqmlab | aqmlab with ns-2's choices | ns-2")
    for policy in args.policies.split(","):
        for b in (int(x) for x in args.buffers.split(",")):
            s = common.TOPOLOGIES[args.topology](policy, b, common.Scale(), 1, "short")
            if args.keep:
                for f in s["flows"]:
                    f["keep_connection"] = True
            with tempfile.TemporaryDirectory() as tmp:
                check = crosscheck_ns2(s, Path(tmp))
            cells = [f"{a:.3f} / {c:.3f}, {r:.3f}" for a, c, r in class_goodputs(check.flows, classes(s)).values()]
            print(f"{policy}, {b}: " + " | ".join(cells))


if __name__ == "__main__":
    main()
