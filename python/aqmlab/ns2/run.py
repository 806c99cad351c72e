"""Run a translated scenario in ns-2 and read what it wrote into aqmlab's tables.

``ns2.out`` (written by the script of :mod:`.translate`) holds counters at the end of
the warm-up and of the run; the measurement window is between the two, as aqmlab's is.
A flow's throughput counts the payload the sender has had acknowledged in the window
(ns-2's ``ack_``, in packets), which differs from aqmlab's bytes delivered in order at
the receiver by at most one window at either end of a 40-second measurement.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..errors import UserError
from .translate import to_tcl


@dataclass
class Ns2Results:
    """ns-2's flows and monitored queues, in aqmlab's column names."""

    flows: pl.DataFrame
    queues: pl.DataFrame
    samples: pl.DataFrame  # link, time_s, queue_packets
    wall_time_s: float
    directory: Path


def ns_binary() -> str:
    path = shutil.which("ns")
    if path is None:
        raise UserError("ns-2 is not installed (Debian package ns2; `make setup` installs it)", "ns")
    return path


def run_ns2(
    resolved: dict[str, Any], directory: Path, arrival_flows: Any = None, packets: bool = False, timeout_s: float = 3600.0,
    lag_s: float = 0.0,
) -> Ns2Results:
    """Translate ``resolved``, run it in ns-2 inside ``directory``, read the results."""
    binary = ns_binary()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "scenario.tcl").write_text(to_tcl(resolved, arrival_flows, packets, lag_s))
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [binary, "scenario.tcl"], cwd=directory, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        raise UserError(f"ns-2 did not finish within {timeout_s:.0f} s", "ns") from None
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise UserError(f"ns-2 failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}", "ns")
    return read_out(directory / "ns2.out", resolved, wall, directory)


def _payloads(resolved: dict[str, Any]) -> list[int]:
    return [p["packet_size"] - p["header_size"] for p in resolved["tcp_profiles"]]


def read_out(path: Path, resolved: dict[str, Any], wall: float, directory: Path) -> Ns2Results:
    snap: dict[tuple[str, str], dict[int, list[float]]] = {}
    samples: list[tuple[int, float, float]] = []
    counts: list[tuple[int, float, int]] = []
    done: dict[int, float] = {}
    for line in path.read_text().splitlines():
        kind, *rest = line.split()
        if kind in ("tcp", "queue", "lost"):
            snap.setdefault((kind, rest[0]), {})[int(rest[1])] = [float(x) for x in rest[2:]]
        elif kind == "sample":
            samples.append((int(rest[0]), float(rest[1]), float(rest[2])))
        elif kind == "bytes":
            counts.append((int(rest[0]), float(rest[1]), int(rest[2])))
        elif kind == "done":  # an on-off source's first transfer
            done.setdefault(int(rest[0]), float(rest[1]))
    window = (resolved["duration_ns"] - resolved["warmup_ns"]) / 1e9
    sent = pl.DataFrame(counts, schema=["link", "time_s", "departure_bytes"], orient="row")
    return Ns2Results(
        _flows(snap, done, resolved, window), _queues(snap, sent, resolved, window),
        pl.DataFrame(samples, schema=["link", "time_s", "queue_packets"], orient="row"), wall, directory,
    )


#: ns-2's per-flow table, in aqmlab's names (TCP flows only: UDP agents keep no counters).
FLOW_SCHEMA = {
    "flow_id": pl.Int64, "packets_sent": pl.Int64, "retransmissions": pl.Int64, "timeouts": pl.Int64,
    "fast_retransmits": pl.Int64, "final_cwnd": pl.Float64, "throughput_bps": pl.Float64,
    "completion_time_s": pl.Float64,
}


def _flows(snap: dict, done: dict[int, float], resolved: dict[str, Any], window: float) -> pl.DataFrame:
    end, warm = snap.get(("tcp", "end"), {}), snap.get(("tcp", "warmup"), {})
    groups, group_of = resolved["flows"]["groups"], resolved["flows"]["group"]
    payloads = _payloads(resolved)
    rows = []
    for i, e in sorted(end.items()):
        w = warm.get(i, [0.0] * len(e))
        # ack_ starts at -1 before any packet is acknowledged.
        acked = max(e[0], -1.0) - max(w[0], -1.0)
        profile = groups[int(group_of[i])]["profile"] if i < len(group_of) else resolved["arrivals"][0]["profile"]
        rows.append({
            "flow_id": i,
            "packets_sent": int(e[1]),
            "retransmissions": int(e[2]),
            "timeouts": int(e[3]),
            "fast_retransmits": int(e[4] - e[3]),
            "final_cwnd": e[5],
            "throughput_bps": acked * payloads[profile] * 8 / window,
            "completion_time_s": done.get(i),
        })
    return pl.DataFrame(rows, schema=FLOW_SCHEMA)


def _window_bytes(counts: pl.DataFrame, link: int, warm: float, end: float, resolved: dict[str, Any]) -> int:
    """Bytes the link sent between the end of the warm-up and of the run: the
    snapshots' counts with the wraps seen in between."""
    lo, hi = resolved["warmup_ns"] / 1e9, resolved["duration_ns"] / 1e9
    c = counts.filter((pl.col("link") == link) & (pl.col("time_s") > lo) & (pl.col("time_s") < hi)).sort("time_s")
    series = np.concatenate([[warm], c["departure_bytes"].to_numpy(), [end]])
    steps = np.diff(series.astype(np.int64)) % 2**32
    return int(steps.sum())


def _queues(snap: dict, counts: pl.DataFrame, resolved: dict[str, Any], window: float) -> pl.DataFrame:
    end, warm = snap.get(("queue", "end"), {}), snap.get(("queue", "warmup"), {})
    lost_end, lost_warm = snap.get(("lost", "end"), {}), snap.get(("lost", "warmup"), {})
    rates = resolved["links"]["rate_bps"]
    rows = []
    for li, e in sorted(end.items()):
        w = np.asarray(warm.get(li, [0.0] * len(e)))
        arr, dep, drops, _, _ = np.asarray(e) - w
        bdep = _window_bytes(counts, li, w[4], e[4], resolved)
        rows.append({
            "link": li,
            "window_arrivals": int(arr),
            "window_drops": int(drops),
            # lost on the link's wire (its ErrorModel's LossMonitor)
            "window_lost": int(lost_end.get(li, [0])[0] - lost_warm.get(li, [0])[0]),
            # the whole run's, for speed comparisons (bench/ns2/run_reference.py)
            "departures": int(e[1]),
            "utilization": bdep * 8 / (int(rates[li]) * window),
            "loss_rate": drops / arr if arr else 0.0,
        })
    return pl.DataFrame(rows)
