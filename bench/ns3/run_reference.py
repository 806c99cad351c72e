#!/usr/bin/env python3
"""Build (if needed) and run the ns-3 dumbbell peer for a reference case.

    python3 bench/ns3/run_reference.py                      # dumbbell50 (default)
    python3 bench/ns3/run_reference.py --case dumbbell1000  # benchmark case
    python3 bench/ns3/run_reference.py --case dumbbell1000 --duration 10

Writes bench/ns3/reference/<case>_reno.json (or --out). Standard library only, but for
the short-flow case, whose flows come from running its scenario in aqmlab (workload.py).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from run import machine  # noqa: E402  (bench/run.py: standard library only at import)
BINARY = os.path.join(HERE, "build", "dumbbell")

KANTAWALA = dict(
    n=100, bottleneckRate="500Mbps", bottleneckDelay="49ms", accessRate="10Mbps",
    accessDelayFirst=0.001, accessDelayLast=0.001, receiverRate="10Gbps", receiverDelay=0.0,
    bufferPkts=1000, startSpread=0.0, duration=100.0, warmup=10.0, segmentSize=1460,
    sampleInterval=1.0,
)

CASES = {
    # Reference case the test suite compares against.
    "dumbbell50": dict(
        n=50, bottleneckRate="20Mbps", bottleneckDelay="20ms", accessRate="100Mbps",
        bufferPkts=100, startSpread=2.5, duration=60.0, warmup=20.0,
    ),
    # Benchmark case (packets per wall second is what gets compared).
    "dumbbell1000": dict(
        n=1000, bottleneckRate="1Gbps", bottleneckDelay="10ms", accessRate="10Gbps",
        bufferPkts=290, startSpread=2.0, duration=20.0, warmup=5.0,
    ),
    # Seed 003's backbones (scenarios/bench-backbone-*.toml): ns-3 needs hours for the
    # full runs, so they are run with --duration and compared in packets per wall second.
    "backbone10k": dict(
        n=10000, bottleneckRate="2.5Gbps", bottleneckDelay="24ms", accessRate="100Gbps",
        bufferPkts=316, startSpread=2.0, duration=20.0, warmup=5.0,
    ),
    "backbone50k": dict(
        n=50000, bottleneckRate="10Gbps", bottleneckDelay="24ms", accessRate="100Gbps",
        bufferPkts=565, startSpread=2.0, duration=60.0, warmup=5.0,
    ),
    # Seed 000's main case (scenarios/bench-kantawala-*.toml): 100 flows of 1500-byte
    # packets starting together on 10 Mb/s access links into 500 Mb/s, 1 ms + 49 ms one
    # way, a 1000-packet buffer. ns-3 has DropTail and RED; QSDRR is aqmlab's own.
    "kantawala-droptail": KANTAWALA,
    "kantawala-red": dict(
        KANTAWALA, bottleneckQueue="red", redMinTh=400, redMaxTh=800, redMaxP=0.02,
        redQw=0.001, redMeanPktSize=1000,
    ),
    # The short-flow workload (scenarios/bench-short-flows.toml): aqmlab's own flows of
    # that scenario (Poisson arrivals of Pareto-sized transfers at 80% of 1 Gb/s from
    # 1,000 senders, 20 to 40 ms access delays, to one receiver), from workload.py.
    "short-flows": dict(
        n=1000, bottleneckRate="1Gbps", bottleneckDelay="20ms", accessRate="10Gbps",
        receiverRate="10Gbps", receiverDelay=0.0, bufferPkts=1000, duration=20.0,
        warmup=5.0, segmentSize=960, sampleInterval=1.0,
    ),
}

#: Cases whose flows are an aqmlab scenario's (bench/ns3/workload.py).
WORKLOADS = {"short-flows": "bench-short-flows.toml"}


#: Above this many flows a reference keeps a summary of the per-flow goodputs, not the list.
MAX_FLOWS_LISTED = 1000


def summarize_flows(results):
    """Keep references small: 10,000 per-flow goodputs are 76 KB that nothing reads."""
    g = results.get("goodput_bps")
    if isinstance(g, list) and len(g) > MAX_FLOWS_LISTED:
        results["goodput_bps"] = {"flows": len(g), "min": min(g), "mean": sum(g) / len(g), "max": max(g)}


def build():
    subprocess.run(["bash", os.path.join(HERE, "build.sh")], check=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=sorted(CASES), default="dumbbell50")
    ap.add_argument("--duration", type=float, help="shorten the run (s); warmup is kept "
                    "unless it would not leave a window, then it becomes duration/2")
    ap.add_argument("--warmup", type=float, help="override the warm-up (s)")
    ap.add_argument("--out", help="output JSON path (default reference/<case>_reno.json)")
    ap.add_argument("--extra", action="append", default=[],
                    help="extra ns-3 argument passed through, e.g. --extra=--sack=true")
    args = ap.parse_args(argv)

    params = dict(CASES[args.case])
    if args.duration is not None:
        params["duration"] = args.duration
        if params["warmup"] >= args.duration:
            params["warmup"] = args.duration / 2
    if args.warmup is not None:
        params["warmup"] = args.warmup

    build()
    if args.case in WORKLOADS:
        from workload import export

        scenario = os.path.join(os.path.dirname(os.path.dirname(HERE)), "scenarios", WORKLOADS[args.case])
        files = export(Path(scenario), Path(HERE) / "build")
        if files["n"] != params["n"]:
            sys.exit(f"{scenario} has {files['n']} senders, the case {params['n']}")
        params.update(workload=files["workload"], accessDelays=files["accessDelays"])
    cmd = [BINARY] + [f"--{k}={v}" for k, v in params.items()] + [f"--caseName={args.case}"] + args.extra
    print("running:", " ".join(cmd), file=sys.stderr)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
    elapsed = time.monotonic() - t0
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_wall_time_s"] = elapsed  # includes topology setup and teardown
    # A ratio of speeds holds only between runs on one machine: bench/run.py says when
    # the reference came from another.
    result["machine"] = machine()
    result["command"] = cmd[1:]
    if args.duration is not None:
        result["note"] = (f"duration shortened from {CASES[args.case]['duration']} s "
                          f"to {params['duration']} s to bound wall time")

    summarize_flows(result["results"])
    out = args.out or os.path.join(HERE, "reference", f"{args.case}_reno.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    r = result["results"]
    summary = {k: r[k] for k in (
        "bottleneck_utilization", "bottleneck_loss_rate", "mean_queue_pkts", "jain_fairness",
        "data_packets_delivered", "wall_time_run_s", "data_packets_delivered_per_wall_s",
        "peak_rss_mb")}
    print(json.dumps(summary, indent=1))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
