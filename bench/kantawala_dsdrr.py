"""Seed 000's DSDRR experiments with the other reading of digest A-DS1.

A packet over DSDRR's threshold for an unmarked queue while W queues are already marked:
the report says only that the queue is not marked. The experiments accept the packet if it
fits (A-DS1's recommendation); ``over_w = "drop"`` drops it. This runs the chapter 6
experiments named at paper fidelity with ``over_w = "drop"`` for every DSDRR, the other
policies' runs read from the store, writes them under ``--out`` and prints DSDRR's
references beside those of the experiments as shipped (read from ``--shipped``).
docs/experiments/kantawala.md, "kantawala.e3_mrtt and e6_mrtt", reads these figures.

    python bench/kantawala_dsdrr.py --store /work/store-paper --shipped /work/reproduce
"""

import argparse
import json
import time
from pathlib import Path
from typing import Any

from aqmlab import experiments
from aqmlab.experiments.kantawala import common

IDS = "kantawala.e6_mrtt,kantawala.e6_sb,kantawala.e6_mh,kantawala.e6_episodes,kantawala.e6_short"
shipped_qdisc = common.qdisc


def qdisc_dropping_over_w(policy: str, buffer_pkts: int, **params: Any) -> dict[str, Any]:
    q = shipped_qdisc(policy, buffer_pkts, **params)
    return q | {"over_w": "drop"} if q["kind"] == "dsdrr" else q


# The experiments build every bottleneck through common.qdisc.
common.qdisc = qdisc_dropping_over_w


def dsdrr_rows(directory: Path) -> dict[str, dict[str, Any]]:
    rows = json.loads((directory / "comparison.json").read_text())
    return {r["key"]: r for r in rows if "dsdrr" in r["key"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", default=IDS, help="experiments, comma-separated")
    ap.add_argument("--store", default="results/store")
    ap.add_argument("--out", default="results/dsdrr-over-w-drop")
    ap.add_argument("--shipped", default="results/reproduce", help="the shipped experiments' outputs")
    ap.add_argument("-j", "--workers", type=int, default=1)
    args = ap.parse_args()
    for id in args.ids.split(","):
        t0 = time.time()
        experiments.reproduce(id, "paper", out=args.out, store=args.store, workers=args.workers)
        print(f"{id} ({time.time() - t0:.0f} s): report / accepted (shipped) / dropped (over_w)")
        shipped = Path(args.shipped) / "paper" / id
        before = dsdrr_rows(shipped) if (shipped / "comparison.json").exists() else {}
        for key, r in dsdrr_rows(Path(args.out) / "paper" / id).items():
            old = before.get(key, {}).get("ours")
            print(f"  {key:28s} {r['paper']:8.4g} / {'-' if old is None else f'{old:.4g}':>8} / {r['ours']:.4g}")


if __name__ == "__main__":
    main()
