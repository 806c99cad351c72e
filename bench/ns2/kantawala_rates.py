#!/usr/bin/env python3
"""Seed 000's Table 2.4 (kantawala.e2_rtt, Tail Drop) over bottleneck rates a hair apart.

All flows start at t = 0 on identical links, so each RTT class moves in lockstep, and one
packet's fate at an overflow (a tie at a host queue, one window rounded one way) is a whole
class's. The run is chaotic: a bottleneck of 500 +- 0.1% Mb/s gives results as far apart as
the two simulators are. This runs the experiment's paper-fidelity Tail Drop scenario at the
rates given, in aqmlab (with ns-2's ties and RTT estimator, as `aqmlab crosscheck ns2`'s
"with ns-2's choices" column) and in ns-2 2.35 (aqmlab's translator), and prints each class's
mean goodput, the utilization and the timeouts per flow, then their mean and standard
deviation over the rates.

    python bench/ns2/kantawala_rates.py                         # B = 800, 11 rates, 100 s: about 20 min
    python bench/ns2/kantawala_rates.py --duration 5            # the first 5 s: about 2 min
    python bench/ns2/kantawala_rates.py --buffer 4167 --no-ns2  # aqmlab only

What it found is in docs/experiments/kantawala.md, `kantawala.e2_rtt`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from aqmlab.ns2 import to_tcl
from aqmlab.ns2.run import ns_binary
from aqmlab.run import run
from aqmlab.scenario import Scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kantawala_rtt import scenario  # noqa: E402

RATES_MBPS = (498.0, 498.5, 499.0, 499.5, 499.8, 500.0, 500.2, 500.5, 501.0, 501.5, 502.0)
PAYLOAD_BITS = 1500 * 8


def figures(delivered: list[int], timeouts: list[int], seconds: float, rate_bps: float) -> dict[str, float]:
    """Packets delivered per flow (flows 0-49 at 40 ms, 50-99 at 200 ms) as Mb/s a class."""
    half = len(delivered) // 2
    mbps = [d * PAYLOAD_BITS / seconds / 1e6 for d in delivered]
    return {"rtt40": round(sum(mbps[:half]) / half, 3), "rtt200": round(sum(mbps[half:]) / half, 3),
            "utilization": round(sum(mbps) * 1e6 / rate_bps, 4), "timeouts": round(sum(timeouts) / len(timeouts), 2)}


def aqmlab_run(s: dict[str, Any], seconds: float, rate_bps: float) -> dict[str, float]:
    s = s | {"ties": "numbered", "tcp": s["tcp"] | {"rtt_estimator": "ns2"}}
    f = run(s).flows.sort("flow_id")
    delivered = [round(b * seconds / PAYLOAD_BITS) for b in f["throughput_bps"]]
    return figures(delivered, f["timeouts"].to_list(), seconds, rate_bps)


def ns2_run(s: dict[str, Any], seconds: float, rate_bps: float) -> dict[str, float]:
    """Each flow's highest cumulative ACK at the end (``tcp end`` lines of ns2.out)."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "scenario.tcl").write_text(to_tcl(Scenario.coerce(s).resolve()))
        subprocess.run([ns_binary(), "scenario.tcl"], cwd=d, check=True, capture_output=True)
        ends = sorted((ln.split() for ln in (Path(d) / "ns2.out").read_text().splitlines()
                       if ln.startswith("tcp end ")), key=lambda p: int(p[2]))
    return figures([int(p[3]) + 1 for p in ends], [int(p[6]) for p in ends], seconds, rate_bps)


def summary(rows: list[dict[str, float]]) -> dict[str, str]:
    out = {}
    for k in rows[0]:
        v = [r[k] for r in rows]
        out[k] = f"{statistics.mean(v):.3f} sd {statistics.stdev(v):.3f} ({min(v):.3f}-{max(v):.3f})"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--buffer", type=int, default=800)
    ap.add_argument("--duration", type=float, default=100.0, help="seconds simulated")
    ap.add_argument("--rates", default=",".join(f"{r:g}" for r in RATES_MBPS), help="Mb/s, comma-separated")
    ap.add_argument("--no-ns2", action="store_true", help="aqmlab only")
    args = ap.parse_args()
    ours, theirs = [], []
    for mbps in (float(r) for r in args.rates.split(",")):
        s = scenario(args.buffer, "10Mbps", args.duration)
        s["topology"]["bottleneck"]["rate"] = f"{round(mbps * 1e6)}bps"
        ours.append(aqmlab_run(s, args.duration, mbps * 1e6))
        row = {"rate_mbps": mbps, "aqmlab": ours[-1]}
        if not args.no_ns2:
            theirs.append(ns2_run(s, args.duration, mbps * 1e6))
            row["ns2"] = theirs[-1]
        print(json.dumps(row), flush=True)
    if len(ours) > 1:
        print(json.dumps({"aqmlab": summary(ours)} | ({"ns2": summary(theirs)} if theirs else {}), indent=1))


if __name__ == "__main__":
    main()
