"""Plots of one run (``aqmlab run --plot``), as PNG files:

* ``queue.png``: queue length (packets) over time for every monitored queue;
* ``windows.png``: the sum of TCP congestion windows, and the window of every flow
  with ``trace_cwnd``;
* ``throughput.png``: each flow's throughput over the measurement window, coloured by
  group.

The warm-up period, excluded from the summaries, is shaded grey.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from .results import Results


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _warmup(ax: Any, res: Results) -> None:
    w = res.scenario.get("warmup_ns", 0) / 1e9
    if w > 0:
        ax.axvspan(0, w, color="0.92", zorder=0, label="warm-up")


def _finish(fig: Any, ax: Any, path: Path) -> Path:
    ax.grid(True, alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    if 0 < len(handles) <= 3:
        ax.legend(loc="best", fontsize="small")
    elif len(handles) > 3:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    return path


def plot_queues(res: Results, path: Path) -> Path | None:
    q = res.metric("queue_packets")
    if q.is_empty():
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    _warmup(ax, res)
    for entity in q["entity"].unique(maintain_order=True).to_list():
        d = q.filter(pl.col("entity") == entity)
        ax.plot(d["time_s"].to_numpy(), d["value"].to_numpy(), drawstyle="steps-post", lw=0.9, label=entity)
    ax.set_title(f"{res.name}: queue length of monitored links")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queue length (packets)")
    ax.set_ylim(bottom=0)
    out = _finish(fig, ax, path)
    plt.close(fig)
    return out


def plot_windows(res: Results, path: Path) -> Path | None:
    total = res.metric("sum_cwnd")
    cwnd = res.metric("cwnd")
    if total.is_empty() and cwnd.is_empty():
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    _warmup(ax, res)
    if not total.is_empty():
        ax.plot(total["time_s"].to_numpy(), total["value"].to_numpy(), lw=1.2, color="black", label="sum of windows")
    for entity in cwnd["entity"].unique(maintain_order=True).to_list()[:20]:
        d = cwnd.filter(pl.col("entity") == entity)
        ax.plot(d["time_s"].to_numpy(), d["value"].to_numpy(), lw=0.8, label=f"flow {entity}")
    ax.set_title(f"{res.name}: TCP congestion windows")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("window (packets)")
    ax.set_ylim(bottom=0)
    out = _finish(fig, ax, path)
    plt.close(fig)
    return out


def plot_throughput(res: Results, path: Path) -> Path | None:
    f = res.flows
    if f.is_empty() or "throughput_bps" not in f.columns:
        return None
    f = f.sort("flow_id") if "flow_id" in f.columns else f
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    x = list(range(len(f)))
    groups = f["group"].to_list() if "group" in f.columns else ["flows"] * len(f)
    mbps = (f["throughput_bps"].fill_null(0.0) / 1e6).to_list()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for gi, g in enumerate(dict.fromkeys(groups)):
        idx = [i for i, gg in enumerate(groups) if gg == g]
        ax.bar([x[i] for i in idx], [mbps[i] for i in idx], width=0.85, color=colors[gi % len(colors)], label=g)
    ax.set_title(f"{res.name}: throughput per flow (after warm-up)")
    ax.set_xlabel("flow")
    ax.set_ylabel("throughput (Mb/s)")
    out = _finish(fig, ax, path)
    plt.close(fig)
    return out


def plot_all(res: Results, out: str | Path) -> list[Path]:
    """Write every plot that has data into directory ``out``; returns the files."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    made = [
        plot_queues(res, out / "queue.png"),
        plot_windows(res, out / "windows.png"),
        plot_throughput(res, out / "throughput.png"),
    ]
    return [p for p in made if p is not None]
