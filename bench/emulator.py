"""The emulator's measured figures (docs/emulator.md): print them, never fail.

    python bench/emulator.py rate          # the highest rate the router keeps up with (UDP, TCP)
    python bench/emulator.py disciplines   # CPU time per packet and memory, per discipline, end to end
    python bench/emulator.py kernel        # 4 CUBIC + 1 UDP at 20 Mb/s, 40 ms: ours against tc's, 5 seeds
    python bench/emulator.py sim           # 4 Reno flows: the simulator against the emulator
    python bench/emulator.py udp           # UDP only: our disciplines emulated against simulated
    python bench/emulator.py all

Runs as root, in real time (each run its scenario's duration plus about a second), one
at a time. The CPU time per packet of every discipline without devices (the router's
own work, no system calls) is ``cargo run --release -p aqmlab-router --example forward_cost``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import polars as pl

from aqmlab import run as simulate
from aqmlab.emulate import emulate


def dumbbell(rate: str, delay: str, qdisc: dict[str, Any], flows: list[dict[str, Any]], senders: int = 1,
             duration: str = "4s", warmup: str = "1s", access: str = "10Gbps", **extra: Any) -> dict[str, Any]:
    return {
        "name": "bench", "duration": duration, "warmup": warmup, "sample_interval": "100ms",
        "tcp": {"variant": "cubic", "packet_size": "1500B", **extra.pop("tcp", {})},
        "topology": {
            "kind": "dumbbell", "senders": senders,
            "bottleneck": {"rate": rate, "delay": delay, "qdisc": qdisc},
            "access": {"rate": access, "delay": "0ms"},
            "access_qdisc": {"kind": "droptail", "limit": "10000pkt"},
            **extra.pop("topology", {}),
        },
        "flows": flows,
    }


def bottleneck(res: Any) -> dict[str, Any]:
    return res.queues.filter(pl.col("link") == "bottleneck").row(0, named=True)


def cost(res: Any) -> str:
    t = res.timing
    return (f"{t['router_cpu_per_packet_ns'] / 1e3:.1f} | {t['router_max_rss_kb'] / 1024:.1f} | "
            f"{t['router_lateness_p50_s'] * 1e6:.0f} / {t['router_lateness_p99_s'] * 1e6:.0f} / {t['router_lateness_max_s'] * 1e6:.0f}")


def rate() -> None:
    print("| traffic | offered Mb/s | delivered Mb/s | router CPU µs/packet | RSS MB | lateness p50 / p99 / max µs |")
    print("|---|---|---|---|---|---|")
    for mbps in (50, 100, 200, 400, 800):
        flows = [{"kind": "udp", "rate": f"{mbps}Mbps", "packet_size": "1500B"}]
        res = emulate(dumbbell("1Gbps", "1ms", {"kind": "droptail", "limit": "1000pkt"}, flows))
        f = res.flows.row(0, named=True)
        sent = f["bytes_sent"] * 8 / 4 / 1e6
        print(f"| 1 UDP flow, 1500 B | {mbps} (sent {sent:.0f}) | {f['throughput_bps'] / 1e6 * 1500 / 1472:.1f} | {cost(res)} |")
    for n in (1, 4):
        flows = [{"kind": "tcp", "count": n, "src": [f"s{i}" for i in range(n)], "dst": [f"d{i}" for i in range(n)]}]
        res = emulate(dumbbell("1Gbps", "1ms", {"kind": "droptail", "limit": "1000pkt"}, flows, senders=n))
        total = res.flows["throughput_bps"].sum() / 1e6
        print(f"| {n} TCP CUBIC flow(s) | as fast as they go | {total:.1f} (payload) | {cost(res)} |")


DISCIPLINES = ["droptail", "red", "sfq", "drr", "qsdrr", "cbt", "dcbt", "chips", "fq_codel", "pie", "codel", "sfb"]


def disciplines() -> None:
    print("| discipline | delivered Mb/s | drops | router CPU µs/packet | RSS MB | lateness p50 / p99 / max µs |")
    print("|---|---|---|---|---|---|")
    flows = [{"kind": "udp", "count": 4, "rate": "25Mbps", "packet_size": "1500B", "src": ["s0", "s1", "s2", "s3"], "dst": ["d0", "d1", "d2", "d3"]}]
    for kind in DISCIPLINES:
        qdisc = {"kind": kind} if kind in ("fq_codel", "codel", "pie", "sfb", "red", "cbt", "dcbt", "chips") else {"kind": kind, "limit": "200pkt"}
        res = emulate(dumbbell("50Mbps", "5ms", qdisc, flows, senders=4))
        q = bottleneck(res)
        print(f"| {kind} | {res.flows['throughput_bps'].sum() / 1e6:.1f} | {q['drops']} | {cost(res)} |")


#: The issue's comparison: 4 CUBIC flows (started at random in the first second, drawn
#: from the seed) and an unresponsive 8 Mb/s UDP flow through a 20 Mb/s, 40 ms bottleneck
#: with a DropTail buffer of 100 packets.
KERNEL_SEEDS = (1, 2, 3, 4, 5)


def kernel_scenario(seed: int) -> dict[str, Any]:
    flows = [
        {"kind": "tcp", "count": 4, "src": ["s0", "s1", "s2", "s3"], "dst": ["d0", "d1", "d2", "d3"],
         "start": {"dist": "uniform", "low": "0s", "high": "1s"}},
        {"kind": "udp", "rate": "8Mbps", "packet_size": "1500B", "src": "s4", "dst": "d4"},
    ]
    s = dumbbell("20Mbps", "40ms", {"kind": "droptail", "limit": "100pkt"}, flows, senders=5, duration="20s",
                 warmup="5s", access="100Mbps")
    return s | {"seed": seed}


def kernel(seeds: tuple[int, ...] = KERNEL_SEEDS) -> None:
    """Our DropTail against the kernel's pfifo behind tbf, one run of each per seed; the
    mean and standard deviation over the seeds of the UDP flow's share, of the TCP
    flows' shares (over flows and seeds), of the queueing delay, utilization and loss."""
    queues = (("ours: droptail 100pkt", {}), ("kernel: tbf + pfifo 100", {"baseline": "kernel", "shaper": "tbf"}))
    rows = []
    print("| seed | queue | shares of the 4 TCP flows and the UDP flow (%) | utilization % | mean queueing delay ms | loss % |")
    print("|---|---|---|---|---|---|")
    for seed in seeds:
        for label, kwargs in queues:
            res = emulate(kernel_scenario(seed), **kwargs)
            thr = res.flows["throughput_bps"].to_numpy()
            share = 100 * thr / thr.sum()
            q = bottleneck(res)
            rows.append({"queue": label, "seed": seed, "tcp": share[:4].tolist(), "udp": float(share[4]),
                         "utilization": 100 * q["utilization"], "delay_ms": 1e3 * q["mean_delay_s"],
                         "loss": 100 * (q["loss_rate"] or 0)})
            print(f"| {seed} | {label} | {' / '.join(f'{x:.1f}' for x in share)} | {100 * q['utilization']:.1f} | "
                  f"{1e3 * q['mean_delay_s']:.1f} | {100 * (q['loss_rate'] or 0):.2f} |", flush=True)
    print(f"\nOver {len(seeds)} seeds, mean ± standard deviation:\n")
    print("| queue | UDP share % | a TCP flow's share % | TCP flows' Jain index | utilization % | mean queueing delay ms | loss % |")
    print("|---|---|---|---|---|---|---|")
    for label, _ in queues:
        r = [x for x in rows if x["queue"] == label]
        tcp = np.array([x["tcp"] for x in r])
        jain = tcp.sum(1) ** 2 / (4 * (tcp**2).sum(1))
        cells = [_spread([x["udp"] for x in r]), _spread(tcp.ravel()), _spread(jain, 3)]
        cells += [_spread([x[k] for x in r], 2 if k == "loss" else 1) for k in ("utilization", "delay_ms", "loss")]
        print(f"| {label} | {' | '.join(cells)} |")


def _spread(values: Any, digits: int = 1) -> str:
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}"


def sim() -> None:
    flows = [{"kind": "tcp", "count": 4, "src": ["s0", "s1", "s2", "s3"], "dst": ["d0", "d1", "d2", "d3"]}]
    s = dumbbell("10Mbps", "20ms", {"kind": "droptail", "limit": "60pkt"}, flows, senders=4, duration="30s", warmup="5s",
                 access="100Mbps", tcp={"variant": "reno"})
    print("| engine | shares of the 4 flows (%) | utilization % | mean queueing delay ms | loss % |")
    print("|---|---|---|---|---|")
    for label, res in (("simulator (Reno, ns-2 semantics)", simulate(s)), ("emulator (Linux reno)", emulate(s))):
        thr = res.flows["throughput_bps"].to_numpy()
        q = bottleneck(res)
        shares = " / ".join(f"{100 * x / thr.sum():.1f}" for x in thr)
        print(f"| {label} | {shares} | {100 * q['utilization']:.1f} | {1e3 * q['mean_delay_s']:.1f} | {100 * (q['loss_rate'] or 0):.2f} |")


UDP_DISCIPLINES = [
    {"kind": "droptail", "limit": "50pkt"},
    {"kind": "red", "limit": "100pkt", "min_th": 10, "max_th": 30, "max_p": 0.1},
    {"kind": "cbt"},
    {"kind": "qsdrr", "limit": "50pkt"},
]


def udp() -> None:
    """No TCP model in between: the router, its classifier and its shaping against the
    simulator, on Poisson UDP (periodic sources would share a FIFO by their phase)."""
    flows = [
        {"kind": "udp", "model": "poisson", "rate": "6Mbps", "packet_size": "1000B", "src": "s0", "dst": "d0"},
        {"kind": "udp", "model": "poisson", "rate": "3Mbps", "packet_size": "500B", "src": "s1", "dst": "d1", "tagged": True},
        {"kind": "udp", "model": "poisson", "rate": "3Mbps", "packet_size": "1500B", "src": "s2", "dst": "d2"},
    ]
    print("| discipline | engine | shares of the 3 flows (%) | drop rate % | utilization % |")
    print("|---|---|---|---|---|")
    for qdisc in UDP_DISCIPLINES:
        s = dumbbell("8Mbps", "10ms", qdisc, flows, senders=3, duration="10s", warmup="2s", access="100Mbps")
        for label, res in (("simulator", simulate(s)), ("emulator", emulate(s))):
            thr = res.flows["throughput_bps"].to_numpy()
            q = bottleneck(res)
            shares = " / ".join(f"{100 * x / thr.sum():.1f}" for x in thr)
            print(f"| {qdisc['kind']} | {label} | {shares} | {100 * q['loss_rate']:.1f} | {100 * q['utilization']:.1f} |")


if __name__ == "__main__":
    which = sys.argv[1:] or ["all"]
    for name, fn in (("rate", rate), ("disciplines", disciplines), ("kernel", kernel), ("sim", sim), ("udp", udp)):
        if name in which or "all" in which:
            print(f"\n## {name}\n")
            fn()
