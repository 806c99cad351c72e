"""The setup every chapter of seed 000 shares (digest 000 section 4.0), and the statistics
its figures are made of.

The report's ns-2 setup, as every experiment of this package builds it:

* a 500 Mb/s bottleneck R1 -> R2 (three of them in a line for the multi-hop case) under
  the policy being compared, with a shared buffer of B packets; each source on its own
  access link, 10 Mb/s for long-lived flows (2:1 overload with 100 of them) and 100 Mb/s
  for the short bursts; every destination on its own link behind R2, as fast as the
  bottleneck, so that nothing but the bottleneck queues packets on their way;
* the three topologies (A-T1): the single bottleneck (50 ms one way on the bottleneck,
  RTT 100 ms), the two RTT classes (40 and 200 ms from 20 and 100 ms of access delay, a
  bottleneck of no delay) and the three hops of 50 ms each (end-to-end RTT 300 ms, cross
  traffic 100 ms);
* TCP Reno as ns-2 had it when the report's simulations ran (2001-2004, A-T2): 1500-byte
  packets, all payload (the report's 500 Mb/s is 5 Mb/s of goodput for each of 100 flows,
  A-T3), one ACK per packet (no delayed ACK), an initial window of 1 (section 1.1), a
  receiver window of 10,000 packets that never limits the window, and ns-2's timer of
  that time: its RTT estimator with a 100 ms tick and a 1 s minimum RTO (ns-2's defaults
  until October 2004, ``tcl/test/test-suite-defaults``);
* the hosts' own queues: ns-2's default of 50 packets (``Queue set limit_ 50``), which
  nothing in the report changes. This decides the results (issue 28): with a queue that
  never drops, a window outgrowing its 10 Mb/s access link waits in its own sender, out
  of sight of the policy under test, and QSDRR's goodput spreads as DropTail's;
* all sources start at t = 0 (the synchronized worst case, A-T5) and the goodput of
  each flow is its unique payload delivered over the run (A-T4: no warm-up).

A fidelity scales the paper's setup down by :class:`Scale`: the number of flows, the
link rates and the buffers by one factor, so that the fair share (5 Mb/s), the windows
(W_0 = 42 packets at 100 ms), the overload (2:1) and the buffer per flow (B/N) stay
those of the paper; and the run is shorter. The buffer column of every table is the
paper's B; ``buffer_pkts`` is the one simulated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import polars as pl

from ..core import run_dirs

PACKET_BYTES = 1500
CAPACITY_BPS = 500e6  #: every bottleneck of the paper
FAIR_SHARE_BPS = 5e6  #: 500 Mb/s over 100 flows (section 3.3.1); also per link of the multi-hop case
LONG_ACCESS = "10Mbps"  #: section 3.3: continuous TCP, a 2:1 overload
SHORT_ACCESS = "100Mbps"  #: section 3.3.4: the short bursts
ONE_WAY_S = 0.050  #: single bottleneck and each hop of the multi-hop case: RTT 100 ms
RTTS_MS = (40, 200)  #: the multiple-RTT case (Figure 3.7)
BURST_PACKETS = 256  #: section 3.3.4: a burst of 384 KB
MEAN_IDLE_S = 2.0  #: ... then an exponential idle time of mean 2 s

#: Digest A-T8: the buffer sweep, as the figures plot it (100 to 5,000 packets).
BUFFERS = (100, 200, 300, 400, 500, 600, 800, 1000, 1500, 2000, 3000, 4167, 5000)
#: The policies of chapter 3 and chapter 6, in the report's order.
CHAPTER3_POLICIES = ("droptail", "red", "blue", "drr", "tdrr", "qsdrr")
CHAPTER6_POLICIES = ("droptail", "red", "blue", "qsdrr", "dtdrr", "dsdrr")
POLICIES = ("droptail", "red", "blue", "drr", "tdrr", "qsdrr", "dtdrr", "dsdrr")
LABELS = {"droptail": "Tail Drop", "red": "RED", "blue": "Blue", "drr": "DRR", "tdrr": "TDRR",
          "qsdrr": "QSDRR", "dtdrr": "DTDRR", "dsdrr": "DSDRR"}
MARKERS = {"droptail": "o", "red": "s", "blue": "^", "drr": "v", "tdrr": "D", "qsdrr": "*", "dtdrr": "P",
           "dsdrr": "X"}

#: The hosts' own queues (module docstring): ns-2's default limit.
HOST_QUEUE = {"kind": "droptail", "limit": "50pkt"}

#: TCP Reno as ns-2 ran it in 2001-2004 (module docstring).
TCP = {
    "variant": "reno",
    "packet_size": f"{PACKET_BYTES}B",
    "header_size": "0B",
    "initial_window": 1,
    "receiver_window": 10000,
    "delayed_ack": False,
    "rtt_estimator": "ns2",
    "clock_granularity": "100ms",
    "min_rto": "1s",
}


@dataclass(frozen=True)
class Scale:
    """How a fidelity shrinks the paper's setup: ``factor`` x the flows, the link rates
    and the buffers (the fair share, windows and buffer per flow stay the paper's);
    ``duration_s`` of simulated time, measured from ``warmup_s``; ``seeds`` runs a point."""

    factor: float = 1.0
    duration_s: float = 100.0
    warmup_s: float = 0.0
    seeds: int = 1

    def flows(self, n: int) -> int:
        """The paper's n flows (of one class), scaled; at least 1."""
        return max(1, round(n * self.factor))

    def buffer(self, b: int) -> int:
        """The paper's buffer of b packets, scaled; at least 2 packets."""
        return max(2, round(b * self.factor))

    def rate(self, bps: float = CAPACITY_BPS) -> str:
        return f"{bps * self.factor:.0f}bps"


def us(seconds: float) -> str:
    """A time as the scenario writes it, to the microsecond."""
    return f"{round(seconds * 1e6)}us"


# ---------------------------------------------------------------------------
# the policies


#: Policies run with other parameters than the report's defaults, by name: TDRR's
#: weights of Figure 3.6 (the default, 1/32, is ``tdrr``).
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "tdrr_w128": ("tdrr", {"weight": 0.0078125}),
    "tdrr_w8": ("tdrr", {"weight": 0.125}),
}
LABELS |= {"tdrr_w128": "TDRR w = 1/128", "tdrr_w8": "TDRR w = 1/8"}


def qdisc(policy: str, buffer_pkts: int, **params: Any) -> dict[str, Any]:
    """The bottleneck's discipline with the report's parameters (``params`` override them):

    * RED: Table 3.1, max_p 0.01, w_q 0.001, min_th 20% of the buffer, max_th the buffer
      (``min_th``/``max_th`` in packets override, as chapter 2's 400 and 800), the rest as
      ns-2's ``Queue/RED`` of the report's years: its rules (``variant = "ns2"``), ``wait_``
      (at least 1/p_b packets between early drops: a third of FJ93's drops), ``gentle_``
      (the default from April 2001) and ``mean_pktsize_`` 500 (the idle-time decay);
    * Blue: Table 3.2, d1 0.0025, d2 0.00025, freeze time 100 ms;
    * DRR (longest-queue drop), TDRR (weight 1/32), QSDRR, DTDRR (alpha 2), DSDRR (alpha
      0.1, T 1 s, W from 10% to 50% of the queues): one queue per flow sharing the
      buffer, quantum 1500 B; their defaults are the report's (docs/disciplines/).
    """
    if policy in VARIANTS:
        base, fixed = VARIANTS[policy]
        return qdisc(base, buffer_pkts, **fixed, **params)
    q: dict[str, Any] = {"kind": policy, "limit": f"{buffer_pkts}pkt"}
    if policy == "red":
        q |= {"min_th": max(1, round(0.2 * buffer_pkts)), "max_th": buffer_pkts, "w_q": 0.001, "max_p": 0.01,
              "variant": "ns2", "wait": True, "gentle": True, "mean_packet_size": "500B"}
    elif policy == "blue":
        q |= {"increment": 0.0025, "decrement": 0.00025, "freeze_time": "100ms"}
    elif policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; known: {', '.join(POLICIES)}")
    return q | params


# ---------------------------------------------------------------------------
# traffic


def long_lived(group: str, count: int, src: str, dst: str | None = None) -> dict[str, Any]:
    """``count`` infinite FTP sources from ``src``, all starting at t = 0."""
    f: dict[str, Any] = {"kind": "tcp", "group": group, "count": count, "src": src}
    return f if dst is None else f | {"dst": dst}


def short_bursts(group: str, count: int, src: str, dst: str | None = None) -> dict[str, Any]:
    """``count`` on-off sources (section 3.3.4): a burst of 256 packets, a fresh
    connection each time (A-T6), then an exponential idle time of mean 2 s; the first
    burst of every source at t = 0."""
    return long_lived(group, count, src, dst) | {
        "size": f"{BURST_PACKETS}pkt",
        "off_time": {"dist": "exponential", "mean": f"{MEAN_IDLE_S:g}s"},
    }


def traffic(kind: str) -> tuple[Any, str]:
    """The flow builder and access rate of ``kind``: ``"long"`` or ``"short"``."""
    if kind == "long":
        return long_lived, LONG_ACCESS
    if kind == "short":
        return short_bursts, SHORT_ACCESS
    raise ValueError(f"traffic is 'long' or 'short', not {kind!r}")


# ---------------------------------------------------------------------------
# the topologies


def scenario(name: str, topology: dict[str, Any], flows: list[dict[str, Any]], scale: Scale, seed: int,
             tcp: dict[str, Any] | None = None, sample_interval: str = "0s",
             trace: dict[str, Any] | None = None) -> dict[str, Any]:
    """One run of seed 000: the topology and flows given, the common TCP (``tcp``
    overrides fields of it), the fidelity's run length."""
    s: dict[str, Any] = {
        "name": name,
        "description": "seed 000 (aqmlab.experiments.kantawala)",
        "seed": seed,
        "duration": us(scale.duration_s),
        "warmup": us(scale.warmup_s),
        "sample_interval": sample_interval,
        "tcp": TCP | (tcp or {}),
        "topology": {**topology, "access_qdisc": HOST_QUEUE},
        "flows": flows,
    }
    if trace:
        s["trace"] = trace
    return s


def single_bottleneck(policy: str, buffer: int, scale: Scale, seed: int = 1, kind: str = "long",
                      n: int | None = None, q: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """Figure 3.2: n sources (100 long-lived, 500 short by default) into one bottleneck
    of 50 ms, RTT 100 ms. ``q`` replaces the policy's discipline; ``kw`` go to
    :func:`scenario`."""
    flow, access = traffic(kind)
    count = scale.flows(n if n is not None else (100 if kind == "long" else 500))
    topology = {
        "kind": "dumbbell",
        "senders": count,
        "bottleneck": {"rate": scale.rate(), "delay": us(ONE_WAY_S),
                       "qdisc": q or qdisc(policy, scale.buffer(buffer))},
        "access": {"rate": access, "delay": "0ms"},
        "receiver_access": {"rate": scale.rate(), "delay": "0ms"},
    }
    name = f"kantawala-sb-{kind}-{policy}-b{buffer}"
    return scenario(name, topology, [flow(kind, count, "senders", "receivers")], scale, seed, **kw)


def multi_rtt(policy: str, buffer: int, scale: Scale, seed: int = 1, kind: str = "long",
              n: int | None = None, q: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """Figure 3.7: n sources per RTT class (50 long-lived, 500 short by default), RTT 40
    and 200 ms from 20 and 100 ms of access delay, a bottleneck of no delay (A-T1).
    Groups ``rtt40`` and ``rtt200``."""
    flow, access = traffic(kind)
    count = scale.flows(n if n is not None else (50 if kind == "long" else 500))
    topology = {
        "kind": "multi_rtt",
        "groups": [{"name": f"rtt{r}", "senders": count, "rtt": f"{r}ms"} for r in RTTS_MS],
        "bottleneck": {"rate": scale.rate(), "delay": "0ms", "qdisc": q or qdisc(policy, scale.buffer(buffer))},
        "access": {"rate": access},
        "receiver_access": {"rate": scale.rate(), "delay": "0ms"},
    }
    flows = [flow(f"rtt{r}", count, f"rtt{r}") for r in RTTS_MS]
    return scenario(f"kantawala-mrtt-{kind}-{policy}-b{buffer}", topology, flows, scale, seed, **kw)


def multi_hop(policy: str, buffer: int, scale: Scale, seed: int = 1, kind: str = "long",
              n: int | None = None, q: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """Figure 3.9: three 500 Mb/s hops of 50 ms (R0 -> R1 -> R2 -> R3), n end-to-end
    sources across all three (RTT 300 ms) and n cross sources on each hop (RTT 100 ms);
    n is 50 long-lived or 500 short by default. Groups ``through`` and ``cross`` (the
    cross flow j crosses hop j mod 3; its ``src`` is ``x{hop}_src{k}``)."""
    flow, access = traffic(kind)
    count = scale.flows(n if n is not None else (50 if kind == "long" else 500))
    topology = {
        "kind": "parking_lot",
        "hops": 3,
        "hop": {"rate": scale.rate(), "delay": us(ONE_WAY_S), "qdisc": q or qdisc(policy, scale.buffer(buffer))},
        "through": count,
        "cross": count,
        "access": {"rate": access, "delay": "0ms"},
    }
    flows = [flow("through", count, "through"), flow("cross", 3 * count, "cross")]
    return scenario(f"kantawala-mh-{kind}-{policy}-b{buffer}", topology, flows, scale, seed, **kw)


TOPOLOGIES = {"sb": single_bottleneck, "mrtt": multi_rtt, "mh": multi_hop}


# ---------------------------------------------------------------------------
# reading runs


def flow_rows(directory: Path) -> pl.DataFrame:
    """A run's flows: ``flow_id``, ``group``, ``src``, ``goodput_bps`` (unique payload
    over the measurement window), ``transfers`` completed and their
    ``mean_completion_s``, ``timeouts``, ``retransmissions``, ``base_rtt_s``; and the hop of
    each cross flow of the multi-hop case (``hop``, null for others)."""
    f = pl.read_parquet(directory / "flows.parquet")
    return f.select(
        "flow_id", "group", pl.col("src").cast(pl.Utf8), pl.col("throughput_bps").alias("goodput_bps"),
        pl.col("transfers_completed").alias("transfers"), pl.col("mean_completion_time_s").alias("mean_completion_s"),
        "timeouts", "retransmissions", "base_rtt_s",
    ).with_columns(pl.col("src").str.extract(r"^x(\d+)_src", 1).cast(pl.Int64).alias("hop"))


def queue_rows(directory: Path) -> pl.DataFrame:
    """A run's monitored queues (the bottlenecks): ``link``, ``utilization``, ``drops``,
    ``buffered_drop_bytes`` (bytes written into the buffer and dropped later: chapter 6's
    wasted memory bandwidth), ``arrivals``, ``peak_packets``."""
    q = pl.read_parquet(directory / "queues.parquet")
    q = q.filter(pl.col("link").cast(pl.Utf8).str.contains(r"^(bottleneck|hop\d+)$"))
    return q.select(pl.col("link").cast(pl.Utf8), "utilization", "drops", "buffered_drop_bytes", "arrivals",
                    "peak_packets")


def measure_flows(runner: Any, points: dict[tuple[Any, ...], list[dict[str, Any]]], keys: tuple[str, ...],
                  label: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Run every point (its scenarios, one per seed) in one batch: every run's flows and
    bottleneck queues, with the point's key columns (named ``keys``) and ``seed``."""
    order = list(points)
    dirs = run_dirs(runner, [points[k] for k in order], label)
    flows, queues = [], []
    for key, runs in zip(order, dirs):
        cols = [pl.lit(v).alias(k) for k, v in zip(keys, key)]
        for seed, d in enumerate(runs, start=1):
            flows.append(flow_rows(d).with_columns(*cols, pl.lit(seed).alias("seed")))
            queues.append(queue_rows(d).with_columns(*cols, pl.lit(seed).alias("seed")))
    return pl.concat(flows, how="vertical_relaxed"), pl.concat(queues, how="vertical_relaxed")


# ---------------------------------------------------------------------------
# the fair-share statistics of chapters 3 and 6


def max_min_projection(mean: float, std: float) -> float:
    """(mean + 3 sigma) / (mean - 3 sigma): the report's projected max/min ratio for a
    link with thousands of flows (section 3.3.1); infinite when mean <= 3 sigma."""
    low = mean - 3 * std
    return (mean + 3 * std) / low if low > 0 else math.inf


def fair_share_stats(goodputs_bps: Iterable[float], fair_bps: float = FAIR_SHARE_BPS) -> dict[str, float]:
    """One group of flows in one run: its mean goodput as % of the fair share
    (``mean_pct``), the standard deviation over the fair share (``std_fair``, the
    report's normalized sigma: population standard deviation of the flows), and
    (mean + 3 sigma)/(mean - 3 sigma) (``max_min``)."""
    g = [float(x) for x in goodputs_bps]
    if not g:
        return {"mean_pct": math.nan, "std_fair": math.nan, "max_min": math.nan}
    mean = sum(g) / len(g)
    std = math.sqrt(sum((x - mean) ** 2 for x in g) / len(g))
    return {"mean_pct": 100 * mean / fair_bps, "std_fair": std / fair_bps, "max_min": max_min_projection(mean, std)}


def group_stats(flows: pl.DataFrame, by: list[str], fair_bps: float = FAIR_SHARE_BPS) -> pl.DataFrame:
    """:func:`fair_share_stats` of each (``by``..., ``seed``) group of flows, averaged
    over the seeds: ``mean_pct``, ``std_fair``, ``max_min`` and ``flows``."""
    per_run = flows.group_by(*by, "seed").agg(
        (100 * pl.col("goodput_bps").mean() / fair_bps).alias("mean_pct"),
        (pl.col("goodput_bps").std(ddof=0) / fair_bps).alias("std_fair"),
        pl.len().alias("flows"),
    ).with_columns(
        pl.struct("mean_pct", "std_fair").map_elements(
            lambda r: max_min_projection(r["mean_pct"], 100 * r["std_fair"]), return_dtype=pl.Float64,
        ).alias("max_min"),
    )
    return per_run.group_by(by).agg(pl.col("mean_pct", "std_fair", "max_min").mean(), pl.col("flows").first()).sort(by)


def burst_stats(flows: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The short-burst figures of each (``by``...) group, over its seeds: the mean goodput
    of a source (``goodput_bps``) and the mean completion time of a burst
    (``completion_s``, weighted by the bursts each source completed), and the bursts."""
    weighted = pl.col("mean_completion_s").fill_null(0.0) * pl.col("transfers")
    return flows.group_by(by).agg(
        pl.col("goodput_bps").mean(),
        (weighted.sum() / pl.col("transfers").sum()).alias("completion_s"),
        pl.col("transfers").sum().alias("bursts"),
    ).sort(by)
