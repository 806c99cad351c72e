#!/usr/bin/env python3
"""The sum of the windows of many long flows (seed 003, Figs 3.2-3.3) in ns-2 and in aqmlab,
on the same flows: the spread of the sum and why
(aqmlab.experiments.appenzeller.chapter3.window_sum_spread).

    python bench/ns2/window_sum.py                     # OC3, 200 flows, B = 2 BDP/sqrt(n)
    python bench/ns2/window_sum.py --rate 1e9 --rtt 0.084 --flows 500 --measure 20

ns-2 runs bench/ns2/appenzeller.tcl in the matched model (aqmlab's TCP, the access delays and
start times aqmlab drew) with a sampler every 10 ms that reads each Reno agent's cwnd_ (ns-2
keeps fast recovery's inflation apart, in dupwnd_) and its outstanding packets
t_seqno_ - ack_ - 1 (the thesis's W, section 2.4). aqmlab's window is its congestion
window, inflated during fast recovery. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

import appenzeller as bench  # bench/ns2/appenzeller.py, beside this file
from aqmlab.experiments.appenzeller.chapter3 import window_sum_spread
from aqmlab.experiments.appenzeller.common import OC3_BPS, OC3_MEAN_RTT_S, LongFlows
from aqmlab.theory.sizing import queue_std_bound

SAMPLER = """
set wfile [open "windows.txt" w]
proc wsample {} {
    global ns tcp long_n wfile qmon
    set row [list [$ns now] [$qmon set pkts_]]
    for {set i 0} {$i < $long_n} {incr i} {
        lappend row [$tcp($i) set cwnd_] [expr {max([$tcp($i) set t_seqno_] - [$tcp($i) set ack_] - 1, 0)}]
    }
    puts $wfile $row
    $ns at [expr {[$ns now] + 0.01}] wsample
}
"""


def ns2_windows(setup: LongFlows, n: int, buffer: int) -> dict[str, np.ndarray]:
    """ns-2's windows every 10 ms after the warm-up: cwnd_ and outstanding (samples x flows)."""
    matched = {m.name: m for m in bench.models(setup)}["matched"]
    tcl = bench.TCL.read_text().replace(
        "$ns at 1.0 count_bytes", SAMPLER + f"$ns at {setup.warmup(n, buffer)} wsample\n$ns at 1.0 count_bytes")
    with tempfile.TemporaryDirectory(prefix="window-sum-") as work:
        Path(work, "run.tcl").write_text(tcl)
        subprocess.run([bench.ns_binary(), "run.tcl", *bench.tcl_args(setup, n, buffer, 1, matched)], cwd=work,
                       check=True, capture_output=True)
        a = np.loadtxt(Path(work, "windows.txt"))
    return {"queue": a[:, 1], "cwnd": a[:, 2::2], "outstanding": a[:, 3::2]}


def aqmlab_windows(setup: LongFlows, n: int, buffer: int) -> dict[str, np.ndarray]:
    import aqmlab

    s = setup.scenario(n, buffer, 1)
    s = {**s, "sample_interval": "10ms", "flows": [{**s["flows"][0], "trace_cwnd": True}]}
    ts = aqmlab.run(s, force=True).timeseries.filter(pl.col("time_s") >= setup.warmup(n, buffer))
    cwnd = ts.filter(pl.col("metric") == "cwnd").pivot("entity", index="time_s", values="value").sort("time_s")
    queue = ts.filter((pl.col("metric") == "queue_packets") & (pl.col("entity") == "bottleneck")).sort("time_s")
    return {"queue": queue["value"].to_numpy(), "cwnd": cwnd.drop("time_s").fill_null(0.0).to_numpy()}


def describe(w: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    out = {}
    for name in ("cwnd", "outstanding"):
        if name in w:
            total = w[name].sum(axis=1)
            out[name] = {"mean": float(total.mean()), "sd": float(total.std()),
                         "minus_queue": float((total - w["queue"][: len(total)]).mean()),
                         **window_sum_spread(w[name])}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=OC3_BPS)
    ap.add_argument("--rtt", type=float, default=OC3_MEAN_RTT_S, help="mean 2T_p (s)")
    ap.add_argument("--flows", type=int, default=200)
    ap.add_argument("--buffer-bdps", type=float, default=2.0, help="B in BDP/sqrt(n)")
    ap.add_argument("--measure", type=float, default=30.0, help="seconds measured after the warm-up")
    a = ap.parse_args()
    setup = LongFlows(a.rate, a.rtt, warmup_s=30, measure_s=a.measure, seeds=1)
    buffer = round(a.buffer_bdps * setup.bdp / math.sqrt(a.flows))
    print(json.dumps({
        "rate_bps": a.rate, "bdp": setup.bdp, "flows": a.flows, "buffer": buffer,
        "bound_sd": queue_std_bound(buffer, setup.bdp, a.flows),
        "ns2": describe(ns2_windows(setup, a.flows, buffer)),
        "aqmlab": describe(aqmlab_windows(setup, a.flows, buffer)),
    }, indent=1))


if __name__ == "__main__":
    main()
