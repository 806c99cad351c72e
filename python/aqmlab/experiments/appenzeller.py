"""Seed 003: G. Appenzeller, *Sizing Router Buffers* (thesis, Stanford 2005).

Long-flow experiments of chapter 5 (and Fig 3.4), set up as digest 003 section 3
describes the thesis's ns-2 script (Appendix A.4):

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
  when the hole fills; docs/experiments.md).

The warm-up. The thesis waits "for the system to stabilize - typically between 10 and
60 seconds" (section 5.2). What takes longest to stabilize is the end of each flow's
first slow start: it overshoots, loses a window's worth, and (Reno) times out; the
flows then climb back linearly, together n packets per RTT, to the BDP plus the buffer.
With few flows or a large BDP that takes minutes (one flow on OC3: (1724 + B) RTTs of
up to 107 ms), and a measurement that starts earlier reads the climb, not the steady
state the model describes. So the warm-up is the larger of the fidelity's ``warmup_s``
and the start window + 10 s + (BDP + B)/n longest RTTs; it is 30 s for most points of
these figures and grows only for the few-flow points.

The minimum buffers of Figs 3.4 and 5.2 are found by bisection over integer buffers,
each buffer's utilization averaged over seeds (digest 7.18; :mod:`.search`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import polars as pl

from ..plots import pyplot as _pyplot
from ..plots import save as _save
from .core import Experiment, Reference, run_dirs, run_points
from .search import Search, bisect, search_table_rows

PACKET_BYTES = 1000
PAYLOAD_BYTES = 960
BOTTLENECK_DELAY_S = 0.020
#: The senders' own queues: the thesis's ns-2 script gives them 32,000 packets
#: (bench/ns2/appenzeller.tcl), so they never drop, unlike aqmlab's default of 50.
HOSTS_QUEUE = {"kind": "droptail", "limit": "100000pkt"}
OC3_BPS = 155e6  #: 19,375 packets/s of 1000 B
OC3_MEAN_RTT_S = 0.089  #: the script's 2 x (20 + U{20..29}) ms (digest 3.3, 7.12)


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
    variant: str = "reno"  #: the thesis's; "newreno" for the sensitivity check of docs/experiments.md
    packet_bytes: int = PACKET_BYTES  #: on the wire, 40 of them headers

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
        us = lambda s: f"{round(s * 1e6)}us"  # noqa: E731
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
                    # already (resent after a timeout although not lost)
                    "duplicate_fraction": sum(
                        s["duplicate_packets"] / (s["bottleneck_utilization"] * self.packets_per_s * self.measure_s)
                        for s in summaries
                    ) / k,
                    "utilization_min": min(s["bottleneck_utilization"] for s in summaries),
                    "utilization_max": max(s["bottleneck_utilization"] for s in summaries),
                }
            )
        return out


def _finish(fig: Any, ax: Any, path: Path) -> Path:
    """A single-panel figure from zero up, with a grid and a legend, saved."""
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return _save(fig, path)


# ---------------------------------------------------------------------------
# Fig 5.1: utilization and goodput against the number of flows


@dataclass(frozen=True)
class Fig51Params:
    setup: LongFlows
    flows: tuple[int, ...]
    buffers: tuple[int, ...] = (50, 100, 500)


class Fig51(Experiment):
    id = "appenzeller.fig5_1"
    title = "Utilization and goodput against the number of long flows (Fig 5.1)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.1, section 5.2.1; digest 003 E5.1, R7"
    summary = (
        "n long-lived Reno flows share a 20 Mb/s bottleneck; mean two-way propagation delay 130 ms "
        "(BDP 325 packets of 1000 B); DropTail buffers of 50, 100 and 500 packets (20, 40 and 200 ms). "
        "Utilization and goodput of the bottleneck against n."
    )
    differences = (
        "The thesis gives the figure, not its numbers, so the references are its stated shape made "
        "numeric: B = 500 (> BDP) is fully used even with one flow; B = 50 and 100 are not fully "
        "used by a few flows and reach 100% as n grows; goodput falls slightly with n and is slightly "
        "higher with the larger buffer. The single-flow utilizations are also compared with the "
        "thesis's fluid model of one flow (Appendix A.2), computed by aqmlab.theory. Our goodput counts "
        "payload only, so it tops out at 0.96 of C over a long run (a window's figure can pass it "
        "by the payload held above a hole when the window opens, counted when the hole fills)."
    )
    fidelities = {
        "quick": Fig51Params(LongFlows(20e6, 0.130, warmup_s=30, measure_s=30, seeds=2), flows=(1, 5, 20, 100, 400)),
        "paper": Fig51Params(
            LongFlows(20e6, 0.130, warmup_s=30, measure_s=120, seeds=5),
            flows=(1, 2, 5, 10, 20, 50, 100, 200, 300, 400),
        ),
    }

    def measure(self, runner: Any, p: Fig51Params) -> pl.DataFrame:
        points = [(n, b) for b in p.buffers for n in p.flows]
        stats = p.setup.measure_points(runner, points, f"{self.id} ({len(points)} points)")
        return pl.DataFrame([{"buffer": b, "flows": n, **s} for (n, b), s in zip(points, stats)])

    def findings(self, t: pl.DataFrame, p: Fig51Params) -> dict[str, float | None]:
        def at(b: int, n: int, col: str) -> float:
            return t.filter((pl.col("buffer") == b) & (pl.col("flows") == n))[col].item()

        small, mid, large = p.buffers
        n1, nmax = min(p.flows), max(p.flows)
        return {
            "util_large_n1": at(large, n1, "utilization"),
            "util_large_min": t.filter(pl.col("buffer") == large)["utilization"].min(),
            "util_small_n1": at(small, n1, "utilization"),
            "util_mid_n1": at(mid, n1, "utilization"),
            "util_small_nmax": at(small, nmax, "utilization"),
            "util_mid_nmax": at(mid, nmax, "utilization"),
            "goodput_large_drop": at(large, nmax, "goodput") - at(large, n1, "goodput"),
            "goodput_gap_nmax": at(large, nmax, "goodput") - at(small, nmax, "goodput"),
        }

    def references(self, p: Fig51Params) -> list[Reference]:
        from ..theory.sizing import single_flow_utilization

        small, mid, large = p.buffers
        bdp = p.setup.bdp
        fig = "Fig 5.1 top, section 5.2.1"
        model = "thesis fluid model of one flow (Appendix A.2, aqmlab.theory.sizing.single_flow_utilization)"
        spread = (
            "Our single flow's 2T_p is drawn from [104, 156] ms per seed, so its BDP is 260-390 packets "
            "against the model's 325."
        )
        return [
            Reference("util_large_n1", f"utilization, B = {large}, one flow", 1.0, "at_least", 0.005, fig,
                      "'With buffers above 2T_p x C, we can achieve full utilization, even with a single flow.'", acceptance="R7"),
            Reference("util_large_min", f"utilization, B = {large}, lowest over n", 1.0, "at_least", 0.005, fig,
                      "100% at every n", acceptance="R7"),
            Reference("util_small_n1", f"utilization, B = {small}, one flow", single_flow_utilization(small, bdp),
                      "abs", 0.03, model, "'a small number of flows is no longer able to achieve full utilization'",
                      spread, acceptance="R7"),
            Reference("util_mid_n1", f"utilization, B = {mid}, one flow", single_flow_utilization(mid, bdp),
                      "abs", 0.03, model, "", spread, acceptance="R7"),
            Reference("util_small_nmax", f"utilization, B = {small}, n = {max(p.flows)}", 1.0, "at_least", 0.01,
                      fig, "'utilization increases until it eventually reaches 100%'", acceptance="R7"),
            Reference("util_mid_nmax", f"utilization, B = {mid}, n = {max(p.flows)}", 1.0, "at_least", 0.01,
                      fig, "'utilization increases until it eventually reaches 100%'", acceptance="R7"),
            Reference("goodput_large_drop", f"goodput change, B = {large}, n = {min(p.flows)} to {max(p.flows)}",
                      0.0, "at_most", 0.0, "Fig 5.1 bottom, section 5.2.1",
                      "'Goodput decreases as the number of flows increases' (< 0)", acceptance="R7"),
            Reference("goodput_gap_nmax", f"goodput, B = {large} minus B = {small}, n = {max(p.flows)}", 0.0,
                      "at_least", 0.0, "Fig 5.1 bottom, section 5.2.1",
                      "'it is slightly higher for larger buffers' (> 0)",
                      "Where the small buffers leave the link idle (few flows) the large buffer's goodput is "
                      "higher, as the thesis says. With hundreds of flows every buffer keeps the link busy, "
                      "windows are 1-2 packets and timeouts are frequent; Reno then resends from the first "
                      "unacknowledged packet, and the larger the queue the more of those packets had not been "
                      "lost: see the duplicate_fraction column, larger for the large buffer.", acceptance="R7"),
        ]

    def plot(self, t: pl.DataFrame, p: Fig51Params, path: Path) -> Path:
        plt = _pyplot()
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
        for b, marker in zip(p.buffers, "o^s"):
            d = t.filter(pl.col("buffer") == b).sort("flows")
            top.plot(d["flows"], 100 * d["utilization"], marker=marker, label=f"B = {b} pkt")
            bottom.plot(d["flows"], 100 * d["goodput"], marker=marker, label=f"B = {b} pkt")
        top.set_ylabel("utilization (%)")
        bottom.set_ylabel("goodput (% of C, payload)")
        bottom.set_xlabel("number of long-lived flows")
        top.set_title(f"20 Mb/s, 2T_p = 130 ms (BDP {p.setup.bdp:.0f} pkt), {p.setup.seeds} seeds")
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.grid(True, alpha=0.3)
            ax.legend(loc="lower right", fontsize="small")
        return _save(fig, path)

    def example_scenario(self, p: Fig51Params) -> dict[str, Any]:
        return p.setup.scenario(max(p.flows), p.buffers[0], 1)


# ---------------------------------------------------------------------------
# Figs 3.4 and 5.2: the minimum buffer for a utilization target


@dataclass(frozen=True)
class MinBufferParams:
    setup: LongFlows
    flows: tuple[int, ...]
    targets: tuple[float, ...]
    precision: float = 0.0  #: stop the bisection when hi - lo <= max(1, precision * hi)
    first_guess: float = 2.0  #: the first buffer tried, in units of the rule BDP/sqrt(n)


def _min_buffers(exp_id: str, runner: Any, p: MinBufferParams) -> pl.DataFrame:
    """Bisect the minimum buffer for every (n, target) in aqmlab."""

    def utilization(points: list[tuple[Any, int]]) -> list[float]:
        stats = p.setup.measure_points(runner, points, f"{exp_id} round ({len(points)} points)")
        return [x["utilization"] for x in stats]

    return min_buffer_table(p, utilization)


def min_buffer_table(p: MinBufferParams, utilization: Callable[[list[tuple[Any, int]]], list[float]]) -> pl.DataFrame:
    """Bisect the minimum buffer for every (n, target), ``utilization`` measuring a
    batch of (n, buffer) points (aqmlab's runs, or another simulator's:
    bench/ns2/appenzeller.py); the table with the models beside it."""
    from ..theory.sizing import min_buffer_for_utilization, sqrt_n_buffer

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
        return _min_buffers(self.id, runner, p)


class Fig34(MinBufferExperiment):
    id = "appenzeller.fig3_4"
    title = "Minimum buffer for 95% utilization against the number of flows (Fig 3.4)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 3.4, section 3.2; digest 003 E3.4, R5"
    summary = (
        "1 to 300 long-lived Reno flows on an OC3 bottleneck (155 Mb/s, 19,375 packets/s; the thesis "
        "gives no link parameters, so the script defaults: mean 2T_p 89 ms, BDP 1724 packets). For each "
        "n, the smallest DropTail buffer whose utilization (mean over seeds) is at least 95%, found by "
        "bisection, beside the buffer Eq 3.7 asks for."
    )
    differences = (
        "The thesis states that the model fails below about 50 flows (synchronization) and predicts "
        "the minimum buffer 'very well' from 50 flows; it prints no numbers, so the references are "
        "Eq 3.7's own buffers (computed by aqmlab.theory), with 'very well' read as within a factor "
        "of 2 for n >= 50. Eq 3.7 is a lower bound on utilization, so its buffer is conservative: "
        "where the simulation needs less, that is the bound's slack, not a failure of the rule."
    )
    fidelities = {
        "quick": MinBufferParams(
            OC3_QUICK,
            flows=(5, 50, 200), targets=(0.95,), precision=0.1,
        ),
        "paper": MinBufferParams(
            OC3_PAPER,
            flows=(1, 2, 5, 10, 20, 30, 50, 75, 100, 150, 200, 250, 300), targets=(0.95,), precision=0.02,
        ),
    }

    def findings(self, t: pl.DataFrame, p: MinBufferParams) -> dict[str, float | None]:
        return {f"min_buffer_n{r['flows']}": r["min_buffer"] for r in t.iter_rows(named=True)}

    def references(self, p: MinBufferParams) -> list[Reference]:
        from scipy.optimize import brentq

        from ..theory.sizing import min_buffer_for_utilization, single_flow_utilization

        bdp = p.setup.bdp
        refs = []
        if 1 in p.flows:
            # one flow is the one case with a model of its own: the fluid sawtooth of chapter 2
            refs.append(Reference(
                "min_buffer_n1", "minimum buffer for 95%, n = 1 (packets)",
                brentq(lambda b: single_flow_utilization(b, bdp) - 0.95, 1e-6, bdp), "factor", 2.0,
                "section 2.3 and Appendix A.2 (the single-flow fluid model, aqmlab.theory.sizing.single_flow_utilization)",
                "one flow needs B = 2T_pC for 100%; the fluid model gives the buffer for 95%",
                "Eq 3.7 is not meant for one flow (it asks for 3 BDP here); the thesis's model of one flow is.",
                acceptance="R5",
            ))
        refs += [
            Reference(
                f"min_buffer_n{n}", f"minimum buffer for 95%, n = {n} (packets)",
                min_buffer_for_utilization(0.95, bdp, n), "factor", 2.0,
                "Fig 3.4, section 3.2 (model: Eq 3.7 inverted, aqmlab.theory.sizing.min_buffer_for_utilization)",
                "'as we reach 50 flows ... our model predicts the actual required minimum buffer very well'",
                acceptance="R5",
            )
            for n in p.flows
            if n >= 50
        ]
        return refs

    def plot(self, t: pl.DataFrame, p: MinBufferParams, path: Path) -> Path:
        import numpy as np

        from ..theory.sizing import min_buffer_for_utilization

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        d = t.sort("flows")
        ns = np.arange(1, max(p.flows) + 1)
        ax.plot(ns, [min_buffer_for_utilization(0.95, p.setup.bdp, n) for n in ns], color="C1",
                label="model (Eq 3.7, 95%)")
        ok = d.filter(pl.col("min_buffer").is_not_null())
        ax.errorbar(ok["flows"], ok["min_buffer"],
                    yerr=[ok["min_buffer"] - ok["bracket_low"], [0] * len(ok)], fmt="o", color="C0",
                    capsize=3, label=f"simulation ({p.setup.seeds} seeds; bar: bisection bracket)")
        ax.axhline(p.setup.bdp, color="0.5", ls=":", label=f"BDP = {p.setup.bdp:.0f} pkt")
        ax.set_xlabel("number of long-lived flows n")
        ax.set_ylabel("minimum buffer for 95% utilization (packets)")
        ax.set_title("OC3, mean 2T_p 89 ms")
        ax.set_ylim(top=1.15 * max(p.setup.bdp, float(ok["min_buffer"].max() or 0)))  # the model's curve goes off the top
        return _finish(fig, ax, path)

    def example_scenario(self, p: MinBufferParams) -> dict[str, Any]:
        from ..theory.sizing import sqrt_n_buffer

        n = max(p.flows)
        return p.setup.scenario(n, math.ceil(sqrt_n_buffer(p.setup.bdp, n)), 1)


class Fig52(MinBufferExperiment):
    link = "OC3"
    id = "appenzeller.fig5_2"
    title = "Minimum buffer for 98, 99, 99.5 and 99.9% utilization on OC3 (Fig 5.2 top)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.2 top, section 5.2.2; digest 003 E5.2a, R8"
    summary = (
        "50 to 500 long-lived Reno flows on an OC3 bottleneck (script defaults: mean 2T_p 89 ms, BDP "
        "1724 packets). For each n and each utilization target, the smallest DropTail buffer that "
        "meets it (mean over seeds), found by bisection; beside it the lines BDP/sqrt(n) and "
        "2 BDP/sqrt(n), and Eq 3.7's buffer for each target."
    )
    differences = (
        "The thesis prints no numbers for this figure; the references are its two claims: at 400 "
        "flows the buffer for 99.9% is 'much less than a factor of two' above the buffer for 98% "
        "(Eq 3.7 says 1.44), and 2 BDP/sqrt(n) gives 'very close to 100%' utilization, read as at "
        "least 99.9%. Eq 3.7's buffers are shown but not judged: it is a lower bound on utilization. "
        "From 300 flows up we agree; below, 99.9% needs up to twice 2 BDP/sqrt(n), because Reno flows "
        "time out often enough to idle the link for a tenth of a percent of the time (see the notes)."
    )
    fidelities = {
        "quick": MinBufferParams(
            OC3_QUICK,
            flows=(100, 400), targets=(0.98, 0.99, 0.995, 0.999), precision=0.1,
        ),
        "paper": MinBufferParams(
            OC3_PAPER,
            flows=(50, 100, 150, 200, 300, 400, 500), targets=(0.98, 0.99, 0.995, 0.999), precision=0.02,
        ),
    }

    def _at(self, t: pl.DataFrame, n: int, target: float) -> float | None:
        return t.filter((pl.col("flows") == n) & (pl.col("target") == target))["min_buffer"].item()

    def findings(self, t: pl.DataFrame, p: MinBufferParams) -> dict[str, float | None]:
        from ..theory.sizing import sqrt_n_buffer

        lo, hi = min(p.targets), max(p.targets)
        n_ref = 400 if 400 in p.flows else max(p.flows)
        a, b = self._at(t, n_ref, hi), self._at(t, n_ref, lo)
        out: dict[str, float | None] = {"ratio_top_to_bottom": None if a is None or b is None else a / b}
        for n in p.flows:
            v = self._at(t, n, hi)
            out[f"top_over_twice_rule_n{n}"] = None if v is None else v / (2 * sqrt_n_buffer(p.setup.bdp, n))
        return out

    def references(self, p: MinBufferParams) -> list[Reference]:
        from ..theory.sizing import min_buffer_for_utilization

        lo, hi = min(p.targets), max(p.targets)
        n_ref = 400 if 400 in p.flows else max(p.flows)
        bdp = p.setup.bdp
        model = min_buffer_for_utilization(hi, bdp, n_ref) / min_buffer_for_utilization(lo, bdp, n_ref)
        refs = [
            Reference(
                "ratio_top_to_bottom", f"B({100 * hi:g}%) / B({100 * lo:g}%) at n = {n_ref}", 2.0, "at_most", 0.0,
                "Fig 5.2 top, section 5.2.2",
                "'At 400 flows, it is much less than a factor of two'",
                f"Eq 3.7 gives {model:.2f}.",
                acceptance="R8",
            )
        ]
        refs += [
            Reference(
                f"top_over_twice_rule_n{n}", f"B({100 * hi:g}%) / (2 BDP/sqrt(n)), n = {n}", 1.0, "at_most", 0.0,
                "Fig 5.2 top, section 5.2.2",
                "'we should probably use 2 x 2T_pC/sqrt(n) as this will guarantee us very close to 100% utilization'",
                "Where ours is above 1, it is Reno's timeouts: with 100 flows and B = 2 BDP/sqrt(n) each flow "
                "times out about every 7 s (several losses in one window leave too few duplicate ACKs), and the "
                "link idles; NewReno on the same runs gives 99.7% instead of 98.3% (docs/experiments.md). The "
                "thesis does not give its Reno's loss-recovery details (digest 7.14).",
                acceptance="R8",
            )
            for n in p.flows
        ]
        return refs

    def plot(self, t: pl.DataFrame, p: MinBufferParams, path: Path) -> Path:
        import numpy as np

        from ..theory.sizing import sqrt_n_buffer

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for target, marker in zip(sorted(p.targets), "os^D"):
            d = t.filter((pl.col("target") == target) & pl.col("min_buffer").is_not_null()).sort("flows")
            ax.plot(d["flows"], d["min_buffer"], marker=marker, label=f"{100 * target:g}% utilization")
        ns = np.linspace(min(p.flows), max(p.flows), 200)
        ax.plot(ns, [sqrt_n_buffer(p.setup.bdp, n) for n in ns], "k--", lw=1, label="BDP/sqrt(n)")
        ax.plot(ns, [2 * sqrt_n_buffer(p.setup.bdp, n) for n in ns], "k:", lw=1, label="2 BDP/sqrt(n)")
        ax.set_xlabel("number of long-lived flows n")
        ax.set_ylabel("minimum buffer (packets)")
        ax.set_title(f"{self.link}, mean 2T_p {1000 * p.setup.mean_rtt_s:.0f} ms (BDP {p.setup.bdp:.0f} pkt), {p.setup.seeds} seeds")
        return _finish(fig, ax, path)

    def example_scenario(self, p: MinBufferParams) -> dict[str, Any]:
        from ..theory.sizing import sqrt_n_buffer

        n = max(p.flows)
        return p.setup.scenario(n, math.ceil(2 * sqrt_n_buffer(p.setup.bdp, n)), 1)


class Fig52Low(Fig52):
    link = "20 Mb/s"
    id = "appenzeller.fig5_2_low"
    title = "Minimum buffer for 99.9% utilization on a 20 Mb/s link (Fig 5.2 bottom)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.2 bottom, section 5.2.3; digest 003 E5.2b, R9"
    summary = (
        "25 to 500 long-lived Reno flows on the 20 Mb/s link of Fig 5.1 (mean 2T_p 130 ms, BDP 325 "
        "packets). For each n, the smallest DropTail buffer that gives 99.9% utilization (mean over "
        "seeds), found by bisection, beside BDP/sqrt(n)."
    )
    differences = (
        "The thesis's claims, made numeric: the rule 'holds well, as long as we have at least 100 "
        "flows' (read as: the 99.9% buffer within a factor of 2 of BDP/sqrt(n) for n >= 100), and "
        "'when n exceeds the BDP in packets, slightly more than BDP/sqrt(n) is needed' (read as: "
        "above 1 for n > 325). Here a flow's mean window is (325 + B)/n packets: 3.25 at 100 flows, "
        "under 1 from 400, so the link is kept busy by flows recovering from timeouts, as the thesis "
        "says."
    )
    fidelities = {
        "quick": MinBufferParams(
            LongFlows(20e6, 0.130, warmup_s=30, measure_s=30, seeds=1), flows=(100, 400), targets=(0.999,),
            precision=0.1,
        ),
        "paper": MinBufferParams(
            LongFlows(20e6, 0.130, warmup_s=30, measure_s=120, seeds=5),
            flows=(25, 50, 100, 200, 300, 400, 500), targets=(0.999,), precision=0.02,
        ),
    }

    def findings(self, t: pl.DataFrame, p: MinBufferParams) -> dict[str, float | None]:
        return {f"over_rule_n{r['flows']}": r["ratio_to_rule"] for r in t.iter_rows(named=True)}

    def references(self, p: MinBufferParams) -> list[Reference]:
        bdp = p.setup.bdp
        refs = [
            Reference(
                f"over_rule_n{n}", f"B(99.9%) / (BDP/sqrt(n)), n = {n}", 1.0, "factor", 2.0,
                "Fig 5.2 bottom, section 5.2.3",
                "'even at this low bandwidth, our model holds well, as long as we have at least 100 flows'",
                acceptance="R9",
            )
            for n in p.flows
            if 100 <= n <= bdp
        ]
        refs += [
            Reference(
                f"over_rule_n{n}", f"B(99.9%) / (BDP/sqrt(n)), n = {n} (more flows than BDP packets)", 1.0,
                "at_least", 0.0, "section 5.2.3 and digest 003 E5.2b",
                "when n exceeds the BDP in packets (mean window < 1), slightly more than BDP/sqrt(n) is needed",
                "Here losses run at 30% and the link is kept busy by flows resending after their timeouts, so "
                "the buffer needed depends on how long a timed-out flow stays silent: with a 1 s minimum RTO "
                "instead of our 200 ms, the buffer we find at 400 flows gives 98.0% instead of 99.9% "
                "(docs/experiments.md). ns-2's default minimum RTO was 1 s from October 2004.",
                acceptance="R9",
            )
            for n in p.flows
            if n > bdp
        ]
        return refs

    def example_scenario(self, p: MinBufferParams) -> dict[str, Any]:
        from ..theory.sizing import sqrt_n_buffer

        return p.setup.scenario(100, math.ceil(sqrt_n_buffer(p.setup.bdp, 100)), 1)


# ---------------------------------------------------------------------------
# Fig 5.3: short flows, the mean queue against the flow length


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
        us = lambda s: f"{round(s * 1e6)}us"  # noqa: E731
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


class Fig53(Experiment):
    id = "appenzeller.fig5_3"
    cites = "Fig 5.3, section 5.3.1"  #: the figure the references quote
    title = "Short flows: mean queue against flow length at 5, 10 and 25 Mb/s (Fig 5.3)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.3, section 5.3.1 (and Fig 4.2); digest 003 E5.3, R10"
    summary = (
        "Only short TCP flows, all of one length l (packets), arrive as a Poisson process offering 80% "
        "of the bottleneck; 10 Gb/s access links, so each flow's slow-start bursts (2, 4, 8, ... "
        "packets) reach the bottleneck back to back; a buffer that never fills. The time-averaged "
        "queue in data packets (bytes / 1000, sampled every 10 ms after the warm-up) against l, at 5, 10 and 25 Mb/s, beside the "
        "thesis's M/G/1 model of bursts (section 4.1, aqmlab.theory.short_flows.mg1_mean_queue)."
    )
    differences = (
        "The thesis: the mean queue 'follows the M/G/1 curve closely' and is 'almost identical' for "
        "the three bandwidths; Fig 4.2 (the same experiment at 40-200 Mb/s) sits slightly below the "
        "model, and l = 14 gives a higher queue than l = 16. Made numeric: within a factor 1.5 of "
        "the model at every length; the three bandwidths within 20% of each other; queue(14) > "
        "queue(16)."
    )
    fidelities = {
        "quick": ShortFlowParams(lengths=(2, 14, 16, 62), rates_bps=(5e6, 25e6), measure_s=60, seeds=1),
        "paper": ShortFlowParams(
            lengths=(1, 2, 4, 6, 8, 10, 14, 16, 20, 30, 40, 62, 100), rates_bps=(5e6, 10e6, 25e6),
            measure_s=300, seeds=2,
        ),
    }

    def measure(self, runner: Any, p: ShortFlowParams) -> pl.DataFrame:
        from ..theory.short_flows import burst_distribution, mg1_mean_queue, mxd1_mean_waiting_exact

        points = [(c, l) for c in p.rates_bps for l in p.lengths]
        dirs = run_dirs(runner, [[p.scenario(c, l, 1 + i) for i in range(p.seeds)] for c, l in points],
                        f"{self.id} ({len(points)} points)")
        rows = []
        for (c, l), runs in zip(points, dirs):
            queues, utils = [], []
            for d in runs:
                ts = pl.read_parquet(d / "timeseries.parquet")
                # in bytes over 1000: the model counts data packets, and a 40-byte SYN
                # waiting in the queue is not one of them
                q = ts.filter((pl.col("metric") == "queue_bytes") & (pl.col("entity") == "bottleneck")
                              & (pl.col("time_s") >= p.warmup_s))
                queues.append(q["value"].mean() / PACKET_BYTES)
                utils.append(json.loads((d / "summary.json").read_text())["bottleneck_utilization"])
            rows.append({
                "rate_mbps": c / 1e6,
                "length": l,
                "mean_queue": sum(queues) / len(queues),
                "model_mg1": mg1_mean_queue(p.load, burst_distribution(l)),
                # the exact M^X/D/1 number waiting, for bursts that arrive all at once
                "exact_mxd1": mxd1_mean_waiting_exact(p.load, burst_distribution(l)),
                "utilization": sum(utils) / len(utils),
            })
        return pl.DataFrame(rows).with_columns((pl.col("mean_queue") / pl.col("model_mg1")).alias("ratio_to_model"))

    def findings(self, t: pl.DataFrame, p: ShortFlowParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for l in p.lengths:
            d = t.filter(pl.col("length") == l)
            out[f"queue_l{l}"] = d["mean_queue"].mean()
            out[f"spread_l{l}"] = d["mean_queue"].max() / d["mean_queue"].min() if d["mean_queue"].min() > 0 else None
        if 14 in p.lengths and 16 in p.lengths:
            out["queue_14_minus_16"] = out["queue_l14"] - out["queue_l16"]  # type: ignore[operator]
        return out

    def references(self, p: ShortFlowParams) -> list[Reference]:
        from ..theory.short_flows import burst_distribution, mg1_mean_queue

        fig = self.cites
        refs = [
            Reference(f"queue_l{l}", f"mean queue, l = {l} (packets; mean over bandwidths)",
                      mg1_mean_queue(p.load, burst_distribution(l)), "factor", 1.5,
                      fig + " (model: M/G/1 of bursts, section 4.1)",
                      "'follows the M/G/1 curve closely'", acceptance="R10")
            for l in p.lengths
        ]
        refs += [
            Reference(f"spread_l{l}", f"largest / smallest mean queue over {len(p.rates_bps)} bandwidths, l = {l}",
                      1.0, "at_most", 0.2, fig, "'almost identical for the three bandwidths'", acceptance="R10")
            for l in p.lengths
        ]
        if 14 in p.lengths and 16 in p.lengths:
            refs.append(Reference("queue_14_minus_16", "mean queue l = 14 minus l = 16 (packets)", 0.0, "at_least",
                                  0.0, "Fig 4.2, digest 003 R10", "l = 14 gives a higher queue than l = 16",
                                  acceptance="R10"))
        return refs

    def plot(self, t: pl.DataFrame, p: ShortFlowParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for c, marker in zip(p.rates_bps, "os^D"):
            d = t.filter(pl.col("rate_mbps") == c / 1e6).sort("length")
            ax.plot(d["length"], d["mean_queue"], marker=marker, ls="", label=f"simulation, {c / 1e6:g} Mb/s")
        d = t.filter(pl.col("rate_mbps") == p.rates_bps[0] / 1e6).sort("length")
        ax.plot(d["length"], d["model_mg1"], "k-", lw=1, label="M/G/1 model (section 4.1)")
        ax.set_xlabel("flow length l (packets)")
        ax.set_ylabel("mean queue (packets)")
        ax.set_title(f"short flows only, load {p.load:g}, {p.measure_s:g} s x {p.seeds} seeds per point")
        return _finish(fig, ax, path)

    def example_scenario(self, p: ShortFlowParams) -> dict[str, Any]:
        return p.scenario(p.rates_bps[0], 14, 1)


# ---------------------------------------------------------------------------
# Figs 4.2 and 4.3: the short-flow model at 40 to 200 Mb/s, and its queue tail


class Fig42(Fig53):
    id = "appenzeller.fig4_2"
    cites = "Fig 4.2, section 4.1"
    title = "Short flows: mean queue against flow length at 40, 80 and 200 Mb/s (Fig 4.2)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 4.2, section 4.1; digest 003 E4.2, R10"
    summary = (
        "The experiment of Fig 5.3 at the bandwidths of Fig 4.2: only short TCP flows of one length l, Poisson "
        "arrivals offering 80% of a 40, 80 or 200 Mb/s bottleneck, 10 Gb/s access links, a buffer that never "
        "fills. The time-averaged queue in data packets against l, beside the M/G/1 model of bursts "
        "(aqmlab.theory.short_flows.mg1_mean_queue)."
    )
    differences = (
        "The thesis: the three curves coincide and 'the simulation sits slightly below the model' because access "
        "links space out the packets of a burst; l = 14 above l = 16. Made numeric as for Fig 5.3 (within a "
        "factor 1.5 of the model, the bandwidths within 20%, queue(14) > queue(16)) and: the mean of the "
        "simulation over the model for l >= 14 at most 1.05. A run at 200 Mb/s carries as many flows in a second "
        "as one at 5 Mb/s in 40, so the runs are shorter than Fig 5.3's for the same statistics (and must be: "
        "every sample of the run visits every flow it has had). For l <= 2 the "
        "simulation is above the model, as in Fig 5.3: the thesis's formula is an approximation (the exact "
        "M^X/D/1 value for bursts of 2 is 3.6, not 3.2) and every flow's SYN adds load."
    )
    fidelities = {
        "quick": ShortFlowParams(lengths=(2, 14, 16, 62), rates_bps=(40e6, 200e6), measure_s=10, seeds=1,
                                 warmup_s=2.0),
        "paper": ShortFlowParams(
            lengths=(1, 2, 4, 6, 8, 10, 14, 16, 20, 30, 40, 62, 100), rates_bps=(40e6, 80e6, 200e6),
            measure_s=20, seeds=3, warmup_s=2.0,
        ),
    }

    def findings(self, t: pl.DataFrame, p: ShortFlowParams) -> dict[str, float | None]:
        longer = t.filter(pl.col("length") >= 14)
        return {**super().findings(t, p), "ratio_to_model_l14_up": longer["ratio_to_model"].mean()}

    def references(self, p: ShortFlowParams) -> list[Reference]:
        return [
            *super().references(p),
            Reference("ratio_to_model_l14_up", "mean queue over the model's, mean over l >= 14 and bandwidths", 1.0,
                      "at_most", 0.05, self.cites, "'the simulation sits slightly below the model'",
                      acceptance="R10"),
        ]


@dataclass(frozen=True)
class QueueTailParams:
    """Short runs, many seeds: a sample visits every flow the run has had, so a run's cost
    grows with the square of its length, and the queue forgets its past in milliseconds."""

    shorts: ShortFlowParams
    sample_s: float = 0.001  #: the queue every millisecond: the tail to 10^-3 needs many samples


class Fig43(Experiment):
    id = "appenzeller.fig4_3"
    title = "Short flows: the queue distribution against the effective-bandwidth bound, l = 2 and 62 (Fig 4.3)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 4.3, section 4.1.2 and Appendix A.3; digest 003 E4.3, R11"
    summary = (
        "Only short TCP flows, all of length 2 or all of length 62, Poisson arrivals offering 85% of an 80 Mb/s "
        "bottleneck, 10 Gb/s access links, a buffer that never fills. The distribution of the queue (data "
        "packets, sampled every millisecond after the warm-up) as P(Q >= b), beside the effective-bandwidth "
        "tail e^(-kappa b), kappa = 2(1 - rho)E[X]/(rho E[X^2]) (aqmlab.theory.short_flows.eb_tail), rho the "
        "load the link carried (the table also has the tail at the offered 0.85 and the exact Cramer estimate)."
    )
    differences = (
        "The thesis gives Fig 4.3's load (0.85) and lengths, not its bandwidth: we take 80 Mb/s, the middle of "
        "Fig 4.2's. Its claims, made numeric: the model is an upper bound (the simulated P(Q >= b) at most 0.01 "
        "above the model's at any b), tight for l = 2 (the queue the simulation exceeds with probability 1% "
        "within a factor 1.3 of the model's) and loose for l = 62 (at most 0.8 of the model's). Ours is tight "
        "for l = 62 as well: our bursts arrive ACK-clocked, below the exact tail of instantaneous bursts, but "
        "the thesis's 2nd-order tail is below that exact tail by about as much (see the reference's note)."
    )
    fidelities = {
        "quick": QueueTailParams(ShortFlowParams(lengths=(2, 62), rates_bps=(80e6,), measure_s=15, seeds=1,
                                                 load=0.85, warmup_s=2.0)),
        "paper": QueueTailParams(ShortFlowParams(lengths=(2, 62), rates_bps=(80e6,), measure_s=15, seeds=10,
                                                 load=0.85, warmup_s=2.0)),
    }

    def _scenario(self, p: QueueTailParams, length: int, seed: int) -> dict[str, Any]:
        s = p.shorts.scenario(p.shorts.rates_bps[0], length, seed)
        return {**s, "sample_interval": f"{round(p.sample_s * 1e3)}ms"}

    def example_scenario(self, p: QueueTailParams) -> dict[str, Any]:
        return self._scenario(p, 62, 1)

    def measure(self, runner: Any, p: QueueTailParams) -> pl.DataFrame:
        import numpy as np

        from ..theory.short_flows import burst_distribution, eb_tail

        seeds = range(1, p.shorts.seeds + 1)
        dirs = run_dirs(runner, [[self._scenario(p, l, i) for i in seeds] for l in p.shorts.lengths], self.id)
        tables = []
        for l, runs in zip(p.shorts.lengths, dirs):
            queues, utils = [], []
            for d in runs:
                ts = pl.read_parquet(d / "timeseries.parquet")
                queues.append(ts.filter((pl.col("metric") == "queue_bytes") & (pl.col("entity") == "bottleneck")
                                        & (pl.col("time_s") >= p.shorts.warmup_s))["value"].to_numpy() / PACKET_BYTES)
                utils.append(json.loads((d / "summary.json").read_text())["bottleneck_utilization"])
            q = np.concatenate(queues)
            b = list(range(0, int(q.max()) + 2))
            # P(Q >= b) over the samples; a SYN waiting is 1/25 of a data packet
            ccdf = [float((q >= x - 1e-9).mean()) for x in b]
            # the model at the load the link carried: the offered 0.85, the flows' SYNs and
            # the runs' own draws of Poisson arrivals
            carried = sum(utils) / len(utils)
            bursts = burst_distribution(l)
            tables.append(pl.DataFrame({
                "length": l, "b": b, "ccdf": ccdf, "model": eb_tail(b, carried, bursts),
                "model_offered": eb_tail(b, p.shorts.load, bursts), "model_exact": eb_tail(b, carried, bursts, "exact"),
                "utilization": carried,
            }))
        return pl.concat(tables)

    @staticmethod
    def _quantile(b: list[int], tail: list[float], level: float) -> float:
        """The least b with P(Q >= b) <= level."""
        return float(next((x for x, y in zip(b, tail) if y <= level), b[-1]))

    def findings(self, t: pl.DataFrame, p: QueueTailParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for l in p.shorts.lengths:
            d = t.filter((pl.col("length") == l) & (pl.col("b") >= 1)).sort("b")
            b, sim, model = d["b"].to_list(), d["ccdf"].to_list(), d["model"].to_list()
            out[f"excess_l{l}"] = max(s - m for s, m in zip(sim, model))
            out[f"quantile_ratio_l{l}"] = self._quantile(b, sim, 0.01) / self._quantile(b, model, 0.01)
            # against the exact tail of the model's Poisson bursts (not the thesis's 2nd order)
            out[f"quantile_ratio_exact_l{l}"] = self._quantile(b, sim, 0.01) / self._quantile(
                b, d["model_exact"].to_list(), 0.01)
        return out

    def references(self, p: QueueTailParams) -> list[Reference]:
        fig = "Fig 4.3, section 4.1.2"
        refs = [
            Reference(f"excess_l{l}", f"largest excess of P(Q >= b) over e^(-kappa b), l = {l}", 0.0, "at_most", 0.01,
                      fig, "'the model is a good upper bound'", acceptance="R11")
            for l in p.shorts.lengths
        ]
        if 2 in p.shorts.lengths:
            refs.append(Reference("quantile_ratio_l2", "queue exceeded 1% of the time, over the model's, l = 2", 1.0,
                                  "factor", 1.3, fig, "the bound is tight for length 2", acceptance="R11"))
        if 62 in p.shorts.lengths:
            refs.append(Reference("quantile_ratio_l62", "queue exceeded 1% of the time, over the model's, l = 62",
                                  0.8, "at_most", 0.0, fig, "the bound is 'much looser' for length 62",
                                  "Ours is tight for l = 62 too. Slow start's bursts reach our bottleneck ACK-clocked, "
                                  "so the queue stays below the exact tail of bursts arriving at once "
                                  "(quantile_ratio_exact_l62 < 1), as the thesis says; but its e^(-kappa b), the 2nd "
                                  "order, understates that exact tail by about as much. The thesis's looser fit needs "
                                  "more smoothing than our 10 Gb/s access links give; it does not say its links.",
                                  acceptance="R11"))
        return refs

    def plot(self, t: pl.DataFrame, p: QueueTailParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for l, color in zip(p.shorts.lengths, ("C0", "C1", "C2")):
            d = t.filter((pl.col("length") == l) & (pl.col("ccdf") > 0)).sort("b")
            ax.plot(d["b"], d["ccdf"], color=color, label=f"simulation, l = {l}")
            ax.plot(d["b"], d["model"], color=color, ls="--",
                    label=f"e^(-kappa b), l = {l}, load {d['utilization'][0]:.3f} carried")
        ax.set_yscale("log")
        ax.set_ylim(1e-4, 1.2)
        ax.set_xlabel("queue length b (packets)")
        ax.set_ylabel("P(Q >= b)")
        ax.set_title(f"load {p.shorts.load:g}, {p.shorts.rates_bps[0] / 1e6:g} Mb/s, "
                     f"{p.shorts.seeds} x {p.shorts.measure_s:g} s")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize="small")
        return _save(fig, path)


# ---------------------------------------------------------------------------
# Figs 5.4-5.10: what they share
#
# Short flows are Poisson arrivals of TCP flows (ShortFlowParams's for short flows alone,
# added to LongFlows's long flows for the mixes of section 5.4); each opens with a SYN
# exchange counted in its completion time. The AFCT is the mean completion time of the
# short flows that arrive in the measurement window, less its last ``drain_s`` (digest
# 7.13, 7.15); those of them still running at the end are counted apart, as unfinished.

SHORT_PACKETS = 14  #: the short flows of Figs 5.5-5.8: "the 14 packet flow in the experiment" (section 5.4.2)
DRAIN_S = 5.0  #: flows arriving this close to the end are not counted (a 14-packet flow needs ~0.4 s)


def short_arrivals(load: float, size: Any = f"{SHORT_PACKETS}pkt") -> dict[str, Any]:
    """Poisson arrivals of TCP flows of ``size`` offering ``load`` of the bottleneck."""
    return {"kind": "tcp_arrivals", "group": "short", "src": "senders", "dst": "receivers",
            "load": load, "size": size, "tcp": {"syn": True}}


def short_flow_completions(directory: Path, after_s: float, before_s: float) -> dict[str, float]:
    """Of the short flows that arrived in [after_s, before_s): the mean completion time of
    those that finished (s), the share that did not, and how many there were."""
    f = pl.read_parquet(directory / "flows.parquet", columns=["group", "start_s", "completion_time_s"]).filter(
        (pl.col("group") == "short") & (pl.col("start_s") >= after_s) & (pl.col("start_s") < before_s)
    )
    done = f["completion_time_s"].drop_nulls()
    return {
        "afct_s": float(done.mean()) if len(done) else math.nan,
        "unfinished": 1 - len(done) / f.height if f.height else math.nan,
        "short_flows": float(f.height),
    }


def mean_of(rows: list[dict[str, float]]) -> dict[str, float]:
    """The mean of each key over seeds."""
    return {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}


@dataclass(frozen=True)
class MixedFlows(LongFlows):
    """LongFlows's n long flows and Poisson short flows of SHORT_PACKETS packets offering
    ``short_load`` of C (section 5.4): the long flows take the rest."""

    short_load: float = 0.2

    @property
    def long_bdp(self) -> float:
        """The long flows' share of the BDP, C' = (1 - short share) C (section 5.4.1)."""
        return (1 - self.short_load) * self.bdp

    def scenario(self, n: int, buffer: int, seed: int) -> dict[str, Any]:
        s = super().scenario(n, buffer, seed)
        return {
            **s,
            "name": f"appenzeller-mix{round(100 * self.short_load)}-n{n}-b{buffer}",
            "flows": [*s["flows"], short_arrivals(self.short_load)],
        }

    def completions(self, runner: Any, points: list[tuple[int, int]], label: str) -> list[dict[str, float]]:
        """The short flows' AFCT and unfinished share (means over the seeds) at each (n, buffer)."""
        dirs = run_dirs(runner, [self.seeds_of(n, b) for n, b in points], label)
        out = []
        for (n, b), runs in zip(points, dirs):
            end = self.warmup(n, b) + self.measure_s
            out.append(mean_of([short_flow_completions(d, self.warmup(n, b), end - DRAIN_S) for d in runs]))
        return out


# ---------------------------------------------------------------------------
# Fig 5.4: the access links' speed against the buffer short flows need


@dataclass(frozen=True)
class AccessParams:
    shorts: ShortFlowParams  #: its first rate is the bottleneck's
    access_bps: tuple[float, ...] = (0.5e6, 5e6, 50e6)
    loss_target: float = 1e-3  #: not stated (digest 7.19)
    precision: float = 0.1

    @property
    def rate_bps(self) -> float:
        return self.shorts.rates_bps[0]


class Fig54(Experiment):
    id = "appenzeller.fig5_4"
    acceptance = {"slow_over_same": "R12", "fast_over_same": "R12"}
    title = "Short flows: the buffer for a loss rate against flow length, at three access speeds (Fig 5.4)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.4, section 5.3.2; digest 003 E5.4, R12"
    summary = (
        "Short TCP flows of one length (Poisson arrivals, 80% load) cross a 5 Mb/s bottleneck from access "
        "links of 500 kb/s, 5 Mb/s or 50 Mb/s. For each length and access speed, the smallest DropTail "
        "buffer whose loss rate (mean over seeds) is at most 10^-3, found by bisection; beside it the "
        "effective-bandwidth buffer of section 4.1.2, which assumes bursts arrive at once."
    )
    differences = (
        "The thesis states neither the loss target nor the load; we take 10^-3 (digest 7.19) and Fig 5.3's "
        "80%. It prints no numbers; its claims, made numeric: the 500 kb/s access needs 'much less' buffer "
        "than the 5 Mb/s one (at most 0.6 of it, median over lengths of the ratio), and 5 and 50 Mb/s differ "
        "'fairly little' (within a factor 1.3). A loss rate of 10^-3 is a few hundred drops in a run, so each "
        "minimum carries the noise of that count: the bisection's bracket is in the table. Slow access links "
        "spread each flow's bursts, but not the number of flows sending at once: at 80% load about 8 flows "
        "send at 500 kb/s on average, and whenever more than 10 do the queue grows at their excess rate; "
        "at a 10^-3 loss target those episodes set the buffer, and it falls by a sixth, not 'much'."
    )
    fidelities = {
        "quick": AccessParams(ShortFlowParams(lengths=(14, 62), rates_bps=(5e6,), measure_s=120, seeds=1, sample_s=0),
                              loss_target=1e-2, precision=0.2),
        "paper": AccessParams(ShortFlowParams(lengths=(2, 6, 14, 30, 62, 100), rates_bps=(5e6,), measure_s=600, seeds=2,
                                              sample_s=0)),
    }

    def measure(self, runner: Any, p: AccessParams) -> pl.DataFrame:
        from ..theory.short_flows import burst_distribution, eb_buffer_for_loss

        s = p.shorts
        model = {l: eb_buffer_for_loss(p.loss_target, s.load, burst_distribution(l)) for l in s.lengths}
        searches = [
            # the loss falls as the buffer grows: search for -loss >= -target
            Search((a, l), -p.loss_target, hi=max(4, math.ceil(model[l] / 2)), cap=2000, precision=p.precision)
            for a in p.access_bps for l in s.lengths
        ]

        def minus_loss(points: list[tuple[Any, int]]) -> list[float]:
            runs = run_points(runner, [[s.scenario(p.rate_bps, l, 1 + i, buffer=b, access_bps=a) for i in range(s.seeds)]
                                       for (a, l), b in points], f"{self.id} round ({len(points)} points)")
            return [-sum(r["bottleneck_loss_rate"] for r in seeds) / len(seeds) for seeds in runs]

        bisect(searches, minus_loss)
        rows = []
        for r in search_table_rows(searches):
            a, l = r.pop("group")
            rows.append({"access_mbps": a / 1e6, "length": l, **r, "target": p.loss_target, "model_eb": model[l]})
        return pl.DataFrame(rows)

    def _median_ratio(self, t: pl.DataFrame, access_bps: float, to_bps: float) -> float | None:
        """The median over lengths of the buffer with one access speed over that with
        another: one noisy length (a 10^-3 loss is a few hundred drops) does not sway it."""
        by = {a: t.filter(pl.col("access_mbps") == a / 1e6).sort("length")["min_buffer"] for a in (access_bps, to_bps)}
        if by[access_bps].null_count() or by[to_bps].null_count():
            return None
        return float((by[access_bps] / by[to_bps]).median())

    def findings(self, t: pl.DataFrame, p: AccessParams) -> dict[str, float | None]:
        slow, same, fast = p.access_bps
        return {"slow_over_same": self._median_ratio(t, slow, same), "fast_over_same": self._median_ratio(t, fast, same)}

    def references(self, p: AccessParams) -> list[Reference]:
        slow, same, fast = (f"{a / 1e6:g} Mb/s" for a in p.access_bps)
        fig = "Fig 5.4, section 5.3.2"
        return [
            Reference("slow_over_same", f"buffer with {slow} access / with {same} (median over lengths)", 0.6, "at_most", 0.0,
                      fig, "'with a 500 Kb/s access link that is ten times slower than the bottleneck link, we require "
                      "much less buffering'"),
            Reference("fast_over_same", f"buffer with {fast} access / with {same} (median over lengths)", 1.0, "factor", 1.3,
                      fig, "'the difference between an access link that is faster than the bottleneck link and an "
                      "access link that has the same speed as the bottleneck link is fairly small'"),
        ]

    def plot(self, t: pl.DataFrame, p: AccessParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for a, marker in zip(p.access_bps, "os^"):
            d = t.filter(pl.col("access_mbps") == a / 1e6).sort("length")
            ax.plot(d["length"], d["min_buffer"], marker=marker, label=f"access {a / 1e6:g} Mb/s")
        d = t.filter(pl.col("access_mbps") == p.access_bps[0] / 1e6).sort("length")
        ax.plot(d["length"], d["model_eb"], "k:", lw=1, label="effective bandwidth (bursts at once)")
        ax.set_xlabel("flow length (packets)")
        ax.set_ylabel(f"minimum buffer for loss <= {p.loss_target:g} (packets)")
        ax.set_title(f"{p.rate_bps / 1e6:g} Mb/s bottleneck, load {p.shorts.load:g}, {p.shorts.seeds} seeds")
        return _finish(fig, ax, path)

    def example_scenario(self, p: AccessParams) -> dict[str, Any]:
        return p.shorts.scenario(p.rate_bps, 14, 1, buffer=20, access_bps=p.access_bps[0])


# ---------------------------------------------------------------------------
# Fig 5.5: short flows' completion time against load, for buffers too small


@dataclass(frozen=True)
class AfctLoadParams:
    shorts: ShortFlowParams  #: its first rate and first length are the experiment's
    loads: tuple[float, ...]
    buffers: tuple[int, ...] = (10, 20, 40, 80, 644)
    unstable_share: float = 0.02  #: a point with more flows unfinished at the end is unstable
    stalled_afct: float = 2.0  #: a point whose AFCT is this many times the light load's has flows stalled


class Fig55(Experiment):
    id = "appenzeller.fig5_5"
    acceptance = {"*": "R13"}
    title = "Short flows: completion time against load for buffers of 10 to 644 packets (Fig 5.5)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.5, section 5.3.3; digest 003 E5.5, R13"
    summary = (
        "Short TCP flows of 14 packets (Poisson arrivals, SYN exchange first) cross a 50 Mb/s bottleneck "
        "from 10 Gb/s access links; offered load 10% to 100%; DropTail buffers of 10, 20, 40 and 80 "
        "packets and the BDP of 644. The average flow completion time (AFCT) of the flows arriving in the "
        "measurement window, and the share of them still unfinished at the end; the highest load at which "
        "the flows still compete: none pile up unfinished and the AFCT stays within twice its light-load value."
    )
    differences = (
        "The flow length is not stated; 14 packets is the length of section 5.4.2's argument and gives the "
        "350 ms floor with the script's mean 2T_p of 89 ms (SYN exchange + bursts of 2, 4, 8: four round "
        "trips). The thesis's BDP of 644 packets would be a 103 ms 2T_p at 50 Mb/s, which puts the floor "
        "at 412 ms; we keep 89 ms and the 644-packet buffer as printed. The thesis's 'a substantial number "
        "of flows no longer compete' is made numeric two ways, both required of a load the flows still "
        "compete at: at most 2% of the flows unfinished at the end of the run (past that, retransmissions "
        "and new flows exceed the link and flows pile up), and an AFCT at most twice the light-load one "
        "(past that, the average flow spends more time recovering from losses than sending). 'Little "
        "increase in AFCT' at 90% load with B = 40 is read as at most 50% above the light-load AFCT (where "
        "B = 10 triples it)."
    )
    fidelities = {
        "quick": AfctLoadParams(
            ShortFlowParams(lengths=(SHORT_PACKETS,), rates_bps=(50e6,), measure_s=40, seeds=1, warmup_s=10, sample_s=0),
            loads=(0.1, 0.6, 0.8, 0.9), buffers=(10, 40, 644),
        ),
        "paper": AfctLoadParams(
            ShortFlowParams(lengths=(SHORT_PACKETS,), rates_bps=(50e6,), measure_s=300, seeds=2, sample_s=0),
            loads=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0),
        ),
    }

    def measure(self, runner: Any, p: AfctLoadParams) -> pl.DataFrame:
        s = p.shorts
        points = [(b, load) for b in p.buffers for load in p.loads]
        dirs = run_dirs(runner, [[s.scenario(s.rates_bps[0], s.lengths[0], 1 + i, buffer=b, load=load)
                                  for i in range(s.seeds)] for b, load in points], f"{self.id} ({len(points)} points)")
        end = s.warmup_s + s.measure_s
        rows = []
        for (b, load), runs in zip(points, dirs):
            summaries = [json.loads((d / "summary.json").read_text()) for d in runs]
            done = mean_of([short_flow_completions(d, s.warmup_s, end - DRAIN_S) for d in runs])
            rows.append({
                "buffer": b, "load": load, "afct_ms": 1e3 * done["afct_s"], "unfinished": done["unfinished"],
                "short_flows": done["short_flows"],
                "utilization": sum(x["bottleneck_utilization"] for x in summaries) / len(summaries),
                "loss_rate": sum(x["bottleneck_loss_rate"] for x in summaries) / len(summaries),
            })
        light = pl.col("afct_ms").sort_by("load").first().over("buffer")
        return pl.DataFrame(rows).with_columns(afct_over_light=pl.col("afct_ms") / light).with_columns(
            competing=(pl.col("unfinished") <= p.unstable_share) & (pl.col("afct_over_light") <= p.stalled_afct)
        )

    def _highest_competing(self, t: pl.DataFrame, b: int) -> float:
        """The highest load up to which the flows competed at every load run."""
        d = t.filter(pl.col("buffer") == b).sort("load")
        best = math.nan
        for load, ok in zip(d["load"], d["competing"]):
            if not ok:
                break
            best = load
        return best

    def _afct(self, t: pl.DataFrame, b: int, load: float) -> float:
        return t.filter((pl.col("buffer") == b) & (pl.col("load") == load))["afct_ms"].item()

    def findings(self, t: pl.DataFrame, p: AfctLoadParams) -> dict[str, float | None]:
        light = min(p.loads)
        out: dict[str, float | None] = {f"afct_light_b{b}": self._afct(t, b, light) for b in p.buffers}
        competing = {b: self._highest_competing(t, b) for b in p.buffers}
        out |= {f"competing_to_b{b}": competing[b] for b in p.buffers}
        ordered = sorted(p.buffers)
        # smaller buffers stop at a lower load (or the same one, on our grid of loads)
        out["load_limit_falls_with_buffer"] = float(all(competing[a] <= competing[b] for a, b in zip(ordered, ordered[1:])))
        if 40 in p.buffers and 0.9 in p.loads:
            out["afct_rise_b40_at_90"] = self._afct(t, 40, 0.9) / self._afct(t, 40, light)
        return out

    def references(self, p: AfctLoadParams) -> list[Reference]:
        fig = "Fig 5.5, section 5.3.3"
        light = min(p.loads)
        refs = [
            Reference(f"afct_light_b{b}", f"AFCT at load {light:g}, B = {b} (ms)", 350.0, "abs", 35.0, fig,
                      "'At very light loads, the average flow completion time (AFCT) is a constant 350 ms. This is "
                      "independent of buffer size'")
            for b in p.buffers
        ]
        if 10 in p.buffers:
            refs.append(Reference("competing_to_b10", "highest load the flows compete at, B = 10", 0.75, "abs", 0.1, fig,
                                  "'For a buffer of only 10 packets, load cannot increase beyond 75% before a "
                                  "substantial number of flows no longer compete'"))
        if 40 in p.buffers:
            refs.append(Reference("competing_to_b40", "highest load the flows compete at, B = 40", 0.9, "at_least", 0.0, fig,
                                  "'Even with buffers of only 40 packets, we can reach up to 90% load'"))
        if 40 in p.buffers and 0.9 in p.loads:
            refs.append(Reference("afct_rise_b40_at_90", "AFCT at load 0.9 / at light load, B = 40", 1.0, "at_most", 0.5,
                                  fig, "'with little increase in AFCT'"))
        refs.append(Reference("load_limit_falls_with_buffer", "that load never higher for a smaller buffer",
                              1.0, "at_least", 0.0, fig, "the system becomes unstable 'earlier for small buffer sizes'"))
        return refs

    def plot(self, t: pl.DataFrame, p: AfctLoadParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for b, marker in zip(p.buffers, "os^Dv"):
            d = t.filter(pl.col("buffer") == b).sort("load")
            line, = ax.plot(d["load"], d["afct_ms"], marker=marker, label=f"B = {b} pkt")
            bad = d.filter(~pl.col("competing"))
            ax.plot(bad["load"], bad["afct_ms"], "x", color=line.get_color(), ms=10, mew=2)
        ax.plot([], [], "kx", label=f"flows stall (AFCT > {p.stalled_afct:g} x light, or > {100 * p.unstable_share:g}% unfinished)")
        ax.set_xlabel("offered load")
        ax.set_ylabel("average flow completion time (ms)")
        ax.set_yscale("log")
        ax.set_title(f"{p.shorts.lengths[0]}-packet flows, {p.shorts.rates_bps[0] / 1e6:g} Mb/s, {p.shorts.seeds} seeds")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize="small")
        return _save(fig, path)

    def example_scenario(self, p: AfctLoadParams) -> dict[str, Any]:
        return p.shorts.scenario(p.shorts.rates_bps[0], p.shorts.lengths[0], 1, buffer=10, load=0.8)


# ---------------------------------------------------------------------------
# Fig 5.6: a mix of 20% short and 80% long flows, the minimum buffer against n

#: Fig 5.6's link: 50 Mb/s and "a delay-bandwidth product of 4230 packets", a mean 2T_p
#: of 677 ms (digest 7.21)
MIX_BPS = 50e6
MIX_RTT_S = 4230 / (MIX_BPS / (8 * PACKET_BYTES))


class Fig56(MinBufferExperiment):
    id = "appenzeller.fig5_6"
    acceptance = {"over_rule_n*": "R14"}
    title = "Minimum buffer for a mix of 20% short and 80% long flows (Fig 5.6)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.6, section 5.4.1; digest 003 E5.6, R14"
    summary = (
        "n long-lived Reno flows and Poisson arrivals of 14-packet flows offering 10 Mb/s (20%) share a "
        "50 Mb/s bottleneck with a BDP of 4230 packets (mean 2T_p 677 ms). For each n, the smallest "
        "DropTail buffer whose utilization (mean over seeds) meets the target, by bisection, beside the "
        "thesis's model: the long-flow rule with the long flows' share of the link, 0.8 x 4230/sqrt(n)."
    )
    differences = (
        "The utilization target is not stated; we take Fig 5.8's 95% (and report 99% at paper fidelity; "
        "digest 7.19). The thesis's claims, made numeric: the minimum buffer 'fits very well' with "
        "0.8 BDP/sqrt(n) from about 150 flows (within a factor of 2, n >= 150). Eq 3.7's buffer for the "
        "target with the reduced BDP is in the table (model_eq37) and the figure. With this 677 ms round "
        "trip our utilization does not grow steadily with the buffer (at 400 flows 98.5% with 170 packets, "
        "87.6% with 339: losses come together in a full buffer); the search scans up from half the rule and "
        "reports the first buffer of the climb, which at 150-200 flows is 2-3.6 times the rule "
        "(docs/experiments.md)."
    )
    fidelities = {
        "quick": MinBufferParams(
            MixedFlows(MIX_BPS, MIX_RTT_S, warmup_s=30, measure_s=30, seeds=1), flows=(150, 400), targets=(0.95,),
            precision=0.1, first_guess=0.5,
        ),
        "paper": MinBufferParams(
            MixedFlows(MIX_BPS, MIX_RTT_S, warmup_s=30, measure_s=120, seeds=3),
            flows=(50, 100, 150, 200, 300, 400, 500), targets=(0.95, 0.99), precision=0.05, first_guess=0.5,
        ),
    }

    def findings(self, t: pl.DataFrame, p: MinBufferParams) -> dict[str, float | None]:
        return {f"over_rule_n{r['flows']}": r["ratio_to_rule"] for r in t.filter(pl.col("target") == 0.95).iter_rows(named=True)}

    def references(self, p: MinBufferParams) -> list[Reference]:
        return [
            Reference(f"over_rule_n{n}", f"B(95%) / (0.8 BDP/sqrt(n)), n = {n}", 1.0, "factor", 2.0,
                      "Fig 5.6, section 5.4.1",
                      "'the minimum required buffer we found experimentally fits very well with the amount of buffering "
                      "predicted by our model'; 'our new rule already holds at about 150 flows'")
            for n in p.flows
            if n >= 150
        ]

    def plot(self, t: pl.DataFrame, p: MinBufferParams, path: Path) -> Path:
        import numpy as np

        from ..theory.sizing import min_buffer_for_utilization, sqrt_n_buffer

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        ns = np.linspace(min(p.flows), max(p.flows), 200)
        bdp = p.setup.long_bdp
        for target, marker in zip(sorted(p.targets), "os"):
            d = t.filter((pl.col("target") == target) & pl.col("min_buffer").is_not_null()).sort("flows")
            line, = ax.plot(d["flows"], d["min_buffer"], marker=marker, ls="", label=f"simulation, {100 * target:g}%")
            ax.plot(ns, [min_buffer_for_utilization(target, bdp, n) for n in ns], color=line.get_color(), lw=1, ls=":",
                    label=f"Eq 3.7 with C' = 0.8 C, {100 * target:g}%")
        ax.plot(ns, [sqrt_n_buffer(bdp, n) for n in ns], "k-", lw=1, label="model 0.8 BDP/sqrt(n)")
        ax.set_xlabel("number of long-lived flows n")
        ax.set_ylabel("minimum buffer (packets)")
        ax.set_title(f"20% short flows, 50 Mb/s, BDP {p.setup.bdp:.0f} pkt, {p.setup.seeds} seeds")
        return _finish(fig, ax, path)

    def example_scenario(self, p: MinBufferParams) -> dict[str, Any]:
        from ..theory.sizing import sqrt_n_buffer

        return p.setup.scenario(200, math.ceil(sqrt_n_buffer(p.setup.long_bdp, 200)), 1)


# ---------------------------------------------------------------------------
# Fig 5.7: short flows' completion time with large and small buffers

#: Figs 5.7 and 5.8 do not give their link: the script's OC3 and mean 2T_p of 89 ms
#: (digest 7.12), with which a 14-packet flow takes 4 x 89 = 356 ms, Fig 5.5's floor.
OC3_MIX_QUICK = MixedFlows(OC3_BPS, OC3_MEAN_RTT_S, warmup_s=20, measure_s=20, seeds=1)
OC3_MIX_PAPER = MixedFlows(OC3_BPS, OC3_MEAN_RTT_S, warmup_s=30, measure_s=120, seeds=2)


@dataclass(frozen=True)
class AfctMixParams:
    setup: MixedFlows
    flows: tuple[int, ...]


class Fig57(Experiment):
    id = "appenzeller.fig5_7"
    acceptance = {"afct_small_over_large_n*": "R15", "afct_small_over_large_n100": "R22"}
    title = "Short flows' completion time with buffers of 2T_pC and 2T_pC/sqrt(n) (Fig 5.7)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.7, section 5.4.2; digest 003 E5.7, R15, R22"
    summary = (
        "Poisson arrivals of 14-packet flows offering 20% of an OC3 bottleneck share it with n long-lived "
        "Reno flows (script defaults: mean 2T_p 89 ms, BDP 1724 packets). The short flows' AFCT with a "
        "DropTail buffer of the BDP and with BDP/sqrt(n), against n; beside it the thesis's argument: the "
        "round trip with a full small buffer over that with a full large one, (1 + 1/sqrt(n))/2."
    )
    differences = (
        "The link is not stated; we take the script's OC3 (digest 7.12), with which an unhindered 14-packet "
        "flow takes Fig 5.5's 350 ms. The thesis's claim, 'with smaller buffers, the flows complete much "
        "faster', is read as: the small buffer's AFCT below the large one's at every n >= 10, and near the "
        "round-trip ratio (1 + 1/sqrt(n))/2 (within a factor 1.3) at n = 100 (digest R22), where the large "
        "buffer is full all the time and the small one's losses are still about 1%. With more flows the "
        "small buffer's losses grow (10% at 500 flows) and the AFCT ratio climbs back towards 0.8: the "
        "retransmissions the thesis's argument leaves out."
    )
    fidelities = {
        "quick": AfctMixParams(OC3_MIX_QUICK, flows=(20, 200)),
        "paper": AfctMixParams(OC3_MIX_PAPER, flows=(2, 5, 10, 20, 50, 100, 200, 300, 400, 500)),
    }

    def _buffers(self, p: AfctMixParams, n: int) -> dict[str, int]:
        from ..theory.sizing import sqrt_n_buffer

        return {"large": round(p.setup.bdp), "small": math.ceil(sqrt_n_buffer(p.setup.bdp, n))}

    def measure(self, runner: Any, p: AfctMixParams) -> pl.DataFrame:
        from ..theory.sizing import rtt_ratio

        points = [(n, kind, b) for n in p.flows for kind, b in self._buffers(p, n).items()]
        nb = [(n, b) for n, _, b in points]
        label = f"{self.id} ({len(points)} points)"
        stats = p.setup.measure_points(runner, nb, label)
        done = p.setup.completions(runner, nb, label)
        rows = [
            {"flows": n, "buffer_kind": kind, "buffer": b, "afct_ms": 1e3 * c["afct_s"], "unfinished": c["unfinished"],
             "utilization": s["utilization"], "loss_rate": s["loss_rate"], "rtt_ratio_model": rtt_ratio(n)}
            for (n, kind, b), s, c in zip(points, stats, done)
        ]
        return pl.DataFrame(rows)

    def _model_point(self, p: AfctMixParams) -> int:
        """Where the round-trip argument is judged: n = 100, digest R22's point, where the
        large buffer is full and the small one's losses are still about 1%."""
        return 100 if 100 in p.flows else max(p.flows)

    def _ratio(self, t: pl.DataFrame, n: int) -> float:
        d = t.filter(pl.col("flows") == n)
        at = dict(zip(d["buffer_kind"], d["afct_ms"]))
        return at["small"] / at["large"]

    def findings(self, t: pl.DataFrame, p: AfctMixParams) -> dict[str, float | None]:
        return {f"afct_small_over_large_n{n}": self._ratio(t, n) for n in p.flows}

    def references(self, p: AfctMixParams) -> list[Reference]:
        from ..theory.sizing import rtt_ratio

        fig = "Fig 5.7, section 5.4.2"
        words = "'The results show that with smaller buffers, the flows complete much faster'"
        n = self._model_point(p)
        refs = [
            Reference(f"afct_small_over_large_n{m}", f"AFCT small / large buffer, n = {m}", 1.0, "at_most", 0.0, fig, words)
            for m in p.flows
            if m >= 10 and m != n
        ]
        refs.append(Reference(f"afct_small_over_large_n{n}", f"AFCT small / large buffer, n = {n}", rtt_ratio(n), "factor",
                              1.3, fig + " (model: RTT ratio (1 + 1/sqrt(n))/2, aqmlab.theory.sizing.rtt_ratio)",
                              "'the RTT for small buffers is close to only half the RTT for large buffers'"))
        return refs

    def plot(self, t: pl.DataFrame, p: AfctMixParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for kind, marker, label in (("large", "s", "B = 2T_pC"), ("small", "o", "B = 2T_pC/sqrt(n)")):
            d = t.filter(pl.col("buffer_kind") == kind).sort("flows")
            ax.plot(d["flows"], d["afct_ms"], marker=marker, label=label)
        ax.set_xlabel("number of long-lived flows n")
        ax.set_ylabel("AFCT of 14-packet flows (ms)")
        ax.set_title(f"20% short flows, OC3, BDP {p.setup.bdp:.0f} pkt, {p.setup.seeds} seeds")
        return _finish(fig, ax, path)

    def example_scenario(self, p: AfctMixParams) -> dict[str, Any]:
        n = max(p.flows)
        return p.setup.scenario(n, self._buffers(p, n)["small"], 1)


# ---------------------------------------------------------------------------
# Fig 5.8: 10, 20 and 30% short flows: the minimum buffer, and the AFCT at it


@dataclass(frozen=True)
class RatioParams:
    search: MinBufferParams  #: its setup's short_load is replaced by each of short_loads
    short_loads: tuple[float, ...] = (0.1, 0.2, 0.3)
    compared_load: float = 0.2  #: the short share of the comparison run with B = 2T_pC

    def setup(self, short_load: float) -> MixedFlows:
        from dataclasses import replace

        return replace(self.search.setup, short_load=short_load)


class Fig58(Experiment):
    id = "appenzeller.fig5_8"
    acceptance = {"*": "R16"}
    title = "Minimum buffer and AFCT for 10, 20 and 30% short flows (Fig 5.8)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.8, section 5.4.3; digest 003 E5.8, R16"
    summary = (
        "As Fig 5.7 (OC3, script defaults), with short flows offering 10%, 20% or 30% of the link. For each "
        "share and n, the smallest DropTail buffer for 95% utilization (bisection, mean over seeds), and "
        "the short flows' AFCT at that buffer; for comparison, the AFCT with B = 2T_pC and 20% short flows."
    )
    differences = (
        "The link is not stated; we take the script's OC3 (digest 7.12). The thesis's claims, made numeric: "
        "the model holds for each share (the buffer within a factor of 2 of Eq 3.7's for 95% with the long "
        "flows' share of the BDP), the buffers of the three shares differ little above 110 flows (largest "
        "over smallest at most 1.3), the AFCTs at them by 'a few percent' (at most 1.1) and all below the "
        "AFCT with 2T_pC buffers. The thesis's short-flow line at 'about y = 100' is drawn as printed: it "
        "does not say how it was found. The model holds for every share; the buffers of the three shares do "
        "not converge above 110 flows but keep the model's ratio 0.9 : 0.8 : 0.7 (largest over smallest "
        "1.34-1.44), and the AFCTs differ by 6-18%."
    )
    fidelities = {
        "quick": RatioParams(MinBufferParams(OC3_MIX_QUICK, flows=(200,), targets=(0.95,), precision=0.2),
                             short_loads=(0.1, 0.3)),
        "paper": RatioParams(MinBufferParams(OC3_MIX_PAPER, flows=(50, 100, 150, 200, 300, 400), targets=(0.95,),
                                             precision=0.05)),
    }

    def measure(self, runner: Any, p: RatioParams) -> pl.DataFrame:
        from dataclasses import replace

        tables = []
        for share in p.short_loads:
            setup = p.setup(share)
            t = _min_buffers(f"{self.id} {round(100 * share)}% short", runner, replace(p.search, setup=setup))
            found = [(r["flows"], r["min_buffer"]) for r in t.iter_rows(named=True) if r["min_buffer"] is not None]
            afct = dict(zip(found, setup.completions(runner, found, f"{self.id} AFCT at the minimum buffers")))
            tables.append(t.with_columns(
                short_load=pl.lit(share),
                afct_ms=pl.Series([1e3 * afct[(n, b)]["afct_s"] if (n, b) in afct else None
                                   for n, b in zip(t["flows"], t["min_buffer"])], dtype=pl.Float64),
            ))
        setup = p.setup(p.compared_load)
        full = [(n, round(setup.bdp)) for n in p.search.flows]
        done = setup.completions(runner, full, f"{self.id} AFCT with B = 2T_pC")
        out = pl.concat(tables)
        return out.join(pl.DataFrame({"flows": list(p.search.flows), "afct_bdp_ms": [1e3 * c["afct_s"] for c in done]}),
                        on="flows", how="left")

    def findings(self, t: pl.DataFrame, p: RatioParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for share in p.short_loads:
            for r in t.filter(pl.col("short_load") == share).iter_rows(named=True):
                out[f"over_model_s{round(100 * share)}_n{r['flows']}"] = r["ratio_to_model"]
        for n in p.search.flows:
            d = t.filter(pl.col("flows") == n)
            if len(p.short_loads) > 1 and d["min_buffer"].null_count() == 0:
                out[f"buffer_spread_n{n}"] = d["min_buffer"].max() / d["min_buffer"].min()
                out[f"afct_spread_n{n}"] = d["afct_ms"].max() / d["afct_ms"].min()
            out[f"afct_over_bdp_n{n}"] = float(d["afct_ms"].max() / d["afct_bdp_ms"][0])
        return out

    def references(self, p: RatioParams) -> list[Reference]:
        fig = "Fig 5.8, section 5.4.3"
        refs = [
            Reference(f"over_model_s{round(100 * share)}_n{n}", f"B(95%) / Eq 3.7's, {round(100 * share)}% short, n = {n}",
                      1.0, "factor", 2.0, fig + " (model: Eq 3.7 with C' = (1 - short share) C)",
                      "'We can see that our model holds well in all cases'")
            for share in p.short_loads
            for n in p.search.flows
            if n >= 50
        ]
        if len(p.short_loads) > 1:
            refs += [
                Reference(f"buffer_spread_n{n}", f"largest / smallest B(95%) over the short shares, n = {n}", 1.0, "at_most",
                          0.3, fig, "'the difference in required buffering becomes virtually zero as soon as we are above "
                          "110 flows'")
                for n in p.search.flows
                if n > 110
            ]
            refs += [
                Reference(f"afct_spread_n{n}", f"largest / smallest AFCT over the short shares, n = {n}", 1.0, "at_most",
                          0.1, fig + " bottom", "'the AFCT ... only differs by a few percent'")
                for n in p.search.flows
                if n > 110
            ]
        refs += [
            Reference(f"afct_over_bdp_n{n}", f"largest AFCT at the minimum buffers / AFCT with 2T_pC, n = {n}", 1.0,
                      "at_most", 0.0, fig + " bottom", "'in any of the three settings, it remains much smaller than the "
                      "AFCT with full buffers of 2T_p x C'")
            for n in p.search.flows
        ]
        return refs

    def plot(self, t: pl.DataFrame, p: RatioParams, path: Path) -> Path:
        import numpy as np

        from ..theory.sizing import min_buffer_for_utilization

        plt = _pyplot()
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
        ns = np.linspace(min(p.search.flows), max(p.search.flows), 200)
        for share, marker in zip(p.short_loads, "os^"):
            d = t.filter((pl.col("short_load") == share) & pl.col("min_buffer").is_not_null()).sort("flows")
            line, = top.plot(d["flows"], d["min_buffer"], marker=marker, ls="", label=f"{round(100 * share)}% short")
            top.plot(ns, [min_buffer_for_utilization(0.95, p.setup(share).long_bdp, n) for n in ns], color=line.get_color(),
                     lw=1, ls=":")
            bottom.plot(d["flows"], d["afct_ms"], marker=marker, label=f"{round(100 * share)}% short, B = B(95%)")
        top.axhline(100, color="0.5", ls="--", lw=1, label="short flows alone (thesis: about 100)")
        d = t.filter(pl.col("short_load") == p.short_loads[0]).sort("flows")
        bottom.plot(d["flows"], d["afct_bdp_ms"], "ks-", label=f"{round(100 * p.compared_load)}% short, B = 2T_pC")
        top.set_ylabel("minimum buffer for 95% (packets)")
        bottom.set_ylabel("AFCT of 14-packet flows (ms)")
        bottom.set_xlabel("number of long-lived flows n")
        top.set_title(f"OC3, BDP {p.search.setup.bdp:.0f} pkt; dotted: Eq 3.7 with the long flows' share")
        for ax in (top, bottom):
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small")
        return _save(fig, path)

    def example_scenario(self, p: RatioParams) -> dict[str, Any]:
        from ..theory.sizing import sqrt_n_buffer

        setup = p.setup(p.compared_load)
        return setup.scenario(200, math.ceil(sqrt_n_buffer(setup.long_bdp, 200)), 1)


# ---------------------------------------------------------------------------
# Figs 5.9 and 5.10: Pareto flow lengths with a large and a small buffer


@dataclass(frozen=True)
class ParetoParams:
    large: int  #: 2T_pC, the script's 1650
    small: int  #: a tenth of it: 2T_pC/sqrt(n) with n = 100
    load: float  #: nominal offered load (see the experiment's differences)
    duration_s: float
    warmup_s: float
    mean_packets: int = 30  #: the script's flows_data_kb
    shape: float = 1.2  #: the script's shape_
    senders: int = 200
    sample_s: float = 0.050  #: the script's time_slice
    seed: int = 1

    @property
    def link(self) -> LongFlows:
        """The link: 155 Mb/s, 'RTT of approximately 100 ms' (section 5.5)."""
        return LongFlows(OC3_BPS, 0.100, warmup_s=self.warmup_s, measure_s=self.duration_s - self.warmup_s, seeds=1)

    def scenario(self, buffer: int) -> dict[str, Any]:
        us = lambda s: f"{round(s * 1e6)}us"  # noqa: E731
        s = self.link.scenario(self.senders, buffer, self.seed)
        size = {"dist": "pareto", "mean": f"{self.mean_packets}pkt", "shape": self.shape}
        return {
            **s,
            "name": f"appenzeller-pareto-b{buffer}-load{self.load:g}",
            "duration": us(self.duration_s),
            "warmup": us(self.warmup_s),
            "sample_interval": us(self.sample_s),
            "flows": [{**short_arrivals(self.load, size), "group": "pareto"}],
            # every drop at the bottleneck: the drop rate of each 50 ms interval
            "trace": {"packets": {"links": ["bottleneck"], "events": ["drop"]}},
        }


def interval_series(directory: Path, p: ParetoParams) -> pl.DataFrame:
    """Per sample interval after the warm-up: the flows in congestion avoidance, the
    bottleneck's utilization and queue (at the interval's end), and its drop rate: drops
    over arrivals, arrivals being departures + drops + the queue's growth."""
    ts = pl.read_parquet(directory / "timeseries.parquet")
    wide = ts.filter(pl.col("metric").is_in(["flows_in_ca", "link_utilization", "queue_packets"])
                     & pl.col("entity").is_in(["bottleneck", ""])).pivot(
        "metric", index="time_s", values="value").sort("time_s")
    drops = pl.read_parquet(directory / "trace.parquet", columns=["time_ns"]).select(
        # the interval (t - sample, t] a drop falls in, named by t
        time_s=((pl.col("time_ns") + round(p.sample_s * 1e9) - 1) // round(p.sample_s * 1e9)) * p.sample_s
    ).group_by("time_s").len("drops")
    departures = pl.col("link_utilization") * p.link.packets_per_s * p.sample_s
    return (
        wide.with_columns(time_s=pl.col("time_s").round(6))
        .join(drops.with_columns(time_s=pl.col("time_s").round(6)), on="time_s", how="left")
        .with_columns(drops=pl.col("drops").fill_null(0))
        .with_columns(arrivals=departures + pl.col("drops") + pl.col("queue_packets").diff().fill_null(0))
        .with_columns(drop_rate=pl.when(pl.col("arrivals") > 0).then(pl.col("drops") / pl.col("arrivals")).otherwise(0.0))
        .filter(pl.col("time_s") > p.warmup_s)
        .rename({"link_utilization": "utilization", "queue_packets": "queue"})
        .select("time_s", "flows_in_ca", "utilization", "queue", "drops", "drop_rate")
    )


def realized_load(directory: Path, p: ParetoParams) -> float:
    """The load the flows that arrived offered, headers included: the thesis's 'load'."""
    f = pl.read_parquet(directory / "flows.parquet", columns=["size_bytes"])
    return float(f["size_bytes"].sum()) * PACKET_BYTES / PAYLOAD_BYTES * 8 / (p.link.rate_bps * p.duration_s)


class Pareto(Experiment):
    """Pareto flow lengths at a load just above the link (section 5.5); the two figures
    run the same two buffers and are judged each on its own."""

    acceptance = {"*": "R17"}

    figure: str
    buffer_kind: str  #: "large" or "small"
    differences = (
        "The thesis's load 'just above 100%' is not reproducible as a nominal figure: with shape 1.2 most of "
        "the mean flow length lies in flows longer than any run, so the lengths a run draws fall short of the "
        "mean and a nominal 1.02 offers about 0.9 of the link (the queue then empties often and few flows "
        "reach congestion avoidance). We set the nominal load to 1.3: the table's realized_load is the load "
        "the arrived flows offer, and the link is full from 20 s on. Above 100% the backlog of unfinished "
        "heavy flows grows, so the number of flows in congestion avoidance drifts up with time; we measure "
        "30 s after a 40 s warm-up, the span of the script's 50 s runs after their first third. Flows in "
        "congestion avoidance are counted by the simulator at each sample as the established senders with "
        "cwnd >= ssthresh (docs/simulator.md, Metrics); the drop rate of an interval is its drops over its "
        "arrivals (departures + drops + the queue's growth). Every shape holds; the loss rates are three "
        "times the thesis's (3.2% against 'around 1%' with 1650 packets, 5.5% with 165): they come with the "
        "load (1.7% at nominal 1.2, where the large buffer's queue reaches 0), and we found no load with both "
        "the thesis's queue and its loss."
    )
    fidelities = {
        "quick": ParetoParams(1650, 165, load=1.3, duration_s=50, warmup_s=35),
        "paper": ParetoParams(1650, 165, load=1.3, duration_s=70, warmup_s=40),
    }

    def buffers(self, p: ParetoParams) -> dict[str, int]:
        return {"large": p.large, "small": p.small}

    def measure(self, runner: Any, p: ParetoParams) -> pl.DataFrame:
        kinds = self.buffers(p)
        dirs = run_dirs(runner, [[p.scenario(b)] for b in kinds.values()], f"Figs 5.9-5.10 ({len(kinds)} runs)")
        parts = []
        for (kind, b), (d,) in zip(kinds.items(), dirs):
            summary = json.loads((d / "summary.json").read_text())
            parts.append(interval_series(d, p).with_columns(
                buffer_kind=pl.lit(kind), buffer=pl.lit(b), loss_rate=pl.lit(summary["bottleneck_loss_rate"]),
                mean_utilization=pl.lit(summary["bottleneck_utilization"]), realized_load=pl.lit(realized_load(d, p)),
            ))
        return pl.concat(parts)

    def _stats(self, t: pl.DataFrame, kind: str) -> dict[str, float]:
        d = t.filter(pl.col("buffer_kind") == kind)
        return {
            "ca_min": float(d["flows_in_ca"].min()), "ca_mean": float(d["flows_in_ca"].mean()),
            "ca_max": float(d["flows_in_ca"].max()), "utilization": float(d["mean_utilization"][0]),
            "queue_min": float(d["queue"].min()), "queue_max": float(d["queue"].max()),
            "loss_rate": float(d["loss_rate"][0]), "drop_rate_max": float(d["drop_rate"].max()),
            "intervals_with_drops": float((d["drops"] > 0).mean()), "realized_load": float(d["realized_load"][0]),
        }

    def findings(self, t: pl.DataFrame, p: ParetoParams) -> dict[str, float | None]:
        mine, other = self._stats(t, self.buffer_kind), self._stats(t, "large" if self.buffer_kind == "small" else "small")
        out: dict[str, float | None] = dict(mine)
        if self.buffer_kind == "small":
            out["loss_over_large"] = mine["loss_rate"] / other["loss_rate"] if other["loss_rate"] else None
            out["drop_intervals_over_large"] = (mine["intervals_with_drops"] / other["intervals_with_drops"]
                                                if other["intervals_with_drops"] else None)
            out["peak_drop_rate_over_large"] = (mine["drop_rate_max"] / other["drop_rate_max"]
                                                if other["drop_rate_max"] else None)
        return out

    def plot(self, t: pl.DataFrame, p: ParetoParams, path: Path) -> Path:
        plt = _pyplot()
        b = self.buffers(p)[self.buffer_kind]
        d = t.filter(pl.col("buffer_kind") == self.buffer_kind)
        fig, axes = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
        panels = (("flows_in_ca", 1, "flows in CA"), ("utilization", 100, "utilization (%)"),
                  ("queue", 1, "queue (packets)"), ("drop_rate", 100, "drops per 50 ms (%)"))
        for ax, (col, scale, label) in zip(axes, panels):
            ax.plot(d["time_s"], d[col] * scale, lw=0.8)
            ax.set_ylabel(label)
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
        axes[1].set_ylim(0, 105)
        axes[2].axhline(b, color="C3", ls=":", lw=1)
        axes[-1].set_xlabel("time (s)")
        axes[0].set_title(f"Fig {self.figure}: Pareto lengths (mean {p.mean_packets}, shape {p.shape:g}), OC3, ~100 ms, "
                          f"B = {b}; realized load {d['realized_load'][0]:.2f}")
        return _save(fig, path)

    def example_scenario(self, p: ParetoParams) -> dict[str, Any]:
        return p.scenario(self.buffers(p)[self.buffer_kind])


class Fig59(Pareto):
    id = "appenzeller.fig5_9"
    figure = "5.9"
    buffer_kind = "large"
    title = "Pareto flow lengths with a large buffer of 2T_pC: flows in CA, utilization, queue, drops (Fig 5.9)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.9, section 5.5; digest 003 E5.9, R17"
    summary = (
        "Poisson arrivals of TCP flows with Pareto lengths (mean 30 packets, shape 1.2, the script's) at a "
        "load just above the link, on OC3 with 2T_p about 100 ms and a DropTail buffer of 1650 packets "
        "(2T_pC). Against time, per 50 ms: the flows in congestion avoidance, utilization, queue, drop rate."
    )

    def references(self, p: ParetoParams) -> list[Reference]:
        fig = "Fig 5.9, section 5.5"
        return [
            Reference("ca_min", "fewest flows in congestion avoidance", 60.0, "factor", 1.5, fig,
                      "'It fluctuates between 60 and 160 flows with an average of about 110 flows'"),
            Reference("ca_max", "most flows in congestion avoidance", 160.0, "factor", 1.5, fig, ""),
            Reference("ca_mean", "mean flows in congestion avoidance", 110.0, "factor", 1.5, fig, ""),
            Reference("utilization", "utilization", 1.0, "at_least", 0.002, fig,
                      "'it was 100% for the entire duration of the experiment'"),
            Reference("queue_min", "least queue (packets)", 800.0, "at_least", 100.0, fig,
                      "'It never drops below 800 packets'"),
            Reference("queue_max", "largest queue (packets)", float(p.large), "abs", 50.0, fig,
                      "'fluctuates between 800 and the maximum of 1600 packets'"),
            Reference("loss_rate", "loss rate", 0.01, "factor", 3.0, fig, "'On average, the loss rate is around 1%'"),
            Reference("drop_rate_max", "largest drop rate of a 50 ms interval", 0.5, "factor", 2.0, fig,
                      "'for some intervals, the drop rate goes as high as 50%'"),
        ]


class Fig510(Pareto):
    id = "appenzeller.fig5_10"
    figure = "5.10"
    buffer_kind = "small"
    title = "Pareto flow lengths with a small buffer of 2T_pC/sqrt(n), n = 100 (Fig 5.10)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 5.10, section 5.5; digest 003 E5.10, R17"
    summary = (
        "As Fig 5.9 with the buffer a tenth of it, 165 packets: 2T_pC/sqrt(n) with n = 100 read off Fig 5.9's "
        "flows in congestion avoidance. Against time, per 50 ms: flows in congestion avoidance, utilization, "
        "queue, drop rate; and the drops set beside the large buffer's."
    )

    def references(self, p: ParetoParams) -> list[Reference]:
        fig = "Fig 5.10, section 5.5"
        return [
            Reference("ca_min", "fewest flows in congestion avoidance", 100.0, "at_least", 30.0, fig,
                      "'the number of flows stays above 100 all the time, justifying our choice of n = 100'"),
            Reference("utilization", "utilization", 0.99, "at_least", 0.0, fig,
                      "'Averaging shows that the utilization is above 99%'"),
            Reference("queue_min", "least queue (packets)", 0.0, "at_most", 5.0, fig,
                      "'The queue length ... oscillates between zero and the buffer size of 165'"),
            Reference("queue_max", "largest queue (packets)", float(p.small), "abs", 2.0, fig, ""),
            Reference("loss_rate", "loss rate", 0.05, "at_most", 0.0, fig, "'still a low single digit percentage'"),
            Reference("loss_over_large", "loss rate / the large buffer's", 1.0, "at_least", 0.0, fig,
                      "'Overall, the drop rate is now higher'"),
            Reference("drop_intervals_over_large", "share of intervals with drops / the large buffer's", 1.0,
                      "at_least", 0.0, fig, "'more intervals have drops'"),
            Reference("peak_drop_rate_over_large", "largest drop rate of an interval / the large buffer's", 1.0,
                      "at_most", 0.0, fig, "'the maximum drop rate in a single interval is lower'"),
        ]


# ---------------------------------------------------------------------------
# Chapter 6 in simulation: the lab router of section 6.1 (Fig 6.1)
#
# The lab: a Cisco GSR 12410 with an OC3 egress (149.26 Mb/s after PPP/SONET framing), a
# hardware delay generator, Harpoon's TCP flows from Linux and BSD hosts, 1500-byte
# packets, RTT x C = 1291 packets. The router's interface ASIC holds 43 packets the
# queue limit does not count (the "hidden FIFO"), so the router buffered B + 43.

GSR_BPS = 149.26e6
GSR_PACKET_BYTES = 1500
GSR_BDP = 1291  #: RTT x C in packets, as printed
GSR_HIDDEN_FIFO = 43
GSR_RTT_S = GSR_BDP * 8 * GSR_PACKET_BYTES / GSR_BPS  #: 103.8 ms

#: Fig 6.1: flows, buffer as a multiple of RTT x C/sqrt(n), packets, and the thesis's
#: model, ns-2 and experiment columns (utilization)
GSR_TABLE = (
    (100, 0.5, 64, 0.969, 0.947, 0.949), (100, 1, 129, 0.999, 0.993, 0.981),
    (100, 2, 258, 1.0, 0.999, 0.998), (100, 3, 387, 1.0, 0.998, 0.997),
    (200, 0.5, 46, 0.988, 0.970, 0.986), (200, 1, 91, 0.999, 0.992, 0.997),
    (200, 2, 182, 1.0, 0.998, 0.998), (200, 3, 273, 1.0, 1.0, 0.998),
    (300, 0.5, 37, 0.995, 0.986, 0.996), (300, 1, 74, 1.0, 0.993, 0.998),
    (300, 2, 148, 1.0, 0.999, 0.998), (300, 3, 222, 1.0, 1.0, 1.0),
    (400, 0.5, 32, 0.997, 0.992, 0.995), (400, 1, 64, 1.0, 0.998, 1.0),
    (400, 2, 128, 1.0, 1.0, 1.0), (400, 3, 192, 1.0, 1.0, 0.999),
)


@dataclass(frozen=True)
class LabParams:
    setup: LongFlows
    flows: tuple[int, ...]
    multiples: tuple[float, ...]
    hidden_fifo: int = GSR_HIDDEN_FIFO
    as_configured: bool = True  #: also run B without the hidden FIFO (the router as configured)

    def rows(self) -> list[tuple[int, float, int, float, float, float]]:
        return [r for r in GSR_TABLE if r[0] in self.flows and r[1] in self.multiples]


@dataclass(frozen=True)
class ScaledFlows(LongFlows):
    """LongFlows whose TCP timers (minimum, initial and maximum RTO, clock tick) run
    ``timers`` times slower than the defaults."""

    timers: float = 1.0

    def scenario(self, n: int, buffer: int, seed: int) -> dict[str, Any]:
        s = super().scenario(n, buffer, seed)
        if self.timers == 1:
            return s
        ms = lambda x: f"{x * self.timers:g}ms"  # noqa: E731
        timers = {"min_rto": ms(200), "initial_rto": ms(1000), "max_rto": ms(60000), "clock_granularity": ms(10)}
        return {**s, "tcp": {**s["tcp"], **timers}}


def lab_setup(scale: float, warmup_s: float, measure_s: float, seeds: int) -> LongFlows:
    """The lab's link slowed down ``scale`` times and its round trip lengthened as much,
    TCP's timers with it: the BDP in packets, the windows, the buffers and n stay, and so
    does everything that happens in units of a round trip; only the clock runs ``scale``
    times slower, so the warm-up and the measurement are ``scale`` times longer
    (docs/experiments.md)."""
    return ScaledFlows(GSR_BPS / scale, GSR_RTT_S * scale, warmup_s=warmup_s * scale, measure_s=measure_s * scale,
                       seeds=seeds, start_window_s=10.0 * scale, packet_bytes=GSR_PACKET_BYTES, timers=scale)


class Fig61(Experiment):
    id = "appenzeller.fig6_1"
    acceptance = {"util_n*": "R18"}
    title = "The lab router: utilization against buffer, model, ns-2, experiment and ours (Fig 6.1)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 6.1, section 6.1; digest 003 section 5.1, R18"
    summary = (
        "The GSR lab experiment in simulation: 100 to 400 long-lived Reno flows through a 149.26 Mb/s "
        "bottleneck (OC3 after framing) with RTT x C = 1291 packets of 1500 B (2T_p 103.8 ms, spread 20%), "
        "DropTail buffers of 0.5, 1, 2 and 3 x 1291/sqrt(n) packets (the thesis's packet counts), each "
        "run as configured (B) and as the router held it (B + its 43-packet hidden FIFO). Beside them the "
        "thesis's model, ns-2 and measured columns, and Eq 3.7 computed with and without the FIFO."
    )
    differences = (
        "The thesis's model column cannot be recomputed from Eq 3.7 with the listed packets (digest 7.5): "
        "with the hidden FIFO added it comes within 1.6 points, so both are in the table and neither is "
        "judged. Ours is judged against the measured column, within 2 points (the thesis's own ns-2 is "
        "within 1.6 of it), using the run with the FIFO: the router's buffer. Harpoon's flows ran on Linux "
        "and BSD stacks; ours are the thesis's ns-2 Reno. The 'scaled' fidelity is the same experiment at "
        "an eighth of the rate with eight times the round trip and TCP's timers eight times slower, for the "
        "emulator (docs/experiments.md)."
    )
    fidelities = {
        "quick": LabParams(lab_setup(1, warmup_s=30, measure_s=30, seeds=1), flows=(100, 400), multiples=(0.5, 2)),
        "paper": LabParams(lab_setup(1, warmup_s=30, measure_s=120, seeds=3), flows=(100, 200, 300, 400),
                           multiples=(0.5, 1, 2, 3)),
        "scaled": LabParams(lab_setup(8, warmup_s=30, measure_s=60, seeds=1), flows=(100, 200, 300, 400),
                            multiples=(0.5, 1, 2, 3), as_configured=False),
    }

    def measure(self, runner: Any, p: LabParams) -> pl.DataFrame:
        from ..theory.sizing import util_lower_bound

        rows = p.rows()
        extras = (0, p.hidden_fifo) if p.as_configured else (p.hidden_fifo,)
        points = [(n, b + extra) for n, _, b, *_ in rows for extra in extras]
        stats = dict(zip(points, p.setup.measure_points(runner, points, f"{self.id} ({len(points)} points)")))
        none = {"utilization": None}
        out = []
        for n, multiple, b, model, ns2, measured in rows:
            plain, with_fifo = stats.get((n, b), none), stats[(n, b + p.hidden_fifo)]
            out.append({
                "flows": n, "multiple": multiple, "buffer": b, "thesis_model": model, "thesis_ns2": ns2,
                "thesis_experiment": measured,
                "eq37": float(util_lower_bound(b, GSR_BDP, n)),
                "eq37_with_fifo": float(util_lower_bound(b + p.hidden_fifo, GSR_BDP, n)),
                "utilization": plain["utilization"], "utilization_with_fifo": with_fifo["utilization"],
                "loss_rate_with_fifo": with_fifo["loss_rate"],
            })
        return pl.DataFrame(out)

    def findings(self, t: pl.DataFrame, p: LabParams) -> dict[str, float | None]:
        return {f"util_n{r['flows']}_x{r['multiple']:g}": r["utilization_with_fifo"] for r in t.iter_rows(named=True)}

    def references(self, p: LabParams) -> list[Reference]:
        return [
            Reference(f"util_n{n}_x{m:g}", f"utilization, n = {n}, B = {b} (+43 hidden FIFO)", measured, "abs", 0.02,
                      "Fig 6.1, section 6.1 (the router's measured column)",
                      f"model {100 * model:.1f}%, ns-2 {100 * ns2:.1f}%, experiment {100 * measured:.1f}%")
            for n, m, b, model, ns2, measured in p.rows()
        ]

    def plot(self, t: pl.DataFrame, p: LabParams, path: Path) -> Path:
        plt = _pyplot()
        flows = sorted(set(t["flows"]))
        fig, axes = plt.subplots(1, len(flows), figsize=(3.2 * len(flows), 4), sharey=True, squeeze=False)
        for ax, n in zip(axes[0], flows):
            d = t.filter(pl.col("flows") == n).sort("multiple")
            for col, style, label in (("thesis_experiment", "ks-", "GSR experiment"), ("thesis_ns2", "^--", "thesis ns-2"),
                                      ("eq37_with_fifo", ":", "Eq 3.7, B + 43"), ("utilization", "o-", "ours, B"),
                                      ("utilization_with_fifo", "D-", "ours, B + 43")):
                if d[col].null_count() < d.height:  # the scaled fidelity runs B + 43 only
                    ax.plot(d["multiple"], 100 * d[col], style, label=label, ms=5)
            ax.set_title(f"n = {n}")
            ax.set_xlabel("buffer (x RTT C/sqrt(n))")
            ax.grid(True, alpha=0.3)
        axes[0][0].set_ylabel("utilization (%)")
        axes[0][0].legend(fontsize="x-small", loc="lower right")
        return _save(fig, path)

    def example_scenario(self, p: LabParams) -> dict[str, Any]:
        n, _, b, *_ = p.rows()[0]
        return p.setup.scenario(n, b + p.hidden_fifo, 1)


# ---------------------------------------------------------------------------
# Chapter 6 in simulation: the lab router's short flows (Figs 6.2-6.4)


@dataclass(frozen=True)
class LabShortParams:
    shorts: ShortFlowParams  #: the GSR's rate; load 0.85; 1 Gb/s access (the lab's Gigabit Ethernet)
    access_bps: float = 1e9
    hidden_fifo: int = GSR_HIDDEN_FIFO


class Fig62(Experiment):
    id = "appenzeller.fig6_2"
    acceptance = {"*": "R19"}
    title = "The lab router's short flows: queue distribution against the M/G/1 model (Figs 6.2-6.4)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Figs 6.2-6.4, section 6.1; digest 003 section 5.1, R19"
    summary = (
        "Short TCP flows of 62, 30, 14 or 6 packets (Poisson arrivals, about 85% load) cross the lab's "
        "149.26 Mb/s bottleneck from 1 Gb/s access links (the lab's Gigabit Ethernet), through a buffer "
        "that never fills. The distribution of the queue (data packets, sampled every 10 ms) beside the "
        "thesis's M/G/1 model of bursts: its mean queue and its effective-bandwidth tail; and how often the "
        "queue holds more than the router's 43-packet hidden FIFO, the only part its console could see."
    )
    differences = (
        "The thesis's claims, made numeric: for 62-packet flows the model 'matches remarkably well' (the mean "
        "queue within a factor 1.5 of the model's), for 30 it 'tends to overestimate' (ours at most the "
        "model's), for 14 the visible queue was non-empty in fewer than 1% of the samples and for 6 in almost "
        "none (the queue above the 43-packet FIFO in at most 1%). Our packets are 1000 bytes (the models "
        "count packets and do not depend on the rate); the lab's Harpoon hosts sent through two Ethernet "
        "switches, which smooth bursts more than our one access link does. The 'M/G/1/PS' curve of the "
        "figures is not defined in the thesis and is not drawn (digest 7.10)."
    )
    fidelities = {
        "quick": LabShortParams(ShortFlowParams(lengths=(14, 62), rates_bps=(GSR_BPS,), measure_s=20, seeds=1,
                                                load=0.85, warmup_s=10)),
        "paper": LabShortParams(ShortFlowParams(lengths=(6, 14, 30, 62), rates_bps=(GSR_BPS,), measure_s=120, seeds=1,
                                                load=0.85)),
    }

    def measure(self, runner: Any, p: LabShortParams) -> pl.DataFrame:
        from ..theory.short_flows import burst_distribution, eb_tail, mg1_mean_queue

        s = p.shorts
        dirs = run_dirs(runner, [[s.scenario(GSR_BPS, l, 1 + i, access_bps=p.access_bps) for i in range(s.seeds)]
                                 for l in s.lengths], f"{self.id} ({len(s.lengths)} lengths)")
        parts = []
        for l, runs in zip(s.lengths, dirs):
            q = pl.concat([
                pl.read_parquet(d / "timeseries.parquet").filter(
                    (pl.col("metric") == "queue_bytes") & (pl.col("entity") == "bottleneck") & (pl.col("time_s") >= s.warmup_s)
                ).select(queue=(pl.col("value") / PACKET_BYTES).floor().cast(pl.Int64))
                for d in runs
            ])["queue"]
            sizes = list(range(int(q.max()) + 1))
            at_least = [float((q >= b).mean()) for b in sizes]
            dist = burst_distribution(l)
            parts.append(pl.DataFrame({
                "length": l, "queue": sizes, "ccdf": at_least,
                "model_eb": [float(eb_tail(b, s.load, dist)) for b in sizes],
            }).with_columns(
                mean_queue=pl.lit(float(q.mean())), model_mean=pl.lit(mg1_mean_queue(s.load, dist)),
                above_fifo=pl.lit(float((q > p.hidden_fifo).mean())), samples=pl.lit(len(q)),
            ))
        return pl.concat(parts)

    def findings(self, t: pl.DataFrame, p: LabShortParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for l in p.shorts.lengths:
            d = t.filter(pl.col("length") == l)
            out[f"mean_over_model_l{l}"] = d["mean_queue"][0] / d["model_mean"][0]
            out[f"above_fifo_l{l}"] = d["above_fifo"][0]
        return out

    def references(self, p: LabShortParams) -> list[Reference]:
        refs = []
        for l in p.shorts.lengths:
            if l == 62:
                refs.append(Reference("mean_over_model_l62", "mean queue / M/G/1 model, 62-packet flows", 1.0, "factor", 1.5,
                                      "Fig 6.2, section 6.1", "'The M/G/1 model matches the experimental data remarkably well'"))
            if l == 30:
                refs.append(Reference("mean_over_model_l30", "mean queue / M/G/1 model, 30-packet flows", 1.0, "at_most", 0.0,
                                      "Fig 6.3, section 6.1", "'the model still matches well, however it tends to overestimate'"))
            if l in (6, 14):
                refs.append(Reference(f"above_fifo_l{l}", f"share of samples with the queue above the 43-packet FIFO, "
                                      f"{l}-packet flows", 0.01, "at_most", 0.0, "Fig 6.4, section 6.1",
                                      "'For 14 packet flows, we measured a non-empty queue for less than 1% of our samples'"
                                      if l == 14 else "'For six packet flows, the queue length was zero for almost all our samples'"))
        return refs

    def plot(self, t: pl.DataFrame, p: LabShortParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for l, color in zip(p.shorts.lengths, ("C0", "C1", "C2", "C3")):
            d = t.filter((pl.col("length") == l) & (pl.col("ccdf") > 0)).sort("queue")
            ax.plot(d["queue"], d["ccdf"], color=color, label=f"{l}-packet flows, simulation")
            m = t.filter(pl.col("length") == l).sort("queue")
            ax.plot(m["queue"], m["model_eb"], color=color, ls=":", lw=1)
        ax.axvline(p.hidden_fifo, color="0.5", ls="--", lw=1, label="43-packet hidden FIFO")
        ax.plot([], [], "k:", lw=1, label="model: effective-bandwidth tail")
        ax.set_yscale("log")
        ax.set_ylim(1e-4, 1.1)
        ax.set_xlabel("queue b (packets)")
        ax.set_ylabel("P(Q >= b)")
        ax.set_title(f"GSR lab link {GSR_BPS / 1e6:g} Mb/s, load {p.shorts.load:g}, 1 Gb/s access")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize="small")
        return _save(fig, path)

    def example_scenario(self, p: LabShortParams) -> dict[str, Any]:
        return p.shorts.scenario(GSR_BPS, 14, 1, access_bps=p.access_bps)


# ---------------------------------------------------------------------------
# Chapter 6 in simulation: the Stanford gateway of section 6.2 (Fig 6.9)
#
# The gateway was shaped to 20 Mb/s with a queue limit and a token bucket of 10 ms
# (45 packets of the mean 557.1 B) that acts as extra buffer; 2T is assumed 250 ms, so
# the BDP is 1121 packets of 557.1 B (Eq 6.1); NetFlow brackets the long flows n between
# 400 and 1900 (Eqs 6.4, 6.5); web traffic is 30% of the bytes, UDP 4.3% (Fig 6.8).

STANFORD_BPS = 20e6
STANFORD_RTT_S = 0.250
STANFORD_PACKET_BYTES = 557  #: the mean of Fig 6.7
STANFORD_TOKEN_BUCKET = 45  #: Eq 6.8
#: Fig 6.9: queue limit (the token bucket's 45 packets come on top) and measured utilization
STANFORD_TABLE = ((455, 0.9992), (40, 0.9855), (20, 0.9755), (1, 0.9741))


@dataclass(frozen=True)
class StanfordParams:
    setup: LongFlows  #: its flows are the long TCP flows
    flows: int = 400  #: n_min, the thesis's choice (Eq 6.4)
    web_share: float = 0.30
    web_packets: int = 16  #: NetFlow's packets per web flow
    udp_share: float = 0.043
    udp_packet_bytes: int = 204
    limits: tuple[int, ...] = tuple(q for q, _ in STANFORD_TABLE)

    def scenario(self, limit: int, seed: int) -> dict[str, Any]:
        s = self.setup.scenario(self.flows, limit + STANFORD_TOKEN_BUCKET, seed)
        udp = {"kind": "udp", "group": "udp", "model": "poisson", "count": 1, "src": "s0", "dst": "receivers",
               "rate": f"{self.udp_share * self.setup.rate_bps:.0f}bps", "packet_size": f"{self.udp_packet_bytes}B"}
        return {**s, "name": f"appenzeller-stanford-q{limit}",
                "flows": [*s["flows"], short_arrivals(self.web_share, f"{self.web_packets}pkt"), udp]}


class Fig69(Experiment):
    id = "appenzeller.fig6_9"
    acceptance = {"util_b*": "R20"}
    title = "The Stanford gateway at 20 Mb/s: utilization against buffer (Fig 6.9)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 6.9, section 6.2; digest 003 section 5.2, R20"
    summary = (
        "The live experiment's reported traffic in simulation: a 20 Mb/s bottleneck, 2T_p 250 ms (the "
        "thesis's assumption, spread 20%), 557-byte packets (the measured mean; BDP 1121 packets, Eq 6.1), "
        "400 long-lived Reno flows (n_min, Eq 6.4), Poisson web flows of 16 packets carrying 30% of the "
        "link, Poisson UDP at 4.3% in 204-byte packets (Fig 6.8). DropTail buffers of the queue limits of "
        "Fig 6.9 plus the shaper's 45-packet token bucket: 500, 85, 65 and 46 packets. Utilization beside "
        "the measured values and Eq 3.7 with n = 400."
    )
    differences = (
        "The live traffic is known only by its NetFlow summary; we simulate what the thesis reports of it "
        "(long flows at n_min, web and UDP shares, the mean packet size) and count the token bucket as "
        "buffer, as the thesis does. Every packet of the TCP flows has the mean size; real traffic mixed "
        "40-byte and 1500-byte packets. Ours is judged against the measured utilization within 1.5 points; "
        "the thesis's model column is Eq 3.7 with n = 400 and is recomputed, not judged (digest 7.23)."
    )
    fidelities = {
        "quick": StanfordParams(LongFlows(STANFORD_BPS, STANFORD_RTT_S, warmup_s=30, measure_s=30, seeds=1,
                                          packet_bytes=STANFORD_PACKET_BYTES), limits=(455, 1)),
        "paper": StanfordParams(LongFlows(STANFORD_BPS, STANFORD_RTT_S, warmup_s=30, measure_s=300, seeds=3,
                                          packet_bytes=STANFORD_PACKET_BYTES)),
    }

    def measure(self, runner: Any, p: StanfordParams) -> pl.DataFrame:
        from ..theory.sizing import util_lower_bound

        measured = dict(STANFORD_TABLE)
        runs = run_points(runner, [[p.scenario(q, 1 + i) for i in range(p.setup.seeds)] for q in p.limits],
                          f"{self.id} ({len(p.limits)} points)")
        rows = []
        for q, summaries in zip(p.limits, runs):
            b = q + STANFORD_TOKEN_BUCKET
            rows.append({
                "queue_limit": q, "buffer": b, "multiple": b / (p.setup.bdp / math.sqrt(p.flows)),
                "thesis_experiment": measured[q], "eq37": float(util_lower_bound(b, p.setup.bdp, p.flows)),
                "utilization": sum(s["bottleneck_utilization"] for s in summaries) / len(summaries),
                "loss_rate": sum(s["bottleneck_loss_rate"] for s in summaries) / len(summaries),
            })
        return pl.DataFrame(rows)

    def findings(self, t: pl.DataFrame, p: StanfordParams) -> dict[str, float | None]:
        return {f"util_b{r['buffer']}": r["utilization"] for r in t.iter_rows(named=True)}

    def references(self, p: StanfordParams) -> list[Reference]:
        from ..theory.sizing import util_lower_bound

        measured = dict(STANFORD_TABLE)
        return [
            Reference(f"util_b{q + STANFORD_TOKEN_BUCKET}", f"utilization, buffer {q} + {STANFORD_TOKEN_BUCKET}",
                      measured[q], "abs", 0.015, "Fig 6.9, section 6.2 (measured)",
                      f"measured {100 * measured[q]:.2f}%; Eq 3.7 (n = {p.flows}) "
                      f"{100 * float(util_lower_bound(q + STANFORD_TOKEN_BUCKET, p.setup.bdp, p.flows)):.2f}%")
            for q in p.limits
        ]

    def plot(self, t: pl.DataFrame, p: StanfordParams, path: Path) -> Path:
        import numpy as np

        from ..theory.sizing import util_lower_bound

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        d = t.sort("buffer")
        ax.plot(d["buffer"], 100 * d["thesis_experiment"], "ks", ms=7, label="Stanford VXR, measured")
        ax.plot(d["buffer"], 100 * d["utilization"], "o", color="C0", label=f"simulation ({p.setup.seeds} seeds)")
        bs = np.linspace(1, float(d["buffer"].max()), 300)
        ax.plot(bs, [100 * float(util_lower_bound(b, p.setup.bdp, p.flows)) for b in bs], "C1-", lw=1,
                label=f"Eq 3.7, n = {p.flows}, BDP {p.setup.bdp:.0f}")
        ax.set_xscale("log")
        ax.set_xlabel("buffer: queue limit + 45-packet token bucket (packets)")
        ax.set_ylabel("utilization (%)")
        ax.set_ylim(90, 100.5)
        ax.set_title("20 Mb/s, 2T 250 ms, 557-byte packets")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize="small", loc="lower right")
        return _save(fig, path)

    def example_scenario(self, p: StanfordParams) -> dict[str, Any]:
        return p.scenario(40, 1)


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
        summary = json.loads((directory / "summary.json").read_text())
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
        from ..theory.sizing import sawtooth_period_general, single_flow_utilization

        return (sawtooth_period_general(p.buffer, SINGLE_C_PPS, SINGLE_TWO_TP_S),
                single_flow_utilization(p.buffer, p.bdp))

    def _empty_share(self, p: SingleFlowParams) -> float:
        from ..theory.sizing import single_flow_empty_share

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
        ax.set_xlabel("time (s)")
        ax.set_ylabel("packets")
        ax.set_title(f"Fig 2.6: {p.flows} flows on OC3, B = {p.buffer} (BDP {p.setup.bdp:.0f})")
        return _finish(fig, ax, path)


# ---------------------------------------------------------------------------
# Fig 3.1: two flows fall into step


@dataclass(frozen=True)
class TwoFlowParams:
    duration_s: float
    second_start_s: float = 10.0
    warmup_s: float = 50.0
    buffer: int = 142  #: BDP: the link of Figs 2.2-2.5

    def scenario(self) -> dict[str, Any]:
        s = SingleFlowParams(self.buffer, self.duration_s, self.warmup_s).scenario()
        flow = s["flows"][0]
        return {
            **s,
            "name": "appenzeller-two-flows",
            "trace": {"packets": {"links": ["bottleneck"], "events": ["drop"]}},
            "flows": [{**flow, "group": "first"}, {**flow, "group": "second", "start": f"{self.second_start_s:g}s"}],
            "topology": {**s["topology"], "senders": 2},
        }


def matched_cuts(mine: list[float], theirs: list[float], within: float) -> float:
    """The share of ``mine`` with one of ``theirs`` within ``within`` seconds."""
    if not mine:
        return math.nan
    return sum(any(abs(a - b) <= within for b in theirs) for a in mine) / len(mine)


class Fig31(Experiment):
    id = "appenzeller.fig3_1"
    title = "Two flows synchronize: their windows fall into step (Fig 3.1)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 3.1, section 3.1 (and 3.1.1); digest 003 E3.1, R2"
    summary = (
        "Two long-lived Reno flows on the link of Figs 2.2-2.5 (C = 1000 packets/s, 2T_p = 142 ms, B = 142), "
        "the second started 10 s after the first. Their windows against time; after the warm-up, the share "
        "of either flow's window cuts that the other flow also takes within one round trip (in phase), and "
        "whether the buffer the pair needs stays the BDP (Eqs 3.1-3.3: the link busy with B = 2T_p C)."
    )
    differences = (
        "The thesis calls Fig 3.1's synchronization partly an ns-2 artefact (no randomness) and reports a lab "
        "router where two flows stayed unsynchronized. aqmlab orders simultaneous events by a fresh hash "
        "(ties = \"hashed\"), which is randomness ns-2 lacks; the mechanism of section 3.1.1 (the overflowing "
        "flow's extra packet is dropped, and in that RTT the other's too) needs none, and is what we measure."
    )
    fidelities = {
        "quick": TwoFlowParams(duration_s=200.0),
        "paper": TwoFlowParams(duration_s=600.0),
    }

    def example_scenario(self, p: TwoFlowParams) -> dict[str, Any]:
        return p.scenario()

    def measure(self, runner: Any, p: TwoFlowParams) -> pl.DataFrame:
        (directory,), = run_dirs(runner, [[p.scenario()]], "Fig 3.1")
        ts = pl.read_parquet(directory / "timeseries.parquet")
        cwnd = ts.filter(pl.col("metric") == "cwnd").pivot("entity", index="time_s", values="value")
        summary = json.loads((directory / "summary.json").read_text())
        return cwnd.rename({"0": "first", "1": "second"}).with_columns(
            pl.lit(summary["bottleneck_utilization"]).alias("utilization")
        )

    def findings(self, t: pl.DataFrame, p: TwoFlowParams) -> dict[str, float | None]:
        times = t["time_s"].to_list()
        first = window_cuts(times, t["first"].fill_null(0).to_list(), p.warmup_s)
        second = window_cuts(times, t["second"].fill_null(0).to_list(), p.warmup_s)
        rtt = SINGLE_TWO_TP_S + p.buffer / SINGLE_C_PPS  # the round trip with a full buffer
        both = first + second
        in_phase = (matched_cuts(first, second, rtt) * len(first) + matched_cuts(second, first, rtt) * len(second)) / len(both)
        return {"in_phase": in_phase, "cuts": float(len(both)), "utilization": float(t["utilization"][0])}

    def references(self, p: TwoFlowParams) -> list[Reference]:
        return [
            Reference("in_phase", "share of window cuts the other flow takes within one RTT", 1.0, "at_least", 0.1,
                      "Fig 3.1, section 3.1.1", "the two windows 'synchronize in phase'", acceptance="R2"),
            Reference("utilization", "utilization with B = 2T_p C", 1.0, "at_least", 0.005,
                      "section 3.1, Eqs 3.1-3.3", "synchronized flows need B = 2T_p C, no more", acceptance="R2"),
        ]

    def plot(self, t: pl.DataFrame, p: TwoFlowParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(8, 4.5))
        shown = t.filter(pl.col("time_s") <= min(p.duration_s, 150.0))
        ax.plot(shown["time_s"], shown["first"], lw=0.8, label="flow 1 (starts at 0 s)")
        ax.plot(shown["time_s"], shown["second"], lw=0.8, label=f"flow 2 (starts at {p.second_start_s:g} s)")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("congestion window (packets)")
        ax.set_title("Fig 3.1: two Reno flows, C = 1000 packets/s, 2T_p = 142 ms, B = 142")
        return _finish(fig, ax, path)


# ---------------------------------------------------------------------------
# Figs 3.2 and 3.3: the sum of many desynchronized windows

#: The thesis's Fig 3.3 offsets the queue by 10,500 packets, its 2T_p C: 1 Gb/s of
#: 1000-byte packets (125,000 packets/s) over a mean 2T_p of 84 ms.
WINDOW_SUM_BPS = 1e9
WINDOW_SUM_RTT_S = 0.084


@dataclass(frozen=True)
class WindowSumParams:
    setup: LongFlows
    flows: tuple[int, ...]  #: one run each; the figures show the one nearest 500
    buffer_bdps: float = 2.0  #: the buffer, in BDP/sqrt(n): where the queue swings inside [0, B]
    sample_s: float = 0.010

    @property
    def shown(self) -> int:
        """The n of the histogram and the time series: the thesis's desynchronized regime
        (section 3.1.1: rare in-phase synchronization above 500 flows)."""
        return min(self.flows, key=lambda n: abs(n - 500))

    def buffer(self, n: int) -> int:
        return round(self.buffer_bdps * self.setup.bdp / math.sqrt(n))

    def scenario(self, n: int) -> dict[str, Any]:
        s = self.setup.scenario(n, self.buffer(n), 1)
        flows = [{**s["flows"][0], "trace_cwnd": True}]  # each window, for the decomposition
        return {**s, "name": f"appenzeller-window-sum-n{n}", "sample_interval": f"{round(self.sample_s * 1e3)}ms",
                "flows": flows}


def window_sum_spread(windows: Any) -> dict[str, float]:
    """Why the sum of windows (samples x flows) spreads as it does, against the premises of
    section 3.2: each window a sawtooth uniform in [2/3, 4/3] x its mean (s.d. mean/(3 sqrt 3)),
    independent of the others. ``per_flow_sd``: the root mean square of the windows' own
    s.d.; ``model_sd``: the same for the uniform sawtooth of each flow's mean;
    ``independent_sd``: the sum's s.d. if the windows were independent (sqrt of the sum
    of their variances); ``correlation``: the sum's s.d. over that."""
    import numpy as np

    var = windows.var(axis=0)
    model = windows.mean(axis=0) / (3 * math.sqrt(3))
    independent = math.sqrt(var.sum())
    return {
        "per_flow_sd": math.sqrt(var.mean()),
        "model_sd": math.sqrt(float(np.mean(model**2))),
        "independent_sd": independent,
        "correlation": float(windows.sum(axis=1).std()) / independent,
    }


def window_sum_table(directory: Path, warmup_s: float) -> tuple[pl.DataFrame, dict[str, float]]:
    """After the warm-up: each sample's sum of the windows and the bottleneck's queue, and
    the spread of the windows (:func:`window_sum_spread`)."""
    ts = pl.read_parquet(directory / "timeseries.parquet").filter(pl.col("time_s") >= warmup_s)
    wsum = ts.filter(pl.col("metric") == "sum_cwnd").select("time_s", pl.col("value").alias("sum_cwnd"))
    queue = ts.filter((pl.col("metric") == "queue_packets") & (pl.col("entity") == "bottleneck"))
    table = wsum.join(queue.select("time_s", pl.col("value").alias("queue_packets")), on="time_s")
    per_flow = ts.filter(pl.col("metric") == "cwnd").pivot("entity", index="time_s", values="value")
    windows = per_flow.sort("time_s").drop("time_s").fill_null(0.0).to_numpy()
    return table, window_sum_spread(windows)


class WindowSum(Experiment):
    """Runs of many long-lived Reno flows at 1 Gb/s, read twice (Figs 3.2, 3.3)."""

    differences = (
        "The thesis's run is 'set up as in chapter 5' with desynchronized flows; its Fig 3.3 offsets the queue by "
        "10,500 packets, its 2T_p C, so we take 1 Gb/s and a mean 2T_p of 84 ms (BDP 10,500 packets of 1000 B), "
        "the script's Reno and topology, 500 flows (the thesis: in-phase synchronization 'very rare above 500') "
        "and B = 2 BDP/sqrt(n). Our window is the congestion window, inflated during fast recovery; ns-2's "
        "cwnd_ is not (its dupwnd_ is apart) and the thesis counted outstanding packets: ns-2 on the same flows "
        "(OC3, 200 flows, B = 244) gives the same spread of the sum with its uninflated cwnd_ (s.d. 92.2 against "
        "our 92.7; docs/experiments.md). The sum is Gaussian, as the thesis shows, but its s.d. is 4.5 times "
        "the bound of section 3.2, in ns-2 as in aqmlab, because two premises of the bound fail for Reno at these "
        "windows: each window is not a sawtooth uniform in [2/3, 4/3] of its mean (timeouts drop windows to 1-2 "
        "for seconds, loss-free spells let them climb to 2-3 times the mean: the windows' own s.d. is about 3 "
        "times the sawtooth's, per_flow_sd against model_sd), and at 200 flows they are partly synchronized "
        "(correlation 1.4, falling to 1.1 at 1000 flows). The product of the two, with the windows' unequal "
        "means, is the gap."
    )

    def example_scenario(self, p: WindowSumParams) -> dict[str, Any]:
        return p.scenario(p.shown)

    def measure(self, runner: Any, p: WindowSumParams) -> pl.DataFrame:
        from ..theory.sizing import queue_std_bound

        dirs = run_dirs(runner, [[p.scenario(n)] for n in p.flows], "Figs 3.2-3.3")
        tables = []
        for n, (directory,) in zip(p.flows, dirs):
            b = p.buffer(n)
            table, spread = window_sum_table(directory, p.setup.warmup(n, b))
            summary = json.loads((directory / "summary.json").read_text())
            tables.append(table.with_columns(
                pl.lit(n).alias("flows"), pl.lit(b).alias("buffer"),
                pl.lit(queue_std_bound(b, p.setup.bdp, n)).alias("bound_sd"),
                pl.lit(summary["bottleneck_utilization"]).alias("utilization"),
                *(pl.lit(v).alias(k) for k, v in spread.items()),
            ))
        return pl.concat(tables).select("flows", "time_s", pl.exclude("flows", "time_s"))

    @staticmethod
    def _of(t: pl.DataFrame, n: int) -> pl.DataFrame:
        return t.filter(pl.col("flows") == n)


class Fig32(WindowSum):
    id = "appenzeller.fig3_2"
    title = "The sum of many windows is close to Gaussian (Fig 3.2)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 3.2, section 3.2 (Eqs 3.4-3.6); digest 003 E3.2, R3, R6"
    summary = (
        "n long-lived Reno flows (2T_p spread +-20% around 84 ms, starts spread over 10 s) on a 1 Gb/s DropTail "
        "bottleneck (BDP 10,500 packets) with B = 2 BDP/sqrt(n). The distribution of the sum of their windows, "
        "sampled every 10 ms after the warm-up, beside the normal of the same mean and standard deviation; its "
        "standard deviation against n beside the thesis's bound (2T_p C + B)/(3 sqrt(3) sqrt(n)), and the two "
        "premises of the bound measured: each window's own spread against a sawtooth uniform in [2/3, 4/3] of "
        "its mean, and the windows' independence (the sum's s.d. over the s.d. of a sum of independent windows)."
    )
    fidelities = {
        "quick": WindowSumParams(LongFlows(WINDOW_SUM_BPS, WINDOW_SUM_RTT_S, warmup_s=30, measure_s=30, seeds=1),
                                 flows=(500, 1000)),
        "paper": WindowSumParams(LongFlows(WINDOW_SUM_BPS, WINDOW_SUM_RTT_S, warmup_s=30, measure_s=60, seeds=1),
                                 flows=(200, 500, 1000)),
    }

    def findings(self, t: pl.DataFrame, p: WindowSumParams) -> dict[str, float | None]:
        from scipy import stats

        out: dict[str, float | None] = {}
        for n in p.flows:
            d = self._of(t, n)
            x = d["sum_cwnd"].to_numpy()
            out[f"std_n{n}"] = float(x.std())
            out[f"std_over_bound_n{n}"] = float(x.std()) / d["bound_sd"][0]
            out[f"spread_n{n}"] = d["per_flow_sd"][0] / d["model_sd"][0]
            out[f"correlation_n{n}"] = d["correlation"][0]
            out[f"std_sqrt_n_n{n}"] = float(x.std()) * math.sqrt(n)
        x = self._of(t, p.shown)["sum_cwnd"].to_numpy()
        out["ks_distance"] = float(stats.kstest(x, "norm", args=(x.mean(), x.std())).statistic)
        out["skewness"] = float(stats.skew(x))
        big = [n for n in p.flows if n >= 500]
        scaled = [out[f"std_sqrt_n_n{n}"] for n in big]
        out["std_sqrt_n_spread"] = max(scaled) / min(scaled) if len(big) > 1 else None  # type: ignore[type-var]
        return out

    def references(self, p: WindowSumParams) -> list[Reference]:
        from ..theory.sizing import queue_std_bound

        n, top = p.shown, max(p.flows)
        refs = [
            Reference("ks_distance", f"largest gap between the sum's CDF and the normal's, n = {n}", 0.0, "at_most",
                      0.08, "Fig 3.2, section 3.2", "'the aggregate window size does converge to a Gaussian process'",
                      acceptance="R3"),
            Reference(f"std_n{n}", f"standard deviation of the sum, n = {n} (packets)",
                      queue_std_bound(p.buffer(n), p.setup.bdp, n), "at_most", 0.0,
                      "section 3.2, sigma_Q <= (2T_p C + B)/(3 sqrt(3) sqrt(n)) (aqmlab.theory.sizing.queue_std_bound)",
                      "the bound, from windows uniform in [2/3, 4/3] of their mean and independent",
                      "Reno's windows are neither: spread_n* (each window's s.d. over the sawtooth's) is about 3, and "
                      "correlation_n* is above 1; ns-2 gives the same s.d. (docs/experiments.md).", acceptance="R3"),
            Reference(f"spread_n{n}", f"each window's s.d. over a uniform sawtooth's, W/(3 sqrt 3), n = {n}", 1.0,
                      "at_most", 0.0, "section 3.2 (the premise of the bound)",
                      "'each window is a sawtooth uniformly distributed between 2/3 and 4/3 of its mean'",
                      "Timeouts leave windows at 1-2 packets for seconds and loss-free spells let others climb to "
                      "2-3 times the mean; ns-2's Reno on the same flows spreads its windows as much (7.1 against 7.0 "
                      "packets at OC3, 200 flows).", acceptance="R3"),
            Reference(f"correlation_n{top}", f"s.d. of the sum over that of independent windows, n = {top}", 1.0,
                      "abs", 0.25, "sections 3.1.1 and 3.2",
                      "'for aggregates of more than 500 flows with varying RTTs ... we can treat flows as being not "
                      "synchronized at all'", acceptance="R6"),
        ]
        if sum(1 for x in p.flows if x >= 500) > 1:
            refs.append(Reference("std_sqrt_n_spread", "s.d. x sqrt(n), largest over smallest for n >= 500", 1.0,
                                  "at_most", 0.2, "Eq 3.6", "the sum's s.d. falls as 1/sqrt(n): sigma_{n=1}/sqrt(n)",
                                  acceptance="R3"))
        return refs

    def plot(self, t: pl.DataFrame, p: WindowSumParams, path: Path) -> Path:
        import numpy as np
        from scipy import stats

        from ..theory.sizing import queue_std_bound

        plt = _pyplot()
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
        x = self._of(t, p.shown)["sum_cwnd"].to_numpy()
        left.hist(x, bins=60, density=True, alpha=0.6, label=f"sum of {p.shown} windows (every 10 ms)")
        grid = np.linspace(x.min(), x.max(), 200)
        left.plot(grid, stats.norm.pdf(grid, x.mean(), x.std()), color="C3", label="normal, same mean and s.d.")
        left.set_xlabel("sum of the congestion windows (packets)")
        left.set_ylabel("probability density")
        left.set_title(f"Fig 3.2: {p.shown} flows, 1 Gb/s, B = {p.buffer(p.shown)}")
        ns = list(p.flows)
        stds = [float(self._of(t, n)["sum_cwnd"].std()) for n in ns]
        indep = [self._of(t, n)["independent_sd"][0] for n in ns]
        right.plot(ns, stds, "o-", label="sum of the windows")
        right.plot(ns, indep, "s--", label="if the windows were independent")
        fine = np.linspace(min(ns), max(ns), 100)
        right.plot(fine, [queue_std_bound(p.buffer_bdps * p.setup.bdp / math.sqrt(n), p.setup.bdp, n) for n in fine],
                   "k:", label="thesis's bound (2T_pC + B)/(3 sqrt(3n))")
        right.set_xlabel("number of flows n")
        right.set_ylabel("standard deviation (packets)")
        right.set_title("its spread against n")
        for ax in (left, right):
            ax.legend(fontsize="small")
            ax.grid(True, alpha=0.3)
        right.set_ylim(bottom=0)
        return _save(fig, path)


class Fig33(WindowSum):
    id = "appenzeller.fig3_3"
    title = "The sum of the windows tracks the queue plus the BDP (Fig 3.3)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 3.3, section 3.2 (Eq 3.4); digest 003 E3.3"
    summary = (
        "The run of Fig 3.2 with 500 flows read against time: the sum of the windows beside the queue plus a "
        "constant, the packets in flight (Eq 3.4: Q = sum W - 2T_p C while 0 < Q < B). The constant is fitted "
        "(the mean of sum W - Q over the samples with 0 < Q < B) and compared with 2T_p C, 10,500 packets in the "
        "thesis's run and ours."
    )
    fidelities = Fig32.fidelities

    def references(self, p: WindowSumParams) -> list[Reference]:
        return [
            Reference("offset", "sum W - Q while 0 < Q < B (packets)", 10500.0, "factor", 1.1,
                      "Fig 3.3, section 3.2, Eq 3.4", "the queue 'offset by 10500 packets', the run's 2T_p C",
                      "Our sum counts windows, not outstanding packets: windows inflated in fast recovery and the "
                      "windows of flows waiting out a timeout are in it (the Delta_drop of Eq 3.4)."),
            Reference("tracking_error", "s.d. of sum W - Q while 0 < Q < B, over its mean", 0.0, "at_most", 0.05,
                      "Fig 3.3, section 3.2", "'the above equation holds very well as long as ... within the buffer'"),
        ]

    def findings(self, t: pl.DataFrame, p: WindowSumParams) -> dict[str, float | None]:
        d = self._of(t, p.shown)
        inside = d.filter((pl.col("queue_packets") > 0) & (pl.col("queue_packets") < p.buffer(p.shown)))
        gap = inside["sum_cwnd"] - inside["queue_packets"]
        return {"offset": float(gap.mean()), "tracking_error": float(gap.std() / gap.mean()),
                "share_inside": len(inside) / len(d), "offset_over_bdp": float(gap.mean()) / p.setup.bdp}

    def plot(self, t: pl.DataFrame, p: WindowSumParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(8, 4.5))
        d = self._of(t, p.shown)
        shown = d.filter(pl.col("time_s") <= d["time_s"].min() + 10)
        offset = self.findings(t, p)["offset"]
        b = p.buffer(p.shown)
        ax.plot(shown["time_s"], shown["sum_cwnd"], lw=0.8, label="sum of the windows")
        ax.plot(shown["time_s"], shown["queue_packets"] + offset, lw=0.8, label=f"queue + {offset:.0f}")
        ax.axhline(offset, color="0.5", ls=":", label="Q = 0")
        ax.axhline(offset + b, color="C3", ls=":", label=f"Q = B = {b}")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("packets")
        ax.set_title(f"Fig 3.3: sum of the windows and the queue, {p.shown} flows at 1 Gb/s")
        ax.legend(fontsize="small")
        ax.grid(True, alpha=0.3)
        return _save(fig, path)


# ---------------------------------------------------------------------------
# The closed forms the thesis prints numbers of, computed (digest 003 R3, R4, R21, R22)


@dataclass(frozen=True)
class TheoryParams:
    """Nothing to run: the checks are aqmlab.theory's values beside the printed ones."""


def _theory_checks() -> list[tuple[str, str, float, float, float, str, str, str]]:
    """(key, quantity, printed, computed, tolerance, source, the thesis's words, acceptance)."""
    from ..theory import sizing as s

    def util(k: float, n: int) -> float:
        return 100 * s.util_lower_bound(k / math.sqrt(n), 1.0, n)

    rot = s.rule_of_thumb(10e9, 0.250)
    return [
        ("eq37_n100_k1", "Eq 3.7 at B = BDP/sqrt(n), n = 100 (%)", 98.182, util(1, 100), 0.0005,
         "section 3.2, Eq 3.7 (digest 2.8 table)", "Util >= erf(1.8371 B sqrt(n)/(2T_pC + B))", "R3"),
        ("eq37_n400_k1", "Eq 3.7 at B = BDP/sqrt(n), n = 400 (%)", 98.665, util(1, 400), 0.0005,
         "section 3.2, Eq 3.7 (digest 2.8 table)", "", "R3"),
        ("min_buffer_n100_99", "buffer for 99% by Eq 3.7, n = 100 (x BDP/sqrt(n))", 1.101,
         s.min_buffer_for_utilization(0.99, 1.0, 100) * 10, 0.0005, "section 3.2 (digest 2.8, the inverse)", "",
         "R3"),
        ("n10000_k1", "Eq 3.7, n = 10,000, B = BDP/sqrt(n) (%)", 98.99, util(1, 10000), 0.005, "section 3.2 table",
         "Util >= 98.99%", "R4"),
        ("n10000_k1_5", "Eq 3.7, n = 10,000, B = 1.5 BDP/sqrt(n) (%)", 99.99988, util(1.5, 10000), 0.0005,
         "section 3.2 table", "Util >= 99.99988% (a typo: Eq 3.7 gives 99.98767%, digest 7.4)", "R4"),
        ("n10000_k2", "Eq 3.7, n = 10,000, B = 2 BDP/sqrt(n) (%)", 99.99997, util(2, 10000), 0.00001,
         "section 3.2 table", "Util >= 99.99997%", "R4"),
        ("rule_of_thumb_gbit", "10 Gb/s x 250 ms (Gbit)", 2.5, rot / 1e9, 1e-9, "section 1.1.1",
         "'250ms x 10Gb/s = 2.5Gbits'", "R21"),
        ("line_card_gbit", "40 Gb/s line card, 250 ms (Gbit)", 10.0, s.rule_of_thumb(40e9, 0.250) / 1e9, 1e-9,
         "section 1.1.1", "'10Gbits (1.25Gbytes)'", "R21"),
        ("abstract_mbit", "10 Gb/s, 50,000 flows: BDP/sqrt(n) (Mbit)", 10.0, s.sqrt_n_buffer(rot, 50_000) / 1e6, 1.5,
         "Abstract", "'requires only 10Mbits of buffering' (about: 11.2)", "R21"),
        ("abstract_reduction", "2.5 Gb/s, 10,000 flows: buffer saved (%)", 99.0,
         100 * (1 - s.sqrt_n_buffer(1.0, 10_000)), 1e-9, "Abstract", "'could reduce its buffers by 99%'", "R21"),
        ("rtt_ratio_n100", "RTT with BDP/sqrt(n) over RTT with BDP, n = 100", 0.55, s.rtt_ratio(100), 1e-9,
         "section 5.4.2", "(1 + 1/sqrt(n))/2", "R22"),
        ("queueing_delay_rtts", "full rule-of-thumb buffer's queueing delay (RTTs)", 1.0,
         s.queueing_delay(s.rule_of_thumb(1000.0, 0.1), 1000.0) / 0.1, 1e-9, "section 1.1.2",
         "every congested hop adds one RTT", "R22"),
    ]


class Theory(Experiment):
    id = "appenzeller.theory"
    title = "The thesis's closed forms and the numbers it prints of them (R3, R4, R21, R22)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Abstract, sections 1.1, 3.2, 5.4.2; digest 003 R3, R4, R21, R22"
    summary = (
        "No simulation: the numbers the thesis prints of its closed forms (Eq 3.7 and its inverse, the bound on "
        "the queue's spread, the rule of thumb's examples, the RTT ratio of small and large buffers), computed by "
        "aqmlab.theory.sizing (sigma_Q's bound, the base of Eq 3.7, is judged in appenzeller.fig3_2). Its unit tests (tests/theory/test_sizing.py) check every printed number; this "
        "puts the acceptance references among them in the report."
    )
    differences = (
        "The thesis prints 99.99988% for 1.5 BDP/sqrt(n) at n = 10,000; Eq 3.7 gives 99.98767% (digest 7.4: a "
        "typo). The Abstract's 'about 10 Mbit' for 50,000 flows is 11.2 Mbit."
    )
    fidelities = {"quick": TheoryParams(), "paper": TheoryParams()}

    def example_scenario(self, p: TheoryParams) -> dict[str, Any]:
        return LongFlows(OC3_BPS, OC3_MEAN_RTT_S, warmup_s=30, measure_s=30, seeds=1).scenario(400, 86, 1)

    def measure(self, runner: Any, p: TheoryParams) -> pl.DataFrame:
        rows = [{"key": k, "quantity": q, "printed": pr, "computed": c, "acceptance": a}
                for k, q, pr, c, _, _, _, a in _theory_checks()]
        return pl.DataFrame(rows)

    def findings(self, t: pl.DataFrame, p: TheoryParams) -> dict[str, float | None]:
        return dict(zip(t["key"].to_list(), t["computed"].to_list()))

    def references(self, p: TheoryParams) -> list[Reference]:
        return [Reference(k, q, pr, "abs", tol, src, words, acceptance=a)
                for k, q, pr, _, tol, src, words, a in _theory_checks()]

    def plot(self, t: pl.DataFrame, p: TheoryParams, path: Path) -> Path:
        import numpy as np

        from ..theory.sizing import util_lower_bound

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        k = np.linspace(0.05, 3, 200)
        for n in (50, 400, 10000):
            ax.plot(k, [100 * util_lower_bound(x / math.sqrt(n), 1.0, n) for x in k], label=f"Eq 3.7, n = {n}")
        ax.plot([1, 2], [98.99, 99.99997], "ko", label="printed, n = 10,000")
        ax.set_xlabel("buffer (x BDP/sqrt(n))")
        ax.set_ylabel("utilization lower bound (%)")
        ax.set_title("Eq 3.7: the utilization the Gaussian model guarantees")
        return _finish(fig, ax, path)


#: Digest 003 section 6: each acceptance reference's statement, and why it is not (or not
#: wholly) reproduced where that is known; the report's table of R1-R22 (aqmlab.report).
ACCEPTANCE: dict[str, tuple[str, str]] = {
    "R1": ("Single flow: B = 2T_pC is necessary and sufficient for 100% utilization; period 30.2 s (1.5 B²/C); "
           "B = 100 < BDP leaves the queue empty for a while and U < 100%", ""),
    "R2": ("Synchronized flows need B = 2T̄_pC regardless of n; two flows in ns-2 synchronize (Fig 3.1)", ""),
    "R3": ("Desynchronized flows: σ_Q ≤ (2T̄_pC + B)/(3√3·√n); Util ≥ erf(1.8371·B√n/(2T̄_pC + B)); the "
           "window sum is Gaussian (Fig 3.2)",
           "The formulas reproduce; the simulated sum is Gaussian and its s.d. falls as 1/√n, but it is 4.5 times "
           "the bound, in ns-2 as in aqmlab: Reno's windows spread 3 times more than the uniform sawtooth the "
           "bound assumes (appenzeller.fig3_2)."),
    "R4": ("n = 10,000: 1× BDP/√n → ≥ 98.99%; 2× → ≥ 99.99997% (1.5× printed 99.99988%, recomputes to 99.988%)",
           "The 1.5× value is the thesis's typo (digest 7.4)."),
    "R5": ("Minimum buffer for 95% utilization matches the model for n ≳ 50; synchronization below 50 (Fig 3.4)", ""),
    "R6": ("Synchronization common below 100 flows, rare above 500 (ns-2)",
           "Qualitative; checked as the windows' correlation at 1000 flows (appenzeller.fig3_2) and two flows "
           "in step (appenzeller.fig3_1, R2)."),
    "R7": ("20 Mb/s, 130 ms, B = 500 (> BDP 325): 100% utilization at any n; B = 50/100: utilization rises "
           "with n to 100%; goodput falls slightly with n (Fig 5.1)", ""),
    "R8": ("OC3, n = 50-500: the buffer for 98→99.9% grows by much less than 2× at n = 400; 2·BDP/√n gives "
           "≈ 100% (Fig 5.2 top)", ""),
    "R9": ("20 Mb/s (BDP 325): the rule holds for n ≥ 100 at 99.9% even with timeouts; slightly more is needed "
           "when n > BDP (Fig 5.2 bottom)", ""),
    "R10": ("Short flows: the mean queue depends only on ρ and l, not on C; 5/10/25 and 40/80/200 Mb/s nearly "
            "identical; l = 14 above l = 16 (Figs 4.2, 5.3)", ""),
    "R11": ("The effective-bandwidth tail e^(−κb) upper-bounds the simulated queue distribution at ρ = 0.85: "
            "tight for l = 2, loose for l = 62 (Fig 4.3)",
            "Tight for l = 62 too: our ACK-clocked bursts stay below the exact tail of bursts arriving at once, "
            "but the thesis's 2nd-order tail is below that exact tail by about as much (appenzeller.fig4_3)."),
    "R12": ("An access link 10× slower than the bottleneck needs much less buffer; 5 vs 50 Mb/s access barely "
            "differ (Fig 5.4)",
            "A 10x slower access saves a sixth of the buffer, not much: it spreads each flow's bursts but not "
            "the number of flows sending at once (appenzeller.fig5_4)."),
    "R13": ("50 Mb/s short flows: AFCT = 350 ms at light load; B = 10 unstable beyond ~75% load; B = 40 fine to "
            "~90% (Fig 5.5)", ""),
    "R14": ("Mix 20% short / 80% long, BDP 4230: minimum buffer ≈ 0.8·4230/√n, from about 150 flows (Fig 5.6)",
            "At 150-200 flows 2-3.6x the rule, below it from 300; with the 677 ms round trip utilization falls "
            "as the buffer grows past ~2x the rule, Reno and NewReno alike (not traced; appenzeller.fig5_6)."),
    "R15": ("AFCT much lower with BDP/√n buffers than with BDP buffers (n = 1-500 long flows, 20% short; "
            "Fig 5.7)", ""),
    "R16": ("Short fractions 10/20/30%: minimum buffer for 95% identical above ~110 flows; short-only threshold "
            "~100 packets; AFCT within a few % across ratios (Fig 5.8)",
            "Above 110 flows the three ratios' buffers keep the model's 0.9 : 0.8 : 0.7 proportion instead of "
            "converging; the model holds at all 18 points (appenzeller.fig5_8)."),
    "R17": ("Pareto, 155 Mb/s: B = BDP: utilization 100%, queue 800-1600, 60-160 flows in CA, loss ~1%; "
            "B = 165: utilization > 99%, queue 0-165, > 100 flows in CA (Figs 5.9, 5.10)",
            "Loss 3.2% (5.5% with B = 165) against ~1%, and the large buffer's queue dips to 623 once; no load "
            "gives both the thesis's queue and its loss (appenzeller.fig5_9, fig5_10)."),
    "R18": ("GSR OC3 (RTT·C = 1291): utilization 94.9/98.1/99.8/99.7% (n = 100, 0.5-3× BDP/√n) ... "
            "99.5/100/100/99.9% (n = 400) (Fig 6.1)",
            "Simulated with the router's 43-packet hidden FIFO counted as buffer (appenzeller.fig6_1; its "
            "scaled fidelity runs on the emulator)."),
    "R19": ("GSR short flows, ρ ≈ 0.85: M/G/1 matches l = 62, overestimates l = 30; l = 14 queue non-empty in "
            "< 1% of samples (Figs 6.2-6.4)",
            "l = 14 and 6 exceed the 43-packet FIFO in 9% and 1.6% of samples (router: < 1%), which the thesis "
            "puts down to smoothing by its switches and hosts (appenzeller.fig6_2)."),
    "R20": ("Stanford VXR at 20 Mb/s: 500 → 99.92%, 85 → 98.55%, 65 → 97.55%, 46 → 97.41% (Fig 6.9)",
            "Simulated from its reported traffic: 400 greedy flows keep the link full at every buffer, an upper "
            "bound on the router's (appenzeller.fig6_9)."),
    "R21": ("Rule-of-thumb examples: 10 Gb/s × 250 ms = 2.5 Gbit; 40 Gb/s card → 10 Gbit; 10 Gb/s with 50,000 "
            "flows → about 10 Mbit; 2.5 Gb/s with 10,000 flows → 99% less", ""),
    "R22": ("Rule-of-thumb buffers add one RTT of queueing per congested hop; RTT ratio small/large buffers "
            "(1 + 1/√n)/2 → 0.55 at n = 100", ""),
}

EXPERIMENTS = [Fig22(), Fig24(), Fig25(), Fig26(), Fig31(), Fig32(), Fig33(), Fig51(), Fig34(), Fig52(), Fig52Low(), Fig53(), Fig42(), Fig43(), Theory()]
#: Figs 5.4-5.10 and chapter 6
EXPERIMENTS += [Fig54(), Fig55(), Fig56(), Fig57(), Fig58(), Fig59(), Fig510(), Fig61(), Fig62(), Fig69()]
