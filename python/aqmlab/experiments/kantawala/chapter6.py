"""Seed 000, chapter 6: discard on arrival. DTDRR and DSDRR against QSDRR, Tail Drop, RED
and Blue in every setting of chapter 3 (Figs 6.5-6.12), the short-term fairness of
DSDRR's discard state against QSDRR's drop queue (Table 6.1, Fig 6.14), and the memory
bandwidth the push-out policies spend on packets they drop later (section 6.1); digest
000 section 4.12 and the acceptance references 5-11 and 19 of section 6.

The sweeps are chapter 3's classes (:mod:`.chapter3`) with chapter 6's policies; their
runs of QSDRR, Tail Drop, RED and Blue are the same scenarios as chapter 3's, computed
once in the result store.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ...plots import pyplot as _pyplot
from ...plots import save as _save
from ..core import Experiment, Reference, run_dirs
from . import chapter3 as ch3
from . import common as c


def chapter6(params: dict[str, ch3.SweepParams]) -> dict[str, ch3.SweepParams]:
    """Chapter 3's fidelities with chapter 6's policies (and no TDRR weights)."""
    return {k: replace(p, policies=c.CHAPTER6_POLICIES, extra=(), extra_buffers=()) for k, p in params.items()}


class SingleBottleneck6(ch3.SingleBottleneck):
    id = "kantawala.e6_sb"
    title = "Single bottleneck, 100 long-lived flows, DTDRR and DSDRR: spread and goodput against buffer (Figs 6.5-6.6)"
    source = "seed 000 (Kantawala & Turner), Figs 6.2, 6.5-6.6, section 6.3.1; digest 000 section 4.12, references 5-6"
    summary = ch3.SingleBottleneck.summary.replace(" and the goodput histogram at B = 200; TDRR with weights 1/128, "
                                                   "1/32 and 1/8 (Fig 3.6).", ".") + (
        " Policies of chapter 6: Tail Drop, RED, Blue, QSDRR, DTDRR (alpha 2), DSDRR (alpha 0.1, T 1 s, W 10-50%).")
    fidelities = chapter6(ch3.SingleBottleneck.fidelities)

    def references(self, p: ch3.SweepParams) -> list[Reference]:
        return ch3.sb_references("Fig 6.5", "Fig 6.6", self.policies(p)) + [
            Reference("dtdrr_vs_droptail", "DTDRR minus Tail Drop, mean % of fair share, mean over B", 0.0, "abs", 5.0,
                      "Fig 6.6", "'the performance under DTDRR is comparable to Tail-Drop for all buffer sizes'"),
            Reference("dsdrr_vs_qsdrr", "DSDRR minus QSDRR, mean % of fair share, mean over B", 0.0, "abs", 5.0,
                      "Fig 6.6", "'DSDRR delivers performance which is very close to QSDRR'"),
        ]

    def findings(self, t: pl.DataFrame, p: ch3.SweepParams) -> dict[str, float | None]:
        f = ch3.sb_findings(t, self.policies(p))
        mean = {pol: ch3.mean_over(t, (pol,), "mean_pct") for pol in ("dtdrr", "droptail", "dsdrr", "qsdrr")}
        f["dtdrr_vs_droptail"] = mean["dtdrr"] - mean["droptail"]  # type: ignore[operator]
        f["dsdrr_vs_qsdrr"] = mean["dsdrr"] - mean["qsdrr"]  # type: ignore[operator]
        return f

    def plot(self, t: pl.DataFrame, p: ch3.SweepParams, path: Path) -> Path:
        return ch3.sb_plot(t, self.policies(p), p, path, "Figs 6.5-6.6")


class MultiRtt6(ch3.MultiRtt):
    id = "kantawala.e6_mrtt"
    title = "Two RTT classes, long-lived flows, DTDRR and DSDRR: % of fair share against buffer (Fig 6.9)"
    source = "seed 000 (Kantawala & Turner), Figs 6.3, 6.9, section 6.3.2; digest 000 section 4.12, reference 7"
    summary = ch3.MultiRtt.summary + " Policies of chapter 6."
    fidelities = chapter6(ch3.MultiRtt.fidelities)

    def references(self, p: ch3.SweepParams) -> list[Reference]:
        return ch3.mrtt_references("Fig 6.9", self.policies(p))

    def plot(self, t: pl.DataFrame, p: ch3.SweepParams, path: Path) -> Path:
        return ch3.two_panels(t, self.policies(p), path, [("class", "rtt40", "(a) 40 ms RTT flows"),
                                                          ("class", "rtt200", "(b) 200 ms RTT flows")],
                              "Fig 6.9: two RTT classes")


class MultiHop6(ch3.MultiHop):
    id = "kantawala.e6_mh"
    title = "Three hops, long-lived flows, DTDRR and DSDRR: end-to-end and cross traffic (Fig 6.11)"
    source = "seed 000 (Kantawala & Turner), Figs 6.4, 6.11, section 6.3.3; digest 000 section 4.12, reference 8"
    summary = ch3.MultiHop.summary + " Policies of chapter 6."
    fidelities = chapter6(ch3.MultiHop.fidelities)

    def references(self, p: ch3.SweepParams) -> list[Reference]:
        return ch3.mh_references("Fig 6.11", self.policies(p))

    def plot(self, t: pl.DataFrame, p: ch3.SweepParams, path: Path) -> Path:
        return ch3.two_panels(t, self.policies(p), path, [("class", "through", "(a) end-to-end flows"),
                                                          ("class", "cross_r1", "(b) cross traffic at R1")],
                              "Fig 6.11: three hops")


class ShortBursts6(ch3.ShortBursts):
    id = "kantawala.e6_short"
    title = "Short bursts, DTDRR and DSDRR: goodput and completion time in the three topologies (Figs 6.8, 6.10, 6.12)"
    source = ("seed 000 (Kantawala & Turner), Figs 6.8, 6.10, 6.12, section 6.4; digest 000 section 4.12, "
              "references 9-11")
    summary = ch3.ShortBursts.summary + " Policies of chapter 6."
    fidelities = chapter6(ch3.ShortBursts.fidelities)

    def references(self, p: ch3.SweepParams) -> list[Reference]:
        refs = ch3.short_references(("Fig 6.8", "Fig 6.10", "Fig 6.12"), self.policies(p))
        # Fig 6.8: DSDRR 'is worse at large buffers', unlike QSDRR and DTDRR.
        return refs + [Reference("dsdrr_below_dtdrr_5000", "DSDRR's goodput / DTDRR's, single bottleneck, B = 5000",
                                 1.0, "at_most", 0.0, "Fig 6.8(a)",
                                 "'DSDRR is worse at large buffers' than DTDRR and QSDRR (< 1)")]

    def findings(self, t: pl.DataFrame, p: ch3.SweepParams) -> dict[str, float | None]:
        f = ch3.short_findings(t, self.policies(p))
        sb = t.filter((pl.col("topology") == "sb") & (pl.col("class") == "all"))
        ds, dt = ch3.value(sb, "dsdrr", 5000, "goodput_bps"), ch3.value(sb, "dtdrr", 5000, "goodput_bps")
        f["dsdrr_below_dtdrr_5000"] = ds / dt if ds is not None and dt else None
        return f

    def plot(self, t: pl.DataFrame, p: ch3.SweepParams, path: Path) -> Path:
        return ch3.short_plot(t, self.policies(p), path, "Figs 6.8, 6.10, 6.12")


# ---------------------------------------------------------------------------
# Fig 6.7: the largest flow's throughput over the smallest's, over time


@dataclass(frozen=True)
class MaxMinParams:
    scale: c.Scale
    buffers: tuple[int, ...] = (400, 800, 4167)
    series_s: float = 1.0


class MaxMinOverTime(Experiment):
    id = "kantawala.e6_maxmin"
    title = "Largest over smallest flow throughput over time, single bottleneck (Fig 6.7)"
    source = "seed 000 (Kantawala & Turner), Fig 6.7, section 6.3.1; digest 000 sections 4.12, 5"
    summary = (
        "The single bottleneck with 100 long-lived Reno flows, B = 400, 800 and 4167, chapter 6's policies. At each "
        "second, each flow's throughput since t = 0 (its goodput series, summed), and the largest over the smallest."
    )
    differences = (
        "The report's 'actual max/min over time' does not say over what window; we take each flow's throughput since "
        "the start (digest 000 section 5, first choice). Quick fidelity: 10 flows on 50 Mb/s, buffers scaled by 0.1."
    )
    fidelities = {"quick": MaxMinParams(ch3.QUICK_LONG), "paper": MaxMinParams(ch3.PAPER)}

    def scenario(self, policy: str, buffer: int, p: MaxMinParams) -> dict[str, Any]:
        return c.single_bottleneck(policy, buffer, p.scale, trace={"flow_series": f"{p.series_s:g}s"})

    def measure(self, runner: Any, p: MaxMinParams) -> pl.DataFrame:
        keys = [(pol, b) for b in p.buffers for pol in c.CHAPTER6_POLICIES]
        dirs = run_dirs(runner, [[self.scenario(pol, b, p)] for pol, b in keys], self.id)
        frames = []
        for (pol, b), (d,) in zip(keys, dirs):
            ts = pl.read_parquet(d / "timeseries.parquet").filter(pl.col("metric") == "throughput_bps")
            since = ts.sort("time_s").with_columns(
                (pl.col("value").cum_sum().over("entity") / pl.int_range(1, pl.len() + 1).over("entity"))
                .alias("since_start"))
            ratio = since.group_by("time_s").agg((pl.col("since_start").max() / pl.col("since_start").min())
                                                 .alias("max_min"))
            frames.append(ratio.with_columns(pl.lit(pol).alias("policy"), pl.lit(b).alias("buffer")))
        return pl.concat(frames).sort("policy", "buffer", "time_s")

    def findings(self, t: pl.DataFrame, p: MaxMinParams) -> dict[str, float | None]:
        end = t.filter(pl.col("time_s") == pl.col("time_s").max())
        f: dict[str, float | None] = {}
        for pol in c.CHAPTER6_POLICIES:
            x = end.filter(pl.col("policy") == pol)["max_min"]
            f[f"{pol}_end"] = float(x.max()) if len(x) else None
        return f

    def references(self, p: MaxMinParams) -> list[Reference]:
        levels = {"dsdrr": (1.0, "converge to about 1"), "dtdrr": (1.0, "converge to about 1"),
                  "qsdrr": (1.0, "converge to about 1"), "red": (2.0, "'at best ... around 2'"),
                  "blue": (2.0, "'at best ... around 2'"), "droptail": (3.0, "'thrice'")}
        return [Reference(f"{pol}_end", f"{c.LABELS[pol]}: max/min throughput since the start at the end of the run, "
                          "largest over B", v, "abs", 0.5 if v < 2 else 1.0, "Fig 6.7", words)
                for pol, (v, words) in levels.items()]

    def plot(self, t: pl.DataFrame, p: MaxMinParams, path: Path) -> Path:
        plt = _pyplot()
        fig, axes = plt.subplots(1, len(p.buffers), figsize=(5 * len(p.buffers), 4), sharey=True)
        for ax, b in zip(np.atleast_1d(axes), p.buffers):
            for pol in c.CHAPTER6_POLICIES:
                d = t.filter((pl.col("policy") == pol) & (pl.col("buffer") == b))
                ax.plot(d["time_s"], d["max_min"].clip(upper_bound=10.0), label=c.LABELS[pol])
            ax.set_title(f"B = {b}", fontsize="medium")
            ax.set_xlabel("time (s)")
            ax.set_ylim(0.9, 6)
            ax.grid(True, alpha=0.3)
        np.atleast_1d(axes)[0].set_ylabel("max / min flow throughput since t = 0")
        np.atleast_1d(axes)[0].legend(fontsize="x-small")
        fig.suptitle("Fig 6.7: ratio of the largest to the smallest flow throughput")
        return _save(fig, path)

    def example_scenario(self, p: MaxMinParams) -> dict[str, Any]:
        return self.scenario("dsdrr", 800, p)


# ---------------------------------------------------------------------------
# Section 6.1: memory bandwidth spent on packets dropped after they were queued


class MemoryBandwidth(ch3.BufferSweep):
    id = "kantawala.e6_membw"
    title = "Memory bandwidth: bytes written into the buffer and dropped later, every policy (section 6.1)"
    source = "seed 000 (Kantawala & Turner), section 6.1 ('memory bandwidth wastage'); digest 000 sections 2.13, 4.12"
    summary = (
        "The single bottleneck of Fig 3.2 (100 long-lived Reno flows, 500 Mb/s, RTT 100 ms, 100 s) under every "
        "policy of chapters 3 and 6. For each buffer: the bytes a policy wrote into the buffer and dropped later "
        "(the bottleneck's buffered_drop_bytes), as a share of the bytes that arrived and of the bytes dropped."
    )
    differences = (
        "The report makes this argument in words (section 6.1) and has no figure of it; ours measures it. "
        "Quick fidelity as E3-SB's."
    )
    topology = "sb"
    fidelities = {k: replace(p, policies=c.POLICIES, extra=(), extra_buffers=())
                  for k, p in ch3.SingleBottleneck.fidelities.items()}

    def measure(self, runner: Any, p: ch3.SweepParams) -> pl.DataFrame:
        _, queues = self.runs(runner, p)
        arrived = pl.col("arrivals") * c.PACKET_BYTES
        return queues.group_by("policy", "buffer", "buffer_pkts").agg(
            pl.col("buffered_drop_bytes").mean(), (pl.col("buffered_drop_bytes") / arrived).mean().alias("of_arrivals"),
            (pl.col("buffered_drop_bytes") / (pl.col("drops") * c.PACKET_BYTES)).mean().alias("of_drops"),
            pl.col("drops").mean(),
        ).sort("policy", "buffer")

    def findings(self, t: pl.DataFrame, p: ch3.SweepParams) -> dict[str, float | None]:
        f: dict[str, float | None] = {}
        for pol in p.policies:
            d = t.filter(pl.col("policy") == pol)
            f[f"{pol}_of_arrivals"] = float(d["of_arrivals"].max())
            f[f"{pol}_of_drops"] = float(d["of_drops"].drop_nans().mean())
        return f

    def references(self, p: ch3.SweepParams) -> list[Reference]:
        refs = []
        for pol in p.policies:
            name = c.LABELS[pol]
            if pol in ("drr", "tdrr", "qsdrr"):
                refs.append(Reference(f"{pol}_of_drops", f"{name}: share of its drops that had been written, mean over "
                                      "B", 0.5, "at_least", 0.0, "section 6.1",
                                      "'in most cases, this will lead to a packet already in memory being chosen to "
                                      "be dropped'"))
            else:
                refs.append(Reference(f"{pol}_of_arrivals", f"{name}: bytes written and dropped later / bytes arrived, "
                                      "largest over B", 0.0, "at_most", 0.0, "sections 2.13, 6.2",
                                      "discards only on arrival: no memory bandwidth wasted"))
        return refs

    def plot(self, t: pl.DataFrame, p: ch3.SweepParams, path: Path) -> Path:
        plt = _pyplot()
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
        ch3._curves(left, t, p.policies, "of_arrivals", scale=100.0)
        ch3._axes_buffer(left, "written, then dropped (% of bytes arrived)")
        ch3._curves(right, t, p.policies, "buffered_drop_bytes", scale=1e-6 / p.scale.duration_s * 8)
        ch3._axes_buffer(right, "memory bandwidth wasted (Mb/s)")
        for ax in (left, right):
            ax.set_xscale("log")
            ax.legend(fontsize="x-small")
        fig.suptitle(f"Section 6.1: bytes written into the buffer and dropped later, {p.scale.flows(100)} flows")
        return _save(fig, path)


# ---------------------------------------------------------------------------
# Table 6.1 / Fig 6.14: how long a queue stays in discard state


@dataclass(frozen=True)
class EpisodeParams:
    scale: c.Scale
    buffer: int = 1000
    after_s: float = 10.0  #: episodes that start before this are the synchronized start's: left out


def dsdrr_episodes(trace: pl.DataFrame, after_ns: int) -> list[float]:
    """Each DSDRR discard state, in seconds: from the drop that marks a queue (the first
    drop of an unmarked, non-empty queue) to the dequeue that empties it."""
    out: list[float] = []
    step = {"enqueue": 1, "drop": -1, "dequeue": -1}
    for _, events in trace.sort("flow", maintain_order=True).group_by("flow", maintain_order=True):
        times = events["time_ns"].to_numpy()
        kinds = events["event"].to_list()
        q, start = 0, -1
        for t, k in zip(times, kinds):
            q += step[k]
            if k == "drop" and start < 0 and q > 0:  # q: the queue the arrival found
                start = int(t)
            elif k == "dequeue" and q == 0 and start >= 0:
                if start >= after_ns:
                    out.append((int(t) - start) / 1e9)
                start = -1
    return out


def _tenures(trace: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The drop times of each QSDRR drop-queue tenure (a run of drops from one queue):
    the times of its first drops and of its last drops, in order."""
    drops = trace.filter(pl.col("event") == "drop")
    flows, times = drops["flow"].to_numpy(), drops["time_ns"].to_numpy()
    change = np.flatnonzero(np.diff(flows) != 0) + 1
    return times[np.concatenate(([0], change))], times[np.concatenate((change - 1, [len(times) - 1]))]


def qsdrr_episodes(trace: pl.DataFrame, after_ns: int) -> list[float]:
    """Each QSDRR drop-queue tenure, in seconds: from a queue's first drop after another
    queue's to the next drop from another queue (when QSDRR chose the next one)."""
    first, _ = _tenures(trace)
    return [float(d) / 1e9 for d, s in zip(np.diff(first), first[:-1]) if s >= after_ns]


def qsdrr_drop_spans(trace: pl.DataFrame, after_ns: int) -> list[float]:
    """Each QSDRR tenure from its first drop to its last, in seconds: the time the queue
    was being dropped from (a tenure of one drop spans 0 s), the other reading of Table 6.1."""
    first, last = _tenures(trace)
    return [float(e - s) / 1e9 for s, e in zip(first[:-1], last[:-1]) if s >= after_ns]


class DiscardEpisodes(Experiment):
    id = "kantawala.e6_episodes"
    title = "Time a queue spends in discard state: DSDRR against QSDRR (Table 6.1, Fig 6.14)"
    source = "seed 000 (Kantawala & Turner), Table 6.1, Fig 6.14, section 6.5; digest 000 section 4.12, reference 19"
    summary = (
        "The single bottleneck with 100 long-lived Reno flows and B = 1000. Each episode of each queue: for DSDRR, "
        "from the drop that sets its discard bit to the dequeue that empties it; for QSDRR, its time as the drop "
        "queue, from its first drop to the first drop from the next drop queue. Read from a packet trace of the "
        "bottleneck (enqueues, drops, dequeues). Maximum, minimum, mean and standard deviation of the episodes."
    )
    differences = (
        "The packet trace of a 100 s run at 500 Mb/s is about 12 million events; the paper fidelity runs 40 s and "
        "counts the episodes that start after 10 s (the synchronized start's timeouts are not the steady state the "
        "table describes). Quick fidelity: 50 flows on 250 Mb/s, B = 1000 scaled to 500, 25 s. The report does "
        "not say where a QSDRR episode ends: the queue stays the drop queue (Fig 3.1's Q) until the next "
        "overflow picks another, which our episodes measure (twice the report's mean); from its first drop to "
        "its last (qsdrr_span_*) it is 1.4 times the report's mean."
    )
    fidelities = {
        "quick": EpisodeParams(c.Scale(factor=0.5, duration_s=25.0)),
        "paper": EpisodeParams(c.Scale(factor=1.0, duration_s=40.0)),
    }
    trace = {"packets": {"links": ["bottleneck"], "events": ["enqueue", "drop", "dequeue"]}}

    def scenario(self, policy: str, p: EpisodeParams) -> dict[str, Any]:
        return c.single_bottleneck(policy, p.buffer, p.scale, trace=self.trace)

    def measure(self, runner: Any, p: EpisodeParams) -> pl.DataFrame:
        dirs = run_dirs(runner, [[self.scenario(pol, p)] for pol in ("dsdrr", "qsdrr")], self.id)
        after = round(p.after_s * 1e9)
        cols = ["time_ns", "event", "flow"]
        ds = dsdrr_episodes(pl.read_parquet(dirs[0][0] / "trace.parquet", columns=cols)
                            .with_columns(pl.col("event").cast(pl.Utf8)), after)
        qtrace = pl.read_parquet(dirs[1][0] / "trace.parquet", columns=cols).with_columns(pl.col("event").cast(pl.Utf8))
        qs, spans = qsdrr_episodes(qtrace, after), qsdrr_drop_spans(qtrace, after)
        return pl.DataFrame({"policy": ["dsdrr"] * len(ds) + ["qsdrr"] * len(qs) + ["qsdrr_span"] * len(spans),
                             "episode_s": ds + qs + spans})

    def findings(self, t: pl.DataFrame, p: EpisodeParams) -> dict[str, float | None]:
        f: dict[str, float | None] = {}
        for pol in ("dsdrr", "qsdrr", "qsdrr_span"):
            e = t.filter(pl.col("policy") == pol)["episode_s"]
            stats = {"max": e.max(), "min": e.min(), "mean": e.mean(), "std": e.std(ddof=0), "count": len(e)}
            f |= {f"{pol}_{k}": (float(v) if v is not None else None) for k, v in stats.items()}
        if f.get("dsdrr_std") is not None and f.get("qsdrr_std"):
            f["std_ratio"] = f["dsdrr_std"] / f["qsdrr_std"]  # type: ignore[operator]
        return f

    def references(self, p: EpisodeParams) -> list[Reference]:
        table = {"dsdrr": (0.0964, 0.0353, 0.0658, 0.0085), "qsdrr": (0.2792, 0.0160, 0.0749, 0.0449)}
        refs = []
        for pol, (mx, mn, mean, std) in table.items():
            name = c.LABELS[pol]
            refs += [
                Reference(f"{pol}_mean", f"{name}: mean episode (s)", mean, "factor", 1.5, "Table 6.1"),
                Reference(f"{pol}_max", f"{name}: longest episode (s)", mx, "factor", 2.0, "Table 6.1"),
                Reference(f"{pol}_min", f"{name}: shortest episode (s)", mn, "factor", 3.0, "Table 6.1"),
                Reference(f"{pol}_std", f"{name}: standard deviation of the episodes (s)", std, "factor", 2.0,
                          "Table 6.1"),
            ]
        refs.append(Reference("std_ratio", "DSDRR's standard deviation / QSDRR's", 0.0085 / 0.0449, "at_most", 0.3,
                              "Table 6.1, section 6.5", "DSDRR's episodes are far more regular than QSDRR's"))
        refs.append(Reference("dsdrr_max", "DSDRR: longest episode under one RTT (s)", 0.1, "at_most", 0.0,
                              "section 6.5", "'DSDRR queues stay in discard state ... less than one RTT (100 ms)'"))
        return refs

    def plot(self, t: pl.DataFrame, p: EpisodeParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.2))
        top = max(0.3, float(t["episode_s"].quantile(0.999) or 0.3))
        for pol in ("dsdrr", "qsdrr"):
            e = t.filter(pl.col("policy") == pol)["episode_s"].to_numpy()
            if len(e):
                ax.hist(e, bins=60, range=(0, top), histtype="step", density=True, label=f"{c.LABELS[pol]} ({len(e)})")
        ax.set_xlabel("time in discard state (s)")
        ax.set_ylabel("density")
        ax.axvline(0.1, color="grey", ls=":", lw=0.8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        ax.set_title(f"Fig 6.14: {p.scale.flows(100)} flows, B = {p.buffer} (scaled {p.scale.buffer(p.buffer)})")
        return _save(fig, path)

    def example_scenario(self, p: EpisodeParams) -> dict[str, Any]:
        return self.scenario("dsdrr", p)


EXPERIMENTS = [SingleBottleneck6(), MaxMinOverTime(), MultiRtt6(), MultiHop6(), ShortBursts6(), DiscardEpisodes(),
               MemoryBandwidth()]
