"""ns-2's traces read beside aqmlab's, packet by packet.

ns-2 prints times rounded to the microsecond in its queue trace (``BaseTrace::round``)
and to 10 µs in its variable trace (``%-8.5f``); aqmlab keeps nanoseconds. Two events
are the same when their flow, sequence number and kind agree and their times agree to
the printed precision.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl


@dataclass(frozen=True)
class Divergence:
    """Where two sequences of drops part: ``index`` is the first that differs (the
    length of the shorter when one is a prefix of the other)."""

    index: int
    ours: tuple[float, int, int] | None
    theirs: tuple[float, int, int] | None


def ns2_drops(trace: Path) -> list[tuple[float, int, int]]:
    """(time s, flow id, sequence number) of every drop in an ns-2 queue trace."""
    drops = []
    for line in trace.read_text().splitlines():
        f = line.split()
        if f[0] == "d":
            drops.append((float(f[1]), int(f[7]), int(f[10])))
    return drops


def aqmlab_drops(trace: Path, link: str) -> list[tuple[float, int, int]]:
    """The same from aqmlab's ``trace.parquet``, for one link: its discipline's drops
    (ns-2's queue trace has no line for a loss on the wire, which its error model
    counts apart)."""
    t = pl.read_parquet(trace).filter(
        (pl.col("event") == "drop") & (pl.col("link") == link) & (pl.col("reason") != "lost")
    )
    return [(ns / 1e9, flow, seq) for ns, flow, seq in t.select("time_ns", "flow", "seq").rows()]


def first_divergence(
    ours: list[tuple[float, int, int]], theirs: list[tuple[float, int, int]], tolerance_s: float = 1.01e-6
) -> Divergence | None:
    """The first drop that differs, or None when both are the same drops."""
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a[1:] != b[1:] or abs(a[0] - b[0]) > tolerance_s:
            return Divergence(i, a, b)
    if len(ours) != len(theirs):
        n = min(len(ours), len(theirs))
        return Divergence(n, ours[n] if n < len(ours) else None, theirs[n] if n < len(theirs) else None)
    return None


def ns2_cwnd(trace: Path) -> pl.DataFrame:
    """Every change of every flow's cwnd_ in an ns-2 variable trace (``cwnd.tr``):
    time_s, flow (the sender's address), cwnd."""
    rows = []
    for line in trace.read_text().splitlines():
        f = line.split()
        if len(f) == 7 and f[5] == "cwnd_":
            rows.append((float(f[0]), int(f[1]), float(f[6])))
    return pl.DataFrame(rows, schema=["time_s", "node", "cwnd"], orient="row")


def cwnd_at(changes: pl.DataFrame, times: np.ndarray, node: int) -> np.ndarray:
    """The cwnd of the flow at ``node`` in effect at each of ``times`` (the last change
    at or before it)."""
    c = changes.filter(pl.col("node") == node).sort("time_s", maintain_order=True)
    idx = np.searchsorted(c["time_s"].to_numpy(), times, side="right") - 1
    values = c["cwnd"].to_numpy()
    return np.where(idx >= 0, values[np.maximum(idx, 0)], np.nan)
