"""aqmlab beside ns-2 on one scenario: both run the same resolved scenario (the same
flows, start times and sizes), over one or more draws of start times, and their figures
are compared with the bounds of docs/validation.md ("ns-2").

aqmlab runs twice: as the scenario is written, and with ns-2's model choices
(:func:`ns2_choices`: ns-2's order of simultaneous events, its RED, its RTT estimator),
where aqmlab's own differ on purpose. The bounds apply to the second; the first shows
what the choices are worth.

A draw moves every flow's start by the same uniform 0-200 ms offset in both simulators
(drawn from the scenario's seed and the draw's number) and gives both the scenario's
seed plus the draw's number, so that the mean over draws says how the two share the
link, not how one start schedule or one realization of a random source happened to fall.

The figures of one run (:func:`figures`): bottleneck utilization, loss rate (its queue's),
the share of its packets lost on its wire (its random ``loss``; unbounded), mean and
percentile queue (from the samples of the measurement window), the Jain index of the
long-lived TCP flows, the RTT-bias slope (least squares of log throughput on log base
RTT, over TCP flows with throughput; only where base RTTs differ), timeouts and fast
retransmits per TCP flow.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .ns2 import run_ns2
from .ns2.run import Ns2Results

#: Each compared figure: (name, how the difference is measured, bound). "abs": the
#: difference itself; "rel": the difference over ns-2's value.
BOUNDS: dict[str, tuple[str, float]] = {
    "utilization": ("abs", 0.005),
    "loss_rate": ("rel", 0.10),
    "jain_index": ("abs", 0.05),
    "rtt_bias_slope": ("abs", 0.15),
    "timeouts_per_flow": ("rel", 0.20),
}

#: The figures of a run, in the table's order.
FIGURES = [
    "utilization", "loss_rate", "wire_loss_rate", "mean_queue", "p50_queue", "p95_queue", "p99_queue",
    "jain_index", "rtt_bias_slope", "timeouts_per_flow", "fast_retransmits_per_flow",
]

#: The largest start offset of a draw.
DRAW_SPREAD_NS = 200_000_000


def draw_starts(resolved: dict[str, Any], draw: int) -> dict[str, Any]:
    """``resolved`` with every flow's start moved by a uniform 0-200 ms offset of draw
    ``draw``, and its seed moved by ``draw`` (each simulator's random streams, UDP
    sources and RED's drops among them, differ from draw to draw too); draw 0 leaves it
    as it is."""
    if draw == 0:
        return resolved
    out = copy.copy(resolved)
    out["seed"] = (int(resolved["seed"]) + draw) % 2**64
    out["flows"] = dict(resolved["flows"])
    starts = resolved["flows"]["start_ns"]
    rng = np.random.default_rng([int(resolved["seed"]), draw])
    out["flows"]["start_ns"] = starts + rng.integers(0, DRAW_SPREAD_NS, len(starts), dtype=np.int64)
    return out


def ns2_choices(resolved: dict[str, Any]) -> dict[str, Any]:
    """``resolved`` with ns-2's model where aqmlab's default differs on purpose:
    simultaneous events in component order (``ties``), RED with ns-2's rules, and
    ns-2's RTT estimator (docs/validation.md, "ns-2")."""
    out = copy.copy(resolved)
    out["ties"] = "numbered"
    links = dict(resolved["links"])
    links["qdiscs"] = [{**q, "variant": "ns2"} if q["kind"] == "red" else q for q in links["qdiscs"]]
    out["links"] = links
    out["tcp_profiles"] = [{**p, "rtt_estimator": "ns2"} for p in resolved["tcp_profiles"]]
    return out


def differences(resolved: dict[str, Any]) -> list[str]:
    """The model choices of ``resolved`` that ns-2 does not share."""
    notes = []
    if resolved.get("ties", "hashed") == "hashed":
        notes.append("ties: aqmlab orders simultaneous events by a fresh hash each nanosecond; ns-2 by component")
    if any(q["kind"] == "red" and q.get("variant", "fj93") == "fj93" for q in resolved["links"]["qdiscs"]):
        notes.append('red: FJ93\'s rules; ns-2 adds two (variant = "ns2")')
    if any(p.get("rtt_estimator", "rfc6298") == "rfc6298" for p in resolved["tcp_profiles"]):
        notes.append('tcp: an RTT sample every ACK (RFC 6298); ns-2 times one segment a round trip (rtt_estimator = "ns2")')
    return notes


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum())) if len(x) and (x**2).sum() > 0 else math.nan


def rtt_bias_slope(throughput: np.ndarray, rtt: np.ndarray) -> float:
    """The slope of log throughput against log base RTT (-1 is throughput ~ 1/RTT)."""
    keep = throughput > 0
    if keep.sum() < 2 or np.ptp(rtt[keep]) == 0:
        return math.nan
    return float(np.polyfit(np.log(rtt[keep]), np.log(throughput[keep]), 1)[0])


def _queue_figures(samples: np.ndarray) -> dict[str, float]:
    if not len(samples):
        return {k: math.nan for k in ("mean_queue", "p50_queue", "p95_queue", "p99_queue")}
    p50, p95, p99 = np.percentile(samples, [50, 95, 99])
    return {"mean_queue": float(samples.mean()), "p50_queue": p50, "p95_queue": p95, "p99_queue": p99}


def wire_loss_rate(q: dict[str, Any]) -> float:
    """The share of the packets a link sent in the window that its wire lost (its
    random ``loss``), from its queue row (``window_arrivals``, ``window_drops``,
    ``window_lost``)."""
    sent = q["window_arrivals"] - q["window_drops"]
    return q["window_lost"] / sent if sent else 0.0


def figures(flows: pl.DataFrame, utilization: float, loss_rate: float, samples: np.ndarray,
            wire_loss: float = 0.0) -> dict[str, float]:
    """The compared figures of one run, from its per-flow table (``kind``,
    ``size_bytes``, ``throughput_bps``, ``base_rtt_s``, ``timeouts``,
    ``fast_retransmits``) and its bottleneck's counters and queue samples."""
    tcp = flows.filter(pl.col("kind") == "tcp")
    long_lived = tcp.filter(pl.col("size_bytes").is_null())
    thr = long_lived["throughput_bps"].to_numpy()
    n = max(len(tcp), 1)
    return {
        "utilization": utilization,
        "loss_rate": loss_rate,
        "wire_loss_rate": wire_loss,
        **_queue_figures(samples),
        "jain_index": jain(thr),
        "rtt_bias_slope": rtt_bias_slope(thr, long_lived["base_rtt_s"].to_numpy()),
        "timeouts_per_flow": tcp["timeouts"].sum() / n,
        "fast_retransmits_per_flow": tcp["fast_retransmits"].sum() / n,
    }


def _window_samples(times: np.ndarray, values: np.ndarray, resolved: dict[str, Any]) -> np.ndarray:
    lo, hi = resolved["warmup_ns"] / 1e9, resolved["duration_ns"] / 1e9
    keep = (times >= lo - 1e-9) & (times <= hi + 1e-9)
    return values[keep]


def _bottleneck(resolved: dict[str, Any]) -> int:
    monitored = np.flatnonzero(resolved["links"]["monitor"])
    if len(monitored) == 0:
        from .errors import UserError

        raise UserError("the crosscheck compares a monitored bottleneck; the scenario monitors no link", "links")
    return int(monitored[0])


def aqmlab_figures(res: Any, resolved: dict[str, Any]) -> tuple[dict[str, float], pl.DataFrame]:
    from .names import NameList

    link = _bottleneck(resolved)
    name = NameList.from_contract(resolved["links"]["names"])[link]
    q = res.queues.filter(pl.col("link") == name).row(0, named=True)
    ts = res.timeseries.filter((pl.col("metric") == "queue_packets") & (pl.col("entity") == name))
    samples = _window_samples(ts["time_s"].to_numpy(), ts["value"].to_numpy(), resolved)
    return figures(res.flows, q["utilization"], q["loss_rate"], samples, wire_loss_rate(q)), res.flows


def ns2_figures(ns: Ns2Results, aq_flows: pl.DataFrame, resolved: dict[str, Any]) -> tuple[dict[str, float], pl.DataFrame]:
    """ns-2's figures; its flows take aqmlab's ``kind``, ``size_bytes`` and base RTT
    (the same flows on the same paths)."""
    link = _bottleneck(resolved)
    q = ns.queues.filter(pl.col("link") == link).row(0, named=True)
    s = ns.samples.filter(pl.col("link") == link)
    samples = _window_samples(s["time_s"].to_numpy(), s["queue_packets"].to_numpy(), resolved)
    flows = aq_flows.select("flow_id", "kind", "size_bytes", "base_rtt_s").join(ns.flows, on="flow_id", how="left")
    flows = flows.with_columns(pl.col("throughput_bps", "timeouts", "fast_retransmits").fill_null(0))
    return figures(flows, q["utilization"], q["loss_rate"], samples, wire_loss_rate(q)), flows


@dataclass
class CrossCheck:
    """Both simulators' figures for each draw (``runs``) and their means beside the
    bounds (``table``)."""

    runs: pl.DataFrame  # draw, simulator, one column per figure, wall_time_s
    table: pl.DataFrame  # figure, aqmlab, aqmlab_ns2, ns2, difference, measure, bound, within
    flows: pl.DataFrame  # draw, flow_id, base_rtt_s, throughput in each
    notes: list[str]  # the scenario's model choices ns-2 does not share


def _difference(ours: float | None, theirs: float | None, how: str) -> float:
    if ours is None or theirs is None:
        return math.nan
    diff = ours - theirs
    if how == "rel":
        return diff / theirs if theirs else (0.0 if diff == 0 else math.inf)
    return diff


def compare(runs: pl.DataFrame) -> pl.DataFrame:
    """The mean of each figure over the draws, side by side; the difference (and the
    bound) is that of aqmlab with ns-2's choices from ns-2."""
    means = {r["simulator"]: r for r in runs.group_by("simulator").agg(pl.col(FIGURES).mean()).iter_rows(named=True)}
    a, c, b = means["aqmlab"], means["aqmlab_ns2"], means["ns2"]
    rows = []
    for f in FIGURES:
        how, bound = BOUNDS.get(f, ("", math.nan))
        diff = _difference(c[f], b[f], how or "abs")
        within = None if not how or math.isnan(diff) else abs(diff) <= bound
        rows.append({"figure": f, "aqmlab": a[f], "aqmlab_ns2": c[f], "ns2": b[f], "difference": diff,
                     "measure": how or None, "bound": bound if how else None, "within": within})
    return pl.DataFrame(rows, schema_overrides={"measure": pl.Utf8, "bound": pl.Float64, "within": pl.Boolean})


def crosscheck_ns2(scenario: Any, out: Path, draws: int = 1, packets: bool = False, engine: str = "fast") -> CrossCheck:
    """Run ``scenario`` (a Scenario, path or dict) in aqmlab (as written, and with
    :func:`ns2_choices`) and in ns-2 for each draw of start times; write ns-2's script
    and output under ``out``/draw<k>/."""
    from .run import run_resolved
    from .scenario import Scenario

    s = Scenario.coerce(scenario)
    base = s.resolve()
    runs, flows = [], []
    for d in range(draws):
        resolved = draw_starts(base, d)
        res = run_resolved(resolved, s, engine=engine)
        alike = run_resolved(ns2_choices(resolved), s, engine=engine)
        arrivals = res.flows.slice(len(resolved["flows"]["src"])) if resolved["arrivals"] else None
        ns = run_ns2(resolved, out / f"draw{d}", arrivals, packets)
        figs = {"aqmlab": aqmlab_figures(res, resolved), "aqmlab_ns2": aqmlab_figures(alike, resolved),
                "ns2": ns2_figures(ns, res.flows, resolved)}
        walls = {"aqmlab": res.timing["total_wall_time_s"], "aqmlab_ns2": alike.timing["total_wall_time_s"],
                 "ns2": ns.wall_time_s}
        runs += [{"draw": d, "simulator": k, **f, "wall_time_s": walls[k]} for k, (f, _) in figs.items()]
        per_flow = res.flows.select("flow_id", "base_rtt_s")
        for k, (_, table) in figs.items():
            per_flow = per_flow.join(table.select("flow_id", pl.col("throughput_bps").alias(f"{k}_bps")), on="flow_id")
        flows.append(per_flow.with_columns(pl.lit(d).alias("draw")))
    table = pl.DataFrame(runs)
    return CrossCheck(table, compare(table), pl.concat(flows), differences(base))


def write(check: CrossCheck, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    check.table.write_parquet(out / "crosscheck.parquet")
    check.runs.write_parquet(out / "crosscheck_runs.parquet")
    check.flows.write_parquet(out / "crosscheck_flows.parquet")
