"""Seed 003, chapter 5: the simulations. Long flows (Figs 5.1, 5.2; digest 003 E5.1,
E5.2, R7-R9), short flows (Figs 5.3-5.5, E5.3-E5.5, R10, R12, R13), mixes of the two
(Figs 5.6-5.8, E5.6-E5.8, R14-R16) and Pareto flow lengths (Figs 5.9, 5.10, E5.9,
E5.10, R17)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ...plots import pyplot as _pyplot
from ...plots import save as _save
from ..core import Compare, Experiment, Reference, run_dirs, run_points
from ..search import Search, bisect, search_table_rows
from .chapter4 import MeanQueue
from .common import (OC3_BPS, OC3_MEAN_RTT_S, OC3_PAPER, OC3_QUICK, PACKET_BYTES, PAYLOAD_BYTES, SHORT_PACKETS, LongFlows,
                     MinBufferExperiment, MinBufferParams, ShortFlowParams, finish, min_buffers, short_arrivals, summary_of,
                     us)


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
        from ...theory.sizing import single_flow_utilization

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
# Fig 5.2: the minimum buffer for a utilization target, on OC3 and on 20 Mb/s


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
        from ...theory.sizing import sqrt_n_buffer

        lo, hi = min(p.targets), max(p.targets)
        n_ref = 400 if 400 in p.flows else max(p.flows)
        a, b = self._at(t, n_ref, hi), self._at(t, n_ref, lo)
        out: dict[str, float | None] = {"ratio_top_to_bottom": None if a is None or b is None else a / b}
        for n in p.flows:
            v = self._at(t, n, hi)
            out[f"top_over_twice_rule_n{n}"] = None if v is None else v / (2 * sqrt_n_buffer(p.setup.bdp, n))
        return out

    def references(self, p: MinBufferParams) -> list[Reference]:
        from ...theory.sizing import min_buffer_for_utilization

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
                "link idles; NewReno on the same runs gives 99.7% instead of 98.3% (docs/experiments/appenzeller.md). "
                "The thesis does not give its Reno's loss-recovery details (digest 7.14).",
                acceptance="R8",
            )
            for n in p.flows
        ]
        return refs

    def plot(self, t: pl.DataFrame, p: MinBufferParams, path: Path) -> Path:
        import numpy as np

        from ...theory.sizing import sqrt_n_buffer

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for target, marker in zip(sorted(p.targets), "os^D"):
            d = t.filter((pl.col("target") == target) & pl.col("min_buffer").is_not_null()).sort("flows")
            ax.plot(d["flows"], d["min_buffer"], marker=marker, label=f"{100 * target:g}% utilization")
        ns = np.linspace(min(p.flows), max(p.flows), 200)
        ax.plot(ns, [sqrt_n_buffer(p.setup.bdp, n) for n in ns], "k--", lw=1, label="BDP/sqrt(n)")
        ax.plot(ns, [2 * sqrt_n_buffer(p.setup.bdp, n) for n in ns], "k:", lw=1, label="2 BDP/sqrt(n)")
        return finish(fig, ax, path, "number of long-lived flows n", "minimum buffer (packets)",
                      f"{self.link}, mean 2T_p {1000 * p.setup.mean_rtt_s:.0f} ms (BDP {p.setup.bdp:.0f} pkt), "
                      f"{p.setup.seeds} seeds")

    def example_scenario(self, p: MinBufferParams) -> dict[str, Any]:
        from ...theory.sizing import sqrt_n_buffer

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
                "(docs/experiments/appenzeller.md). ns-2's default minimum RTO was 1 s until October 2004 "
                "(ns-2.27's), 200 ms after; the thesis does not say which it ran.",
                acceptance="R9",
            )
            for n in p.flows
            if n > bdp
        ]
        return refs

    def example_scenario(self, p: MinBufferParams) -> dict[str, Any]:
        from ...theory.sizing import sqrt_n_buffer

        return p.setup.scenario(100, math.ceil(sqrt_n_buffer(p.setup.bdp, 100)), 1)


# ---------------------------------------------------------------------------
# Fig 5.3: short flows, the mean queue against the flow length


class Fig53(MeanQueue):
    id = "appenzeller.fig5_3"
    cites = "Fig 5.3, section 5.3.1"
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


# ---------------------------------------------------------------------------
# Figs 5.4-5.10: what they share
#
# Short flows are Poisson arrivals of TCP flows (ShortFlowParams's for short flows alone,
# added to LongFlows's long flows for the mixes of section 5.4); each opens with a SYN
# exchange counted in its completion time. The AFCT is the mean completion time of the
# short flows that arrive in the measurement window, less its last ``drain_s`` (digest
# 7.13, 7.15); those of them still running at the end are counted apart, as unfinished.

DRAIN_S = 5.0  #: flows arriving this close to the end are not counted (a 14-packet flow needs ~0.4 s)


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
        from ...theory.short_flows import burst_distribution, eb_buffer_for_loss

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
        return finish(fig, ax, path, "flow length (packets)", f"minimum buffer for loss <= {p.loss_target:g} (packets)",
                      f"{p.rate_bps / 1e6:g} Mb/s bottleneck, load {p.shorts.load:g}, {p.shorts.seeds} seeds")

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
            summaries = [summary_of(d) for d in runs]
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
        return finish(fig, ax, path, "offered load", "average flow completion time (ms)",
                      f"{p.shorts.lengths[0]}-packet flows, {p.shorts.rates_bps[0] / 1e6:g} Mb/s, "
                      f"{p.shorts.seeds} seeds", yscale="log")

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
        "thesis's model: the long-flow rule with the long flows' share of the link, 0.8 x 4230/sqrt(n). "
        "The retransmission timer estimates the RTT as ns-2's does, from one timed packet per round trip."
    )
    differences = (
        "The utilization target is not stated; we take Fig 5.8's 95% (and report 99% at paper fidelity; "
        "digest 7.19). The thesis's claims, made numeric: the minimum buffer 'fits very well' with "
        "0.8 BDP/sqrt(n) from about 150 flows (within a factor of 2, n >= 150). Eq 3.7's buffer for the "
        "target with the reduced BDP is in the table (model_eq37) and the figure. The timer matters at this "
        "round trip, and only here: with RFC 6298's estimator (a sample on every ACK) a 677 ms round trip puts "
        "the RTO far above the 200 ms floor and only a few RTT deviations above the RTT, so a buffer of 2-4 "
        "times the rule, filling in 54-108 ms, fires spurious timeouts; Reno then resends whole windows and "
        "utilization falls as the buffer grows (at 400 flows 98.5% with 170 packets, 87.6% with 339, 85.9% "
        "with 677). ns-2's estimator, the thesis's, samples once a round trip: 98.6, 99.7 and 100%, and "
        "utilization grows with the buffer at every n (docs/experiments/appenzeller.md). On OC3 at 89 ms the floor is "
        "above the round trip and the two estimators agree (Fig 5.2's n = 100, B = 345: 98.2% with either)."
    )
    fidelities = {
        "quick": MinBufferParams(
            MixedFlows(MIX_BPS, MIX_RTT_S, warmup_s=30, measure_s=30, seeds=1, rtt_estimator="ns2"), flows=(150, 400),
            targets=(0.95,), precision=0.1,
        ),
        "paper": MinBufferParams(
            MixedFlows(MIX_BPS, MIX_RTT_S, warmup_s=30, measure_s=120, seeds=3, rtt_estimator="ns2"),
            flows=(50, 100, 150, 200, 300, 400, 500), targets=(0.95, 0.99), precision=0.05,
        ),
    }

    def findings(self, t: pl.DataFrame, p: MinBufferParams) -> dict[str, float | None]:
        return {f"over_rule_n{r['flows']}": r["ratio_to_rule"] for r in t.filter(pl.col("target") == 0.95).iter_rows(named=True)}

    def references(self, p: MinBufferParams) -> list[Reference]:
        return [
            Reference(f"over_rule_n{n}", f"B(95%) / (0.8 BDP/sqrt(n)), n = {n}", 1.0, "factor", 2.0,
                      "Fig 5.6, section 5.4.1",
                      "'the minimum required buffer we found experimentally fits very well with the amount of buffering "
                      "predicted by our model'; 'our new rule already holds at about 150 flows'",
                      "Below the rule as n grows (0.48 at 500 flows, 0.93 for 99%): like Eq 3.7 it sizes for the long "
                      "flows' worst case." if n >= 500 else "")
            for n in p.flows
            if n >= 150
        ]

    def plot(self, t: pl.DataFrame, p: MinBufferParams, path: Path) -> Path:
        import numpy as np

        from ...theory.sizing import min_buffer_for_utilization, sqrt_n_buffer

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
        return finish(fig, ax, path, "number of long-lived flows n", "minimum buffer (packets)",
                      f"20% short flows, 50 Mb/s, BDP {p.setup.bdp:.0f} pkt, {p.setup.seeds} seeds")

    def example_scenario(self, p: MinBufferParams) -> dict[str, Any]:
        from ...theory.sizing import sqrt_n_buffer

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
        from ...theory.sizing import sqrt_n_buffer

        return {"large": round(p.setup.bdp), "small": math.ceil(sqrt_n_buffer(p.setup.bdp, n))}

    def measure(self, runner: Any, p: AfctMixParams) -> pl.DataFrame:
        from ...theory.sizing import rtt_ratio

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
        from ...theory.sizing import rtt_ratio

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
        return finish(fig, ax, path, "number of long-lived flows n", "AFCT of 14-packet flows (ms)",
                      f"20% short flows, OC3, BDP {p.setup.bdp:.0f} pkt, {p.setup.seeds} seeds")

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
            t = min_buffers(f"{self.id} {round(100 * share)}% short", runner, replace(p.search, setup=setup))
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

        from ...theory.sizing import min_buffer_for_utilization

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
        from ...theory.sizing import sqrt_n_buffer

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
    rate_bps: float = OC3_BPS  #: the bottleneck (bench/ns2/appenzeller_pareto.py scales it down)

    @property
    def link(self) -> LongFlows:
        """The link: 155 Mb/s, 'RTT of approximately 100 ms' (section 5.5)."""
        return LongFlows(self.rate_bps, 0.100, warmup_s=self.warmup_s, measure_s=self.duration_s - self.warmup_s, seeds=1)

    def scenario(self, buffer: int) -> dict[str, Any]:
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


#: What section 5.5 states of Figs 5.9 and 5.10, made numeric: (buffer, finding, quantity,
#: the thesis's value, compare, tolerance, its words); a value of None is the buffer itself.
PARETO_CLAIMS: tuple[tuple[str, str, str, float | None, Compare, float, str], ...] = (
    ("large", "ca_min", "fewest flows in congestion avoidance", 60.0, "factor", 1.5,
     "'It fluctuates between 60 and 160 flows with an average of about 110 flows'"),
    ("large", "ca_max", "most flows in congestion avoidance", 160.0, "factor", 1.5, ""),
    ("large", "ca_mean", "mean flows in congestion avoidance", 110.0, "factor", 1.5, ""),
    ("large", "utilization", "utilization", 1.0, "at_least", 0.002, "'it was 100% for the entire duration of the experiment'"),
    ("large", "queue_min", "least queue (packets)", 800.0, "at_least", 100.0, "'It never drops below 800 packets'"),
    ("large", "queue_max", "largest queue (packets)", None, "abs", 50.0,
     "'fluctuates between 800 and the maximum of 1600 packets'"),
    ("large", "loss_rate", "loss rate", 0.01, "factor", 3.0, "'On average, the loss rate is around 1%'"),
    ("large", "drop_rate_max", "largest drop rate of a 50 ms interval", 0.5, "factor", 2.0,
     "'for some intervals, the drop rate goes as high as 50%'"),
    ("small", "ca_min", "fewest flows in congestion avoidance", 100.0, "at_least", 30.0,
     "'the number of flows stays above 100 all the time, justifying our choice of n = 100'"),
    ("small", "utilization", "utilization", 0.99, "at_least", 0.0, "'Averaging shows that the utilization is above 99%'"),
    ("small", "queue_min", "least queue (packets)", 0.0, "at_most", 5.0,
     "'The queue length ... oscillates between zero and the buffer size of 165'"),
    ("small", "queue_max", "largest queue (packets)", None, "abs", 2.0, ""),
    ("small", "loss_rate", "loss rate", 0.05, "at_most", 0.0, "'still a low single digit percentage'"),
    ("small", "loss_over_large", "loss rate / the large buffer's", 1.0, "at_least", 0.0, "'Overall, the drop rate is now higher'"),
    ("small", "drop_intervals_over_large", "share of intervals with drops / the large buffer's", 1.0, "at_least", 0.0,
     "'more intervals have drops'"),
    ("small", "peak_drop_rate_over_large", "largest drop rate of an interval / the large buffer's", 1.0, "at_most", 0.0,
     "'the maximum drop rate in a single interval is lower'"),
)
#: Why a claim is not met, where that is traced.
PARETO_NOTES = {
    ("large", "loss_rate"): "The load that gives the thesis's picture keeps about 600 flows active here, and Reno's "
                            "loss grows as BDP + B is shared among more flows; the thesis's 1% points to 250-300. At "
                            "its own nominal load of 1.02 ours is 0.6-2.7% (8 seeds), with the link 77-90% used. ns-2 "
                            "2.35 running the script's Reno on the same flows loses more (4.4% against 3.2%): the "
                            "printed setup does not give the thesis's 1% "
                            "(docs/experiments/appenzeller.md, bench/ns2/appenzeller_pareto.py).",
}


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
        "times the thesis's (3.2% against 'around 1%' with 1650 packets, 5.5% with 165), and the cause is the "
        "number of active flows the load keeps: Reno's loss grows as BDP + B is shared among more of them, and "
        "we need about 600 (nominal 1.3) for the thesis's picture, where its 1% points to 250-300. At its own "
        "nominal 1.02 our loss is its 1% (0.6-2.7% over 8 seeds) but the link is 77-90% used. Our TCP is not "
        "the cause: ns-2 2.35 running the script's Reno (a fresh agent per flow) on the very same flows needs "
        "as many active flows or more, keeps as large a share of them in congestion avoidance and loses more "
        "(4.4% against aqmlab's 3.2% at the full rate, 4.9% against 4.1% at a quarter of it); neither the "
        "timers of the ns-2 of 2003 nor (in aqmlab) other flow lengths (mean 30-300 packets, shape 1.2-2) give "
        "a full link with a high queue at 1% loss, and agents "
        "reused from flow to flow double the share in congestion avoidance but still lose 3.6%. The thesis's "
        "setup differs from its printed script in something the appendix leaves out "
        "(docs/experiments/appenzeller.md; bench/ns2/appenzeller_pareto.py)."
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
            summary = summary_of(d)
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

    def references(self, p: ParetoParams) -> list[Reference]:
        fig = f"Fig {self.figure}, section 5.5"
        buffer = float(self.buffers(p)[self.buffer_kind])
        return [Reference(key, quantity, buffer if paper is None else paper, compare, tolerance, fig, words,
                          PARETO_NOTES.get((kind, key), ""))
                for kind, key, quantity, paper, compare, tolerance, words in PARETO_CLAIMS if kind == self.buffer_kind]

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


EXPERIMENTS = [Fig51(), Fig52(), Fig52Low(), Fig53(), Fig54(), Fig55(), Fig56(), Fig57(), Fig58(), Fig59(), Fig510()]
