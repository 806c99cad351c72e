#!/usr/bin/env python3
"""Seed 000's Table 2.4 (kantawala.e2_rtt, Tail Drop) in ns-2 2.35 beside aqmlab.

50 Reno flows of RTT 40 ms and 50 of 200 ms share a 500 Mb/s Tail Drop bottleneck for
100 s. Each case is the experiment's own paper-fidelity scenario, translated by aqmlab's
translator (aqmlab.ns2, as `aqmlab crosscheck ns2`: ns-2's agents set as aqmlab's TCP),
with one change at most:

  access100   the senders' access links at 100 Mb/s instead of 10;
  bugfix      ns-2's default Reno (bugFix_ true: no second fast retransmit within a
              window), which the translator turns off to match aqmlab's classic Reno.

    python bench/ns2/kantawala_rtt.py                      # every case: about 20 min
    python bench/ns2/kantawala_rtt.py --only 800 --duration 5

Prints and writes bench/ns2/kantawala_rtt.json: each class's mean goodput (Mb/s) in both.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from aqmlab.experiments import get
from aqmlab.ns2 import to_tcl
from aqmlab.ns2.run import ns_binary
from aqmlab.run import run
from aqmlab.scenario import Scenario

HERE = Path(__file__).resolve().parent
CASES = {  # name: (buffer, access rate, ns-2 Reno's bugFix_)
    "800": (800, "10Mbps", False),
    "4167": (4167, "10Mbps", False),
    "800-bugfix": (800, "10Mbps", True),
    "800-access100": (800, "100Mbps", False),
}


def scenario(buffer: int, access: str, duration_s: float | None) -> dict[str, Any]:
    exp = get("kantawala.e2_rtt")
    s = exp.scenario("droptail", buffer, exp.fidelities["paper"]) | {"sample_interval": "0s"}
    for f in s["flows"]:
        f.pop("trace_cwnd")
    s["topology"]["access"]["rate"] = access
    if duration_s is not None:
        s["duration"] = f"{duration_s}s"
    return s


def ns2_goodputs(s: dict[str, Any], bugfix: bool) -> dict[int, float]:
    """Each flow's goodput in ns-2 (b/s): its highest cumulative ACK at the end."""
    tcl = to_tcl(Scenario.coerce(s).resolve())
    if bugfix:
        tcl = tcl.replace("$tcp set bugFix_ false", "$tcp set bugFix_ true")
    seconds = Scenario.coerce(s).resolve()["duration_ns"] / 1e9
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "scenario.tcl").write_text(tcl)
        subprocess.run([ns_binary(), "scenario.tcl"], cwd=d, check=True, capture_output=True)
        lines = (Path(d) / "ns2.out").read_text().splitlines()
    ends = [ln.split() for ln in lines if ln.startswith("tcp end ")]
    return {int(p[2]): int(p[3]) * 1500 * 8 / seconds for p in ends}


def class_means(by_flow: dict[int, float], groups: list[str]) -> dict[str, float]:
    out: dict[str, list[float]] = {}
    for flow, bps in by_flow.items():
        out.setdefault(groups[flow], []).append(bps)
    return {g: round(sum(v) / len(v) / 1e6, 3) for g, v in sorted(out.items())}


def case(name: str, duration_s: float | None) -> dict[str, Any]:
    buffer, access, bugfix = CASES[name]
    s = scenario(buffer, access, duration_s)
    flows = run(s).flows.sort("flow_id")
    groups = [str(g) for g in flows["group"]]
    aqmlab = class_means(dict(zip(flows["flow_id"].to_list(), flows["throughput_bps"].to_list())), groups)
    ns2 = class_means(ns2_goodputs(s, bugfix), groups)
    return {"case": name, "buffer": buffer, "access": access, "ns2_bugfix": bugfix, "aqmlab_mbps": aqmlab,
            "ns2_mbps": ns2}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", choices=sorted(CASES), help="a case (repeatable)")
    ap.add_argument("--duration", type=float, help="seconds simulated (default: the experiment's 100)")
    args = ap.parse_args()
    rows = []
    for name in args.only or list(CASES):
        rows.append(case(name, args.duration))
        print(json.dumps(rows[-1]), flush=True)
    if not args.only and args.duration is None:
        (HERE / "kantawala_rtt.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
