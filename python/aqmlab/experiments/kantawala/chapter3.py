"""Seed 000, chapter 3: the DRR discard policies (DRR with longest-queue drop, TDRR,
QSDRR) against Tail Drop, RED and Blue over the buffer sweep, in the three topologies,
with long-lived flows (Figs 3.2-3.10) and with short bursts (Figs 3.11-3.16); digest 000
sections 4.2-4.5 and the acceptance references 5-11 of section 6.

Each experiment is a sweep of (policy, buffer) over one topology (:mod:`.common`); the
same classes, given chapter 6's policies, are chapter 6's Figs 6.5-6.12
(:mod:`.chapter6`). Runs are shared: a policy's run at one buffer is the same scenario
in both chapters, and the result store computes it once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import polars as pl

from ...plots import pyplot as _pyplot
from ...plots import save as _save
from ..core import Experiment, Reference
from . import common as c

DRR_FAMILY = ("drr", "tdrr", "qsdrr", "dtdrr", "dsdrr")
NON_DRR = ("droptail", "red", "blue")


@dataclass(frozen=True)
class SweepParams:
    """A buffer sweep: the paper's buffers (scaled by ``scale``), the policies, and
    extra policies run at ``extra_buffers`` only (TDRR's weights of Fig 3.6)."""

    scale: c.Scale
    buffers: tuple[int, ...]
    policies: tuple[str, ...] = c.CHAPTER3_POLICIES
    extra: tuple[str, ...] = ()
    extra_buffers: tuple[int, ...] = ()

    def points(self) -> list[tuple[str, int]]:
        main = [(p, b) for p in self.policies for b in self.buffers]
        return main + [(p, b) for p in self.extra for b in self.extra_buffers]


QUICK_BUFFERS = (100, 200, 600, 1500, 5000)
#: Quick fidelity: 10 long-lived flows (a tenth) on a 50 Mb/s bottleneck, the paper's
#: 100 s (a shorter run measures the synchronized start: its timeouts of 1 s and more
#: spread the flows' goodput over a 30 s run as much as Tail Drop does over 100 s).
QUICK_LONG = c.Scale(factor=0.1, duration_s=100.0)
#: Quick fidelity of the short bursts: 25 sources per class (a twentieth) on 25 Mb/s, 100 s.
QUICK_SHORT = c.Scale(factor=0.05, duration_s=100.0)
PAPER = c.Scale()


def nearest(buffers: Any, b: int) -> int:
    """The buffer of ``buffers`` nearest to ``b`` (a quick sweep has fewer)."""
    return min(buffers, key=lambda x: (abs(x - b), x))


def value(t: pl.DataFrame, policy: str, buffer: int, col: str, **where: Any) -> float | None:
    """``col`` of (policy, the run buffer nearest ``buffer``), rows filtered by ``where``."""
    d = t.filter(pl.col("policy") == policy)
    for k, v in where.items():
        d = d.filter(pl.col(k) == v)
    if d.is_empty():
        return None
    b = nearest(d["buffer"].unique().to_list(), buffer)
    x = d.filter(pl.col("buffer") == b)[col]
    return float(x.mean()) if len(x) else None


def mean_over(t: pl.DataFrame, policies: tuple[str, ...], col: str, low: int = 0, high: int = 10**9,
              **where: Any) -> float | None:
    """The mean of ``col`` over ``policies`` and the buffers in [low, high]."""
    d = t.filter(pl.col("policy").is_in(list(policies)) & pl.col("buffer").is_between(low, high))
    for k, v in where.items():
        d = d.filter(pl.col(k) == v)
    x = d[col].drop_nans().drop_nulls()
    return float(x.mean()) if len(x) else None


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


class BufferSweep(Experiment):
    """A (policy, buffer) sweep of one topology; subclasses say which, and what they
    read from the runs (``table``)."""

    topology: ClassVar[str]
    kind: ClassVar[str] = "long"

    def scenarios(self, policy: str, buffer: int, p: SweepParams) -> list[dict[str, Any]]:
        build = c.TOPOLOGIES[self.topology]
        return [build(policy, buffer, p.scale, seed, self.kind) for seed in range(1, p.scale.seeds + 1)]

    def runs(self, runner: Any, p: SweepParams) -> tuple[pl.DataFrame, pl.DataFrame]:
        points = {pt: self.scenarios(*pt, p) for pt in p.points()}
        flows, queues = c.measure_flows(runner, points, ("policy", "buffer"), f"{self.id} ({len(points)} points)")
        scaled = {b: p.scale.buffer(b) for b in {b for _, b in points}}
        add = pl.col("buffer").replace_strict(scaled, return_dtype=pl.Int64).alias("buffer_pkts")
        return flows.with_columns(add), queues.with_columns(add)

    def example_scenario(self, p: SweepParams) -> dict[str, Any]:
        return self.scenarios("qsdrr", 1000, p)[0]

    def policies(self, p: SweepParams) -> tuple[str, ...]:
        return p.policies


def _axes_buffer(ax: Any, ylabel: str) -> None:
    ax.set_xlabel("buffer (packets, the paper's)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)


def _curves(ax: Any, t: pl.DataFrame, policies: tuple[str, ...], col: str, scale: float = 1.0, **where: Any) -> None:
    for pol in policies:
        d = t.filter(pl.col("policy") == pol)
        for k, v in where.items():
            d = d.filter(pl.col(k) == v)
        d = d.sort("buffer")
        if d.height:
            ax.plot(d["buffer"], d[col] * scale, marker=c.MARKERS.get(pol, "."), ms=4, label=c.LABELS.get(pol, pol))


# ---------------------------------------------------------------------------
# E3-SB: single bottleneck, long-lived flows (Figs 3.3-3.6)


class SingleBottleneck(BufferSweep):
    id = "kantawala.e3_sb"
    title = "Single bottleneck, 100 long-lived Reno flows: goodput, spread and max/min against buffer (Figs 3.3-3.6)"
    source = "seed 000 (Kantawala & Turner), Figs 3.2-3.6, section 3.3.1; digest 000 section 4.2, references 5-6"
    summary = (
        "100 long-lived Reno flows on 10 Mb/s access links into a 500 Mb/s bottleneck (RTT 100 ms, fair share "
        "5 Mb/s, BDP 4167 packets), all starting at t = 0, 100 s. For each policy and buffer: the flows' mean goodput "
        "as % of the fair share, its standard deviation over the fair share, (mean + 3 sigma)/(mean - 3 sigma), and "
        "the goodput histogram at B = 200; TDRR with weights 1/128, 1/32 and 1/8 (Fig 3.6)."
    )
    differences = (
        "The report's figures are images; its prose gives the levels compared here. The hosts' own queues are "
        "ns-2's 50 packets (common.py): with queues that never drop, windows grow into the senders' own queues and "
        "the per-flow policies lose their fairness (issue 28). Quick fidelity: 10 flows on 50 Mb/s with buffers "
        "scaled by 0.1, 100 s (the buffer per flow, windows and fair share are the paper's)."
    )
    topology = "sb"
    fidelities = {
        "quick": SweepParams(QUICK_LONG, QUICK_BUFFERS, extra=("tdrr_w128", "tdrr_w8"), extra_buffers=(100, 600)),
        "paper": SweepParams(PAPER, c.BUFFERS, extra=("tdrr_w128", "tdrr_w8"), extra_buffers=c.BUFFERS),
    }
    histogram_buffer = 200

    def measure(self, runner: Any, p: SweepParams) -> pl.DataFrame:
        flows, queues = self.runs(runner, p)
        return sb_table(flows, queues)

    def findings(self, t: pl.DataFrame, p: SweepParams) -> dict[str, float | None]:
        return sb_findings(t, self.policies(p))

    def references(self, p: SweepParams) -> list[Reference]:
        return sb_references("Fig 3.4", "Fig 3.5", self.policies(p)) + [
            Reference("tdrr_weight_spread", "TDRR mean % of fair share, largest difference over weights 1/128-1/8, "
                      "B >= 200", 0.0, "at_most", 3.0, "Fig 3.6, section 3.3.1",
                      "'nearly identical results, except for a small difference at B = 100 packets'"),
        ]

    def plot(self, t: pl.DataFrame, p: SweepParams, path: Path) -> Path:
        return sb_plot(t, self.policies(p), p, path, "Figs 3.3-3.5")


def sb_table(flows: pl.DataFrame, queues: pl.DataFrame) -> pl.DataFrame:
    """One row per (policy, buffer): the fair-share statistics, the bottleneck's
    utilization, bytes written and dropped later, and the flows' goodputs (Mb/s)."""
    stats = c.group_stats(flows, ["policy", "buffer", "buffer_pkts"])
    util = queues.group_by("policy", "buffer").agg(pl.col("utilization").mean(),
                                                   pl.col("buffered_drop_bytes").mean(), pl.col("arrivals").mean())
    goodputs = flows.filter(pl.col("seed") == 1).group_by("policy", "buffer").agg(
        (pl.col("goodput_bps").sort() / 1e6).alias("goodputs_mbps"))
    return stats.join(util, on=["policy", "buffer"]).join(goodputs, on=["policy", "buffer"]).sort("policy", "buffer")


def sb_findings(t: pl.DataFrame, policies: tuple[str, ...]) -> dict[str, float | None]:
    f: dict[str, float | None] = {}
    for pol in policies:
        f[f"{pol}_std"] = mean_over(t, (pol,), "std_fair", 400, 5000)
        f[f"{pol}_maxmin_4167"] = _finite(value(t, pol, 4167, "max_min"))
        f[f"{pol}_mean_200"] = value(t, pol, 200, "mean_pct")
        f[f"{pol}_mean_5000"] = value(t, pol, 5000, "mean_pct")
    others = [f[f"{pol}_mean_5000"] for pol in policies if pol != "blue"]
    if "blue" in policies and all(x is not None for x in others):
        f["blue_below_all_5000"] = min(others) - f["blue_mean_5000"]  # type: ignore[operator, type-var]
    weights = t.filter(pl.col("policy").is_in(["tdrr", "tdrr_w128", "tdrr_w8"]) & (pl.col("buffer") >= 200))
    if weights["policy"].n_unique() == 3:
        spread = weights.group_by("buffer").agg((pl.col("mean_pct").max() - pl.col("mean_pct").min()).alias("d"))
        f["tdrr_weight_spread"] = float(spread["d"].max())
    return f


def sb_references(std_fig: str, mean_fig: str, policies: tuple[str, ...]) -> list[Reference]:
    """Digest 000 section 6, references 5 and 6."""
    sigma = {"droptail": (0.12, "about 0.12"), "red": (0.10, "about 0.10"), "blue": (0.06, "about 0.06")}
    refs = []
    for pol in policies:
        name = c.LABELS[pol]
        if pol in sigma:
            v, words = sigma[pol]
            refs.append(Reference(f"{pol}_std", f"{name}: sigma / fair share, mean over B = 400-5000", v, "abs", 0.04,
                                  std_fig, f"{name} {words} ('Blue 6%, RED 10%, Tail Drop 12%')"))
        elif pol != "tdrr":
            refs.append(Reference(f"{pol}_std", f"{name}: sigma / fair share, mean over B = 400-5000", 0.025,
                                  "at_most", 0.01, std_fig, "'less than 0.025' (multi-queue policies 2-4%)"))
        else:
            refs.append(Reference("tdrr_std", "TDRR: sigma / fair share, mean over B = 400-5000", 0.04, "at_most", 0.01,
                                  std_fig, "higher than DRR and QSDRR, well below Blue, RED and Tail Drop"))
    maxmin = {"qsdrr": (1.0, "abs", 0.2, "about 1"), "drr": (1.0, "abs", 0.2, "about 1"),
              "dsdrr": (1.0, "abs", 0.2, "about 1"), "dtdrr": (1.0, "abs", 0.2, "about 1"),
              "red": (1.8, "abs", 0.5, "about 1.8"), "blue": (1.8, "abs", 0.5, "about 1.8"),
              "droptail": (2.0, "at_least", 0.0, "above 2 even at a BDP-sized buffer")}
    for pol in policies:
        if pol in maxmin:
            v, how, tol, words = maxmin[pol]
            refs.append(Reference(f"{pol}_maxmin_4167", f"{c.LABELS[pol]}: (mean+3 sigma)/(mean-3 sigma), B = 4167", v,
                                  how, tol, f"{std_fig}(b)", words))
    for pol in ("qsdrr", "tdrr", "dsdrr", "red"):
        if pol in policies:
            refs.append(Reference(f"{pol}_mean_200", f"{c.LABELS[pol]}: mean % of fair share, B = 200", 90.0,
                                  "at_least", 5.0, mean_fig,
                                  "QSDRR ~ TDRR ~ RED (~ DSDRR): 'do well already at 5% of BDP'"))
    if "blue" in policies:
        refs.append(Reference("blue_below_all_5000", "mean % of fair share: the lowest other policy minus Blue, "
                              "B = 5000", 0.0, "at_least", 0.0, mean_fig,
                              "'all policies, including Tail Drop, beat Blue even at 5000 packets' (> 0)"))
    return refs


def sb_plot(t: pl.DataFrame, policies: tuple[str, ...], p: SweepParams, path: Path, figs: str) -> Path:
    """The report's panels: the goodput histogram at B = 200, sigma / fair share, the
    projected max/min, and the mean % of fair share, against buffer."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    hist, std, maxmin, mean = axes.ravel()
    b200 = nearest(t["buffer"].unique().to_list(), 200)
    for pol in policies:
        g = t.filter((pl.col("policy") == pol) & (pl.col("buffer") == b200))["goodputs_mbps"]
        if len(g):
            hist.hist(g[0].to_list(), bins=30, range=(0, 10), histtype="step", label=c.LABELS[pol])
    hist.set_xlabel("goodput (Mb/s; fair share 5)")
    hist.set_ylabel("flows")
    hist.set_title(f"goodput of each flow, B = {b200}")
    hist.legend(fontsize="small")
    _curves(std, t, policies, "std_fair")
    _axes_buffer(std, "sigma / fair share")
    _curves(maxmin, t.with_columns(pl.col("max_min").clip(upper_bound=5.0)), policies, "max_min")
    _axes_buffer(maxmin, "(mean + 3 sigma)/(mean - 3 sigma) (5 = infinite)")
    _curves(mean, t, policies + tuple(x for x in p.extra if x in t["policy"].unique()), "mean_pct")
    _axes_buffer(mean, "mean goodput, % of fair share")
    for ax in (std, maxmin, mean):
        ax.set_xscale("log")
        ax.legend(fontsize="x-small")
    fig.suptitle(f"{figs}: single bottleneck, {p.scale.flows(100)} long-lived Reno flows, {p.scale.duration_s:g} s")
    return _save(fig, path)


# ---------------------------------------------------------------------------
# E3-MRTT: two RTT classes (Fig 3.8)


def group_table(flows: pl.DataFrame, queues: pl.DataFrame, groups: pl.Expr) -> pl.DataFrame:
    """One row per (policy, buffer, group): the fair-share statistics of the flows
    ``groups`` names (a column expression giving each flow's group, null: not counted),
    and the bottleneck's utilization (averaged over its links)."""
    flows = flows.with_columns(groups.alias("class")).filter(pl.col("class").is_not_null())
    stats = c.group_stats(flows, ["policy", "buffer", "buffer_pkts", "class"])
    util = queues.group_by("policy", "buffer").agg(pl.col("utilization").mean(), pl.col("utilization").min()
                                                   .alias("utilization_min"))
    return stats.join(util, on=["policy", "buffer"]).sort("policy", "buffer", "class")


class MultiRtt(BufferSweep):
    id = "kantawala.e3_mrtt"
    title = "Two RTT classes, 40 and 200 ms, long-lived flows: % of fair share against buffer (Fig 3.8)"
    source = "seed 000 (Kantawala & Turner), Figs 3.7-3.8, section 3.3.2; digest 000 section 4.3, reference 7"
    summary = (
        "50 long-lived Reno flows with RTT 40 ms and 50 with RTT 200 ms (access delays 20 and 100 ms, a bottleneck "
        "of no delay) on 10 Mb/s access links into 500 Mb/s, 100 s. Mean goodput of each class as % of the fair "
        "share (5 Mb/s) against buffer."
    )
    differences = (
        "The hosts' own queues are ns-2's 50 packets (common.py); with queues that never drop, DropTail's 200 ms "
        "flows get almost nothing (issue 28). Goodput is measured over 0-100 s from the synchronized start, whose "
        "slow start to the 10,000-packet receiver window costs the DRR family's 200 ms flows about 10 points of the "
        "report's ~90% (91% over 20-100 s at B = 1000; docs/experiments/kantawala.md). Quick fidelity: 5 + 5 flows on "
        "50 Mb/s, buffers scaled by 0.1, 100 s."
    )
    topology = "mrtt"
    fidelities = {"quick": SweepParams(QUICK_LONG, QUICK_BUFFERS), "paper": SweepParams(PAPER, c.BUFFERS)}

    def measure(self, runner: Any, p: SweepParams) -> pl.DataFrame:
        flows, queues = self.runs(runner, p)
        return group_table(flows, queues, pl.col("group"))

    def findings(self, t: pl.DataFrame, p: SweepParams) -> dict[str, float | None]:
        return mrtt_findings(t, self.policies(p))

    def references(self, p: SweepParams) -> list[Reference]:
        return mrtt_references("Fig 3.8", self.policies(p))

    def plot(self, t: pl.DataFrame, p: SweepParams, path: Path) -> Path:
        return two_panels(t, self.policies(p), path, [("class", "rtt40", "(a) 40 ms RTT flows"),
                                                      ("class", "rtt200", "(b) 200 ms RTT flows")],
                          f"Fig 3.8: two RTT classes, {p.scale.flows(50)} + {p.scale.flows(50)} flows")


def mrtt_findings(t: pl.DataFrame, policies: tuple[str, ...]) -> dict[str, float | None]:
    f: dict[str, float | None] = {}
    for pol in policies:
        f[f"{pol}_rtt40"] = mean_over(t, (pol,), "mean_pct", 400, 5000, **{"class": "rtt40"})
        f[f"{pol}_rtt200"] = mean_over(t, (pol,), "mean_pct", 400, 5000, **{"class": "rtt200"})
        f[f"{pol}_rtt200_100"] = value(t, pol, 100, "mean_pct", **{"class": "rtt200"})
    return f


def mrtt_references(fig: str, policies: tuple[str, ...]) -> list[Reference]:
    """Digest 000 section 6, reference 7 (and Table 2.4 for Tail Drop is chapter 2's)."""
    refs = []
    for pol in policies:
        name = c.LABELS[pol]
        if pol in ("red", "blue"):
            refs += [Reference(f"{pol}_rtt40", f"{name}: 40 ms flows, % of fair share, B = 400-5000", 150.0, "abs",
                               20.0, f"{fig}(a)", "'about 150%'"),
                     Reference(f"{pol}_rtt200", f"{name}: 200 ms flows, % of fair share, B = 400-5000", 40.0, "abs",
                               15.0, f"{fig}(b)", "'about 40%'")]
        elif pol in DRR_FAMILY:
            refs += [Reference(f"{pol}_rtt40", f"{name}: 40 ms flows, % of fair share, B = 400-5000", 110.0,
                               "at_most", 5.0, f"{fig}(a)", "'at most about 110%'"),
                     Reference(f"{pol}_rtt200", f"{name}: 200 ms flows, % of fair share, B = 400-5000", 90.0, "abs",
                               10.0, f"{fig}(b)", "'about 90%' (DTDRR and DSDRR about 80% from B = 400)")]
    if "tdrr" in policies:
        refs.append(Reference("tdrr_rtt200_100", "TDRR: 200 ms flows, % of fair share, B = 100", 90.0, "abs", 10.0,
                              f"{fig}(b)", "'TDRR reaches about 90% even at B = 100'"))
    for pol in ("drr", "qsdrr", "dtdrr", "dsdrr"):
        if pol in policies:
            refs.append(Reference(f"{pol}_rtt200_100", f"{c.LABELS[pol]}: 200 ms flows, % of fair share, B = 100", 40.0,
                                  "abs", 15.0, f"{fig}(b)", "'only about 40%' at B = 100 (one packet per flow)"))
    return refs


def two_panels(t: pl.DataFrame, policies: tuple[str, ...], path: Path, panels: list[tuple[str, str, str]],
               title: str, col: str = "mean_pct", ylabel: str = "mean goodput, % of fair share") -> Path:
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2))
    for ax, (key, val, name) in zip(axes, panels):
        _curves(ax, t, policies, col, **{key: val})
        _axes_buffer(ax, ylabel)
        ax.set_xscale("log")
        ax.set_title(name, fontsize="medium")
        ax.legend(fontsize="x-small")
    fig.suptitle(title)
    return _save(fig, path)


# ---------------------------------------------------------------------------
# E3-MH: three hops (Fig 3.10)

#: The multi-hop classes: end-to-end flows, and the cross traffic of the hop R1 -> R2
#: (the report plots "the cross-traffic attached to router R1").
MH_CLASSES = (pl.when(pl.col("group") == "through").then(pl.lit("through"))
              .when((pl.col("group") == "cross") & (pl.col("hop") == 1)).then(pl.lit("cross_r1")))


class MultiHop(BufferSweep):
    id = "kantawala.e3_mh"
    title = "Three hops, end-to-end against one-hop cross traffic, long-lived flows (Fig 3.10)"
    source = "seed 000 (Kantawala & Turner), Figs 3.9-3.10, section 3.3.3; digest 000 section 4.4, reference 8"
    summary = (
        "Three 500 Mb/s hops of 50 ms; 50 long-lived Reno flows cross all three (RTT 300 ms) and 50 cross each hop "
        "only (RTT 100 ms), 10 Mb/s access links, 100 s. Mean goodput of the end-to-end flows and of the cross "
        "traffic at R1 as % of the fair share (5 Mb/s on each hop), and the hops' utilization."
    )
    differences = (
        "The hosts' own queues are ns-2's 50 packets (common.py). Goodput is measured over 0-100 s from the "
        "synchronized start: the 300 ms flows' recovery from the first slow start's overshoot leaves the links 7-8% "
        "idle and the end-to-end flows 10-15 points below the report; over 20-100 s the links are full and RED, "
        "TDRR and QSDRR give the report's levels. Tail Drop's and DRR's end-to-end levels (28% and 82% over 20-100 "
        "s, the report ~40 and ~60) are draws of a chaotic run: with the hops 0.1-0.2% off 500 Mb/s they are 28-37% "
        "and 63-85% (docs/experiments/kantawala.md). Quick fidelity: 5 end-to-end flows "
        "and 5 per hop on 50 Mb/s hops, buffers scaled by 0.1, 100 s."
    )
    topology = "mh"
    fidelities = {"quick": SweepParams(QUICK_LONG, QUICK_BUFFERS), "paper": SweepParams(PAPER, c.BUFFERS)}

    def measure(self, runner: Any, p: SweepParams) -> pl.DataFrame:
        flows, queues = self.runs(runner, p)
        return group_table(flows, queues, MH_CLASSES)

    def findings(self, t: pl.DataFrame, p: SweepParams) -> dict[str, float | None]:
        return mh_findings(t, self.policies(p))

    def references(self, p: SweepParams) -> list[Reference]:
        return mh_references("Fig 3.10", self.policies(p))

    def plot(self, t: pl.DataFrame, p: SweepParams, path: Path) -> Path:
        return two_panels(t, self.policies(p), path, [("class", "through", "(a) end-to-end flows"),
                                                      ("class", "cross_r1", "(b) cross traffic at R1")],
                          f"Fig 3.10: three hops, {p.scale.flows(50)} end-to-end and {p.scale.flows(50)} cross flows "
                          "per hop")


def mh_findings(t: pl.DataFrame, policies: tuple[str, ...]) -> dict[str, float | None]:
    f: dict[str, float | None] = {}
    for pol in policies:
        f[f"{pol}_through"] = mean_over(t, (pol,), "mean_pct", 400, 5000, **{"class": "through"})
        f[f"{pol}_cross"] = mean_over(t, (pol,), "mean_pct", 400, 5000, **{"class": "cross_r1"})
        util = mean_over(t, (pol,), "utilization", 400, 5000, **{"class": "through"})
        f[f"{pol}_idle"] = None if util is None else 100 * (1 - util)
        f[f"{pol}_through_100"] = value(t, pol, 100, "mean_pct", **{"class": "through"})
    return f


def mh_references(fig: str, policies: tuple[str, ...]) -> list[Reference]:
    """Digest 000 section 6, reference 8."""
    through = {"tdrr": 80.0, "qsdrr": 80.0, "dsdrr": 80.0, "dtdrr": 70.0, "drr": 60.0, "red": 40.0,
               "droptail": 40.0, "blue": 20.0}
    cross = {"drr": 117.5, "tdrr": 117.5, "qsdrr": 117.5, "dtdrr": 117.5, "dsdrr": 117.5, "red": 150.0,
             "droptail": 150.0, "blue": 130.0}
    idle = {"red": 5.0, "droptail": 5.0, "blue": 25.0}
    refs = []
    for pol in policies:
        name = c.LABELS[pol]
        refs.append(Reference(f"{pol}_through", f"{name}: end-to-end flows, % of fair share, B = 400-5000",
                              through[pol], "abs", 12.0, f"{fig}(a)", f"about {through[pol]:g}%"))
        refs.append(Reference(f"{pol}_cross", f"{name}: cross traffic at R1, % of fair share, B = 400-5000",
                              cross[pol], "abs", 15.0, f"{fig}(b)",
                              {"red": "about 150%", "droptail": "about 150%", "blue": "120-140%"}.get(pol, "115-120%")))
        if pol in idle:
            refs.append(Reference(f"{pol}_idle", f"{name}: % of the hops idle, B = 400-5000", idle[pol], "abs",
                                  5.0 if pol != "blue" else 10.0, f"{fig}(b)",
                                  "'about 5% of the link unused'" if pol != "blue" else "'20-30% unused'"))
    if "tdrr" in policies:
        refs.append(Reference("tdrr_through_100", "TDRR: end-to-end flows, % of fair share, B = 100", 80.0, "abs",
                              12.0, f"{fig}(a)", "'TDRR is about 80% even at B = 100'"))
    return refs


# ---------------------------------------------------------------------------
# E3-SHORT: short bursts in the three topologies (Figs 3.12-3.16)


@dataclass(frozen=True)
class ShortParams(SweepParams):
    topologies: tuple[str, ...] = field(default=("sb", "mrtt", "mh"))


SHORT_CLASSES = {
    "sb": pl.lit("all"),
    "mrtt": pl.col("group"),
    "mh": MH_CLASSES,
}


class ShortBursts(BufferSweep):
    id = "kantawala.e3_short"
    title = "Short bursts (256 packets, idle 2 s): goodput and completion time in the three topologies (Figs 3.12-3.16)"
    source = "seed 000 (Kantawala & Turner), Figs 3.11-3.16, section 3.3.4; digest 000 section 4.5, references 9-11"
    summary = (
        "On-off Reno sources: a fresh connection sends 256 packets (384 KB), then idles an exponential time of mean "
        "2 s; 100 Mb/s access links, all starting at t = 0, 100 s. Single bottleneck: 500 sources (mean goodput of a "
        "source, mean burst completion time). Two RTT classes: 500 + 500 sources (ratios 200 ms / 40 ms). Three "
        "hops: 500 end-to-end sources and 500 per hop (ratios end-to-end / cross traffic at R1)."
    )
    differences = (
        "Each burst is a fresh connection (slow start from one packet, A-T6); its completion time runs from its "
        "first packet to the ACK of its last. On three hops of one rate, an end-to-end packet reaches the "
        "next hop at the instant of a departure there, which a full FIFO takes first: Tail Drop's end-to-end "
        "bursts do better than with hops a little apart in rate (docs/experiments/kantawala.md). Quick "
        "fidelity: a twentieth of the sources on a twentieth of the rate, buffers scaled alike, 100 s."
    )
    topology = "sb"
    kind = "short"
    fidelities = {"quick": ShortParams(QUICK_SHORT, (200, 1000, 5000)), "paper": ShortParams(PAPER, c.BUFFERS)}

    def scenarios_of(self, topology: str, policy: str, buffer: int, p: SweepParams) -> list[dict[str, Any]]:
        build = c.TOPOLOGIES[topology]
        return [build(policy, buffer, p.scale, seed, "short") for seed in range(1, p.scale.seeds + 1)]

    def measure(self, runner: Any, p: ShortParams) -> pl.DataFrame:
        points = {(topo, pol, b): self.scenarios_of(topo, pol, b, p)
                  for topo in p.topologies for pol, b in p.points()}
        flows, _ = c.measure_flows(runner, points, ("topology", "policy", "buffer"),
                                   f"{self.id} ({len(points)} points)")
        frames = []
        for topo in p.topologies:
            f = flows.filter(pl.col("topology") == topo).with_columns(SHORT_CLASSES[topo].alias("class"))
            frames.append(c.burst_stats(f.filter(pl.col("class").is_not_null()),
                                        ["topology", "policy", "buffer", "class"]))
        return short_ratios(pl.concat(frames, how="vertical_relaxed"))

    def example_scenario(self, p: SweepParams) -> dict[str, Any]:
        return self.scenarios_of("mrtt", "qsdrr", 1000, p)[0]

    def findings(self, t: pl.DataFrame, p: SweepParams) -> dict[str, float | None]:
        return short_findings(t, self.policies(p))

    def references(self, p: SweepParams) -> list[Reference]:
        return short_references(("Fig 3.12", "Fig 3.14", "Fig 3.16"), self.policies(p))

    def plot(self, t: pl.DataFrame, p: SweepParams, path: Path) -> Path:
        return short_plot(t, self.policies(p), path, "Figs 3.12, 3.14, 3.16")


def short_ratios(stats: pl.DataFrame) -> pl.DataFrame:
    """Per (topology, policy, buffer): the single bottleneck's mean goodput and
    completion time (``class`` = all), and for the other two the ratios of the
    disadvantaged class to the advantaged one (rows of ``class`` = ratio)."""
    pairs = {"mrtt": ("rtt200", "rtt40"), "mh": ("through", "cross_r1")}
    rows = [stats.filter(pl.col("topology") == "sb")]
    for topo, (low, high) in pairs.items():
        s = stats.filter(pl.col("topology") == topo)
        if s.is_empty():
            continue
        a = s.filter(pl.col("class") == low).select("policy", "buffer", pl.col("goodput_bps").alias("g_a"),
                                                    pl.col("completion_s").alias("c_a"))
        b = s.filter(pl.col("class") == high).select("policy", "buffer", pl.col("goodput_bps").alias("g_b"),
                                                     pl.col("completion_s").alias("c_b"))
        ratio = a.join(b, on=["policy", "buffer"]).select(
            pl.lit(topo).alias("topology"), "policy", "buffer", pl.lit("ratio").alias("class"),
            (pl.col("g_a") / pl.col("g_b")).alias("goodput_bps"), (pl.col("c_a") / pl.col("c_b")).alias("completion_s"))
        rows += [s, ratio]
    return pl.concat(rows, how="diagonal_relaxed").sort("topology", "policy", "buffer", "class")


def short_findings(t: pl.DataFrame, policies: tuple[str, ...]) -> dict[str, float | None]:
    f: dict[str, float | None] = {}
    sb = t.filter((pl.col("topology") == "sb") & (pl.col("class") == "all"))
    ratio = {topo: t.filter((pl.col("topology") == topo) & (pl.col("class") == "ratio")) for topo in ("mrtt", "mh")}
    non_drr = tuple(x for x in NON_DRR if x in policies)
    base_small = mean_over(sb, non_drr, "goodput_bps", 0, 1999)
    base_5000 = mean_over(sb, non_drr, "goodput_bps", 5000, 5000)
    for pol in policies:
        if pol in DRR_FAMILY and base_small:
            g = mean_over(sb, (pol,), "goodput_bps", 0, 1999)
            f[f"{pol}_sb_gain"] = None if g is None else g / base_small
            g5 = value(sb, pol, 5000, "goodput_bps")
            f[f"{pol}_sb_gain_5000"] = None if g5 is None or not base_5000 else g5 / base_5000
        f[f"{pol}_mrtt_completion_5000"] = value(ratio["mrtt"], pol, 5000, "completion_s")
        f[f"{pol}_mrtt_goodput_small"] = mean_over(ratio["mrtt"], (pol,), "goodput_bps", 0, 999)
        f[f"{pol}_mh_goodput"] = mean_over(ratio["mh"], (pol,), "goodput_bps", 0, 5000)
        f[f"{pol}_mh_completion_5000"] = value(ratio["mh"], pol, 5000, "completion_s")
    red_blue = [f.get(f"{x}_mrtt_goodput_small") for x in ("red", "blue") if x in policies]
    if red_blue and all(x for x in red_blue):
        for pol in policies:
            if pol in DRR_FAMILY and f.get(f"{pol}_mrtt_goodput_small"):
                f[f"{pol}_mrtt_goodput_vs_red_blue"] = f[f"{pol}_mrtt_goodput_small"] / max(red_blue)  # type: ignore
    return f


def short_references(figs: tuple[str, str, str], policies: tuple[str, ...]) -> list[Reference]:
    """Digest 000 section 6, references 9-11."""
    sb, mrtt, mh = figs
    refs = []
    for pol in policies:
        name = c.LABELS[pol]
        if pol in DRR_FAMILY:
            refs.append(Reference(f"{pol}_sb_gain", f"{name}: goodput / non-DRR policies' mean, B < 2000", 1.10,
                                  "abs", 0.08, sb, "'about 10% better goodput for B < 2000'"))
        if pol in ("qsdrr", "dtdrr"):
            refs.append(Reference(f"{pol}_sb_gain_5000", f"{name}: goodput / non-DRR policies' mean, B = 5000", 1.30,
                                  "abs", 0.12, sb, "'about 30% better than the non-DRR policies at B = 5000'"))
        if pol in ("qsdrr", "tdrr"):
            refs.append(Reference(f"{pol}_mrtt_completion_5000", f"{name}: completion time 200 ms / 40 ms, B = 5000",
                                  1.0, "abs", 0.3, f"{mrtt}(b)", "'QSDRR and TDRR about 1'"))
        if pol == "blue":
            refs.append(Reference("blue_mrtt_completion_5000", "Blue: completion time 200 ms / 40 ms, B = 5000", 3.0,
                                  "abs", 0.8, f"{mrtt}(b)", "'about 3x even at B = 5000'"))
        if pol in ("qsdrr", "tdrr", "dtdrr", "dsdrr"):
            refs.append(Reference(f"{pol}_mrtt_goodput_vs_red_blue", f"{name}: goodput ratio 200/40 over the better of "
                                  "RED's and Blue's, B < 1000", 2.0, "at_least", 0.0, f"{mrtt}(a)",
                                  "'beat Blue and RED by more than 100%'"))
        if pol in NON_DRR:
            refs.append(Reference(f"{pol}_mh_goodput", f"{name}: goodput end-to-end / cross, mean over B", 0.3, "abs",
                                  0.1, f"{mh}(a)", "'non-DRR policies about 0.3'"))
            refs.append(Reference(f"{pol}_mh_completion_5000", f"{name}: completion time end-to-end / cross, B = 5000",
                                  3.75, "abs", 0.75, f"{mh}(b)", "'3.5 to 4.0 at B = 5000'"))
        if pol in ("qsdrr", "drr"):
            refs.append(Reference(f"{pol}_mh_completion_5000", f"{name}: completion time end-to-end / cross, B = 5000",
                                  2.0, "at_most", 0.0, f"{mh}(b)", "'ratios below 2 at B = 5000'"))
        if pol == "tdrr":
            refs.append(Reference("tdrr_mh_completion_5000", "TDRR: completion time end-to-end / cross, B = 5000", 1.0,
                                  "abs", 0.3, f"{mh}(b)", "'only TDRR reaches about 1'"))
        if pol in ("dtdrr", "dsdrr"):
            refs.append(Reference(f"{pol}_mh_completion_5000", f"{name}: completion time end-to-end / cross, B = 5000",
                                  2.0, "abs", 0.5, f"{mh}(b)", "'near 2 at 5000'"))
    return refs


def short_plot(t: pl.DataFrame, policies: tuple[str, ...], path: Path, figs: str) -> Path:
    plt = _pyplot()
    fig, axes = plt.subplots(3, 2, figsize=(11, 11))
    panels = [
        ("sb", "all", "goodput_bps", 1e-6, "mean goodput of a source (Mb/s)", "single bottleneck"),
        ("sb", "all", "completion_s", 1.0, "mean burst completion time (s)", "single bottleneck"),
        ("mrtt", "ratio", "goodput_bps", 1.0, "goodput ratio 200 ms / 40 ms", "two RTT classes"),
        ("mrtt", "ratio", "completion_s", 1.0, "completion-time ratio 200 ms / 40 ms", "two RTT classes"),
        ("mh", "ratio", "goodput_bps", 1.0, "goodput ratio end-to-end / cross", "three hops"),
        ("mh", "ratio", "completion_s", 1.0, "completion-time ratio end-to-end / cross", "three hops"),
    ]
    for ax, (topo, cls, col, k, ylabel, name) in zip(axes.ravel(), panels):
        _curves(ax, t.filter(pl.col("topology") == topo), policies, col, scale=k, **{"class": cls})
        _axes_buffer(ax, ylabel)
        ax.set_xscale("log")
        ax.set_title(name, fontsize="medium")
        ax.legend(fontsize="x-small")
    fig.suptitle(f"{figs}: short bursts of 256 packets")
    return _save(fig, path)


EXPERIMENTS = [SingleBottleneck(), MultiRtt(), MultiHop(), ShortBursts()]
