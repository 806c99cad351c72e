"""Seed 000, chapter 2: what Tail Drop and RED do to synchronized TCP flows. The queue's
oscillation against the analytical model (Table 2.2, Figs 2.1, 2.3, 2.4), RED's drop
probability (Table 2.3, Fig 2.5), and 40 ms against 200 ms flows (Table 2.4, Figs 2.6,
2.7); digest 000 sections 3.1, 3.2 and 4.1, acceptance references 1-3.

The single bottleneck and the two RTT classes are :mod:`.common`'s. Table 2.2's simulation
column ran "dup. only" Reno, ns-2's Reno changed to halve its window after a timeout
instead of restarting from one packet; aqmlab's ``timeout_cwnd = "half"`` is that change.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ...plots import pyplot as _pyplot
from ...plots import save as _save
from ...theory import kantawala as theory
from ..core import Experiment, Reference, run_dirs
from . import common as c

RATE_PPS = c.CAPACITY_BPS / (8 * c.PACKET_BYTES)  #: 41,667 packets/s
DUP_ONLY = {"timeout_cwnd": "half"}
#: Table 2.2's buffers: 1, 2 and 5 BDPs of 4167 packets.
TABLE_2_2 = {4167: (2822, 4.89, 3400, 6.25), 8333: (4280, 10.94, 5250, 13.0), 20833: (8655, 43.54, 12900, 60.0)}


def queue_series(directory: Path, link: str = "bottleneck") -> tuple[np.ndarray, np.ndarray]:
    """The bottleneck's sampled queue: (times in s, packets)."""
    ts = pl.read_parquet(directory / "timeseries.parquet").filter(
        (pl.col("metric") == "queue_packets") & (pl.col("entity").cast(pl.Utf8) == link)).sort("time_s")
    return ts["time_s"].to_numpy(), ts["value"].to_numpy()


def cycles(times: np.ndarray, queue: np.ndarray, buffer: int, after_s: float) -> tuple[float, float, int]:
    """The queue's oscillation after ``after_s``: (mean queue drop, mean cycle time, cycles).
    An overflow is a sample within 1% of the buffer; a cycle runs from the first sample of
    one overflow to the first of the next, the two separated by a fall below 90% of the
    buffer; its drop is the buffer less the lowest sample between them."""
    full = queue >= 0.99 * buffer
    starts, lows = [], []
    low_since = np.inf
    armed = True  # the queue fell far enough since the last overflow
    for t, q, f in zip(times, queue, full):
        if t < after_s:
            continue
        if f and armed:
            starts.append(t)
            lows.append(low_since)
            armed, low_since = False, np.inf
        elif not f:
            low_since = min(low_since, q)
            armed = armed or q < 0.9 * buffer
    drops = [buffer - low for low in lows[1:]]  # the fall before each overflow but the first
    if len(starts) < 2:
        return float("nan"), float("nan"), 0
    return float(np.mean(drops)), float(np.mean(np.diff(starts))), len(starts) - 1


# ---------------------------------------------------------------------------
# E2a: Tail Drop's oscillation against the model (Table 2.2, Figs 2.1, 2.3, 2.4)


@dataclass(frozen=True)
class TailDropParams:
    scale: c.Scale
    buffers: tuple[int, ...] = (4167, 8333, 20833)
    after_s: float = 20.0  #: the first cycles follow the synchronized slow start: left out
    sample: str = "10ms"


class TailDropCycles(Experiment):
    id = "kantawala.e2_taildrop"
    title = "Tail Drop's queue oscillation with 100 synchronized Reno flows against the model (Table 2.2, Figs 2.3-2.4)"
    source = ("seed 000 (Kantawala & Turner), Table 2.2, Figs 2.1-2.4, section 2.1.1; digest 000 sections 3.1, 4.1, "
              "reference 1")
    summary = (
        "100 Reno flows on 10 Mb/s access links into a 500 Mb/s Tail Drop bottleneck, RTT 100 ms, all starting at "
        "t = 0; buffers of 1, 2 and 5 BDPs (4167, 8333, 20833 packets), and 800 (Fig 2.4). Each with 'dup. only' "
        "Reno (a timeout halves the window, as the model assumes of every loss) and standard Reno. From the sampled "
        "queue: the mean queue drop after an overflow and the mean time between overflows, beside the model "
        "(equations 2.5 and 2.12, alpha = 0.7, aqmlab.theory.kantawala)."
    )
    differences = (
        "The report does not give its run length; ours runs long enough for several cycles at 5 BDPs and leaves out "
        "the first 20 s (the synchronized slow start's). Quick fidelity: 10 flows on 50 Mb/s with buffers scaled by "
        "0.1 (the model's W* and T(B), hence its drop per flow and cycle time, are the same), 1 and 2 BDPs, 100 s."
    )
    fidelities = {
        "quick": TailDropParams(c.Scale(factor=0.1, duration_s=100.0), buffers=(4167, 8333, 800)),
        "paper": TailDropParams(c.Scale(factor=1.0, duration_s=240.0), buffers=(4167, 8333, 20833, 800)),
    }

    def scenario(self, buffer: int, variant: str, p: TailDropParams) -> dict[str, Any]:
        tcp = DUP_ONLY if variant == "dup" else {}
        s = c.single_bottleneck("droptail", buffer, p.scale, tcp=tcp, sample_interval=p.sample)
        return s | {"name": f"kantawala-e2-taildrop-{variant}-b{buffer}"}

    def measure(self, runner: Any, p: TailDropParams) -> pl.DataFrame:
        keys = [(b, v) for b in p.buffers for v in ("dup", "std")]
        dirs = run_dirs(runner, [[self.scenario(b, v, p)] for b, v in keys], self.id)
        rows = []
        for (b, v), (d,) in zip(keys, dirs):
            times, queue = queue_series(d)
            drop, cycle, n = cycles(times, queue, p.scale.buffer(b), p.after_s)
            model = theory.taildrop_cycle(100, RATE_PPS, 0.1, b)
            rows.append({"buffer": b, "variant": v, "queue_drop": drop / p.scale.factor, "cycle_s": cycle,
                         "cycles": n, "model_drop": model.queue_drop, "model_cycle_s": model.cycle,
                         "times": times.tolist(), "queue": (queue / p.scale.factor).tolist()})
        return pl.DataFrame(rows)

    def findings(self, t: pl.DataFrame, p: TailDropParams) -> dict[str, float | None]:
        f: dict[str, float | None] = {}
        for row in t.iter_rows(named=True):
            b, v = row["buffer"], row["variant"]
            if b not in TABLE_2_2:
                continue
            f[f"model_drop_{b}"], f[f"model_cycle_{b}"] = row["model_drop"], row["model_cycle_s"]
            f[f"{v}_drop_{b}"] = row["queue_drop"] if row["cycles"] else None
            f[f"{v}_cycle_{b}"] = row["cycle_s"] if row["cycles"] else None
            if v == "dup" and row["cycles"]:
                f[f"dup_drop_over_model_{b}"] = row["queue_drop"] / row["model_drop"]
        return f

    def references(self, p: TailDropParams) -> list[Reference]:
        refs = []
        for b in p.buffers:
            if b not in TABLE_2_2:
                continue
            md, mc, sd, sc = TABLE_2_2[b]
            refs += [
                Reference(f"model_drop_{b}", f"model: queue drop (packets), B = {b}", md, "factor", 1.005,
                          "Table 2.2 (analysis), eq 2.5", "computed by aqmlab.theory.kantawala, alpha = 0.7"),
                Reference(f"model_cycle_{b}", f"model: cycle time (s), B = {b}", mc, "factor", 1.005,
                          "Table 2.2 (analysis), eq 2.12"),
                Reference(f"dup_drop_{b}", f"dup-only Reno: queue drop (packets), B = {b}", sd, "factor", 1.3,
                          "Table 2.2 (simulation, dup. only)"),
                Reference(f"dup_cycle_{b}", f"dup-only Reno: cycle time (s), B = {b}", sc, "factor", 1.3,
                          "Table 2.2 (simulation, dup. only)"),
                Reference(f"dup_drop_over_model_{b}", f"dup-only Reno: queue drop / the model's, B = {b}", 1.0,
                          "at_least", 0.0, "section 2.1.1",
                          "'the curves obtained via simulation show a slightly higher drop in queue occupancy'"),
            ]
        return refs

    def plot(self, t: pl.DataFrame, p: TailDropParams, path: Path) -> Path:
        plt = _pyplot()
        shown = [b for b in (4167, 800) if b in p.buffers]
        fig, axes = plt.subplots(len(shown) + 1, 1, figsize=(9, 3.2 * (len(shown) + 1)))
        for ax, b in zip(axes, shown):
            for v, name in (("dup", "simulation (dup. only)"), ("std", "simulation (std.)")):
                r = t.filter((pl.col("buffer") == b) & (pl.col("variant") == v))
                if r.height:
                    ax.plot(r["times"][0].to_list(), r["queue"][0].to_list(), lw=0.7, label=name)
            model = theory.taildrop_recursion(100, RATE_PPS, 0.1, b, cycles=8)
            start = p.after_s
            ax.step(model.times + start, model.queue, where="post", color="k", lw=0.9, label="analysis (alpha 0.7)")
            ax.set_xlim(0, p.scale.duration_s)
            ax.set_ylabel("queue (packets)")
            ax.set_title(f"B = {b} (Fig {'2.3(a)' if b == 4167 else '2.4'})", fontsize="medium")
            ax.legend(fontsize="x-small", loc="lower right")
            ax.grid(True, alpha=0.3)
        if shown:
            axes[-2].set_xlabel("time (s)")
        last = axes[-1]
        for v, marker in (("dup", "o"), ("std", "s")):
            d = t.filter((pl.col("variant") == v) & pl.col("buffer").is_in(list(TABLE_2_2))).sort("buffer")
            last.plot(d["buffer"], d["cycle_s"], marker=marker, label=f"cycle, simulation ({v})")
        bs = sorted(TABLE_2_2)
        last.plot(bs, [TABLE_2_2[b][1] for b in bs], "k--", label="cycle, analysis (Table 2.2)")
        last.plot(bs, [TABLE_2_2[b][3] for b in bs], "k:", marker="x", label="cycle, simulation (Table 2.2)")
        last.set_xlabel("buffer (packets)")
        last.set_ylabel("cycle time (s)")
        last.legend(fontsize="x-small")
        last.grid(True, alpha=0.3)
        fig.tight_layout()
        return _save(fig, path)

    def example_scenario(self, p: TailDropParams) -> dict[str, Any]:
        return self.scenario(4167, "dup", p)


# ---------------------------------------------------------------------------
# E2b: RED's drop probability (Table 2.3, Fig 2.5)


@dataclass(frozen=True)
class RedParams:
    scale: c.Scale
    max_ps: tuple[float, ...] = (0.05, 0.02, 0.01)
    buffer: int = 800
    min_th: int = 400
    max_th: int = 800


class RedDropProbability(Experiment):
    id = "kantawala.e2_red"
    title = "RED's maximum drop probability and the flows' throughput (Table 2.3, Fig 2.5)"
    source = "seed 000 (Kantawala & Turner), Table 2.3, Fig 2.5, section 2.1.2; digest 000 section 4.1, reference 2"
    summary = (
        "The single bottleneck with 100 Reno flows (RTT 100 ms, 500 Mb/s, 10 Mb/s access), RED with min_th 400 and "
        "max_th 800 packets, w_q 0.001, an 800-packet buffer, max_p 0.05, 0.02 and 0.01; 100 s. Mean throughput of "
        "a flow, and the queue over time."
    )
    differences = (
        "The report gives the thresholds only; buffer 800 and w_q 0.001 are the digest's choices (E2b). Quick "
        "fidelity: 10 flows on 50 Mb/s, thresholds and buffer scaled by 0.1, 100 s."
    )
    fidelities = {"quick": RedParams(c.Scale(factor=0.1, duration_s=100.0)), "paper": RedParams(c.Scale())}
    paper = {0.05: 4.67, 0.02: 4.82, 0.01: 4.84}

    def scenario(self, max_p: float, p: RedParams) -> dict[str, Any]:
        q = c.qdisc("red", p.scale.buffer(p.buffer), min_th=p.scale.buffer(p.min_th),
                    max_th=p.scale.buffer(p.max_th), max_p=max_p)
        s = c.single_bottleneck("red", p.buffer, p.scale, q=q, sample_interval="100ms")
        return s | {"name": f"kantawala-e2-red-maxp{max_p:g}"}

    def measure(self, runner: Any, p: RedParams) -> pl.DataFrame:
        dirs = run_dirs(runner, [[self.scenario(m, p)] for m in p.max_ps], self.id)
        rows = []
        for m, (d,) in zip(p.max_ps, dirs):
            f = c.flow_rows(d)
            times, queue = queue_series(d)
            rows.append({"max_p": m, "mean_mbps": float(f["goodput_bps"].mean()) / 1e6,
                         "times": times.tolist(), "queue": (queue / p.scale.factor).tolist()})
        return pl.DataFrame(rows)

    def findings(self, t: pl.DataFrame, p: RedParams) -> dict[str, float | None]:
        f: dict[str, float | None] = {f"mean_{m:g}": float(v) for m, v in zip(t["max_p"], t["mean_mbps"])}
        if 0.05 in p.max_ps and 0.01 in p.max_ps:
            f["gain"] = f["mean_0.01"] - f["mean_0.05"]  # type: ignore[operator]
        return f

    def references(self, p: RedParams) -> list[Reference]:
        refs = [Reference(f"mean_{m:g}", f"mean throughput of a flow (Mb/s), max_p = {m:g}", self.paper[m], "abs", 0.25,
                          "Table 2.3") for m in p.max_ps if m in self.paper]
        return refs + [Reference("gain", "mean throughput, max_p 0.01 minus max_p 0.05 (Mb/s)", 0.17, "at_least", 0.17,
                                 "Table 2.3, section 2.1.2",
                                 "'as we reduce the dropping probability, the average throughput increases' (> 0)")]

    def plot(self, t: pl.DataFrame, p: RedParams, path: Path) -> Path:
        plt = _pyplot()
        fig, axes = plt.subplots(len(t), 1, figsize=(9, 2.6 * len(t)), sharex=True)
        for ax, row in zip(np.atleast_1d(axes), t.iter_rows(named=True)):
            ax.plot(row["times"], row["queue"], lw=0.7)
            ax.axhline(p.min_th, color="grey", ls=":", lw=0.8)
            ax.set_ylim(0, p.buffer * 1.05)
            ax.set_ylabel("queue (packets)")
            ax.set_title(f"max_p = {row['max_p']:g}: mean throughput {row['mean_mbps']:.2f} Mb/s "
                         f"(paper {self.paper.get(row['max_p'], float('nan')):.2f})", fontsize="medium")
            ax.grid(True, alpha=0.3)
        np.atleast_1d(axes)[-1].set_xlabel("time (s)")
        fig.suptitle("Fig 2.5: RED, min_th 400, max_th 800 (the paper's packets)")
        fig.tight_layout()
        return _save(fig, path)

    def example_scenario(self, p: RedParams) -> dict[str, Any]:
        return self.scenario(p.max_ps[-1], p)


# ---------------------------------------------------------------------------
# E2c: 40 ms against 200 ms flows under Tail Drop and RED (Table 2.4, Figs 2.6, 2.7)


@dataclass(frozen=True)
class RttParams:
    scale: c.Scale
    buffers: tuple[int, ...] = (800, 4167)
    after_s: float = 10.0  #: the windows' mean leaves out the synchronized start


class RttUnfairness(Experiment):
    id = "kantawala.e2_rtt"
    title = "40 ms against 200 ms flows under Tail Drop and RED: throughput and windows (Table 2.4, Figs 2.6-2.7)"
    source = ("seed 000 (Kantawala & Turner), Table 2.4, Figs 2.6-2.7, section 2.2; digest 000 sections 3.2, 4.1, "
              "reference 3")
    summary = (
        "50 Reno flows with RTT 40 ms and 50 with 200 ms share the 500 Mb/s bottleneck (10 Mb/s access), Tail Drop "
        "and RED with buffers of 800 and 4167 packets, 100 s. Mean throughput of each class (Table 2.4) and the mean "
        "congestion window of each class over time (Figs 2.6, 2.7)."
    )
    differences = (
        "RED's thresholds for Table 2.4 are not given; we use chapter 3's (Table 3.1: min_th 20% of the buffer, "
        "max_th the buffer, max_p 0.01, w_q 0.001). Tail Drop's 200 ms flows get half the report's with 50 + 50 "
        "flows on 10 Mb/s access links, as ns-2 2.35 does with the same setup (1.48 and 2.16 Mb/s). Their share "
        "moves with the access links' rate and the number of flows, which section 2.2 leaves open; with 5 + 5 "
        "flows (quick fidelity) every cell is within 0.6 Mb/s of the report's (docs/experiments/kantawala.md). "
        "Quick fidelity: 5 + 5 flows on 50 Mb/s, buffers scaled by 0.1, 100 s."
    )
    fidelities = {"quick": RttParams(c.Scale(factor=0.1, duration_s=100.0)), "paper": RttParams(c.Scale())}
    paper = {("droptail", 800): (6.31, 2.87), ("droptail", 4167): (5.10, 4.70),
             ("red", 800): (7.74, 2.07), ("red", 4167): (7.44, 2.41)}

    def scenario(self, policy: str, buffer: int, p: RttParams) -> dict[str, Any]:
        s = c.multi_rtt(policy, buffer, p.scale, sample_interval="100ms")
        for f in s["flows"]:
            f["trace_cwnd"] = True
        return s | {"name": f"kantawala-e2-rtt-{policy}-b{buffer}"}

    def measure(self, runner: Any, p: RttParams) -> pl.DataFrame:
        keys = [(pol, b) for pol in ("droptail", "red") for b in p.buffers]
        dirs = run_dirs(runner, [[self.scenario(pol, b, p)] for pol, b in keys], self.id)
        rows = []
        for (pol, b), (d,) in zip(keys, dirs):
            f = c.flow_rows(d)
            cwnd = pl.read_parquet(d / "timeseries.parquet").filter(pl.col("metric") == "cwnd").with_columns(
                pl.col("entity").cast(pl.Utf8).cast(pl.Int64).alias("flow_id"))
            cwnd = cwnd.join(f.select("flow_id", "group"), on="flow_id")
            series = cwnd.group_by("group", "time_s").agg(pl.col("value").mean()).sort("time_s")
            for g in ("rtt40", "rtt200"):
                s = series.filter(pl.col("group") == g)
                late = s.filter(pl.col("time_s") >= p.after_s)["value"]
                rows.append({"policy": pol, "buffer": b, "class": g,
                             "mbps": float(f.filter(pl.col("group") == g)["goodput_bps"].mean()) / 1e6,
                             "mean_cwnd": float(late.mean()), "times": s["time_s"].to_list(),
                             "cwnd": s["value"].to_list()})
        return pl.DataFrame(rows)

    def findings(self, t: pl.DataFrame, p: RttParams) -> dict[str, float | None]:
        f: dict[str, float | None] = {}
        for pol in ("droptail", "red"):
            for b in p.buffers:
                d = {r["class"]: r for r in t.filter((pl.col("policy") == pol) & (pl.col("buffer") == b))
                     .iter_rows(named=True)}
                f[f"{pol}_{b}_rtt40"], f[f"{pol}_{b}_rtt200"] = d["rtt40"]["mbps"], d["rtt200"]["mbps"]
                f[f"{pol}_{b}_window_ratio"] = d["rtt200"]["mean_cwnd"] / d["rtt40"]["mean_cwnd"]
        return f

    def references(self, p: RttParams) -> list[Reference]:
        refs = []
        for (pol, b), (short, long) in self.paper.items():
            if b not in p.buffers:
                continue
            name = c.LABELS[pol]
            refs += [Reference(f"{pol}_{b}_rtt40", f"{name}, B = {b}: 40 ms flows (Mb/s)", short, "abs", 1.0,
                               "Table 2.4"),
                     Reference(f"{pol}_{b}_rtt200", f"{name}, B = {b}: 200 ms flows (Mb/s)", long, "abs", 1.0,
                               "Table 2.4")]
        windows = {("droptail", 800): (1.5, "'only about one and a half times'"),
                   ("droptail", 4167): (3.0, "'only thrice that of the 40 ms RTT flows'"),
                   ("red", 800): (1.0, "'approximately equal'"), ("red", 4167): (1.0, "'approximately equal'")}
        for (pol, b), (ratio, words) in windows.items():
            if b in p.buffers:
                refs.append(Reference(f"{pol}_{b}_window_ratio", f"{c.LABELS[pol]}, B = {b}: mean window of the 200 ms "
                                      "flows / the 40 ms flows'", ratio, "factor", 1.4,
                                      f"Fig {'2.6' if pol == 'droptail' else '2.7'}, section 2.2", words))
        return refs

    def plot(self, t: pl.DataFrame, p: RttParams, path: Path) -> Path:
        plt = _pyplot()
        keys = [(pol, b) for pol in ("droptail", "red") for b in p.buffers]
        fig, axes = plt.subplots(len(keys), 1, figsize=(9, 2.6 * len(keys)), sharex=True)
        for ax, (pol, b) in zip(np.atleast_1d(axes), keys):
            for row in t.filter((pl.col("policy") == pol) & (pl.col("buffer") == b)).iter_rows(named=True):
                ax.plot(row["times"], row["cwnd"], lw=0.8,
                        label=f"{row['class'][3:]} ms RTT: {row['mbps']:.2f} Mb/s (paper "
                              f"{self.paper[(pol, b)][0 if row['class'] == 'rtt40' else 1]:.2f})")
            ax.set_ylabel("mean cwnd (packets)")
            ax.set_title(f"{c.LABELS[pol]}, B = {b} (Fig {'2.6' if pol == 'droptail' else '2.7'})", fontsize="medium")
            ax.legend(fontsize="x-small", loc="upper right")
            ax.grid(True, alpha=0.3)
        np.atleast_1d(axes)[-1].set_xlabel("time (s)")
        fig.tight_layout()
        return _save(fig, path)

    def example_scenario(self, p: RttParams) -> dict[str, Any]:
        return self.scenario("droptail", 800, p)


EXPERIMENTS = [TailDropCycles(), RedDropProbability(), RttUnfairness()]
