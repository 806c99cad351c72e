"""Seed 000, chapter 5: flows sharing queues (digest 000 sections 2.10, 2.11, 4.9, 4.10).

Two questions. How many queues do the discard policies need (Fig 5.1: 100 flows per
bottleneck spread evenly over fewer queues, ``mapping = "modulo"``)? And how evenly do
Bloom-filter counters spread flows over few queues, statically (Table 5.2, Fig 5.4) and
while flows come and go (Tables 5.6-5.8), against plain hashing (``mapping = "hash"``)?

The flow distribution is the simulator's own: a ``bloom`` map of the bottleneck's
discipline (docs/disciplines/queue-mapping.md) decides each packet's queue from its
flow's key, counts flows in its filters for 50 ms every 200 ms, assigns filters greedily
(Fig 5.3) and rebalances by Periodic Balancing (Fig 5.8), Balancing at Dequeue (Fig 5.9)
or both. What the report plots is the *true* flows per queue, which the distributor only
estimates; it is read from the run: at its end for the static tables (``[trace]
flow_queues``: the queue each flow is in) and at every sample over time under churn
(``[trace] queue_flows``: the most and fewest sending flows in one queue).

A flow is a destination address (A-BF6): a flow that changes its destination is one flow
that stops and another that starts, from the same source host, so churn is a chain of
UDP flows per source, each stopping when the next starts (``stop`` per flow).
"""

from __future__ import annotations

import math
import heapq
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ...plots import pyplot as _pyplot
from ...plots import save as _save
from ...theory import kantawala as theory
from ...topology import rng as _rng
from ..core import Experiment, Reference, run_dirs
from . import common

PROBE_BYTES = 64  #: the static runs' packets: small, so that 100,000 flows fit one link
POLICIES = ("static", "periodic", "dequeue", "both", "hash")
LABELS = {"static": "static greedy", "periodic": "PB", "dequeue": "DB", "both": "PB + DB", "hash": "hashing"}
MARKERS = {"static": "x", "periodic": "s", "dequeue": "o", "both": "^", "hash": "v"}
NEVER_FULL_HOST = {"kind": "droptail", "limit": "1000000pkt"}


def distributor(policy: str, queues: int, filters: int, buffer_pkts: int, flows: int,
                kind: str = "qsdrr") -> dict[str, Any]:
    """The bottleneck's discipline (QSDRR, as sections 5.3.1-5.3.2 run it) with ``queues``
    queues fed by ``filters`` Bloom filters and ``policy``'s balancing, or by plain
    hashing. Each filter has the bits for a false-positive rate under 1% at the flows it
    holds on average (section 5.1.3: 10 bits a flow; 50 for Table 5.1's 5 flows); the
    filters' k bit positions are distinct for any m (the simulator's ``BloomFilters``)."""
    q: dict[str, Any] = {"kind": kind, "limit": f"{buffer_pkts}pkt", "queues": queues}
    if policy == "hash":
        return q | {"mapping": "hash"}
    bits = theory.bloom_bits_for_fp(max(1, math.ceil(flows / filters)), 0.01)
    return q | {"mapping": "bloom", "bloom": {"filters": filters, "bits": bits, "balancing": policy}}


def max_min(counts: np.ndarray) -> float:
    """Max/min flows per queue; infinite when a queue holds none (digest 5)."""
    low = counts.min()
    return float(counts.max() / low) if low > 0 else math.inf


# ---------------------------------------------------------------------------
# Table 5.2 and Fig 5.4: the static distribution


def static_scenario(policy: str, flows: int, filters: int, queues: int, seed: int) -> dict[str, Any]:
    """``flows`` flows, each sending a 64-byte packet every 10 ms from t = 0 (so each is
    counted in the first 50 ms window) to one receiver through the distributor; the run
    ends at 60 ms, after the greedy assignment (static: held) or hashing. The runs' seed
    draws the hash functions: a seed is one random draw of A-BF8."""
    rate_bps = PROBE_BYTES * 8 * 100
    link_bps = max(1e9, 2 * flows * rate_bps)
    return {
        "name": f"kantawala-bloom-static-{policy}-{flows}-{filters}-{queues}",
        "description": "seed 000, chapter 5 (aqmlab.experiments.kantawala.chapter5)",
        "seed": seed,
        "duration": "60ms",
        "sample_interval": "0s",
        "topology": {
            "kind": "dumbbell", "senders": 1, "receivers": 1,
            "bottleneck": {"rate": f"{link_bps:.0f}bps", "delay": "0ms",
                           "qdisc": distributor(policy, queues, filters, 10 * flows, flows)},
            "access": {"rate": f"{link_bps:.0f}bps", "delay": "0ms"},
            "access_qdisc": NEVER_FULL_HOST,
        },
        "flows": [{"kind": "udp", "group": "flows", "count": flows, "src": "s0", "dst": "d0", "model": "cbr",
                   "rate": f"{rate_bps}bps", "packet_size": f"{PROBE_BYTES}B", "header_size": "0B",
                   "start": {"dist": "uniform", "low": "0s", "high": "10ms"}}],
        "trace": {"flow_queues": "bottleneck"},
    }


def queue_counts(directory: Path, queues: int) -> np.ndarray:
    """Flows per queue at the end of a run (``[trace] flow_queues``)."""
    q = pl.read_parquet(directory / "flows.parquet", columns=["queues"])["queues"].list.first().to_numpy()
    return np.bincount(q.astype(np.int64), minlength=queues)


@dataclass(frozen=True)
class StaticParams:
    #: Table 5.2's rows (flows, filters, queues)
    table: tuple[tuple[int, int, int], ...]
    #: Fig 5.4: flows, flow:queue ratios, filters per queue
    sweep_flows: int
    ratios: tuple[int, ...]
    filters_per_queue: tuple[int, ...] = (5, 10, 20)
    seeds: int = 10


class StaticDistribution(Experiment):
    id = "kantawala.e5_static"
    title = "Bloom filters and greedy assignment against hashing: max/min flows per queue (Table 5.2, Fig 5.4)"
    source = ("seed 000 (Kantawala and Turner, WUCSE-2005-11), Table 5.2 and Fig 5.4, sections 5.1-5.2; digest 000 "
              "sections 2.11, 3.5, 4.10 (E5a, E5b), A-BF1, A-BF2, A-BF3, A-BF8")
    summary = (
        "Flows with random keys go through the bottleneck's discipline, whose Bloom-filter distributor counts them "
        "in the first 50 ms and assigns its filters to queues greedily (Fig 5.3), or hashes each flow to a queue. "
        "The true max/min flows per queue after the assignment, averaged over random draws of the hash functions "
        "(the runs' seeds): Table 5.2's three (flows, filters, queues), and Fig 5.4's sweep of the flow:queue "
        "ratio at 5, 10 and 20 filters per queue."
    )
    differences = (
        "The report does not say how many random draws its averages are over, nor Fig 5.4's other two filter "
        "counts (A-BF3: we take 5, 10 and 20 per queue). A draw here is a run of the simulator (its seed), so "
        "the paper fidelity's 100,000-flow points take a few seconds each."
    )
    fidelities = {
        "quick": StaticParams(table=((10000, 2000, 200), (1000, 200, 20)), sweep_flows=2000,
                              ratios=(1, 5, 10, 50, 100), seeds=3),
        "paper": StaticParams(table=((100000, 20000, 2000), (10000, 2000, 200), (1000, 200, 20)),
                              sweep_flows=100000, ratios=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000), seeds=10),
    }

    def points(self, p: StaticParams) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
        pts: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for flows, filters, queues in p.table:
            for policy in ("static", "hash"):
                pts[("table", policy, flows, filters, queues)] = [
                    static_scenario(policy, flows, filters, queues, seed) for seed in range(1, p.seeds + 1)]
        for ratio in p.ratios:
            queues = max(1, p.sweep_flows // ratio)
            pts[("sweep", "hash", p.sweep_flows, 0, queues)] = [
                static_scenario("hash", p.sweep_flows, queues, queues, seed) for seed in range(1, p.seeds + 1)]
            for fpq in p.filters_per_queue:
                pts[("sweep", "static", p.sweep_flows, fpq * queues, queues)] = [
                    static_scenario("static", p.sweep_flows, fpq * queues, queues, seed)
                    for seed in range(1, p.seeds + 1)]
        return pts

    def measure(self, runner: Any, p: StaticParams) -> pl.DataFrame:
        pts = self.points(p)
        keys = list(pts)
        dirs = run_dirs(runner, [pts[k] for k in keys], self.id)
        rows = []
        for (part, policy, flows, filters, queues), runs in zip(keys, dirs):
            ratios = [max_min(queue_counts(d, queues)) for d in runs]
            finite = [r for r in ratios if math.isfinite(r)]
            rows.append({"part": part, "policy": policy, "flows": flows, "filters": filters, "queues": queues,
                         "flows_per_queue": flows / queues,
                         "filters_per_queue": filters / queues if policy != "hash" else None,
                         # a draw with an empty queue makes the average infinite, as in Fig 5.4
                         "max_min": float(np.mean(ratios)),
                         "max_min_finite": float(np.mean(finite)) if finite else math.inf,
                         "draws_with_empty_queue": len(ratios) - len(finite), "draws": len(ratios)})
        return pl.DataFrame(rows).sort("part", "policy", "flows", "queues", "filters")

    def findings(self, t: pl.DataFrame, p: StaticParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for flows, filters, queues in p.table:
            for policy in ("static", "hash"):
                r = t.filter((pl.col("part") == "table") & (pl.col("policy") == policy) & (pl.col("flows") == flows))
                out[f"table_{flows}_{'bloom' if policy == 'static' else 'hash'}"] = float(r["max_min"].item())
        sweep = t.filter(pl.col("part") == "sweep")
        bloom = sweep.filter(pl.col("policy") == "static")
        out["bloom_worst_above_ratio_10"] = float(bloom.filter(pl.col("flows_per_queue") > 10)["max_min"].max())
        hashing = sweep.filter(pl.col("policy") == "hash")
        below5 = hashing.filter(pl.col("flows_per_queue") < 5)
        out["hash_empty_queue_share_below_ratio_5"] = (
            float((below5["draws_with_empty_queue"] / below5["draws"]).min()) if below5.height else None)
        below100 = hashing.filter(pl.col("flows_per_queue") < 100)
        out["hash_least_below_ratio_100"] = float(below100["max_min"].min()) if below100.height else None
        return out

    def references(self, p: StaticParams) -> list[Reference]:
        paper = {100000: (1.10, 2.55), 10000: (1.06, 2.52), 1000: (1.04, 1.62)}
        refs = []
        for flows, filters, queues in p.table:
            bloom, hashing = paper[flows]
            refs += [
                Reference(f"table_{flows}_bloom", f"({flows}, {filters}, {queues}): Bloom + greedy, average max/min",
                          bloom, "abs", 0.1, "Table 5.2"),
                Reference(f"table_{flows}_hash", f"({flows}, {filters}, {queues}): hashing, average max/min",
                          hashing, "abs", 0.3, "Table 5.2"),
            ]
        refs += [
            Reference("bloom_worst_above_ratio_10", "Bloom, worst average max/min at flow:queue > 10", 1.2,
                      "at_most", 0.0, "Fig 5.4, section 5.1.3", "'less than 1.2 for flow:queue ratios above 10'"),
            Reference("hash_empty_queue_share_below_ratio_5", "hashing, flow:queue < 5: share of draws with an "
                      "empty queue (max/min infinite)", 1.0, "at_least", 0.0, "Fig 5.4",
                      "'for ratios < 5 some queue is empty'"),
            Reference("hash_least_below_ratio_100", "hashing, least average max/min at flow:queue < 100", 3.0,
                      "at_least", 0.0, "Fig 5.4, section 5.1.3", "'remains significantly higher (above 3) for flow to "
                      "queue ratios lower than 100'",
                      "The report's own Table 5.2 gives hashing 2.52-2.55 at a flow:queue ratio of 50, below 3; ours "
                      "agrees with the table."),
        ]
        return refs

    def plot(self, t: pl.DataFrame, p: StaticParams, path: Path) -> Path:
        plt = _pyplot()
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
        sweep = t.filter(pl.col("part") == "sweep")
        h = sweep.filter(pl.col("policy") == "hash").sort("flows_per_queue")
        ax.plot(h["flows_per_queue"], h["max_min"].replace(math.inf, None), marker="v", label="hashing")
        for fpq in p.filters_per_queue:
            d = sweep.filter((pl.col("policy") == "static") & (pl.col("filters_per_queue") == fpq)).sort(
                "flows_per_queue")
            ax.plot(d["flows_per_queue"], d["max_min"], marker="o", ms=4, label=f"Bloom, {fpq} filters/queue")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("flows per queue")
        ax.set_ylabel("max/min flows per queue (infinite: not drawn)")
        ax.set_title(f"Fig 5.4: {p.sweep_flows} flows", fontsize="medium")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize="small")
        tab = t.filter(pl.col("part") == "table").sort("flows")
        labels = [f"({r['flows']}, {r['filters']}, {r['queues']})" for r in tab.filter(
            pl.col("policy") == "static").iter_rows(named=True)]
        x = np.arange(len(labels))
        for i, (policy, name) in enumerate((("static", "Bloom + greedy"), ("hash", "hashing"))):
            bx.bar(x + 0.4 * i, tab.filter(pl.col("policy") == policy)["max_min"], width=0.4, label=name)
        bx.set_xticks(x + 0.2, labels, fontsize="small")
        bx.set_ylabel("average max/min flows per queue")
        bx.set_title("Table 5.2: (flows, filters, queues)", fontsize="medium")
        bx.legend(fontsize="small")
        return _save(fig, path)

    def example_scenario(self, p: StaticParams) -> dict[str, Any]:
        flows, filters, queues = p.table[-1]
        return static_scenario("static", flows, filters, queues, 1)


# ---------------------------------------------------------------------------
# Tables 5.6-5.8: a constant number of flows that change destinations


@dataclass(frozen=True)
class ChurnParams:
    sources: int = 1000
    queues: int = 20
    filters: int = 200
    link_bps: float = 1.2e9  #: about 85% load
    buffer: int = 4000
    hold_times_s: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0)
    policies: tuple[str, ...] = ("periodic", "dequeue", "both", "hash", "static")
    duration_s: float = 200.0
    measure_from_s: float = 1.0  #: after the first assignment (50 ms) and its first rebalancings
    sample_s: float = 0.02
    source_bps: float = 1e6
    seeds: int = 1

    @property
    def sized_for(self) -> int:
        """The flows the filters are sized for (10 bits a flow, :func:`distributor`)."""
        return self.sources


def churn_flows(p: ChurnParams, hold_s: float, seed: int) -> dict[str, Any]:
    """The flows of :class:`DestinationChurn` as one UDP entry: each source's chain of
    destinations, flow after flow from the same host, each held for an exponential time
    of mean ``hold_s`` (the first from t = 0, the last to the end of the run)."""
    g = _rng(seed, f"kantawala-churn-{hold_s:g}")
    src, start, stop = [], [], []
    end_ns = round(p.duration_s * 1e9)
    for s in range(p.sources):
        t = 0
        while t < end_ns:
            nxt = t + max(1, round(g.exponential(hold_s) * 1e9))
            src.append(f"s{s}")
            start.append(f"{t}ns")
            stop.append(f"{min(nxt, end_ns + 1)}ns")
            t = nxt
    return {"kind": "udp", "group": "sources", "count": len(src), "src": src, "dst": "d0", "model": "poisson",
            "rate": f"{p.source_bps:.0f}bps", "packet_size": f"{common.PACKET_BYTES}B", "header_size": "0B",
            "start": start, "stop": stop}


def churn_scenario(policy: str, hold_s: float, p: ChurnParams, seed: int = 1) -> dict[str, Any]:
    """Section 5.3.2: ``sources`` Poisson sources of 1 Mb/s on their own 10 Mb/s access links,
    into a 1.2 Gb/s QSDRR bottleneck with ``queues`` queues fed by ``filters`` Bloom filters
    (or hashing); every flow changes destination after an exponential hold time."""
    return bloom_scenario(f"kantawala-bloom-churn-{policy}-hold{hold_s:g}", policy, p, p.sources,
                          churn_flows(p, hold_s, seed), p.duration_s, seed)


def bloom_scenario(name: str, policy: str, p: Any, senders: int, flows: dict[str, Any], duration_s: float,
                   seed: int) -> dict[str, Any]:
    """A run of section 5.3: ``flows`` from ``senders`` hosts on 10 Mb/s access links into the
    QSDRR bottleneck of ``p`` (its rate, buffer, queues and filters), its true flows per
    queue sampled every ``p.sample_s``."""
    return {
        "name": name,
        "description": "seed 000, chapter 5 (aqmlab.experiments.kantawala.chapter5)",
        "seed": seed,
        "duration": f"{round(duration_s * 1e3)}ms",
        "sample_interval": f"{round(p.sample_s * 1e3)}ms",
        "topology": {
            "kind": "dumbbell", "senders": senders, "receivers": 1,
            "bottleneck": {"rate": f"{p.link_bps:.0f}bps", "delay": "1ms",
                           "qdisc": distributor(policy, p.queues, p.filters, p.buffer, p.sized_for)},
            "access": {"rate": "10Mbps", "delay": "0ms"},
            "receiver_access": {"rate": f"{p.link_bps:.0f}bps", "delay": "0ms"},
            "access_qdisc": common.HOST_QUEUE,
        },
        "flows": [flows],
        "trace": {"queue_flows": "bottleneck"},
    }


def imbalance_series(directory: Path, queues: int) -> pl.DataFrame:
    """The true max/min flows per queue at every sample (``[trace] queue_flows``):
    ``time_s``, ``max``, ``min`` (0 when some queue holds none) and ``ratio``."""
    ts = pl.read_parquet(directory / "timeseries.parquet")
    ts = ts.filter(pl.col("metric").cast(pl.Utf8).str.starts_with("queue_flows_"))
    wide = ts.with_columns(pl.col("metric").cast(pl.Utf8).str.strip_prefix("queue_flows_")).pivot(
        "metric", index="time_s", values="value").sort("time_s")
    low = pl.when(pl.col("queues") < queues).then(0.0).otherwise(pl.col("min"))
    return wide.select("time_s", "max", low.alias("min")).with_columns(
        pl.when(pl.col("min") > 0).then(pl.col("max") / pl.col("min")).otherwise(math.inf).alias("ratio"))


def ratio_summary(t: pl.DataFrame, case: str) -> pl.DataFrame:
    """Average, maximum and minimum of the max/min ratio over each run, by policy and
    ``case``; ``empty_share``: the samples with a queue holding no flow."""
    return t.group_by("policy", case).agg(
        pl.col("ratio").mean().alias("average"), pl.col("ratio").max().alias("maximum"),
        pl.col("ratio").min().alias("minimum"), pl.col("ratio").is_infinite().mean().alias("empty_share"),
    ).sort(case, "policy")


def _ratio_panels(t: pl.DataFrame, policies: tuple[str, ...], case: str, values: tuple[float, ...], title: str,
                  path: Path) -> Path:
    """The report's time plots: the true max/min flows per queue of each policy, a panel per case."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(values), 1, figsize=(9, 2.8 * len(values)), squeeze=False)
    for ax, v in zip(axes[:, 0], values):
        for policy in policies:
            d = t.filter((pl.col("policy") == policy) & (pl.col(case) == v) & (pl.col("seed") == 1))
            ax.plot(d["time_s"], d["ratio"].replace(math.inf, None), lw=0.7, label=LABELS[policy])
        ax.set_title(title.format(v), fontsize="medium")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("max/min flows per queue")
        ax.set_ylim(bottom=1)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", ncol=len(policies))
    return _save(fig, path)


class DestinationChurn(Experiment):
    id = "kantawala.e5_churn"
    title = ("Flows changing destination: PB, DB and both against hashing, max/min flows per queue over time "
             "(Tables 5.6-5.8, Figs 5.14-5.15)")
    source = ("seed 000 (Kantawala and Turner, WUCSE-2005-11), Tables 5.6-5.8, Figs 5.6, 5.14, 5.15, section 5.3.2; "
              "digest 000 sections 2.11, 4.10 (E5c, E5e), A-BF1 to A-BF6")
    summary = (
        "1000 Poisson sources of 1 Mb/s (1500-byte packets) into a 1.2 Gb/s QSDRR bottleneck with a 4000-packet "
        "buffer and 20 queues fed by 200 Bloom filters (cleared every 200 ms, counted for 50 ms); every flow "
        "changes destination after an exponential hold time of mean 0.5, 1, 2 or 5 s, for 200 s. The true "
        "max/min flows per queue, sampled every 20 ms: its average, maximum and minimum over the run, for "
        "Periodic Balancing, Balancing at Dequeue, both, plain hashing, and the static greedy assignment "
        "(Fig 5.6)."
    )
    differences = (
        "A destination is a flow key here: each change stops one flow and starts another from the same host "
        "(A-BF6). The measurement starts at 1 s, after the first assignment. Hashing's figures depend on its one "
        "draw of a hash function (the report's are one run too)."
    )
    fidelities = {
        "quick": ChurnParams(sources=400, queues=20, filters=200, link_bps=480e6, buffer=1600,
                             hold_times_s=(0.5, 2.0), policies=("periodic", "dequeue", "hash", "static"),
                             duration_s=12.0),
        "paper": ChurnParams(),
    }

    def points(self, p: ChurnParams) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
        return {(policy, h): [churn_scenario(policy, h, p, seed) for seed in range(1, p.seeds + 1)]
                for h in p.hold_times_s for policy in p.policies}

    def measure(self, runner: Any, p: ChurnParams) -> pl.DataFrame:
        pts = self.points(p)
        keys = list(pts)
        dirs = run_dirs(runner, [pts[k] for k in keys], self.id)
        frames = []
        for (policy, h), runs in zip(keys, dirs):
            for seed, d in enumerate(runs, start=1):
                s = imbalance_series(d, p.queues).filter(pl.col("time_s") >= p.measure_from_s)
                frames.append(s.with_columns(pl.lit(policy).alias("policy"), pl.lit(h).alias("hold_s"),
                                             pl.lit(seed).alias("seed")))
        return pl.concat(frames).select("policy", "hold_s", "seed", "time_s", "max", "min", "ratio")

    @staticmethod
    def summary_table(t: pl.DataFrame) -> pl.DataFrame:
        """Average, maximum and minimum of the max/min ratio over each run (Tables 5.6-5.8)."""
        return ratio_summary(t, "hold_s")

    def findings(self, t: pl.DataFrame, p: ChurnParams) -> dict[str, float | None]:
        s = self.summary_table(t)
        out: dict[str, float | None] = {}
        for r in s.iter_rows(named=True):
            for stat in ("average", "maximum", "minimum"):
                out[f"{r['policy']}_{r['hold_s']:g}_{stat}"] = r[stat]
        for h in p.hold_times_s:
            if "dequeue" in p.policies and "hash" in p.policies:
                out[f"hash_minus_dequeue_{h:g}"] = out[f"hash_{h:g}_average"] - out[f"dequeue_{h:g}_average"]
            if "static" in p.policies and "hash" in p.policies:
                out[f"static_over_hash_{h:g}"] = out[f"static_{h:g}_average"] / out[f"hash_{h:g}_average"]
        return out

    def references(self, p: ChurnParams) -> list[Reference]:
        #: Tables 5.6-5.8 (digest 4.10): hold time -> (PB, DB, Both, Hash) averages, maxima; minima (PB/DB, hash)
        avg = {0.5: (1.78, 1.40, 1.39, 1.71), 1.0: (1.65, 1.29, 1.29, 1.73), 2.0: (1.52, 1.22, 1.21, 1.73),
               5.0: (1.37, 1.16, 1.16, 1.72)}
        mx = {0.5: (3.16, 2.38, 2.21, 2.78), 1.0: (2.79, 1.85, 2.06, 2.78), 2.0: (2.56, 1.57, 1.62, 2.71),
              5.0: (1.91, 1.43, 1.39, 2.71)}
        refs = []
        order = ("periodic", "dequeue", "both", "hash")
        for h in p.hold_times_s:
            if h not in avg:
                continue
            for i, policy in enumerate(order):
                if policy not in p.policies:
                    continue
                refs.append(Reference(f"{policy}_{h:g}_average", f"hold {h:g} s: {LABELS[policy]}, average max/min",
                                      avg[h][i], "abs", 0.15, "Table 5.6"))
                refs.append(Reference(f"{policy}_{h:g}_maximum", f"hold {h:g} s: {LABELS[policy]}, maximum max/min",
                                      mx[h][i], "factor", 1.4, "Table 5.7"))
            if "dequeue" in p.policies and "hash" in p.policies:
                gap = round(avg[h][3] - avg[h][1], 2)
                refs.append(Reference(f"hash_minus_dequeue_{h:g}", f"hold {h:g} s: hashing's average less DB's",
                                      gap, "at_least", gap, "Table 5.6",
                                      "DB 'about 25% better at 0.5 s and about 50% at 5 s' than hashing (> 0)"))
            if "static" in p.policies and "hash" in p.policies:
                refs.append(Reference(f"static_over_hash_{h:g}", f"hold {h:g} s: static greedy's average / hashing's",
                                      1.0, "factor", 1.25, "Fig 5.6, section 5.2",
                                      "'the static mapping ... degrades to the same imbalance as simple hashing'"))
        return refs

    def plot(self, t: pl.DataFrame, p: ChurnParams, path: Path) -> Path:
        return _ratio_panels(t, p.policies, "hold_s", p.hold_times_s, "Figs 5.14-5.15: mean hold time {:g} s", path)

    def example_scenario(self, p: ChurnParams) -> dict[str, Any]:
        return churn_scenario("dequeue", p.hold_times_s[0], p)


# ---------------------------------------------------------------------------
# Fig 5.1 and Fig 6.13: flows sharing queues


@dataclass(frozen=True)
class BucketParams:
    scale: common.Scale
    buckets: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100)  #: per 100 flows (the paper's); scaled with the flows
    policies: tuple[str, ...] = ("drr", "tdrr", "qsdrr", "dtdrr", "dsdrr")
    topologies: tuple[str, ...] = ("sb", "mrtt", "mh")
    buffer: int = 1000

    def queues(self, b: int) -> int:
        return max(1, round(b * self.scale.factor))


#: The flows whose goodput each panel of Fig 5.1 shows (digest 4.9).
BUCKET_GROUPS = {"sb": ("all flows", None), "mrtt": ("200 ms flows", "rtt200"), "mh": ("end-to-end flows", "through")}


class Buckets(Experiment):
    id = "kantawala.e5_buckets"
    title = "Flows sharing queues: goodput and spread against the number of buckets, B = 1000 (Figs 5.1, 6.13)"
    source = ("seed 000 (Kantawala and Turner, WUCSE-2005-11), Fig 5.1 (section 5.0) and Fig 6.13 (section 6.4); "
              "digest 000 sections 2.10, 4.9, 6 reference 15")
    summary = (
        "The three long-lived topologies of chapter 3 (100 flows per bottleneck, B = 1000), the flows spread evenly "
        "over 1 to 100 queues (flow j in queue j mod n), under DRR, TDRR, QSDRR (Fig 5.1), DTDRR and DSDRR "
        "(Fig 6.13): (a) mean goodput as % of the fair share of all flows (single bottleneck), the 200 ms flows "
        "(two RTTs) and the end-to-end flows (multi-hop); (b) their standard deviation over the fair share."
    )
    differences = (
        "The report plots its bucket counts without listing them; we sweep 1, 2, 5, 10, 20, 50, 100 (digest 4.9). "
        "Quick fidelity: a fifth of the flows, rates and buffer (20 flows per bottleneck, B = 200), so its bucket "
        "counts are a fifth of the paper's (2 to 20 queues); at a tenth, 10 buckets per 100 flows is one queue, a "
        "FIFO, which is not what the paper's 10 buckets are."
    )
    fidelities = {
        "quick": BucketParams(common.Scale(factor=0.2, duration_s=100.0), buckets=(10, 20, 100),
                              policies=("qsdrr", "dtdrr"), topologies=("sb", "mrtt")),
        "paper": BucketParams(common.Scale()),
    }

    def scenario(self, topology: str, policy: str, b: int, p: BucketParams, seed: int = 1) -> dict[str, Any]:
        q = common.qdisc(policy, p.scale.buffer(p.buffer), queues=p.queues(b), mapping="modulo")
        s = common.TOPOLOGIES[topology](policy, p.buffer, p.scale, seed, "long", q=q)
        return s | {"name": f"{s['name']}-buckets{p.queues(b)}"}

    def measure(self, runner: Any, p: BucketParams) -> pl.DataFrame:
        pts = {(t, pol, b): [self.scenario(t, pol, b, p, seed) for seed in range(1, p.scale.seeds + 1)]
               for t in p.topologies for pol in p.policies for b in p.buckets}
        flows, queues = common.measure_flows(runner, pts, ("topology", "policy", "buckets"), self.id)
        frames = []
        for t, (_, group) in BUCKET_GROUPS.items():
            f = flows.filter(pl.col("topology") == t)
            if group is not None:
                f = f.filter(pl.col("group") == group)
            frames.append(common.group_stats(f, ["topology", "policy", "buckets"]))
        util = queues.group_by("topology", "policy", "buckets").agg(pl.col("utilization").mean())
        return (pl.concat(frames).join(util, on=["topology", "policy", "buckets"])
                .with_columns(pl.col("buckets").map_elements(p.queues, return_dtype=pl.Int64).alias("queues"))
                .sort("topology", "policy", "buckets"))

    def findings(self, t: pl.DataFrame, p: BucketParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}

        def at(top: str, pol: str, b: int, col: str) -> float:
            return float(t.filter((pl.col("topology") == top) & (pl.col("policy") == pol)
                                  & (pl.col("buckets") == b))[col].item())

        b_lo, b_hi = (10 if 10 in p.buckets else min(p.buckets)), max(p.buckets)
        for top in p.topologies:
            gains = [at(top, pol, b_hi, "mean_pct") - at(top, pol, b_lo, "mean_pct") for pol in p.policies]
            out[f"{top}_gain_{b_lo}_to_{b_hi}_buckets"] = max(gains)
            out[f"{top}_worst_std"] = float(t.filter((pl.col("topology") == top) & (pl.col("buckets") >= b_lo))
                                            ["std_fair"].max())
        return out

    def references(self, p: BucketParams) -> list[Reference]:
        b_lo, b_hi = (10 if 10 in p.buckets else min(p.buckets)), max(p.buckets)
        refs = []
        for top in p.topologies:
            what = BUCKET_GROUPS[top][0]
            refs += [
                Reference(f"{top}_gain_{b_lo}_to_{b_hi}_buckets", f"{top}: {what}, largest gain in mean % of fair "
                          f"share from {b_lo} to {b_hi} buckets per 100 flows", 0.0, "at_most", 10.0,
                          "Figs 5.1, 6.13", "'diminishing returns beyond 10 buckets ... only a marginal gain from 10 "
                          "to 100'"),
                Reference(f"{top}_worst_std", f"{top}: {what}, largest sigma / fair share at >= {b_lo} buckets", 0.15,
                          "at_most", 0.0, "Figs 5.1(b), 6.13(b)", "'stays below 15% of fair share'"),
            ]
        return refs

    def plot(self, t: pl.DataFrame, p: BucketParams, path: Path) -> Path:
        plt = _pyplot()
        fig, axes = plt.subplots(2, len(p.topologies), figsize=(4.6 * len(p.topologies), 7.5), squeeze=False)
        for col, top in enumerate(p.topologies):
            for row, (metric, ylabel) in enumerate((("mean_pct", "mean goodput, % of fair share"),
                                                    ("std_fair", "sigma / fair share"))):
                ax = axes[row, col]
                for pol in p.policies:
                    d = t.filter((pl.col("topology") == top) & (pl.col("policy") == pol)).sort("buckets")
                    ax.plot(d["buckets"], d[metric], marker=common.MARKERS[pol], ms=4, label=common.LABELS[pol])
                ax.set_xscale("log")
                ax.set_xlabel("buckets per 100 flows")
                ax.set_ylabel(ylabel)
                ax.set_title(f"{'(a)' if row == 0 else '(b)'} {top}: {BUCKET_GROUPS[top][0]}", fontsize="medium")
                ax.grid(True, alpha=0.3)
                ax.legend(fontsize="x-small")
        fig.suptitle(f"Figs 5.1 and 6.13: B = {p.buffer}, flows spread evenly over the buckets")
        return _save(fig, path)

    def example_scenario(self, p: BucketParams) -> dict[str, Any]:
        return self.scenario("sb", "qsdrr", 10, p)


# ---------------------------------------------------------------------------
# Tables 5.3-5.5: a population that grows and shrinks


@dataclass(frozen=True)
class PopulationParams:
    low: int = 2000
    high: int = 10000
    rates: tuple[float, ...] = (100.0, 50.0, 20.0, 10.0)  #: flow arrivals (then departures) a second
    queues: int = 200
    filters: int = 2000
    link_bps: float = 1.2e9
    buffer: int = 4000
    policies: tuple[str, ...] = ("periodic", "dequeue", "both", "hash")
    measure_from_s: float = 1.0
    hold_s: float = 2.0  #: at the low population again, before the run ends
    sample_s: float = 0.05
    source_bps: float = 1e6
    seeds: int = 1

    @property
    def sized_for(self) -> int:
        """The filters are sized for the peak (A-BF2: 10,000 / 2,000 = 5 flows a filter)."""
        return self.high


def population_flows(p: PopulationParams, rate: float, seed: int) -> tuple[dict[str, Any], int, float]:
    """Section 5.3.1 (A-BF6): ``low`` flows from t = 0; then flows arrive as a Poisson
    process of ``rate`` a second until there are ``high``, and from then leave at the same
    rate (a random one of those sending each time) until ``low`` are left. Each flow has a
    host of its own while it sends (hosts are reused). Returns the UDP entry, the hosts
    and the run's length (``hold_s`` past the last departure)."""
    g = _rng(seed, f"kantawala-population-{rate:g}")
    starts = [0.0] * p.low
    t = 0.0
    for _ in range(p.high - p.low):
        t += g.exponential(1.0 / rate)
        starts.append(t)
    stops = [math.inf] * p.high
    active = list(range(p.high))
    for _ in range(p.high - p.low):
        t += g.exponential(1.0 / rate)
        stops[active.pop(int(g.integers(len(active))))] = t
    end = t + p.hold_s
    # hosts: a free host for each flow in order of start, back in the pool at its stop
    free, busy, host = list(range(p.high)), [], [0] * p.high
    for f in sorted(range(p.high), key=lambda f: starts[f]):
        while busy and busy[0][0] <= starts[f]:
            free.append(heapq.heappop(busy)[1])
        host[f] = free.pop()
        heapq.heappush(busy, (stops[f], host[f]))
    ns = lambda x: f"{round(x * 1e9)}ns"  # noqa: E731
    entry = {"kind": "udp", "group": "sources", "count": p.high, "src": [f"s{h}" for h in host], "dst": "d0",
             "model": "poisson", "rate": f"{p.source_bps:.0f}bps", "packet_size": f"{common.PACKET_BYTES}B",
             "header_size": "0B", "start": [ns(x) for x in starts],
             "stop": [ns(min(x, end + 1.0)) for x in stops]}
    return entry, p.high, end


def population_scenario(policy: str, rate: float, p: PopulationParams, seed: int = 1) -> dict[str, Any]:
    flows, hosts, end = population_flows(p, rate, seed)
    return bloom_scenario(f"kantawala-bloom-population-{policy}-rate{rate:g}", policy, p, hosts, flows, end, seed)


class GrowingPopulation(Experiment):
    id = "kantawala.e5_population"
    title = ("Flows from 2,000 to 10,000 and back: PB, DB and both against hashing, max/min flows per queue over "
             "time (Tables 5.3-5.5, Figs 5.10-5.13)")
    source = ("seed 000 (Kantawala and Turner, WUCSE-2005-11), Tables 5.3-5.5, Figs 5.10-5.13, section 5.3.1; "
              "digest 000 sections 2.11, 4.10 (E5d), A-BF6, A-BF7")
    summary = (
        "Poisson sources of 1 Mb/s (1500-byte packets), each on its own 10 Mb/s access link, into a 1.2 Gb/s QSDRR "
        "bottleneck (B = 4000) with 200 queues fed by 2000 Bloom filters (cleared every 200 ms, counted for 50 ms); "
        "2000 flows at first, then arrivals at 10-100 flows a second up to 10,000, then departures at the same "
        "rate back to 2000. The true max/min flows per queue every 50 ms: its average, maximum and minimum."
    )
    differences = (
        "The ramps' shape is not given (A-BF6): arrivals only, then departures only, each a Poisson process of the "
        "stated rate, a departure taking a random flow. The link is overloaded up to 8 times (A-BF7); only the "
        "distribution is measured. Paper fidelity is heavy (a run of 1,600 s at 10 flows a second carries some "
        "8 x 10^8 packets); quick fidelity runs a twentieth of the flows, queues and filters at 5 flows a second "
        "(the same flows a queue and, per queue, the same churn as the paper's 100 a second)."
    )
    fidelities = {
        "quick": PopulationParams(low=100, high=500, rates=(5.0,), queues=10, filters=100, link_bps=60e6,
                                  buffer=200, policies=("periodic", "dequeue", "hash")),
        "paper": PopulationParams(),
    }

    def points(self, p: PopulationParams) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
        return {(policy, r): [population_scenario(policy, r, p, seed) for seed in range(1, p.seeds + 1)]
                for r in p.rates for policy in p.policies}

    def measure(self, runner: Any, p: PopulationParams) -> pl.DataFrame:
        pts = self.points(p)
        keys = list(pts)
        dirs = run_dirs(runner, [pts[k] for k in keys], self.id)
        frames = []
        for (policy, r), runs in zip(keys, dirs):
            for seed, d in enumerate(runs, start=1):
                sr = imbalance_series(d, p.queues).filter(pl.col("time_s") >= p.measure_from_s)
                frames.append(sr.with_columns(pl.lit(policy).alias("policy"), pl.lit(r).alias("rate"),
                                              pl.lit(seed).alias("seed")))
        return pl.concat(frames).select("policy", "rate", "seed", "time_s", "max", "min", "ratio")

    def findings(self, t: pl.DataFrame, p: PopulationParams) -> dict[str, float | None]:
        s = ratio_summary(t, "rate")
        out: dict[str, float | None] = {}
        for r in s.iter_rows(named=True):
            for stat in ("average", "maximum", "minimum"):
                out[f"{r['policy']}_{r['rate']:g}_{stat}"] = r[stat]
        return out

    def references(self, p: PopulationParams) -> list[Reference]:
        #: Tables 5.3-5.5 (digest 4.10): rate -> (PB, DB, Both, Hash) averages and maxima
        avg = {100: (1.98, 1.28, 1.28, 3.72), 50: (1.55, 1.21, 1.21, 3.72), 20: (1.34, 1.18, 1.18, 3.72),
               10: (1.28, 1.17, 1.18, 3.72)}
        mx = {100: (5.10, 2.50, 2.50, 11.0), 50: (3.50, 2.10, 2.10, 11.0), 20: (2.60, 1.70, 1.78, 11.0),
              10: (2.30, 1.83, 1.57, 11.0)}
        refs = []
        scaled = p.high != 10000
        for r in p.rates:
            paper_rate = round(r * 10000 / p.high)  # the paper's rate of the same churn per queue
            if paper_rate not in avg:
                continue
            for i, policy in enumerate(("periodic", "dequeue", "both", "hash")):
                if policy not in p.policies:
                    continue
                note = (f"{p.high / 10000:g} of the paper's setup at {r:g} flows/s, compared with its "
                        f"{paper_rate} flows/s" if scaled else "")
                refs.append(Reference(f"{policy}_{r:g}_average", f"{r:g} flows/s: {LABELS[policy]}, average max/min",
                                      avg[paper_rate][i], "factor", 1.25, "Table 5.3", note=note))
                refs.append(Reference(f"{policy}_{r:g}_maximum", f"{r:g} flows/s: {LABELS[policy]}, maximum max/min",
                                      mx[paper_rate][i], "factor", 1.5, "Table 5.4", note=note))
        return refs

    def plot(self, t: pl.DataFrame, p: PopulationParams, path: Path) -> Path:
        return _ratio_panels(t, p.policies, "rate", p.rates, "Figs 5.10-5.13: {:g} flows/s", path)

    def example_scenario(self, p: PopulationParams) -> dict[str, Any]:
        return population_scenario("dequeue", p.rates[0], p)


EXPERIMENTS: list[Experiment] = [Buckets(), StaticDistribution(), DestinationChurn(), GrowingPopulation()]
