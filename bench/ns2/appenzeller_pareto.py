#!/usr/bin/env python3
"""Seed 003's Pareto experiment (appenzeller.fig5_9, Figs 5.9-5.10) in ns-2
(bench/ns2/appenzeller_pareto.tcl) beside aqmlab, on the very same flows.

    python bench/ns2/appenzeller_pareto.py --scale 4 --load 1.3 --buffer 412
    python bench/ns2/appenzeller_pareto.py --scale 1 --load 1.02 --duration 50 --warmup 16.7

aqmlab runs the experiment's scenario (ParetoParams at the given load, run length and
seed) with the bottleneck rate, and the buffer the caller gives, divided by --scale;
its arrivals (start, sender, length) and access delays then go to ns-2, which runs them
as written, each flow a fresh Reno agent, in the TCP models of bench/ns2/appenzeller.py:

  thesis   ns-2 2.35's defaults but for window_ and packetSize_ (the script's), and
           queue-limit B (B - 1 waiting packets);
  matched  the agent variables aqmlab's translator sets (aqmlab.ns2.translate.sender_vars),
           and queue-limit B + 1, but delay_growth_ false: the first data packet goes with
           the SYN, a handshake that costs no round trip;
  matched_syn  the translator's variables as they are: delay_growth_ true, the SYN goes
           alone and the data wait for its ACK, as aqmlab's SYN exchange;
  era      the thesis model with the timer defaults of the ns-2 of 2003, when the thesis
           ran: minrto_ 1 s (0.2 s from 2004/10/14), rtxcur_init_ 6 s (3 s from 2006/01/21),
           maxrto_ 64 s (60 s from 2007/03/28), updated_rttvar_ false (added 2006/01/21);
  pool     the thesis model with agents reused: a client's finished flow leaves its agent
           (cwnd_, ssthresh_, RTT estimate) to the client's next flow.

Scaling the rate and the arrival rate together by 1/scale keeps every flow's length,
round trip and share of the link: the active flows and the windows (BDP + B shared among
them) scale with the link, and so the loss rate and the share of flows in congestion
avoidance stay where they are; the counts of flows are 1/scale of the full link's.

Prints one table row per simulator and model: the means over the measurement of the
active flows and the flows in congestion avoidance (per 50 ms sample), their range, the
bottleneck's utilization, loss and least queue, and appends the rows to --out (JSON).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

import aqmlab
from aqmlab.experiments.appenzeller.chapter5 import Fig59, ParetoParams, interval_series
from aqmlab.experiments.appenzeller.common import OC3_BPS, PAYLOAD_BYTES
from aqmlab.names import NameList
from aqmlab.ns2.run import ns_binary
from aqmlab.ns2.translate import sender_vars
from aqmlab.scenario import Scenario

HERE = Path(__file__).resolve().parent
TCL = HERE / "appenzeller_pareto.tcl"


def params(args: argparse.Namespace) -> ParetoParams:
    base = Fig59.fidelities["paper"]
    return replace(base, load=args.load, duration_s=args.duration, warmup_s=args.warmup, seed=args.seed,
                   rate_bps=OC3_BPS / args.scale)


def aqmlab_run(p: ParetoParams, buffer: int, work: Path) -> tuple[dict[str, Any], Path]:
    """aqmlab's run and its row; the results directory for the flows."""
    out = aqmlab.run(p.scenario(buffer)).write(work / "aqmlab")
    series = interval_series(out, p)
    ts = pl.read_parquet(out / "timeseries.parquet")
    active = ts.filter((pl.col("metric") == "active_flows") & (pl.col("time_s") > p.warmup_s))["value"]
    summary = json.loads((out / "summary.json").read_text())
    return row("aqmlab", active, series["flows_in_ca"], series["queue"],
               summary["bottleneck_utilization"], summary["bottleneck_loss_rate"]), out


def row(model: str, active: Any, ca: Any, queue: Any, util: float, loss: float) -> dict[str, Any]:
    return {"model": model, "active": float(active.mean()), "active_min": float(active.min()),
            "active_max": float(active.max()), "ca": float(ca.mean()), "ca_min": float(ca.min()),
            "ca_max": float(ca.max()), "util": util, "loss": loss, "queue_min": float(queue.min()),
            "queue_mean": float(queue.mean())}


def flows_file(p: ParetoParams, buffer: int, out: Path, path: Path) -> list[float]:
    """aqmlab's arrivals as the Tcl script reads them ("start client packets"); returns
    each client's access delay (ms)."""
    resolved = Scenario.coerce(p.scenario(buffer)).resolve()
    links = resolved["links"]
    delay_ns = dict(zip(NameList.from_contract(links["names"]), links["delay_ns"]))
    senders = [f"s{i}" for i in range(p.senders)]
    index = {s: i for i, s in enumerate(senders)}
    flows = pl.read_parquet(out / "flows.parquet", columns=["start_s", "src", "size_bytes"]).sort("start_s")
    lines = [f"{start!r} {index[src]} {math.ceil(size / PAYLOAD_BYTES)}"
             for start, src, size in flows.iter_rows()]
    path.write_text("\n".join(lines) + "\n")
    return [float(delay_ns[f"access_{s}"]) / 1e6 for s in senders]


ERA = ["minrto_ 1.0", "rtxcur_init_ 6.0", "maxrto_ 64", "updated_rttvar_ false"]
MODELS = ("thesis", "matched", "matched_syn", "era", "pool")


def ns2_run(p: ParetoParams, buffer: int, model: str, flows: Path, lats: list[float]) -> dict[str, Any]:
    profile = Scenario.coerce(p.scenario(buffer)).resolve()["tcp_profiles"][0]
    matched = sender_vars(profile, "tcp")
    tcp_vars = {"matched": [*matched, "delay_growth_ false"], "matched_syn": matched, "era": ERA}.get(model, [])
    args = {
        "bw": p.rate_bps / 8e6, "bneck_buffer": buffer + (1 if model.startswith("matched") else 0),
        "time_length": p.duration_s, "time_startphase": p.warmup_s, "time_slice": p.sample_s,
        "clients": p.senders, "access_lats": " ".join(map(repr, lats)), "flows_file": str(flows),
        "agents": "pool" if model == "pool" else "fresh", "seed": p.seed, "tcp_vars": " ".join(tcp_vars),
    }
    cmd = [ns_binary(), str(TCL), *(str(x) for kv in args.items() for x in kv)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=flows.parent)
    if done.returncode != 0 or "summary" not in done.stdout:
        raise RuntimeError(f"ns-2 failed ({model}): {done.stderr.strip()[-1000:]}")
    slices, summary = [], {}
    for line in done.stdout.splitlines():
        words = line.split()
        pairs = {k: float(v) for k, v in zip(words[2::2], words[3::2])} if words[0] == "slice" else {}
        if words[0] == "slice" and float(words[1]) > p.warmup_s + 1e-9:
            slices.append(pairs)
        elif words[0] == "summary":
            summary = {k: float(v) for k, v in zip(words[1::2], words[2::2])}
    s = pl.DataFrame(slices)
    return row(f"ns-2 {model}", s["active"], s["ca"], s["queue"], summary["util"], summary["loss"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=4.0, help="divide the rate and the arrival rate by this")
    ap.add_argument("--buffer", type=int, required=True, help="the bottleneck's buffer (packets), already scaled")
    ap.add_argument("--load", type=float, default=1.3)
    ap.add_argument("--duration", type=float, default=70.0)
    ap.add_argument("--warmup", type=float, default=40.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--models", default="thesis,matched,pool", help=f"of {', '.join(MODELS)}")
    ap.add_argument("--out", type=Path, help="append the rows to this JSON file")
    args = ap.parse_args()
    p = params(args)
    if unknown := set(args.models.split(",")) - set(MODELS):
        ap.error(f"--models: no model {', '.join(sorted(unknown))}; the models are {', '.join(MODELS)}")
    with tempfile.TemporaryDirectory(prefix="pareto-") as tmp:
        work = Path(tmp)
        rows = []
        first, out = aqmlab_run(p, args.buffer, work)
        rows.append(first)
        flows = work / "flows.txt"
        lats = flows_file(p, args.buffer, out, flows)
        for model in args.models.split(","):
            rows.append(ns2_run(p, args.buffer, model, flows, lats))
    setup = {"scale": args.scale, "buffer": args.buffer, "load": args.load, "duration": args.duration,
             "warmup": args.warmup, "seed": args.seed}
    print(f"# {setup}")
    print("| simulator | active flows | flows in CA | utilization | loss | least queue | mean queue |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['active']:.0f} ({r['active_min']:.0f}-{r['active_max']:.0f}) | "
              f"{r['ca']:.1f} ({r['ca_min']:.0f}-{r['ca_max']:.0f}) | {r['util']:.4f} | {r['loss']:.4f} | "
              f"{r['queue_min']:.0f} | {r['queue_mean']:.0f} |")
    if args.out:
        old = json.loads(args.out.read_text()) if args.out.exists() else []
        args.out.write_text(json.dumps(old + [{"setup": setup, "rows": rows}], indent=1) + "\n")


if __name__ == "__main__":
    main()
