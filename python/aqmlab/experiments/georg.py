"""Seed 001: M. Georg, C. Jechlitschek and S. Gorinsky, *Improving Individual Flow
Performance with Multiple Queue Fair Queuing* (WUCSE-2007-30); digest 001 sections 3-5.

The report's setup (section V; digest 4.1), as every experiment here builds it:

* a dumbbell: 50 senders on 100 Mb/s access links, a 5 Mb/s bottleneck with a 20 ms
  delay, one receiver host behind a 5 ms link; the bottleneck runs the scheme under test,
  every other queue is a large DropTail (A13);
* SFQ and MQFQ with k = 16 queues (32 in section V-C), packet round robin (quantum = the
  1000-byte packet, A2), ns-2's admission rule (A3), the seeded hash family (A1: the
  run's seed gives each repetition its own collisions, A6); SFB with 2 x 23 bins and
  the Blue steps of A12; a shared buffer of 100 packets (200 in Fig 7);
* CBR flows of 1000-byte packets, each gap jittered by ±50% (ns-2's ``random_``, A7),
  starting uniformly in [0, 1] s, RTT 60 ms; TCP NewReno (A5) with 1000-byte packets on
  the wire (960 B payload, A8), an ACK per packet, a 200 ms minimum RTO, a receiver
  window of 1000, RTTs uniform in [60, 80] ms (sender access 5-15 ms, A9);
* 10 runs per point (3 in Fig 10), each flow's throughput over the run after a warm-up;
  within a run the flows are sorted by throughput, and each rank is averaged over the
  runs (mean and standard deviation, A15).

Throughput here is bits on the wire: every packet is 1000 bytes, and a TCP flow's is its
``throughput_bps`` (unique payload) x 1000/960, so that TCP and CBR flows are counted
alike, as the report's per-flow kb/s of 1000-byte packets are.

Which queues each flow hashes to is read from the run (``[trace] flow_queues``, the
``queues`` column of flows.parquet), so the interference classes of Fig 1 are the
simulation's own, set beside :func:`aqmlab.theory.mqfq.overlap_classes`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from ..plots import pyplot as _pyplot
from ..plots import save as _save
from .core import Experiment, Reference, run_dirs

PACKET_BYTES = 1000
PAYLOAD_BYTES = 960
CAPACITY_BPS = 5e6
FAIR_KBPS = 100.0  #: 5 Mb/s over 50 flows
SCHEMES = ("sfq", "mqfq", "sfb")
COLORS = {"sfq": "tab:blue", "mqfq": "tab:red", "sfb": "tab:green"}
OFFSET = {"sfq": 0.0, "mqfq": 0.2, "sfb": 0.4}  #: the report's x offsets of the error bars
SERIES_S = 5.0  #: windows of the flows' throughput series (the second half of a run is read from it)


@dataclass(frozen=True)
class Cbr:
    """``count`` CBR flows at ``rate_kbps``; ``misbehaving`` marks the flows the report
    calls misbehaving."""

    count: int
    rate_kbps: float
    misbehaving: bool = False


@dataclass(frozen=True)
class Tcp:
    """``count`` long-lived TCP flows; RTTs uniform in [rtt_low, rtt_high] ms, or
    evenly spaced from rtt_low to rtt_high (``linear``: Fig 9's 60, 70, ..., 550)."""

    count: int
    rtt_low_ms: float = 60.0
    rtt_high_ms: float = 80.0
    linear: bool = False


@dataclass(frozen=True)
class Setup:
    """Run length, warm-up and repetitions of one fidelity."""

    duration_s: float
    warmup_s: float
    seeds: int
    buffer: int = 100
    queues: int = 16


#: A DropTail that never drops (digest 001 A13).
LARGE_QUEUE = {"kind": "droptail", "limit": "100000pkt"}


def qdisc(scheme: str, buffer: int, queues: int, hashes: int = 2, reorder: str = "none") -> dict[str, Any]:
    """The bottleneck's discipline: ``sfq``, ``mqfq`` (d = ``hashes``) or ``sfb``."""
    if scheme == "sfb":
        return {"kind": "sfb", "limit": f"{buffer}pkt", "levels": 2, "bins": 23}
    if scheme == "sfq":
        return {"kind": "sfq", "limit": f"{buffer}pkt", "buckets": queues}
    q = {"kind": "mqfq", "limit": f"{buffer}pkt", "queues": queues, "hashes": hashes, "quantum": f"{PACKET_BYTES}B"}
    if reorder != "none":
        q["reorder"] = reorder
    return q


def scenario(name: str, q: dict[str, Any], traffic: tuple[Any, ...], setup: Setup, seed: int) -> dict[str, Any]:
    """One run: the report's dumbbell, a sender per flow, with ``traffic``."""
    us = lambda s: f"{round(s * 1e6)}us"  # noqa: E731
    one_way = lambda rtt_ms: us(rtt_ms / 2e3 - 0.025)  # noqa: E731  (RTT less 2 x (20 + 5) ms, halved)
    start = {"dist": "uniform", "low": "0s", "high": "1s"}
    flows: list[dict[str, Any]] = []
    first = 0
    for i, t in enumerate(traffic):
        senders = [f"s{j}" for j in range(first, first + t.count)]
        first += t.count
        if isinstance(t, Cbr):
            flows.append({"kind": "udp", "group": f"{'bad' if t.misbehaving else 'cbr'}{i}", "count": t.count,
                          "src": senders, "dst": "d0", "rate": f"{t.rate_kbps:g}kbps",
                          "packet_size": f"{PACKET_BYTES}B", "jitter": 0.5, "start": start,
                          # the report's rates are ns-2's: a CBR packet all payload
                          "header_size": "0B"})
        else:
            flows.append({"kind": "tcp", "group": f"tcp{i}", "count": t.count, "src": senders, "dst": "d0",
                          "start": start})
    tcp = [t for t in traffic if isinstance(t, Tcp)]
    if not tcp:
        access_delay: Any = one_way(60.0)  # CBR: RTT 60 ms
    elif tcp[0].linear:  # Fig 9: RTTs evenly spaced, in flow order
        t = tcp[0]
        step = (t.rtt_high_ms - t.rtt_low_ms) / max(1, t.count - 1)
        access_delay = [one_way(t.rtt_low_ms + j * step) for j in range(t.count)]
    else:  # drawn per sender; a CBR sender's RTT is drawn too ("it has no effect on performance")
        access_delay = {"dist": "uniform", "low": one_way(tcp[0].rtt_low_ms), "high": one_way(tcp[0].rtt_high_ms)}
    return {
        "name": name,
        "description": "seed 001 (aqmlab.experiments.georg)",
        "seed": seed,
        "duration": us(setup.duration_s),
        "warmup": us(setup.warmup_s),
        "sample_interval": "0s",
        "tcp": {
            "variant": "newreno",
            "packet_size": f"{PACKET_BYTES}B",
            "header_size": f"{PACKET_BYTES - PAYLOAD_BYTES}B",
            "receiver_window": 1000,
            "delayed_ack": False,
            "min_rto": "200ms",
        },
        "topology": {
            "kind": "dumbbell",
            "senders": first,
            "receivers": 1,
            "bottleneck": {"rate": f"{CAPACITY_BPS:.0f}bps", "delay": "20ms", "qdisc": q},
            "access": {"rate": "100Mbps", "delay": access_delay},
            "receiver_access": {"delay": "5ms"},
            # every other queue too large to drop (A13), the senders' own too
            "access_qdisc": LARGE_QUEUE,
        },
        "flows": flows,
        "trace": {"flow_queues": "bottleneck", "flow_stats": True, "flow_series": f"{SERIES_S:g}s"},
    }


def _on_the_wire(bps: pl.Expr) -> pl.Expr:
    """kb/s of 1000-byte packets: a TCP flow's payload rate x 1000/960."""
    return pl.when(pl.col("kind") == "tcp").then(bps * PACKET_BYTES / PAYLOAD_BYTES).otherwise(bps) / 1e3


def flow_rows(directory: Path) -> pl.DataFrame:
    """A run's flows: id, group, kind, throughput on the wire over the measurement
    window (``kbps``) and over the run's second half (``late_kbps``, from the flow
    series), queues, RTT, reordered packets; and the bottleneck's utilization."""
    f = pl.read_parquet(directory / "flows.parquet")
    summary = json.loads((directory / "summary.json").read_text())
    half = summary["duration_s"] / 2
    series = pl.read_parquet(directory / "timeseries.parquet").filter(
        (pl.col("metric") == "throughput_bps") & (pl.col("time_s") > half + 1e-9))
    late = series.group_by(pl.col("entity").cast(pl.Int64).alias("flow_id")).agg(pl.col("value").mean().alias("late"))
    return f.join(late, on="flow_id", how="left").select(
        "flow_id", "group", "kind", "queues", "base_rtt_s", "packets_reordered",
        _on_the_wire(pl.col("throughput_bps")).alias("kbps"),
        _on_the_wire(pl.col("late").fill_null(0.0)).alias("late_kbps"),
    ).with_columns(
        pl.col("group").str.starts_with("bad").alias("misbehaving"),
        pl.lit(summary["bottleneck_utilization"]).alias("utilization"),
    )


def measure_runs(runner: Any, points: dict[tuple[Any, ...], list[dict[str, Any]]], label: str) -> pl.DataFrame:
    """Every run of every point, a row per flow, with the point's key columns
    ``(case, scheme)`` and ``seed``."""
    keys = list(points)
    dirs = run_dirs(runner, [points[k] for k in keys], label)
    frames = []
    for (case, scheme), runs in zip(keys, dirs):
        for seed, d in enumerate(runs, start=1):
            frames.append(flow_rows(d).with_columns(pl.lit(case).alias("case"), pl.lit(scheme).alias("scheme"),
                                                    pl.lit(seed).alias("seed")))
    return pl.concat(frames, how="vertical_relaxed")


def summarize(flows: pl.DataFrame, rank_misbehaving: bool, rtt_order: tuple[str, ...] = ()) -> pl.DataFrame:
    """The figure's points from every run's flows, per (case, scheme), in rows of kind
    ``row``:

    * ``rank``: each run's flows sorted by throughput (rank 1 the lowest; the misbehaving
      flows too if ``rank_misbehaving``), each rank's mean and standard deviation over the
      runs, and over the second half of the runs (``late_kbps``): the report's plots;
    * ``rtt_rank`` (cases in ``rtt_order``): the same with the flows in RTT order (Fig 9);
    * ``misbehaving``: the misbehaving flows' throughput, mean and standard deviation
      over the runs and flows, and over the second half;
    * ``runs``: the bottleneck's utilization, the well-behaved flows' mean throughput, the
      well-behaved flows above 250 kb/s (about a queue's fair share of 312.5) per run, and
      the rank correlation (Spearman) of throughput with RTT, over every run's flows.
    """
    keys = ["case", "scheme"]
    stats = [pl.col("kbps").mean().alias("mean_kbps"), pl.col("kbps").std().fill_null(0).alias("std_kbps"),
             pl.col("late_kbps").mean().alias("late_kbps")]
    good = flows.filter(~pl.col("misbehaving"))
    ranked_flows = flows if rank_misbehaving else good
    by_rank = (ranked_flows.with_columns(pl.col("kbps").rank("ordinal").over(*keys, "seed").cast(pl.Int64).alias("rank"))
               .group_by(*keys, "rank").agg(*stats).with_columns(pl.lit("rank").alias("row")))
    by_rtt = (flows.filter(pl.col("case").is_in(list(rtt_order)))
              .with_columns(pl.col("base_rtt_s").rank("ordinal").over(*keys, "seed").cast(pl.Int64).alias("rank"))
              .group_by(*keys, "rank").agg(*stats).with_columns(pl.lit("rtt_rank").alias("row")))
    bad = (flows.filter(pl.col("misbehaving")).group_by(keys).agg(*stats)
           .with_columns(pl.lit("misbehaving").alias("row")))
    runs = flows.group_by(keys).agg(
        pl.col("utilization").mean(),
        pl.col("kbps").filter(~pl.col("misbehaving")).mean().alias("good_mean_kbps"),
        ((pl.col("kbps") > 250) & ~pl.col("misbehaving")).sum().truediv(pl.col("seed").n_unique())
        .alias("above_250_per_run"),
        pl.corr("base_rtt_s", "kbps", method="spearman").alias("rtt_spearman"),
    ).with_columns(pl.lit("runs").alias("row"))
    return (pl.concat([by_rank, by_rtt, bad, runs], how="diagonal_relaxed")
            .select("case", "scheme", "row", "rank", "mean_kbps", "std_kbps", "late_kbps", "utilization",
                    "good_mean_kbps", "above_250_per_run", "rtt_spearman")
            .sort("case", "scheme", "row", "rank", nulls_last=True))


def fluid_ranks(flows: pl.DataFrame) -> pl.DataFrame:
    """Rows of kind ``fluid_rank``: in each run, the max-min fair rates of its flows over the
    queues they hashed to (:func:`aqmlab.theory.mqfq.max_min_rates`, the fluid allocation
    MQFQ aims at), the well-behaved flows ranked, each rank's mean over the runs
    (``mean_kbps``). Round robin shares the link among the queues in use, so each of the
    queues some flow hashed to serves C over their number."""
    from ..theory.mqfq import max_min_rates

    rows = []
    for (case, scheme, seed), run in flows.group_by("case", "scheme", "seed"):
        hashed = run["queues"].to_list()
        used = {q: i for i, q in enumerate(sorted({q for qs in hashed for q in qs}))}
        rates = max_min_rates([[used[q] for q in qs] for qs in hashed], len(used), CAPACITY_BPS / 1e3 / len(used))
        good = sorted(r for r, bad in zip(rates, run["misbehaving"].to_list()) if not bad)
        rows += [{"case": case, "scheme": scheme, "seed": seed, "rank": i + 1, "kbps": r} for i, r in enumerate(good)]
    return (pl.DataFrame(rows).group_by("case", "scheme", "rank").agg(pl.col("kbps").mean().alias("mean_kbps"))
            .with_columns(pl.lit("fluid_rank").alias("row")).sort("case", "scheme", "rank"))


def _value(t: pl.DataFrame, case: str, scheme: str, row: str, col: str) -> float:
    """One figure of a ``misbehaving`` or ``runs`` row of :func:`summarize`."""
    r = t.filter((pl.col("case") == case) & (pl.col("scheme") == scheme) & (pl.col("row") == row))
    return float(r[col].item())


def _rank(t: pl.DataFrame, case: str, scheme: str, rank: int) -> float:
    """Mean throughput at ``rank`` (negative: from the top)."""
    r = t.filter((pl.col("case") == case) & (pl.col("scheme") == scheme) & (pl.col("row") == "rank"))
    r = r.sort("rank")["mean_kbps"]
    return float(r[rank - 1] if rank > 0 else r[rank])


def _lowest5(t: pl.DataFrame, case: str, scheme: str | None = None, row: str = "rank") -> float:
    """Mean throughput of the five lowest ranks (of ``row``), of one scheme or of all."""
    r = t.filter((pl.col("case") == case) & (pl.col("row") == row) & (pl.col("rank") <= 5))
    if scheme is not None:
        r = r.filter(pl.col("scheme") == scheme)
    return float(r["mean_kbps"].mean())


def _ranked_panels(table: pl.DataFrame, cases: list[tuple[str, str]], path: Path, schemes: tuple[str, ...] = SCHEMES,
                   rtt_order: tuple[str, ...] = (), tagged: tuple[str, ...] = ()) -> Path:
    """The report's figures: per case, per scheme, the mean throughput of each rank with
    its standard deviation as an error bar, the schemes offset by 0.2 on x; in the cases
    in ``tagged`` the misbehaving flow, not ranked, after the others (Figs 8 and 12)."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(cases), 1, figsize=(7, 3.2 * len(cases)), squeeze=False)
    for ax, (case, title) in zip(axes[:, 0], cases):
        for i, s in enumerate(schemes):
            row = "rtt_rank" if case in rtt_order else "rank"
            d = table.filter((pl.col("case") == case) & (pl.col("scheme") == s) & (pl.col("row") == row)).sort("rank")
            if d.is_empty():
                continue
            x = OFFSET.get(s, 0.1 * i)
            bar = ax.errorbar(d["rank"] + x, d["mean_kbps"], yerr=d["std_kbps"], fmt="o", ms=3, capsize=2,
                              color=COLORS.get(s), label=s.upper() if s in COLORS else s)
            bad = table.filter((pl.col("case") == case) & (pl.col("scheme") == s) & (pl.col("row") == "misbehaving"))
            if case in tagged and bad.height:
                ax.errorbar([d["rank"].max() + 1 + x], bad["mean_kbps"], yerr=bad["std_kbps"], fmt="*", ms=8,
                            capsize=2, color=bar.lines[0].get_color())
        ax.axhline(FAIR_KBPS, color="grey", lw=0.8, ls=":")
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel("flow, in order of RTT" if case in rtt_order else "flow rank")
        ax.set_ylabel("throughput (kb/s)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    return _save(fig, path)


#: Why SFB keeps the link full where the report's idles it.
SFB_FULL = (
    "Blue, as the SFB paper (Fig 7) and Linux's sch_sfb.c write it and sfb.rs follows, raises a bin's "
    "probability only when an arrival finds the bin full, which takes a standing queue, so the link is busy. "
    "No hold time, bin size or step, Linux's drop rule, nor raising the bins of every dropped packet leaves more "
    "than 4% of the link idle (docs/experiments/georg.md). The report's LANL code, which keeps probabilities high "
    "'despite queue underruns', is not available."
)

#: Why SFB's misbehavers keep more over a whole run than the report says.
SFB_CLIMB = (
    "Our SFB's bins rise by 0.0025 at most once per 100 ms (digest A12's Blue steps; the report does not give "
    "the LANL code's), so a misbehaver's bins need 40-50 s to reach the probability that holds it: over the "
    "first 30 s it keeps about 500 kb/s. The run's mean includes that climb; the second half of the run (the "
    "'late' reference) does not."
)


# ---------------------------------------------------------------------------
# A1-A3: CBR (Figs 3-5)

CBR_CASES = {
    "A1": (Cbr(50, 150.0),),
    "A2": (Cbr(1, 2500.0, True), Cbr(49, 100.0)),
    "A3": (Cbr(5, 1500.0, True), Cbr(45, 100.0)),
}


@dataclass(frozen=True)
class RankedParams:
    setup: Setup
    cases: tuple[str, ...]
    schemes: tuple[str, ...] = SCHEMES


class CbrFlows(Experiment):
    id = "georg.cbr"
    title = "CBR flows under SFQ, MQFQ and SFB: all misbehaving, one, five (Figs 3-5)"
    source = "seed 001 (Georg, Jechlitschek and Gorinsky, MQFQ), Figs 3-5, section V-A; digest 001 sections 4-5.1"
    summary = (
        "50 CBR flows on a 5 Mb/s bottleneck (fair share 100 kb/s), 100-packet buffer, SFQ and MQFQ with "
        "16 queues, SFB with 2 x 23 bins. A1: every flow at 150 kb/s. A2: 49 at 100 kb/s and one at 2.5 Mb/s. "
        "A3: 45 at 100 kb/s and five at 1.5 Mb/s. Per-flow throughput by rank, mean and standard deviation "
        "over the runs; the misbehaving flows' throughput; the link's utilization."
    )
    differences = (
        "The report does not state the CBR run length; we run 100 s and measure after 10 s, as its TCP runs "
        "(SFB's Blue probabilities climb by 0.0025 at most every 100 ms, so a shorter run measures their climb). "
        "CBR gaps are jittered by ±50%: without jitter, CBR phase-locks with drop-tail sub-queues (digest 5.4). "
        "Hashes are drawn afresh for each run, so SFQ's misbehaver shares its queue with a different number of "
        "flows in each run: its throughput is spread widely over runs. SFB: see the notes on its misbehavers "
        "and its utilization; its weakest flows in A2 do better than SFQ's, for the same reason."
    )
    fidelities = {
        "quick": RankedParams(Setup(40.0, 10.0, 3), ("A1", "A2", "A3")),
        "paper": RankedParams(Setup(100.0, 10.0, 10), ("A1", "A2", "A3")),
    }

    def points(self, p: RankedParams) -> dict[tuple[str, str], list[dict[str, Any]]]:
        s = p.setup
        return {(c, sc): [scenario(f"georg-{c}-{sc}", qdisc(sc, s.buffer, s.queues), CBR_CASES[c], s, seed)
                          for seed in range(1, s.seeds + 1)]
                for c in p.cases for sc in p.schemes}

    def measure(self, runner: Any, p: RankedParams) -> pl.DataFrame:
        return summarize(measure_runs(runner, self.points(p), self.id), rank_misbehaving=True)

    def findings(self, t: pl.DataFrame, p: RankedParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for sc in p.schemes:
            out[f"A1_{sc}_lowest"] = _rank(t, "A1", sc, 1)
            out[f"A1_{sc}_highest"] = _rank(t, "A1", sc, -1)
            out[f"A1_{sc}_utilization"] = _value(t, "A1", sc, "runs", "utilization")
            out[f"A2_{sc}_misbehaver"] = _value(t, "A2", sc, "misbehaving", "mean_kbps")
            out[f"A2_{sc}_misbehaver_late"] = _value(t, "A2", sc, "misbehaving", "late_kbps")
            out[f"A2_{sc}_lowest"] = _rank(t, "A2", sc, 1)
            out[f"A3_{sc}_misbehaver"] = _value(t, "A3", sc, "misbehaving", "mean_kbps")
            out[f"A3_{sc}_misbehaver_late"] = _value(t, "A3", sc, "misbehaving", "late_kbps")
            out[f"A3_{sc}_lowest"] = _rank(t, "A3", sc, 1)
            out[f"A3_{sc}_utilization"] = _value(t, "A3", sc, "runs", "utilization")
        out["A1_range_mqfq_minus_sfq"] = ((out["A1_mqfq_highest"] - out["A1_mqfq_lowest"])
                                          - (out["A1_sfq_highest"] - out["A1_sfq_lowest"]))
        out["A2_lowest_mqfq_minus_sfq"] = out["A2_mqfq_lowest"] - out["A2_sfq_lowest"]
        out["A2_misbehaver_sfq_minus_sfb"] = out["A2_sfq_misbehaver"] - out["A2_sfb_misbehaver"]
        out["A2_lowest_sfb_minus_sfq"] = out["A2_sfb_lowest"] - out["A2_sfq_lowest"]
        out["A3_misbehaver_mqfq_minus_sfq"] = out["A3_mqfq_misbehaver"] - out["A3_sfq_misbehaver"]
        return out

    def references(self, p: RankedParams) -> list[Reference]:
        a1, a2, a3 = "Fig 3, section V-A", "Fig 4, section V-A", "Fig 5, section V-A"
        return [
            Reference("A1_sfq_lowest", "A1, SFQ, lowest rank (kb/s)", 57.6, "abs", 15.0, a1,
                      "'SFQ ... per-flow throughput ... ranges from 57.6 to 157.6 kbps'"),
            Reference("A1_sfq_highest", "A1, SFQ, highest rank (kb/s)", 157.6, "abs", 15.0, a1, "",
                      "No flow can exceed its sending rate of 150 kb/s over a whole run; the report's 157.6 "
                      "is presumably the end of an error bar (digest A14)."),
            Reference("A1_mqfq_lowest", "A1, MQFQ, lowest rank (kb/s)", 78.0, "abs", 15.0, a1,
                      "'MQFQ ... ranges from 78 to 141.5 kbps'"),
            Reference("A1_mqfq_highest", "A1, MQFQ, highest rank (kb/s)", 141.5, "abs", 15.0, a1),
            Reference("A1_range_mqfq_minus_sfq", "A1, MQFQ's range less SFQ's (kb/s)", 0.0, "at_most", 0.0, a1,
                      "MQFQ's range is narrower: 'MQFQ is fairer' (< 0)"),
            Reference("A1_sfb_utilization", "A1, SFB, utilization", 1.0, "at_most", -0.02, a1,
                      "'SFB is unable to utilize the link fully' (< 0.98)", SFB_FULL),
            Reference("A2_sfb_misbehaver", "A2, SFB, misbehaving flow (kb/s)", 207.0, "factor", 1.25, a2,
                      "'SFB restricts the misbehaving flow to about 207 kbps'", SFB_CLIMB),
            Reference("A2_sfb_misbehaver_late", "A2, SFB, misbehaving flow, second half of the run (kb/s)", 207.0,
                      "factor", 1.5, a2, "'SFB restricts the misbehaving flow to about 207 kbps'",
                      "After the climb: the rate at which its bins overflow about a tenth as often as they empty."),
            Reference("A2_misbehaver_sfq_minus_sfb", "A2, misbehaving flow, SFQ less SFB (kb/s)", 0.0, "at_least",
                      0.0, a2, "207 kb/s under SFB 'is much better than SFQ at 484 kbps' (> 0)"),
            Reference("A2_sfq_misbehaver", "A2, SFQ, misbehaving flow (kb/s)", 484.0, "factor", 1.15, a2,
                      "'SFQ at 484 kbps'"),
            Reference("A2_mqfq_misbehaver", "A2, MQFQ, misbehaving flow (kb/s)", 620.8, "factor", 1.15, a2,
                      "'MQFQ at 620.8 kbps' (two queues' fair share, 625)"),
            Reference("A2_lowest_mqfq_minus_sfq", "A2, lowest rank, MQFQ less SFQ (kb/s)", 0.0, "at_least", 0.0, a2,
                      "'MQFQ improves the performance for these flows' (> 0)"),
            Reference("A2_lowest_sfb_minus_sfq", "A2, lowest rank, SFB less SFQ (kb/s)", 0.0, "at_most", 0.0, a2,
                      "'SFB flows suffer the most from the misbehaving flow' (< 0)"),
            Reference("A3_misbehaver_mqfq_minus_sfq", "A3, each misbehaving flow, MQFQ less SFQ (kb/s)", 0.0,
                      "at_least", 0.0, a3, "'SFQ ... allocates less bandwidth to each misbehaving flow' (> 0)"),
            Reference("A3_mqfq_lowest", "A3, MQFQ, lowest rank (kb/s)", 0.0, "abs", 20.0, a3,
                      "'MQFQ is unable to avoid limiting flows to nearly zero throughput'"),
            Reference("A3_sfb_misbehaver", "A3, SFB, each misbehaving flow (kb/s)", FAIR_KBPS, "factor", 2.0, a3,
                      "'SFB manages to restrict all misbehaving flows to their fair share'"),
            Reference("A3_sfb_utilization", "A3, SFB, utilization", 0.6, "abs", 0.1, a3,
                      "'only transmits at about 60% of the link capacity'", SFB_FULL),
        ]

    def plot(self, t: pl.DataFrame, p: RankedParams, path: Path) -> Path:
        titles = {"A1": "Fig 3: 50 CBR at 150 kb/s", "A2": "Fig 4: 49 CBR at 100 kb/s + 1 at 2.5 Mb/s",
                  "A3": "Fig 5: 45 CBR at 100 kb/s + 5 at 1.5 Mb/s"}
        return _ranked_panels(t, [(c, titles[c]) for c in p.cases], path, p.schemes)

    def example_scenario(self, p: RankedParams) -> dict[str, Any]:
        return self.points(p)[("A2", "sfb")][0]


# ---------------------------------------------------------------------------
# B1-B4: TCP (Figs 6-9)

TCP_CASES = {
    "B1": (Tcp(50),),
    "B2": (Tcp(50),),  # with a 200-packet buffer
    "B3": (Tcp(49), Cbr(1, 2500.0, True)),
    "B4": (Tcp(50, 60.0, 550.0, linear=True),),
}


class TcpFlows(Experiment):
    id = "georg.tcp"
    title = "TCP flows under SFQ, MQFQ and SFB: buffers of 100 and 200, one CBR flow, RTTs 60-550 ms (Figs 6-9)"
    source = "seed 001 (Georg, Jechlitschek and Gorinsky, MQFQ), Figs 6-9, section V-B; digest 001 sections 4-5.2"
    summary = (
        "50 TCP NewReno flows (RTT uniform in [60, 80] ms) on the 5 Mb/s bottleneck, 100 s runs measured after "
        "10 s. B1: 100-packet buffer; B2: 200; B3: 49 TCP and one CBR at 2.5 Mb/s (flow 50, not ranked); B4: "
        "RTTs 60, 70, ..., 550 ms, flows in RTT order."
    )
    differences = (
        "The report does not name its TCP (NewReno here, A5), nor the buffer of Figs 8-9 (100 packets, A10). "
        "Its TCP packets of 1000 bytes are 1000 bytes on the wire here (A8). In B3 the CBR sender's RTT is "
        "drawn from [60, 80] ms as the TCP senders' are (the report: 60 ms, which 'has no effect'). Not "
        "reproduced: the 200-packet buffer does not lift the lowest ranks (SFQ and MQFQ do not move; SFB's "
        "bins grow with the buffer and its weakest flows lose); MQFQ leaves a TCP flow above 250 kb/s in some "
        "runs, those with a queue few others hash to."
    )
    fidelities = {
        "quick": RankedParams(Setup(40.0, 10.0, 2), ("B1", "B2", "B3", "B4")),
        "paper": RankedParams(Setup(100.0, 10.0, 10), ("B1", "B2", "B3", "B4")),
    }

    def points(self, p: RankedParams) -> dict[tuple[str, str], list[dict[str, Any]]]:
        out = {}
        for c in p.cases:
            s = replace(p.setup, buffer=200) if c == "B2" else p.setup
            for sc in p.schemes:
                out[(c, sc)] = [scenario(f"georg-{c}-{sc}", qdisc(sc, s.buffer, s.queues), TCP_CASES[c], s, seed)
                                for seed in range(1, s.seeds + 1)]
        return out

    def measure(self, runner: Any, p: RankedParams) -> pl.DataFrame:
        flows = measure_runs(runner, self.points(p), self.id)
        return summarize(flows, rank_misbehaving=False, rtt_order=("B4",))

    def findings(self, t: pl.DataFrame, p: RankedParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for sc in p.schemes:
            for c in ("B1", "B2", "B3"):
                out[f"{c}_{sc}_lowest"] = _rank(t, c, sc, 1)
                out[f"{c}_{sc}_highest"] = _rank(t, c, sc, -1)
            out[f"B3_{sc}_cbr"] = _value(t, "B3", sc, "misbehaving", "mean_kbps")
            out[f"B3_{sc}_cbr_late"] = _value(t, "B3", sc, "misbehaving", "late_kbps")
            out[f"B3_{sc}_tcp_mean"] = _value(t, "B3", sc, "runs", "good_mean_kbps")
            # TCP flows at about a queue's fair share (312.5 kb/s)
            out[f"B3_{sc}_tcp_at_a_queue"] = _value(t, "B3", sc, "runs", "above_250_per_run")
            out[f"B4_{sc}_rtt_correlation"] = _value(t, "B4", sc, "runs", "rtt_spearman")
        for c in ("B1", "B2", "B3"):
            out[f"{c}_lowest_mqfq_minus_sfq"] = out[f"{c}_mqfq_lowest"] - out[f"{c}_sfq_lowest"]
            out[f"{c}_lowest_mqfq_minus_sfb"] = out[f"{c}_mqfq_lowest"] - out[f"{c}_sfb_lowest"]
        out["B1_highest_sfq_minus_mqfq"] = out["B1_sfq_highest"] - out["B1_mqfq_highest"]
        out["B2_minus_B1_lowest5"] = _lowest5(t, "B2") - _lowest5(t, "B1")
        # which scheme moves: the report's sentence is about all three together
        for sc in p.schemes:
            out[f"B2_minus_B1_lowest5_{sc}"] = _lowest5(t, "B2", sc) - _lowest5(t, "B1", sc)
        return out

    def references(self, p: RankedParams) -> list[Reference]:
        b1, b2, b3, b4 = ("Fig 6, section V-B", "Fig 7, section V-B", "Fig 8, section V-B", "Fig 9, section V-B")
        refs = []
        for c, fig in (("B1", b1), ("B2", b2)):
            refs += [
                Reference(f"{c}_lowest_mqfq_minus_sfq", f"{c}, lowest rank, MQFQ less SFQ (kb/s)", 0.0, "at_least",
                          0.0, fig, "'MQFQ gives the best minimum throughput' (> 0)"),
                Reference(f"{c}_lowest_mqfq_minus_sfb", f"{c}, lowest rank, MQFQ less SFB (kb/s)", 0.0, "at_least",
                          0.0, fig, "'MQFQ gives the best minimum throughput' (> 0)"),
            ]
        refs += [
            Reference("B1_highest_sfq_minus_mqfq", "B1, highest rank, SFQ less MQFQ (kb/s)", 0.0, "at_least", 0.0, b1,
                      "'SFQ gives a disproportionately high share to a single flow' (> 0)"),
            Reference("B2_minus_B1_lowest5", "lowest five ranks, B = 200 less B = 100 (kb/s)", 0.0, "at_least", 0.0,
                      b2, "doubling the buffer 'improves fairness a little for the lowest throughput flows' (> 0)"),
            Reference("B3_sfb_cbr", "B3, SFB, the CBR flow (kb/s)", FAIR_KBPS, "factor", 2.0, b3,
                      "'SFB restricts a single misbehaving flow to a rate comparable to other flows'", SFB_CLIMB),
            Reference("B3_sfb_cbr_late", "B3, SFB, the CBR flow, second half of the run (kb/s)", FAIR_KBPS, "factor",
                      2.0, b3, "'SFB restricts a single misbehaving flow to a rate comparable to other flows'",
                      "In some runs its p_min reaches 1 and the penalty box (no rate: every packet dropped) "
                      "takes it to almost nothing; in others it stays at 200-260 kb/s, where its bins empty as often "
                      "as Blue needs to hold p below 1."),
            Reference("B3_sfq_cbr", "B3, SFQ, the CBR flow (kb/s)", 312.5, "factor", 1.15, b3,
                      "'achieving approximately the fair share rate of the queue, 312.5 kbps'"),
            Reference("B3_mqfq_cbr", "B3, MQFQ, the CBR flow (kb/s)", 625.0, "factor", 1.15, b3,
                      "'The CBR flow sends at the rate of two queues'"),
            Reference("B3_sfq_tcp_at_a_queue", "B3, SFQ, TCP flows above 250 kb/s per run", 2.5, "abs", 1.0, b3,
                      "'approximately two or three flows also dominate a queue and send at this rate'"),
            Reference("B3_mqfq_tcp_at_a_queue", "B3, MQFQ, TCP flows above 250 kb/s per run", 0.0, "abs", 0.5, b3,
                      "'In MQFQ none of the TCP flows acquire their own queue'"),
            Reference("B3_lowest_mqfq_minus_sfq", "B3, lowest rank, MQFQ less SFQ (kb/s)", 0.0, "at_least", 0.0, b3,
                      "MQFQ 'provided protection to the weakest flows in the presence of misbehavior' (> 0)"),
        ]
        for sc in p.schemes:
            refs.append(Reference(f"B4_{sc}_rtt_correlation", f"B4, {sc.upper()}, rank correlation of throughput "
                                  "with RTT", -1.0, "at_most", 0.5, b4,
                                  "'a clear decreasing throughput trend with RTT' (Spearman < -0.5)"))
        return refs

    def plot(self, t: pl.DataFrame, p: RankedParams, path: Path) -> Path:
        titles = {"B1": "Fig 6: 50 TCP, B = 100", "B2": "Fig 7: 50 TCP, B = 200",
                  "B3": "Fig 8: 49 TCP + 1 CBR at 2.5 Mb/s (the CBR flow: star, flow 50)", "B4": "Fig 9: RTT 60-550 ms"}
        return _ranked_panels(t, [(c, titles[c]) for c in p.cases], path, p.schemes, rtt_order=("B4",),
                              tagged=("B3",))

    def example_scenario(self, p: RankedParams) -> dict[str, Any]:
        return self.points(p)[("B3", "mqfq")][0]


# ---------------------------------------------------------------------------
# B5: MQFQ with 10 to 100 flows (Fig 10)


@dataclass(frozen=True)
class ManyFlowsParams:
    setup: Setup
    flows: tuple[int, ...] = (10, 40, 70, 100)


class ManyFlows(Experiment):
    id = "georg.fig10"
    title = "MQFQ with 10 to 100 TCP flows on 16 queues (Fig 10)"
    source = "seed 001 (Georg, Jechlitschek and Gorinsky, MQFQ), Fig 10, section V-B; digest 001 sections 4-5.2"
    summary = (
        "N = 10, 40, 70 and 100 TCP flows under MQFQ (16 queues, 100-packet buffer), 3 runs each; each flow's "
        "throughput over its fair share C/N against the cumulative share of flows."
    )
    differences = (
        "The report shows the curves only; 'little difference in fairness' is read as Jain's index varying by "
        "less than 0.1 over N. Ours varies by 0.14 (N = 40 the least fair), with 3 runs a point."
    )
    fidelities = {
        "quick": ManyFlowsParams(Setup(40.0, 10.0, 1), (10, 40, 100)),
        "paper": ManyFlowsParams(Setup(100.0, 10.0, 3)),
    }

    def points(self, p: ManyFlowsParams) -> dict[tuple[str, str], list[dict[str, Any]]]:
        s = p.setup
        return {(f"N{n}", "mqfq"): [scenario(f"georg-B5-{n}", qdisc("mqfq", s.buffer, s.queues), (Tcp(n),), s, seed)
                                    for seed in range(1, s.seeds + 1)] for n in p.flows}

    def measure(self, runner: Any, p: ManyFlowsParams) -> pl.DataFrame:
        """A row per (N, rank): the rank's throughput over C/N, averaged over the runs, the
        cumulative share of flows, and Jain's index of the N flows (mean over the runs)."""
        f = measure_runs(runner, self.points(p), self.id)
        n = pl.len().over("case", "seed")
        f = f.with_columns((pl.col("kbps") * 1e3 / (CAPACITY_BPS / n)).alias("normalized"), n.alias("flows"),
                           pl.col("kbps").rank("ordinal").over("case", "seed").cast(pl.Int64).alias("rank"))
        jain = f.group_by("case", "seed").agg((pl.col("kbps").sum() ** 2 / (pl.len() * (pl.col("kbps") ** 2).sum()))
                                              .alias("jain")).group_by("case").agg(pl.col("jain").mean())
        points = f.group_by("case", "flows", "rank").agg(pl.col("normalized").mean())
        return (points.join(jain, on="case").with_columns((100 * pl.col("rank") / pl.col("flows")).alias("percent"))
                .sort("flows", "rank"))

    def findings(self, t: pl.DataFrame, p: ManyFlowsParams) -> dict[str, float | None]:
        jain = t.group_by("flows").agg(pl.col("jain").first()).sort("flows")
        out: dict[str, float | None] = {f"jain_N{r['flows']}": r["jain"] for r in jain.iter_rows(named=True)}
        out["jain_spread"] = float(jain["jain"].max() - jain["jain"].min())
        return out

    def references(self, p: ManyFlowsParams) -> list[Reference]:
        return [Reference("jain_spread", "Jain's index, largest less smallest over N", 0.0, "at_most", 0.1,
                          "Fig 10, section V-B", "'little difference in fairness' as N grows from 10 to 100")]

    def plot(self, t: pl.DataFrame, p: ManyFlowsParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4))
        for n in p.flows:
            d = t.filter(pl.col("flows") == n).sort("rank")
            ax.plot(d["percent"], d["normalized"], marker=".", label=f"N = {n}")
        ax.set_xlabel("flows (cumulative %)")
        ax.set_ylabel("throughput / (C/N)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        return _save(fig, path)

    def example_scenario(self, p: ManyFlowsParams) -> dict[str, Any]:
        return self.points(p)[(f"N{p.flows[-1]}", "mqfq")][0]


# ---------------------------------------------------------------------------
# C1-C2: more hash functions, k = 32 (Figs 11-12)

HASH_CASES = {"C1": (Tcp(50),), "C2": (Tcp(49), Cbr(1, 2500.0, True))}


@dataclass(frozen=True)
class HashesParams:
    setup: Setup
    hashes: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    cases: tuple[str, ...] = ("C1", "C2")


class MoreHashes(Experiment):
    id = "georg.hashes"
    title = "MQFQ with 1 to 6 hash functions on 32 queues (Figs 11-12)"
    source = "seed 001 (Georg, Jechlitschek and Gorinsky, MQFQ), Figs 11-12, section V-C; digest 001 sections 4-5.3"
    summary = (
        "MQFQd, d = 1 (SFQ's choice) to 6, with 32 queues and a 100-packet buffer. C1: 50 TCP flows. C2: 49 TCP "
        "and one CBR at 2.5 Mb/s. Per-flow throughput by rank, and the CBR flow's throughput against d."
    )
    differences = (
        "The report does not restate the buffer (100 packets, A10) nor which d it plots (1 to 6, A11). The "
        "fluid max-min allocation over each run's hashes (fluid_rank rows) gains almost all at d = 2, as the "
        "report says; our TCP flows follow its shape from d = 2 at about half its level, so our five lowest "
        "ranks gain from d = 1 to 2 and again to 3 (the lowest rank alone, one flow a run, exaggerates both)."
    )
    fidelities = {
        "quick": HashesParams(Setup(40.0, 10.0, 2, queues=32), (1, 2, 4, 6)),
        "paper": HashesParams(Setup(100.0, 10.0, 10, queues=32)),
    }

    def points(self, p: HashesParams) -> dict[tuple[str, str], list[dict[str, Any]]]:
        s = p.setup
        return {(c, f"mqfq{d}"): [scenario(f"georg-{c}-mqfq{d}", qdisc("mqfq", s.buffer, s.queues, d), HASH_CASES[c],
                                           s, seed) for seed in range(1, s.seeds + 1)]
                for c in p.cases for d in p.hashes}

    def measure(self, runner: Any, p: HashesParams) -> pl.DataFrame:
        flows = measure_runs(runner, self.points(p), self.id)
        return pl.concat([summarize(flows, rank_misbehaving=False), fluid_ranks(flows)],
                         how="diagonal_relaxed")

    def findings(self, t: pl.DataFrame, p: HashesParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for d in p.hashes:
            out[f"C1_d{d}_lowest"] = _rank(t, "C1", f"mqfq{d}", 1)
            out[f"C2_d{d}_cbr"] = _value(t, "C2", f"mqfq{d}", "misbehaving", "mean_kbps")
            out[f"C2_d{d}_highest"] = _rank(t, "C2", f"mqfq{d}", -1)
        d_max = max(p.hashes)
        for d in p.hashes:  # the rank 1 of ten runs is one unlucky flow; the five lowest say more
            out[f"C1_d{d}_lowest5"] = _lowest5(t, "C1", f"mqfq{d}")
            out[f"C1_d{d}_fluid_lowest5"] = _lowest5(t, "C1", f"mqfq{d}", row="fluid_rank")
        out["C1_lowest_d2_minus_d1"] = out["C1_d2_lowest"] - out["C1_d1_lowest"]
        out["C1_lowest_dmax_minus_d2"] = out[f"C1_d{d_max}_lowest"] - out["C1_d2_lowest"]
        cbr = [out[f"C2_d{d}_cbr"] for d in p.hashes]
        out["C2_cbr_increases"] = float(sum(b > a for a, b in zip(cbr, cbr[1:])) / (len(cbr) - 1))
        # d >= 2: with one queue the flow gains from other queues' underruns, as SFQ's does in A2
        out["C2_cbr_over_bound_max"] = max(out[f"C2_d{d}_cbr"] / (d * CAPACITY_BPS / 1e3 / p.setup.queues)
                                           for d in p.hashes if d >= 2)
        out["C2_highest_dmax_minus_d1"] = out[f"C2_d{d_max}_highest"] - out["C2_d1_highest"]
        return out

    def references(self, p: HashesParams) -> list[Reference]:
        c1, c2 = "Fig 11, section V-C", "Fig 12, section V-C"
        return [
            Reference("C1_lowest_d2_minus_d1", "C1, lowest rank, d = 2 less d = 1 (kb/s)", 0.0, "at_least", 0.0, c1,
                      "two hash functions improve on one (> 0)"),
            Reference("C1_lowest_dmax_minus_d2", f"C1, lowest rank, d = {max(p.hashes)} less d = 2 (kb/s)", 0.0,
                      "abs", 15.0, c1, "beyond two, 'only small further benefit'"),
            Reference("C2_cbr_increases", "C2, share of steps in d where the CBR flow's throughput grows", 1.0,
                      "at_least", 0.2, c2, "more hash functions give 'more throughput to the misbehaving flow'"),
            Reference("C2_cbr_over_bound_max", "C2, CBR throughput over d x C/k, largest over d >= 2", 1.0, "at_most", 0.1,
                      c2, "the misbehaving flow can hold at most d of the 32 queues"),
            Reference("C2_highest_dmax_minus_d1", f"C2, highest rank, d = {max(p.hashes)} less d = 1 (kb/s)", 0.0,
                      "at_most", 0.0, c2, "the extra bandwidth is taken 'mainly from the fastest flows' (< 0)"),
        ]

    def plot(self, t: pl.DataFrame, p: HashesParams, path: Path) -> Path:
        titles = {"C1": "Fig 11: 50 TCP, k = 32", "C2": "Fig 12: 49 TCP + 1 CBR at 2.5 Mb/s, k = 32 (the CBR flow: star, flow 50)"}
        return _ranked_panels(t, [(c, titles[c]) for c in p.cases], path, tuple(f"mqfq{d}" for d in p.hashes),
                              tagged=("C2",))

    def example_scenario(self, p: HashesParams) -> dict[str, Any]:
        return self.points(p)[("C2", "mqfq2")][0]


# ---------------------------------------------------------------------------
# Fig 1: interference, the theory beside the simulation's flows


@dataclass(frozen=True)
class InterferenceParams:
    setup: Setup
    ks: tuple[int, ...] = (2, 4, 8, 16, 23, 32, 64, 128, 256)


CLASSES = ("shared", "one_shared", "none")


def classify(flows: pl.DataFrame) -> pl.DataFrame:
    """Each well-behaved flow's overlap class with the misbehaving flows of its run
    (:func:`aqmlab.theory.mqfq.overlap_class`, from the queues the run reports)."""
    from ..theory.mqfq import overlap_class

    rows = []
    for (case, scheme, seed), run in flows.group_by("case", "scheme", "seed"):
        bad = {q for qs in run.filter(pl.col("misbehaving"))["queues"].to_list() for q in qs}
        for r in run.filter(~pl.col("misbehaving")).iter_rows(named=True):
            rows.append({"case": case, "scheme": scheme, "seed": seed, "kbps": r["kbps"],
                         "overlap": overlap_class(r["queues"], bad)})
    return pl.DataFrame(rows)


class Interference(Experiment):
    id = "georg.fig1"
    title = "Interference with a misbehaving flow: theory against k, and the simulation's flows (Fig 1)"
    source = "seed 001 (Georg, Jechlitschek and Gorinsky, MQFQ), Fig 1, section III; digest 001 section 3"
    summary = (
        "The report's probabilities that a flow shares all its queues (complete interference) or at least one "
        "(partial) with a misbehaving flow, under SFQ (1/k) and MQFQ (4/k^2 - 3/k^3, 4/k - 6/k^2 + 3/k^3), against "
        "k; beside them, the share of A2's and B3's 49 well-behaved flows in each class in our runs (the queues "
        "each flow hashed to, from the run), and each class's mean throughput."
    )
    differences = (
        "Fig 1 is the theory only; the simulated classes are ours, from the same runs as Figs 4 and 8 "
        "(georg.cbr and georg.tcp). The classes of a run are exact; over 10 runs of 49 flows their shares "
        "scatter around the theory by about 0.02-0.03."
    )
    fidelities = {
        "quick": InterferenceParams(Setup(40.0, 10.0, 3)),
        "paper": InterferenceParams(Setup(100.0, 10.0, 10)),
    }

    def points(self, p: InterferenceParams) -> dict[tuple[str, str], list[dict[str, Any]]]:
        s = p.setup
        cases = {"A2": CBR_CASES["A2"], "B3": TCP_CASES["B3"]}
        return {(c, sc): [scenario(f"georg-{c}-{sc}", qdisc(sc, s.buffer, s.queues), cases[c], s, seed)
                          for seed in range(1, s.seeds + 1)] for c in cases for sc in ("sfq", "mqfq")}

    def measure(self, runner: Any, p: InterferenceParams) -> pl.DataFrame:
        from ..theory.mqfq import overlap_classes

        sim = classify(measure_runs(runner, self.points(p), self.id))
        runs = sim.group_by("case", "scheme").agg(pl.col("seed").n_unique().alias("runs"))
        agg = (sim.group_by("case", "scheme", "overlap").agg(pl.len().alias("flows"),
                                                             pl.col("kbps").mean().alias("mean_kbps"))
               .join(runs, on=["case", "scheme"])
               .with_columns((pl.col("flows") / (pl.col("runs") * 49)).alias("share"))
               .with_columns(pl.lit(p.setup.queues).alias("k"), pl.lit("simulation").alias("source")))
        theory = [{"case": "", "scheme": sc, "overlap": cl, "k": k, "share": v, "source": "theory"}
                  for k in p.ks for sc, d in (("sfq", 1), ("mqfq", 2))
                  for cl, v in overlap_classes(d, k).items()]
        return pl.concat([agg.select("case", "scheme", "overlap", "k", "share", "flows", "mean_kbps", "source"),
                          pl.DataFrame(theory)], how="diagonal_relaxed").sort("source", "case", "scheme", "k", "overlap")

    def findings(self, t: pl.DataFrame, p: InterferenceParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        sim = t.filter(pl.col("source") == "simulation")
        for case in ("A2", "B3"):
            for sc in ("sfq", "mqfq"):
                for cl in CLASSES:
                    row = sim.filter((pl.col("case") == case) & (pl.col("scheme") == sc) & (pl.col("overlap") == cl))
                    out[f"{case}_{sc}_{cl}_share"] = float(row["share"].item()) if row.height else 0.0
                    out[f"{case}_{sc}_{cl}_kbps"] = float(row["mean_kbps"].item()) if row.height else None
        return out

    def references(self, p: InterferenceParams) -> list[Reference]:
        from ..theory.mqfq import overlap_classes

        k = p.setup.queues
        refs = []
        n_flows = 49 * p.setup.seeds
        for case in ("A2", "B3"):
            for sc, d in (("sfq", 1), ("mqfq", 2)):
                for cl, v in overlap_classes(d, k).items():
                    if d == 1 and cl == "one_shared":
                        continue
                    # three binomial standard deviations over the runs' flows, at least 0.02
                    tol = max(0.02, 3 * math.sqrt(v * (1 - v) / n_flows))
                    refs.append(Reference(
                        f"{case}_{sc}_{cl}_share", f"{case}, {sc.upper()}, share of flows: {cl.replace('_', ' ')}",
                        v, "abs", round(tol, 3), "Fig 1, section III (aqmlab.theory.mqfq.overlap_classes)",
                        {"shared": "SFQ: 1/k; MQFQ: complete interference, 4/k^2 - 3/k^3",
                         "one_shared": "MQFQ: partial less complete interference",
                         "none": "1 - partial interference"}[cl]))
        return refs

    def plot(self, t: pl.DataFrame, p: InterferenceParams, path: Path) -> Path:
        plt = _pyplot()
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
        th = t.filter(pl.col("source") == "theory")
        for sc, cl, label, style in (("sfq", "shared", "SFQ, 1/k", "-"),
                                     ("mqfq", "shared", "MQFQ complete", "--"),
                                     ("mqfq", "partial", "MQFQ partial", ":")):
            d = th.filter(pl.col("scheme") == sc)
            if cl == "partial":
                d = d.filter(pl.col("overlap") != "none").group_by("k").agg(pl.col("share").sum()).sort("k")
            else:
                d = d.filter(pl.col("overlap") == cl).sort("k")
            left.plot(d["k"], d["share"], style, marker=".", label=label)
        sim = t.filter(pl.col("source") == "simulation")
        for (sc, cl), marker in zip((("sfq", "shared"), ("mqfq", "shared"), ("mqfq", "partial")), "os^"):
            d = sim.filter(pl.col("scheme") == sc)
            d = d.filter(pl.col("overlap") != "none") if cl == "partial" else d.filter(pl.col("overlap") == cl)
            for case in ("A2", "B3"):
                v = d.filter(pl.col("case") == case)["share"].sum()
                left.plot([p.setup.queues], [v], marker, color="k", ms=5, alpha=0.6)
        left.set_xscale("log", base=2)
        left.set_yscale("log")
        left.set_xlabel("queues k")
        left.set_ylabel("probability of interference")
        left.set_title("Fig 1 (black: simulated shares at k = 16)", fontsize="medium")
        left.grid(True, alpha=0.3)
        left.legend(fontsize="small")
        for i, case in enumerate(("A2", "B3")):
            for j, sc in enumerate(("sfq", "mqfq")):
                d = sim.filter((pl.col("case") == case) & (pl.col("scheme") == sc))
                xs = [CLASSES.index(c) + 0.2 * (2 * i + j) for c in d["overlap"]]
                right.bar(xs, d["mean_kbps"], width=0.2, label=f"{case} {sc.upper()}")
        right.set_xticks([0.3, 1.3, 2.3], ["all queues shared", "one queue shared", "no overlap"])
        right.set_ylabel("mean throughput (kb/s)")
        right.set_title("well-behaved flows by overlap with the misbehaving flow", fontsize="medium")
        right.legend(fontsize="small")
        right.grid(True, axis="y", alpha=0.3)
        return _save(fig, path)

    def example_scenario(self, p: InterferenceParams) -> dict[str, Any]:
        return self.points(p)[("A2", "mqfq")][0]


# ---------------------------------------------------------------------------
# Fig 2: reordering, and the two ways of preventing it


@dataclass(frozen=True)
class ReorderParams:
    setup: Setup
    flows: int = 50
    transfer_bytes: int = 10_000  #: not a whole number of segments: each transfer ends with a short packet
    mean_off_ms: float = 200.0


REORDER = ("none", "resequence", "cells")


class Reordering(Experiment):
    id = "georg.fig2"
    title = "MQFQ's reordering of mixed packet sizes, without and with its two fixes (Fig 2, section IV)"
    source = "seed 001 (Georg, Jechlitschek and Gorinsky, MQFQ), Fig 2, section IV; digest 001 section 2.4"
    summary = (
        "MQFQ (16 queues, 1500-byte quantum) carries 50 web-like TCP flows: transfers of 10,000 bytes of 1500-byte "
        "packets, each ending with a shorter one, separated by exponential idle times. A short packet after a long "
        "one is the report's Fig 2 case. Packets reordered per flow (RFC 4737, the run's flow statistics), with "
        "no fix, with the one-round resequencing buffer, and with 64-byte cells."
    )
    differences = (
        "Fig 2 is a worked example, not a measurement; we count reordering in a run where it can happen. The "
        "report notes large-to-small transitions happen 'mainly at lulls in transmission', hence transfers that "
        "end with a short packet. In cell mode the buffer counts cells (2400 of 64 bytes, about 100 packets)."
    )
    fidelities = {
        "quick": ReorderParams(Setup(60.0, 5.0, 3)),
        "paper": ReorderParams(Setup(100.0, 10.0, 10)),
    }

    def scenarios(self, p: ReorderParams, reorder: str) -> list[dict[str, Any]]:
        s = p.setup
        q = qdisc("mqfq", s.buffer, s.queues, 2, reorder) | {"quantum": "1500B"}
        if reorder == "cells":
            q |= {"limit": f"{s.buffer * 24}pkt", "cell": "64B"}
        out = []
        for seed in range(1, s.seeds + 1):
            sc = scenario(f"georg-fig2-{reorder}", q, (Tcp(p.flows),), s, seed)
            sc["tcp"] |= {"packet_size": "1500B"}
            sc["flows"][0] |= {"size": f"{p.transfer_bytes}B",
                               "off_time": {"dist": "exponential", "mean": f"{p.mean_off_ms:g}ms"}}
            out.append(sc)
        return out

    def measure(self, runner: Any, p: ReorderParams) -> pl.DataFrame:
        points = {("fig2", r): self.scenarios(p, r) for r in REORDER}
        f = measure_runs(runner, points, self.id)
        return (f.group_by("scheme", "seed").agg(pl.col("packets_reordered").sum().alias("reordered"),
                                                 (pl.col("packets_reordered") > 0).sum().alias("flows_reordered"),
                                                 pl.col("kbps").sum().alias("total_kbps"))
                .rename({"scheme": "reorder"}).sort("reorder", "seed"))

    def findings(self, t: pl.DataFrame, p: ReorderParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for r in REORDER:
            d = t.filter(pl.col("reorder") == r)
            out[f"{r}_reordered"] = float(d["reordered"].sum())
            out[f"{r}_flows_reordered"] = float(d["flows_reordered"].mean())
        return out

    def references(self, p: ReorderParams) -> list[Reference]:
        src = "section IV, Fig 2"
        return [
            Reference("none_reordered", "packets reordered, no fix (all runs)", 1.0, "at_least", 0.0, src,
                      "'a small packet might be sent out from a queue which did not have room for the larger, "
                      "earlier packet' (> 0)"),
            Reference("resequence_reordered", "packets reordered, resequencing buffer", 0.0, "at_most", 0.0, src,
                      "'a small buffer at the output port which waits one round ... eliminates reordering'"),
            Reference("cells_reordered", "packets reordered, fixed-size cells", 0.0, "at_most", 0.0, src,
                      "with cells of one size the theorem applies: no reordering"),
        ]

    def plot(self, t: pl.DataFrame, p: ReorderParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        means = [t.filter(pl.col("reorder") == r)["reordered"].mean() for r in REORDER]
        ax.bar(REORDER, means, color=["tab:red", "tab:blue", "tab:green"])
        ax.set_ylabel("packets reordered per run")
        ax.set_title("MQFQ, 50 web-like TCP flows of 1500-byte packets", fontsize="medium")
        ax.grid(True, axis="y", alpha=0.3)
        return _save(fig, path)

    def example_scenario(self, p: ReorderParams) -> dict[str, Any]:
        return self.scenarios(p, "none")[0]


EXPERIMENTS: list[Experiment] = [Interference(), Reordering(), CbrFlows(), TcpFlows(), ManyFlows(), MoreHashes()]
