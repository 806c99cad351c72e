"""Seed 003, chapter 2: one long flow at, under and over the bandwidth-delay product
(Figs 2.2-2.5, digest 003 E2.2-E2.5, R1), and the window accounting of many flows
(Fig 2.6, E2.6)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ...plots import pyplot as _pyplot
from ...plots import save as _save
from ..core import Experiment, Reference, run_dirs
from .common import (HOSTS_QUEUE, OC3_BPS, OC3_MEAN_RTT_S, PACKET_BYTES, PAYLOAD_BYTES, LongFlows, finish,
                     summary_of)


# ---------------------------------------------------------------------------
# Figs 2.2-2.5: one long flow, at, under and over the bandwidth-delay product

SINGLE_C_PPS = 1000.0  #: 8 Mb/s of 1000-byte packets (digest E2.2's recommended choice)
SINGLE_TWO_TP_S = 0.142  #: BDP 142 packets


@dataclass(frozen=True)
class SingleFlowParams:
    buffer: int  #: packets
    duration_s: float
    warmup_s: float = 50.0  #: past the first slow start and its recovery
    sample_s: float = 0.010

    @property
    def bdp(self) -> float:
        return SINGLE_C_PPS * SINGLE_TWO_TP_S

    def scenario(self) -> dict[str, Any]:
        ms = lambda s: f"{round(s * 1e3)}ms"  # noqa: E731
        # 2T_p = 2 x (10 ms access + 60 ms bottleneck + 1 ms receiver access)
        return {
            "name": f"appenzeller-single-b{self.buffer}",
            "description": "seed 003 single flow (aqmlab.experiments.appenzeller)",
            "seed": 1,
            "duration": ms(self.duration_s),
            "warmup": ms(self.warmup_s),
            "sample_interval": ms(self.sample_s),
            "tcp": {"variant": "reno", "packet_size": f"{PACKET_BYTES}B", "header_size": f"{PACKET_BYTES - PAYLOAD_BYTES}B"},
            "topology": {
                "kind": "dumbbell",
                "senders": 1,
                "bottleneck": {"rate": f"{SINGLE_C_PPS * 8 * PACKET_BYTES:.0f}bps", "delay": "60ms",
                               "qdisc": {"kind": "droptail", "limit": f"{self.buffer}pkt"}},
                "access": {"rate": "1Gbps", "delay": "10ms"},
                "access_qdisc": HOSTS_QUEUE,
                "receiver_access": {"rate": "1Gbps", "delay": "1ms"},
            },
            "flows": [{"kind": "tcp", "group": "reno", "trace_cwnd": True}],
            # every drop at the bottleneck, for the microscope of Fig 2.3
            "trace": {"packets": {"links": ["bottleneck"], "events": ["drop"]}},
        }


def window_cuts(time_s: list[float], cwnd: list[float], after: float = 0.0) -> list[float]:
    """When a single flow's window was cut (a fast retransmit halves it; the deflation at
    the end of its recovery, within one RTT, is the same cut): the sawtooth's teeth."""
    cuts: list[float] = []
    for i in range(1, len(cwnd)):
        if cwnd[i] < 0.75 * cwnd[i - 1] and (not cuts or time_s[i] - cuts[-1] > 2.0):
            cuts.append(time_s[i])
    return [c for c in cuts if c >= after]


def single_flow_series(directory: Path) -> tuple[pl.DataFrame, pl.DataFrame, list[float]]:
    """The bottleneck's queue and the flow's window over the whole run (time_s, value),
    and the times of its drops (s)."""
    ts = pl.read_parquet(directory / "timeseries.parquet")
    queue = ts.filter((pl.col("metric") == "queue_packets") & (pl.col("entity") == "bottleneck"))
    cwnd = ts.filter(pl.col("metric") == "cwnd")
    drops = (pl.read_parquet(directory / "trace.parquet")["time_ns"] / 1e9).to_list()
    return queue.select("time_s", "value"), cwnd.select("time_s", "value"), drops


def single_flow_findings(
    queue: pl.DataFrame, cwnd: pl.DataFrame, drops: list[float], summary: dict[str, Any], p: SingleFlowParams
) -> dict[str, float]:
    """The figures the thesis states of one flow's sawtooth, after the warm-up."""
    t, w = cwnd["time_s"].to_list(), cwnd["value"].to_list()
    cuts = window_cuts(t, w, p.warmup_s)
    periods = [b - a for a, b in zip(cuts, cuts[1:])]
    q = queue.filter(pl.col("time_s") >= p.warmup_s)["value"]
    return {
        "utilization": summary["bottleneck_utilization"],
        "period_s": sum(periods) / len(periods) if periods else math.nan,
        "periods": float(len(periods)),
        "queue_min": float(q.min()),
        "queue_max": float(q.max()),
        # nothing waiting (the packet in service aside): the fluid model's empty queue
        "queue_empty_fraction": float((q <= 1).mean()),
        "min_queueing_delay_ms": float(q.min()) / SINGLE_C_PPS * 1e3,
        **_decrease(queue, cuts, drops, p.buffer),
    }


def _decrease(queue: pl.DataFrame, cuts: list[float], drops: list[float], buffer: int) -> dict[str, float]:
    """One decrease under the microscope (Fig 2.3), the first cut after the warm-up: the
    time from the first drop of its loss episode to the cut (the packet trace has the
    drops), and the least queue while the sender pauses after it, the time the buffer
    takes to drain, B/C (the queue counts the packet in service: 0 means the link idled)."""
    before = [d for d in drops if cuts and cuts[0] - 2.0 < d < cuts[0]]
    if not before:
        return {"drop_to_halving_s": math.nan, "queue_min_after_cut": math.nan}
    cut = cuts[0]
    pause = queue.filter((pl.col("time_s") > cut) & (pl.col("time_s") <= cut + 0.9 * buffer / SINGLE_C_PPS))
    return {"drop_to_halving_s": cut - before[0], "queue_min_after_cut": float(pause["value"].min())}


def single_flow_fidelities(buffer: int) -> dict[str, SingleFlowParams]:
    """150 s at quick fidelity, 300 s at paper: five and ten sawtooth periods past the warm-up."""
    return {"quick": SingleFlowParams(buffer, duration_s=150.0), "paper": SingleFlowParams(buffer, duration_s=300.0)}


class SingleFlow(Experiment):
    """One long-lived Reno flow through a DropTail buffer (digest 003 E2.2-E2.5, R1)."""

    figure: str  #: "2.2", "2.4", "2.5"

    def example_scenario(self, p: SingleFlowParams) -> dict[str, Any]:
        return p.scenario()

    def measure(self, runner: Any, p: SingleFlowParams) -> pl.DataFrame:
        (directory,), = run_dirs(runner, [[p.scenario()]], f"Fig {self.figure}")
        queue, cwnd, drops = single_flow_series(directory)
        summary = summary_of(directory)
        found = single_flow_findings(queue, cwnd, drops, summary, p)
        series = queue.join(cwnd, on="time_s", how="left", suffix="_cwnd").rename(
            {"value": "queue_packets", "value_cwnd": "cwnd"}
        )
        return series.with_columns(**{k: pl.lit(v) for k, v in found.items()})

    def findings(self, t: pl.DataFrame, p: SingleFlowParams) -> dict[str, float | None]:
        keys = ("utilization", "period_s", "queue_min", "queue_max", "queue_empty_fraction",
                "min_queueing_delay_ms", "drop_to_halving_s", "queue_min_after_cut")
        return {k: float(t[k][0]) for k in keys}

    def _model(self, p: SingleFlowParams) -> tuple[float, float]:
        from ...theory.sizing import sawtooth_period_general, single_flow_utilization

        return (sawtooth_period_general(p.buffer, SINGLE_C_PPS, SINGLE_TWO_TP_S),
                single_flow_utilization(p.buffer, p.bdp))

    def _empty_share(self, p: SingleFlowParams) -> float:
        from ...theory.sizing import single_flow_empty_share

        return single_flow_empty_share(p.buffer, SINGLE_C_PPS, SINGLE_TWO_TP_S)

    def _common(self, p: SingleFlowParams) -> list[Reference]:
        period, util = self._model(p)
        return [
            Reference("period_s", f"sawtooth period, B = {p.buffer} (s)", period, "factor", 1.05,
                      f"Fig {self.figure}; thesis Appendix A.2 (Eq A.1), digest 2.2",
                      "the fluid model's period, computed by aqmlab.theory.sizing.sawtooth_period_general", acceptance="R1"),
            Reference("utilization", f"utilization, B = {p.buffer}", util, "abs", 0.005,
                      f"Fig {self.figure}; digest 2.2 [derived] U(b)",
                      "the fluid model's utilization, computed by aqmlab.theory.sizing.single_flow_utilization", acceptance="R1"),
        ]

    def plot(self, t: pl.DataFrame, p: SingleFlowParams, path: Path) -> Path:
        plt = _pyplot()
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        shown = t.filter(pl.col("time_s") >= p.warmup_s - 10)
        top.plot(shown["time_s"], shown["cwnd"], lw=0.8, label="window W (packets)")
        top.axhline(p.bdp, color="0.5", ls=":", label="2T_p C (BDP)")
        top.axhline(p.bdp + p.buffer, color="C3", ls=":", label="2T_p C + B")
        bottom.plot(shown["time_s"], shown["queue_packets"], lw=0.8, color="C1", label="queue Q (packets)")
        bottom.axhline(p.buffer, color="C3", ls=":", label=f"B = {p.buffer}")
        bottom.set_xlabel("time (s)")
        top.set_title(f"One Reno flow, B = {p.buffer} packets, BDP = {p.bdp:.0f} (Fig {self.figure})")
        for ax in (top, bottom):
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small", loc="lower right")
        return _save(fig, path)


class Fig22(SingleFlow):
    id = "appenzeller.fig2_2"
    figure = "2.2"
    title = "One flow with B = BDP: the sawtooth, and one decrease under the microscope (Figs 2.2, 2.3)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Figs 2.2-2.3, sections 2.1-2.2; digest 003 E2.2, E2.3, R1"
    summary = (
        "One long-lived Reno flow, C = 1000 packets/s (8 Mb/s of 1000-byte packets), 2T_p = 142 ms, "
        "DropTail buffer B = 142 = 2T_p C. Window and queue against time, and one decrease: the drop, "
        "the halving one full-buffer RTT later, the link served from the buffer meanwhile."
    )
    differences = (
        "The thesis gives no link parameters beyond C ~ 1000 packets/s and B = BDP = 142; we take the "
        "digest's recommended 8 Mb/s, 1000-byte packets and 2T_p = 142 ms. The drop is read from the "
        "queue sampled every 10 ms, so the drop-to-halving gap is good to a sample."
    )
    fidelities = single_flow_fidelities(142)

    def references(self, p: SingleFlowParams) -> list[Reference]:
        return [
            *self._common(p),
            Reference("period_s", "sawtooth period as printed (s)", 30.2, "factor", 1.05, "Fig 2.2, section 2.1",
                      "'T = 1.5 B^2/C' = 30.2 s", acceptance="R1"),
            Reference("queue_empty_fraction", "share of the time with an empty queue", 0.0, "at_most", 0.02,
                      "Fig 2.2, section 2.1", "the queue 'just reaches 0' after each decrease: the link stays busy", acceptance="R1"),
            Reference("drop_to_halving_s", "drop to halving (s)", 2 * SINGLE_TWO_TP_S, "abs", 0.03, "Fig 2.3, section 2.2",
                      "drop at 35.15 s, halving at 35.44 s: one full-buffer RTT, 2T_p + B/C = 0.284 s", acceptance="R1"),
            Reference("queue_min_after_cut", "least queue while the sender pauses (packets)", 1.0, "at_least", 0.0,
                      "Fig 2.3, section 2.2", "the sender pauses one RTT and 'the link never goes idle': it is served "
                      "from the buffer (at least the packet in service)", acceptance="R1"),
        ]


class Fig24(SingleFlow):
    id = "appenzeller.fig2_4"
    figure = "2.4"
    title = "One flow under-buffered, B = 100 < BDP: the queue empties and utilization drops (Fig 2.4)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 2.4, section 2.2; digest 003 E2.4, R1"
    summary = "As Fig 2.2 with B = 100 packets: a lower, faster sawtooth; the queue sits empty for seconds."
    differences = Fig22.differences
    fidelities = single_flow_fidelities(100)

    def references(self, p: SingleFlowParams) -> list[Reference]:
        return [
            *self._common(p),
            Reference("utilization", "utilization below 100%", 1.0, "at_most", -0.001, "Fig 2.4, section 2.2",
                      "'R < C and U < 100%'", acceptance="R1"),
            Reference("queue_empty_fraction", "share of the time with an empty queue", self._empty_share(p), "abs", 0.03,
                      "Fig 2.4, section 2.2; digest 2.2 [derived] phase 1",
                      "'the queue stays empty for long periods (for example t = 36-40 s)'; the fluid model's share, "
                      "computed by aqmlab.theory.sizing.single_flow_empty_share", acceptance="R1"),
        ]


class Fig25(SingleFlow):
    id = "appenzeller.fig2_5"
    figure = "2.5"
    title = "One flow over-buffered, B = 180 > BDP: the queue never empties (Fig 2.5)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 2.5, section 2.2; digest 003 E2.5, R1"
    summary = "As Fig 2.2 with B = 180 packets: a higher, slower sawtooth over a queue that never empties."
    differences = (
        Fig22.differences + " The thesis's 'about 10-15 ms' of extra queueing delay is not defined further; "
        "we compare the least queueing delay (the queue at its trough over C): the fluid model's trough "
        "is (B - BDP)/2 = 19 packets, 19 ms."
    )
    fidelities = single_flow_fidelities(180)

    def references(self, p: SingleFlowParams) -> list[Reference]:
        return [
            *self._common(p),
            Reference("queue_min", "least queue (packets)", (p.buffer - p.bdp) / 2, "factor", 1.5,
                      "Fig 2.5, section 2.2; digest 2.2 (W_min = (D + B)/2)", "the queue never empties", acceptance="R1"),
            Reference("min_queueing_delay_ms", "least queueing delay (ms)", 10.0, "at_least", 0.0,
                      "Fig 2.5, section 2.2", "'about 10-15 ms' of extra queueing delay", acceptance="R1"),
        ]


# ---------------------------------------------------------------------------
# Fig 2.6: accounting for the packets of many flows


@dataclass(frozen=True)
class AccountingParams:
    duration_s: float
    flows: int = 50
    buffer_bdps: float = 0.5  #: B in BDPs: room for the queue to show, losses only at its bursts
    sample_s: float = 0.010
    #: OC3 at the script's 2T_p; every flow starts in the first 0.5 s, so that the link
    #: fills from idle, overflows as the slow starts end, and refills
    setup: LongFlows = LongFlows(OC3_BPS, OC3_MEAN_RTT_S, warmup_s=0, measure_s=0, seeds=1, start_window_s=0.5)

    @property
    def buffer(self) -> int:
        return round(self.buffer_bdps * self.setup.bdp)

    def scenario(self) -> dict[str, Any]:
        s = self.setup.scenario(self.flows, self.buffer, 1)
        return {**s, "name": f"appenzeller-accounting-n{self.flows}", "duration": f"{self.duration_s:g}s",
                "warmup": "0s", "sample_interval": f"{round(self.sample_s * 1e3)}ms"}


class Fig26(Experiment):
    id = "appenzeller.fig2_6"
    title = "Accounting for packets: the sum of the windows against 2T_pC + Q and 2T_p x U (Fig 2.6)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 2.6, section 2.4 (Eq 2.4); digest 003 E2.6"
    summary = (
        "50 long-lived Reno flows start in the first 0.5 s on an OC3 bottleneck (mean 2T_p 89 ms, BDP 1724 "
        "packets, B = BDP/2): the link fills from idle, overflows as the slow starts end, idles while the flows "
        "recover, and fills again. Every 10 ms: the sum of the windows, 2T_p C + Q, and 2T_p x U (in packets: "
        "the BDP times the utilization over the last 2T_p)."
    )
    differences = (
        "The thesis does not give the run behind Fig 2.6 ('a link that receives bursty TCP traffic from many "
        "flows and is congested over short periods'): ours is many long flows started together. Its W is the "
        "number of outstanding packets, ours the congestion window, which counts the packets dropped and not "
        "yet detected (Delta_drop of Eq 2.4) and is inflated during fast recovery: the sum exceeds 2T_pC + Q by "
        "those, most while a burst of losses is being recovered (right after the slow starts). The thesis's "
        "identities are judged by their medians over the samples of each kind."
    )
    fidelities = {"quick": AccountingParams(duration_s=8.0), "paper": AccountingParams(duration_s=20.0)}

    def example_scenario(self, p: AccountingParams) -> dict[str, Any]:
        return p.scenario()

    def measure(self, runner: Any, p: AccountingParams) -> pl.DataFrame:
        (directory,), = run_dirs(runner, [[p.scenario()]], "Fig 2.6")
        ts = pl.read_parquet(directory / "timeseries.parquet")
        at_bottleneck = pl.col("entity") == "bottleneck"

        def series(metric: str, name: str, where: Any = True) -> pl.DataFrame:
            return ts.filter((pl.col("metric") == metric) & where).select("time_s", pl.col("value").alias(name))

        rtt_samples = max(1, round(p.setup.mean_rtt_s / p.sample_s))
        bdp = p.setup.bdp
        t = (
            series("sum_cwnd", "sum_cwnd")
            .join(series("queue_packets", "queue_packets", at_bottleneck), on="time_s")
            .join(series("link_utilization", "utilization", at_bottleneck), on="time_s", how="left")
            .sort("time_s")
            .with_columns(pl.col("utilization").fill_null(0.0))
        )
        return t.with_columns(
            pl.col("utilization").rolling_mean(rtt_samples, min_samples=1).alias("utilization_rtt"),
            pl.col("queue_packets").rolling_min(rtt_samples, min_samples=1).alias("queue_min_rtt"),
        ).with_columns(
            (bdp + pl.col("queue_packets")).alias("bdp_plus_queue"),
            (bdp * pl.col("utilization_rtt")).alias("bdp_times_utilization"),
        )

    def findings(self, t: pl.DataFrame, p: AccountingParams) -> dict[str, float | None]:
        settled = t.filter(pl.col("time_s") >= p.setup.mean_rtt_s)
        below = settled.filter((pl.col("utilization_rtt") < 0.95) & (pl.col("utilization_rtt") > 0))
        busy = settled.filter(pl.col("queue_min_rtt") > 0)  # the link busy over the last 2T_p
        small_sum = settled["sum_cwnd"] < p.setup.bdp
        underused = settled["utilization_rtt"] < 0.99
        return {
            "below_ratio": (below["sum_cwnd"] / below["bdp_times_utilization"]).median(),
            "full_ratio": (busy["sum_cwnd"] / busy["bdp_plus_queue"]).median(),
            "condition_agreement": float((small_sum == underused).mean()),
            "share_below": len(below) / len(settled),
            "share_busy": len(busy) / len(settled),
        }

    def references(self, p: AccountingParams) -> list[Reference]:
        fig = "Fig 2.6, section 2.4 (Eq 2.4)"
        return [
            Reference("below_ratio", "sum W / (2T_p x U) while U < 100% (median)", 1.0, "factor", 1.15, fig,
                      "'when t < 0.4 utilization is below 100% and 2T_p x U ~ sum W'"),
            Reference("full_ratio", "sum W / (2T_p C + Q) while the link is busy (median)", 1.0, "factor", 1.1, fig,
                      "'for periods of full link utilization ... sum W = 2T_p x C + Q'",
                      "Our windows count the dropped packets not yet detected and fast recovery's inflation."),
            Reference("condition_agreement", "share of samples where sum W < 2T_p C exactly when U < 100%", 1.0,
                      "at_least", 0.1, fig,
                      "'sum W < 2T_p x C is a necessary and sufficient condition for the utilization dropping "
                      "below 100%'"),
        ]

    def plot(self, t: pl.DataFrame, p: AccountingParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(8, 4.5))
        shown = t.filter(pl.col("time_s") <= min(p.duration_s, 8.0))
        ax.plot(shown["time_s"], shown["sum_cwnd"], lw=0.9, label="sum of the windows W")
        ax.plot(shown["time_s"], shown["bdp_plus_queue"], lw=0.9, label="2T_p C + Q")
        ax.plot(shown["time_s"], shown["bdp_times_utilization"], lw=0.9, ls="--", label="2T_p x U (x C)")
        return finish(fig, ax, path, "time (s)", "packets",
                      f"Fig 2.6: {p.flows} flows on OC3, B = {p.buffer} (BDP {p.setup.bdp:.0f})")


EXPERIMENTS = [Fig22(), Fig24(), Fig25(), Fig26()]
