"""Scaling curves: wall time against the number of flows and against the link rate.

    python bench/scaling.py [--seconds 10] [--out docs/figures]

Two series, each point the 1 Gb/s DropTail dumbbell of ``scenarios/bench-dumbbell-1000.toml``
with one thing changed, run in a fresh child process through ``aqmlab.run`` (the core's
wall time is reported, as in ``bench/run.py``):

* flows 10, 100, 1,000, 10,000 and 100,000 at 1 Gb/s;
* link rate 100 Mb/s, 1 Gb/s and 10 Gb/s with 1,000 flows (access links 10x the bottleneck).

The buffer is BDP/sqrt(n) throughout (BDP at the mean two-way delay of 72 ms). Cost should
grow with packets, not with flows: the figure to watch is wall time per delivered packet.
Writes ``scaling.png`` and ``scaling.md`` (a table) to ``--out`` and prints the table.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, machine, run_once  # noqa: E402

BASE = ROOT / "scenarios" / "bench-dumbbell-1000.toml"
MEAN_RTT_S = 0.072  # 2 x (10 ms bottleneck + 1..50 ms access, mean 25.5 ms) + receivers' 0 ms


def point(flows: int, rate_bps: float, seconds: float) -> dict:
    d = tomllib.loads(BASE.read_text())
    d = copy.deepcopy(d)
    d["name"] = f"scaling-{flows}-flows-{rate_bps / 1e6:.0f}-mbps"
    d["duration"] = f"{seconds}s"
    d["warmup"] = f"{seconds / 4}s"
    d["sample_interval"] = "0s"
    top = d["topology"]
    top["senders"] = flows
    bdp = rate_bps / 8000 * MEAN_RTT_S
    top["bottleneck"]["rate"] = f"{rate_bps:.0f}bps"
    top["bottleneck"]["qdisc"]["limit"] = f"{max(2, math.ceil(bdp / math.sqrt(flows)))}pkt"
    top["access"]["rate"] = top["receiver_access"]["rate"] = f"{10 * rate_bps:.0f}bps"
    d["flows"][0]["count"] = flows
    from aqmlab.tomlout import dumps

    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(dumps(d))
    try:
        r = run_once(Path(f.name))
    finally:
        Path(f.name).unlink()
    s, wall = r["summary"], r["timing"]["wall_time_s"]
    return {
        "flows": flows,
        "rate_bps": rate_bps,
        "simulated_s": seconds,
        "wall_s": wall,
        "data_packets": s["data_packets_delivered"],
        "data_packets_per_s": s["data_packets_delivered"] / wall,
        "ns_per_packet": wall / s["data_packets_delivered"] * 1e9,
        "events_per_packet": r["timing"]["events"] / s["data_packets_delivered"],
        "rss_growth_mib": (r["peak_rss_kb"] - r["rss_before_kb"]) / 1024,
        "utilization": s["bottleneck_utilization"],
    }


def table(rows: list[dict]) -> str:
    lines = [
        "| flows | link | wall (s) | data packets | M packets / s | ns / packet | events / packet | RSS growth (MiB) | utilization |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['flows']:,} | {r['rate_bps'] / 1e9:g} Gb/s | {r['wall_s']:.2f} | {r['data_packets']:,} | "
            f"{r['data_packets_per_s'] / 1e6:.2f} | {r['ns_per_packet']:.0f} | {r['events_per_packet']:.2f} | "
            f"{r['rss_growth_mib']:.1f} | {r['utilization']:.4f} |"
        )
    return "\n".join(lines)


def plot(by_flows: list[dict], by_rate: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, rows, key, label in ((axes[0], by_flows, "flows", "flows (1 Gb/s)"), (axes[1], by_rate, "rate_bps", "link rate (b/s), 1,000 flows")):
        x = [r[key] for r in rows]
        ax.plot(x, [r["wall_s"] for r in rows], "o-", label="wall time (s)")
        ax.plot(x, [r["ns_per_packet"] / 100 for r in rows], "s--", label="wall time per data packet (100 ns)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(f"{by_flows[0]['simulated_s']:g} s simulated; {machine()}", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "figures")
    ap.add_argument("--flows", default="10,100,1000,10000,100000")
    ap.add_argument("--rates", default="1e8,1e9,1e10")
    args = ap.parse_args()
    by_flows = [point(n, 1e9, args.seconds) for n in map(int, args.flows.split(","))]
    by_rate = [point(1000, r, args.seconds) for r in map(float, args.rates.split(","))]
    args.out.mkdir(parents=True, exist_ok=True)
    text = f"Machine: {machine()}. {args.seconds:g} s simulated.\n\nAgainst the number of flows (1 Gb/s):\n\n{table(by_flows)}\n\nAgainst the link rate (1,000 flows):\n\n{table(by_rate)}\n"
    (args.out / "scaling.md").write_text(text)
    (args.out / "scaling.json").write_text(json.dumps({"machine": machine(), "by_flows": by_flows, "by_rate": by_rate}, indent=1) + "\n")
    plot(by_flows, by_rate, args.out / "scaling.png")
    print(text)
    print(f"wrote {args.out / 'scaling.png'}, scaling.md, scaling.json")


if __name__ == "__main__":
    main()
