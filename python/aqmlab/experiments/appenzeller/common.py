"""The setup every chapter of seed 003 shares (digest 003 section 3), the search for a
minimum buffer, and the readers of a run.

Long flows, as digest 003 section 3 describes the thesis's ns-2 script (Appendix A.4):

* a dumbbell: every sender has its own access link at 100x the bottleneck rate with an
  effectively infinite queue; one bottleneck with a 20 ms delay and a DropTail buffer
  of B packets (the buffer under study); all receivers behind it on one host;
* TCP Reno as ns-2's one-way TCP: 1000-byte packets (960 B payload), initial window 2,
  an ACK per packet, receiver window 10,000, RTO per RFC 6298 with a 200 ms minimum
  and a 10 ms clock (digest 7.13, 7.14);
* two-way propagation delays 2T_p drawn uniformly in [0.8, 1.2] x the mean (digest
  7.11: the thesis asks for a standard deviation of at least 10%; the script's integer
  20..29 ms access delays give only 6.5%), flows starting uniformly in the first 10 s;
* utilization measured after a warm-up (digest 7.16, 7.17): bits leaving the
  bottleneck over C x the measurement window; goodput is unique payload delivered in
  order over C x the window, so its ceiling over a long run is 960/1000 = 0.96 (a
  window's can pass it: payload held above a hole when the window opens is counted
  when the hole fills; docs/experiments/appenzeller.md).

The warm-up. The thesis waits "for the system to stabilize - typically between 10 and
60 seconds" (section 5.2). What takes longest to stabilize is the end of each flow's
first slow start: it overshoots, loses a window's worth, and (Reno) times out; the
flows then climb back linearly, together n packets per RTT, to the BDP plus the buffer.
With few flows or a large BDP that takes minutes (one flow on OC3: (1724 + B) RTTs of
up to 107 ms), and a measurement that starts earlier reads the climb, not the steady
state the model describes. So the warm-up is the larger of the fidelity's ``warmup_s``
and the start window + 10 s + (BDP + B)/n longest RTTs; it is 30 s for most points of
these figures and grows only for the few-flow points.

The minimum buffers of Figs 3.4, 5.2, 5.6 and 5.8 are found by bisection over integer
buffers, each buffer's utilization averaged over seeds (digest 7.18; :mod:`..search`).

Short flows (chapter 4, sections 5.3-5.5 and 6.1) are Poisson arrivals of TCP flows of a
given length, each opening with a SYN exchange, from access links fast enough that
their slow-start bursts reach the bottleneck back to back (:class:`ShortFlowParams`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import polars as pl

from ...plots import save as _save
from ..core import Experiment, run_points
from ..search import Search, bisect, search_table_rows

PACKET_BYTES = 1000
PAYLOAD_BYTES = 960
BOTTLENECK_DELAY_S = 0.020
#: The senders' own queues: the thesis's ns-2 script gives them 32,000 packets
#: (bench/ns2/appenzeller.tcl), so they never drop, unlike aqmlab's default of 50.
HOSTS_QUEUE = {"kind": "droptail", "limit": "100000pkt"}
OC3_BPS = 155e6  #: 19,375 packets/s of 1000 B
OC3_MEAN_RTT_S = 0.089  #: the script's 2 x (20 + U{20..29}) ms (digest 3.3, 7.12)

SHORT_PACKETS = 14  #: the short flows of Figs 5.5-5.8: "the 14 packet flow in the experiment" (section 5.4.2)


def us(seconds: float) -> str:
    """A duration in whole microseconds, as a scenario takes it."""
    return f"{round(seconds * 1e6)}us"


def summary_of(directory: Path) -> dict[str, Any]:
    """A run's summary.json."""
    return json.loads((directory / "summary.json").read_text())


def queue_bytes(directory: Path, after_s: float) -> pl.Series:
    """The bottleneck's queue in bytes, as sampled from ``after_s`` on."""
    ts = pl.read_parquet(directory / "timeseries.parquet")
    return ts.filter((pl.col("metric") == "queue_bytes") & (pl.col("entity") == "bottleneck")
                     & (pl.col("time_s") >= after_s))["value"]


def short_arrivals(load: float, size: Any = f"{SHORT_PACKETS}pkt") -> dict[str, Any]:
    """Poisson arrivals of TCP flows of ``size`` offering ``load`` of the bottleneck."""
    return {"kind": "tcp_arrivals", "group": "short", "src": "senders", "dst": "receivers",
            "load": load, "size": size, "tcp": {"syn": True}}


@dataclass(frozen=True)
class LongFlows:
    """The long-flow setup shared by the three experiments."""

    rate_bps: float
    mean_rtt_s: float  #: mean two-way propagation delay 2T_p
    warmup_s: float
    measure_s: float
    seeds: int
    rtt_spread: float = 0.2  #: 2T_p uniform in [1 - spread, 1 + spread] x mean
    start_window_s: float = 10.0
    variant: str = "reno"  #: the thesis's; "newreno" for the sensitivity check of docs/experiments/appenzeller.md
    packet_bytes: int = PACKET_BYTES  #: on the wire, 40 of them headers
    #: the retransmission timer's RTT estimator: RFC 6298's sample on every ACK, or "ns2",
    #: ns-2's one timed packet per round trip (the thesis's; Fig 5.6 needs it, docs/experiments/appenzeller.md)
    rtt_estimator: str = "rfc6298"

    @property
    def packets_per_s(self) -> float:
        return self.rate_bps / (8 * self.packet_bytes)

    @property
    def long_bdp(self) -> float:
        """The BDP the long flows' rule sizes for: all of it here (a mix takes its share)."""
        return self.bdp

    @property
    def bdp(self) -> float:
        """2T_p x C in packets, with the mean 2T_p."""
        return self.packets_per_s * self.mean_rtt_s

    def warmup(self, n: int, buffer: int) -> float:
        """Seconds excluded from the measurement: long enough for n flows to climb from
        the aftermath of their first slow start to BDP + B (the module's docstring)."""
        longest_rtt = (1 + self.rtt_spread) * self.mean_rtt_s
        return max(self.warmup_s, self.start_window_s + 10.0 + (self.bdp + buffer) / n * longest_rtt)

    def access_delays(self) -> tuple[float, float]:
        """The range of the senders' one-way access delays (s): 2T_p less the
        bottleneck's two 20 ms, halved."""
        one_way = self.mean_rtt_s / 2
        low = (1 - self.rtt_spread) * one_way - BOTTLENECK_DELAY_S
        high = (1 + self.rtt_spread) * one_way - BOTTLENECK_DELAY_S
        if low < 0:
            raise ValueError(f"a mean 2T_p of {self.mean_rtt_s} s is too short for a 20 ms bottleneck delay")
        return low, high

    def scenario(self, n: int, buffer: int, seed: int) -> dict[str, Any]:
        low, high = self.access_delays()
        return {
            "name": f"appenzeller-long-n{n}-b{buffer}",
            "description": "seed 003 long flows (aqmlab.experiments.appenzeller)",
            "seed": seed,
            "duration": us(self.warmup(n, buffer) + self.measure_s),
            "warmup": us(self.warmup(n, buffer)),
            "sample_interval": "0s",
            "tcp": {
                "variant": self.variant,
                "packet_size": f"{self.packet_bytes}B",
                "header_size": f"{PACKET_BYTES - PAYLOAD_BYTES}B",
                "initial_window": 2,
                "receiver_window": 10000,
                "delayed_ack": False,
                "min_rto": "200ms",
                "clock_granularity": "10ms",
                "rtt_estimator": self.rtt_estimator,
            },
            "topology": {
                "kind": "dumbbell",
                "senders": n,
                "receivers": 1,
                "bottleneck": {
                    "rate": f"{self.rate_bps:.0f}bps",
                    "delay": us(BOTTLENECK_DELAY_S),
                    "qdisc": {"kind": "droptail", "limit": f"{buffer}pkt"},
                },
                "access": {
                    "rate": f"{100 * self.rate_bps:.0f}bps",
                    "delay": {"dist": "uniform", "low": us(low), "high": us(high)},
                },
                "receiver_access": {"delay": "0ms"},
                "access_qdisc": HOSTS_QUEUE,
            },
            "flows": [
                {
                    "kind": "tcp",
                    "group": "long",
                    "count": n,
                    "start": {"dist": "uniform", "low": "0s", "high": us(self.start_window_s)},
                }
            ],
        }

    def seeds_of(self, n: int, buffer: int) -> list[dict[str, Any]]:
        return [self.scenario(n, buffer, 1 + i) for i in range(self.seeds)]

    def measure_points(self, runner: Any, points: list[tuple[int, int]], label: str) -> list[dict[str, float]]:
        """Mean utilization and goodput (fractions of C) and loss rate over the seeds,
        for each (n, buffer)."""
        runs = run_points(runner, [self.seeds_of(n, b) for n, b in points], label)
        out = []
        for summaries in runs:
            k = len(summaries)
            out.append(
                {
                    "utilization": sum(s["bottleneck_utilization"] for s in summaries) / k,
                    "goodput": sum(s["goodput_bps"] for s in summaries) / k / self.rate_bps,
                    "loss_rate": sum(s["bottleneck_loss_rate"] for s in summaries) / k,
                    # of the packets crossing the bottleneck, those their receiver had
                    # already (resent after a timeout although not lost); the emulator
                    # does not count them
                    "duplicate_fraction": sum(
                        s["duplicate_packets"] / (s["bottleneck_utilization"] * self.packets_per_s * self.measure_s)
                        for s in summaries
                    ) / k if all("duplicate_packets" in s for s in summaries) else None,
                    "utilization_min": min(s["bottleneck_utilization"] for s in summaries),
                    "utilization_max": max(s["bottleneck_utilization"] for s in summaries),
                }
            )
        return out


def finish(fig: Any, ax: Any, path: Path, xlabel: str, ylabel: str, title: str, yscale: str = "from zero") -> Path:
    """Label a single-panel figure, give it a grid and a legend, and save it. ``yscale``:
    "from zero" (linear, from 0 up), "linear" (as the data fall) or "log"."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if yscale == "log":
        ax.set_yscale("log")
    elif yscale == "from zero":
        ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3, which="both" if yscale == "log" else "major")
    ax.legend(fontsize="small")
    return _save(fig, path)


@dataclass(frozen=True)
class MinBufferParams:
    setup: LongFlows
    flows: tuple[int, ...]
    targets: tuple[float, ...]
    precision: float = 0.0  #: stop the bisection when hi - lo <= max(1, precision * hi)
    first_guess: float = 2.0  #: the first buffer tried, in units of the rule BDP/sqrt(n)


def min_buffers(exp_id: str, runner: Any, p: MinBufferParams) -> pl.DataFrame:
    """Bisect the minimum buffer for every (n, target) in aqmlab."""

    def utilization(points: list[tuple[Any, int]]) -> list[float]:
        stats = p.setup.measure_points(runner, points, f"{exp_id} round ({len(points)} points)")
        return [x["utilization"] for x in stats]

    return min_buffer_table(p, utilization)


def min_buffer_table(p: MinBufferParams, utilization: Callable[[list[tuple[Any, int]]], list[float]]) -> pl.DataFrame:
    """Bisect the minimum buffer for every (n, target), ``utilization`` measuring a
    batch of (n, buffer) points (aqmlab's runs, or another simulator's:
    bench/ns2/appenzeller.py); the table with the models beside it."""
    from ...theory.sizing import min_buffer_for_utilization, sqrt_n_buffer

    s = p.setup
    bdp = s.long_bdp
    cap = math.ceil(4 * s.bdp)
    searches = [
        Search(n, target, hi=min(cap, math.ceil(p.first_guess * sqrt_n_buffer(bdp, n))), cap=cap, precision=p.precision)
        for n in p.flows
        for target in p.targets
    ]
    m = bisect(searches, utilization)
    rows = []
    for r in search_table_rows(searches):
        n = r.pop("group")
        model = min_buffer_for_utilization(r["target"], bdp, n)
        rule = sqrt_n_buffer(bdp, n)
        b = r["min_buffer"]
        rows.append(
            {
                "flows": n,
                **r,
                "model_eq37": None if math.isinf(model) else model,
                "bdp_over_sqrt_n": rule,
                "ratio_to_model": None if b is None or math.isinf(model) else b / model,
                "ratio_to_rule": None if b is None else b / rule,
                "evaluations": len(m.known.get(n, {})),
            }
        )
    return pl.DataFrame(rows)


#: The OC3 setup of Figs 3.4 and 5.2: quick (30 s measured, one seed) and paper.
OC3_QUICK = LongFlows(OC3_BPS, OC3_MEAN_RTT_S, warmup_s=30, measure_s=30, seeds=1)
OC3_PAPER = LongFlows(OC3_BPS, OC3_MEAN_RTT_S, warmup_s=30, measure_s=120, seeds=5)


class MinBufferExperiment(Experiment):
    """An experiment whose table is the minimum buffer per (n, target)."""

    def measure(self, runner: Any, p: MinBufferParams) -> pl.DataFrame:
        return min_buffers(self.id, runner, p)


# ---------------------------------------------------------------------------
# Short flows: chapter 4, sections 5.3-5.5 and 6.1


@dataclass(frozen=True)
class ShortFlowParams:
    lengths: tuple[int, ...]
    rates_bps: tuple[float, ...]
    measure_s: float
    seeds: int
    load: float = 0.8
    warmup_s: float = 20.0
    mean_rtt_s: float = OC3_MEAN_RTT_S  #: not given for Fig 5.3: the script's default
    senders: int = 100
    #: the queue sampled this often (the mean queue of Fig 5.3); 0: not sampled (a sample
    #: visits every flow the run has had, which costs with hundreds of thousands of flows)
    sample_s: float = 0.010

    def offered(self, rate_bps: float, length: int, access_bps: float, load: float | None) -> dict[str, Any]:
        """The arrivals' load, of the bottleneck: a scenario's ``load`` is of the slowest
        link on the route, so behind slower access links it is given as a rate of flows."""
        load = self.load if load is None else load
        if access_bps >= rate_bps:
            return {"load": load}
        return {"rate": f"{load * rate_bps / (8 * PACKET_BYTES * length):.6g}/s"}

    def scenario(
        self, rate_bps: float, length: int, seed: int, buffer: int | None = None, access_bps: float = 10e9,
        load: float | None = None,
    ) -> dict[str, Any]:
        """``buffer`` None: one that never fills; ``load`` None: the fidelity's."""
        one_way = self.mean_rtt_s / 2
        variant = "" if buffer is None else f"-b{buffer}"
        variant += "" if access_bps == 10e9 else f"-access{access_bps / 1e6:g}mbps"
        variant += "" if load is None else f"-load{load:g}"
        return {
            "name": f"appenzeller-short-l{length}-{rate_bps / 1e6:g}mbps{variant}",
            "description": "seed 003 short flows (aqmlab.experiments.appenzeller)",
            "seed": seed,
            "duration": us(self.warmup_s + self.measure_s),
            "warmup": us(self.warmup_s),
            "sample_interval": us(self.sample_s),
            "tcp": {
                "variant": "reno",
                "packet_size": f"{PACKET_BYTES}B",
                "header_size": f"{PACKET_BYTES - PAYLOAD_BYTES}B",
                "initial_window": 2,
                "delayed_ack": False,
                "syn": True,
            },
            "topology": {
                "kind": "dumbbell",
                "senders": self.senders,
                "receivers": 1,
                "bottleneck": {
                    "rate": f"{rate_bps:.0f}bps",
                    "delay": us(BOTTLENECK_DELAY_S),
                    # the model's queue has no bound: a buffer that never fills
                    "qdisc": {"kind": "droptail", "limit": f"{buffer or 100000}pkt"},
                },
                # 10 Gb/s access: bursts reach the bottleneck back to back (section 5.3.1)
                "access": {
                    "rate": f"{access_bps:.0f}bps",
                    "delay": {"dist": "uniform", "low": us(0.8 * one_way - BOTTLENECK_DELAY_S),
                              "high": us(1.2 * one_way - BOTTLENECK_DELAY_S)},
                },
                # the receivers' link never the bottleneck (its rate defaults to the senders')
                "receiver_access": {"rate": "10Gbps", "delay": "0ms"},
                "access_qdisc": HOSTS_QUEUE,
            },
            "flows": [
                {"kind": "tcp_arrivals", "group": "short", "src": "senders", "dst": "receivers",
                 **self.offered(rate_bps, length, access_bps, load), "size": f"{length}pkt"},
            ],
        }


