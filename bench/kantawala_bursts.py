"""Seed 000's short bursts (Figs 3.12-3.16) with the connection kept from burst to burst.

The report does not say whether each 256-packet burst of an on-off source opens a fresh
connection or continues the last one (digest A-T6). ``kantawala.e3_short`` opens a fresh
one; ns-2's natural on-off source, one ``Agent/TCP`` given 256 more packets each time,
continues it (``keep_connection``): the threshold and RTT estimate carry over the idle
time, and the window too unless the idle time reaches an RTO (then ns-2's timer has
closed it to one packet). This runs the experiment's paper-fidelity scenarios at a few
buffers with ``keep_connection`` set, or not, and prints the references' figures beside
the report's values. docs/experiments/kantawala.md, "kantawala.e3_short", reads them.

    python bench/kantawala_bursts.py --keep --buffers 200,1000,5000 -j 2
    python bench/kantawala_bursts.py --topologies mh --policies tdrr --tdrr-weight 0.0009765625
    python bench/kantawala_bursts.py --topologies mh --hop-drift 0.0006
    python bench/kantawala_bursts.py --topologies mrtt --policies blue --buffers 5000 --blue-threshold 1000

``--tdrr-weight`` gives TDRR another EWMA weight (a longer memory: digest A-TD1).
``--blue-threshold L`` raises Blue's probability also when the queue is longer than L
packets (the Blue paper's optional trigger; the experiments raise it on loss alone).
``--hop-drift f`` runs the three hops at rates 1, 1 - f and 1 - 2f of the paper's: with
equal rates and equal packets, an end-to-end packet reaches the next hop in lock-step
with that hop's departures, and the order of that tie decides whether it finds a place
in a full FIFO (docs/experiments/kantawala.md, "kantawala.e3_short").
"""

import argparse
from typing import Any

import polars as pl

from aqmlab.experiments.kantawala import chapter3, common
from aqmlab.sweeps import Runner

shipped_qdisc = common.qdisc


def with_kept_connection(s: dict[str, Any]) -> dict[str, Any]:
    for f in s["flows"]:
        if "off_time" in f:
            f["keep_connection"] = True
    return s


def with_hop_drift(s: dict[str, Any], drift: float) -> dict[str, Any]:
    t = s["topology"]
    if t["kind"] == "parking_lot":
        bps = float(t["hop"]["rate"].removesuffix("bps"))
        t["hop"] = [t["hop"] | {"rate": f"{bps * (1 - k * drift):.0f}bps"} for k in range(t["hops"])]
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", action="store_true", help="keep the connection from burst to burst")
    ap.add_argument("--buffers", default="200,1000,5000")
    ap.add_argument("--topologies", default="sb,mrtt,mh")
    ap.add_argument("--policies", default=",".join(chapter3.ShortParams(chapter3.PAPER, ()).policies))
    ap.add_argument("--tdrr-weight", type=float, help="TDRR's EWMA weight (the experiments' 1/32)")
    ap.add_argument("--blue-threshold", type=int, help="Blue's queue-length trigger L, packets (the experiments: loss alone)")
    ap.add_argument("--hop-drift", type=float, help="the hops' rates 1, 1 - f, 1 - 2f of the paper's")
    ap.add_argument("--store", default="results/store")
    ap.add_argument("-j", "--workers", type=int, default=1)
    args = ap.parse_args()
    exp = chapter3.ShortBursts()
    p = chapter3.ShortParams(chapter3.PAPER, tuple(int(b) for b in args.buffers.split(",")),
                             policies=tuple(args.policies.split(",")), topologies=tuple(args.topologies.split(",")))
    extra = {"tdrr": {"weight": args.tdrr_weight}, "blue": {"threshold": args.blue_threshold}}
    extra = {policy: {k: v for k, v in kw.items() if v is not None} for policy, kw in extra.items()}
    # The experiments build every bottleneck through common.qdisc.
    common.qdisc = lambda policy, b, **kw: shipped_qdisc(policy, b, **kw, **extra.get(policy, {}))
    build, drift = exp.scenarios_of, args.hop_drift

    def changed(s: dict[str, Any]) -> dict[str, Any]:
        s = with_kept_connection(s) if args.keep else s
        return with_hop_drift(s, drift) if drift else s

    exp.scenarios_of = lambda *a: [changed(s) for s in build(*a)]  # type: ignore[method-assign]
    with Runner(None, args.workers, args.store, progress=True) as runner:
        table = exp.measure(runner, p)
    found = exp.findings(table, p)
    print(f"keep_connection = {args.keep}; TDRR's weight {args.tdrr_weight or 'as shipped'}; "
          f"Blue's L {args.blue_threshold or 'none'}; hop drift {args.hop_drift or 0}; buffers {args.buffers}")
    for r in exp.references(p):
        ours = found.get(r.key)
        print(f"  {r.key:36s} ours {ours if ours is None else round(ours, 3)!s:>7}  report {r.paper:g}")
    pl.Config.set_tbl_rows(200)
    print(table.filter(pl.col("class").is_in(["all", "ratio"])).select(
        "topology", "policy", "buffer", "goodput_bps", "completion_s"))


if __name__ == "__main__":
    main()
