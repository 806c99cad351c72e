"""Plots of one run (``aqmlab run --plot``), as PNG files:

* ``queue.png``: queue length (packets) over time for every monitored queue;
* ``windows.png``: the sum of TCP congestion windows, and the window of every flow
  with ``trace_cwnd``;
* ``throughput.png``: each flow's throughput over the measurement window, coloured by
  group (flows that send without end: those with a size are in the next plot);
* ``completion.png``: for flows with a size (transfers), completion time against size,
  and its distribution.

The warm-up period, excluded from the summaries, is shaded grey.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from .results import Results


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: Path) -> Path:
    """Lay ``fig`` out, write it to ``path`` (PNG, no software stamp: the same bytes on a
    rerun) and close it."""
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    pyplot().close(fig)
    return path


def panel(ax: Any, title: str, xlabel: str, ylabel: str, grid: str = "major", legend: str | None = "small") -> None:
    """Finish one panel of a figure: its title (in a panel's size) and axis labels, a light
    grid on the ``grid`` ticks ("major" or "both") and, unless ``legend`` is None, a legend
    in that font size."""
    ax.set_title(title, fontsize="medium")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3, which=grid)
    if legend is not None:
        ax.legend(fontsize=legend)


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
    return save(fig, path)


def plot_queues(res: Results, path: Path) -> Path | None:
    q = res.metric("queue_packets")
    if q.is_empty():
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    _warmup(ax, res)
    for entity in q["entity"].unique(maintain_order=True).to_list():
        d = q.filter(pl.col("entity") == entity)
        ax.plot(d["time_s"].to_numpy(), d["value"].to_numpy(), drawstyle="steps-post", lw=0.9, label=entity)
    ax.set_title(f"{res.name}: queue length of monitored links")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queue length (packets)")
    ax.set_ylim(bottom=0)
    return _finish(fig, ax, path)


def plot_windows(res: Results, path: Path) -> Path | None:
    total = res.metric("sum_cwnd")
    cwnd = res.metric("cwnd")
    if total.is_empty() and cwnd.is_empty():
        return None
    plt = pyplot()
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
    return _finish(fig, ax, path)


def _binned_medians(x: Any, y: Any, per_decade: int = 4, least: int = 5) -> tuple[list[float], list[float]]:
    """The median of ``y`` in log-spaced bins of ``x`` (those with ``least`` points),
    at each bin's geometric centre."""
    import numpy as np

    low, high = np.floor(np.log10(x.min()) * per_decade), np.ceil(np.log10(x.max()) * per_decade)
    edges = 10 ** (np.arange(low, high + 1) / per_decade)
    which = np.clip(np.digitize(x, edges), 1, len(edges) - 1)  # bin i spans edges[i-1], edges[i]
    centres, medians = [], []
    for b in np.unique(which):
        inside = which == b
        if inside.sum() >= least:
            centres.append(float(np.sqrt(edges[b - 1] * edges[b])))
            medians.append(float(np.median(y[inside])))
    return centres, medians


#: Above this many flows, a point per flow reads better than a bar per flow.
MAX_BARS = 100


def plot_throughput(res: Results, path: Path) -> Path | None:
    f = res.flows
    if f.is_empty() or "throughput_bps" not in f.columns:
        return None
    if "size_bytes" in f.columns:
        f = f.filter(pl.col("size_bytes").is_null())
    if f.is_empty():
        return None
    f = f.sort("flow_id") if "flow_id" in f.columns else f
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    groups = f["group"].to_list() if "group" in f.columns else ["flows"] * len(f)
    mbps = (f["throughput_bps"].fill_null(0.0) / 1e6).to_list()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for gi, g in enumerate(dict.fromkeys(groups)):
        idx = [i for i, gg in enumerate(groups) if gg == g]
        ys, color = [mbps[i] for i in idx], colors[gi % len(colors)]
        if len(f) <= MAX_BARS:
            ax.bar(idx, ys, width=0.8, color=color, label=g)
        else:
            ax.plot(idx, ys, ".", ms=3, color=color, label=g)
    ax.set_xlim(-1, len(f))  # a single flow's bar keeps a bar's width
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_ylim(bottom=0)
    ax.set_title(f"{res.name}: throughput per flow (after warm-up)")
    ax.set_xlabel("flow (in order of flow_id)")
    ax.set_ylabel("throughput (Mb/s)")
    return _finish(fig, ax, path)


def plot_completion(res: Results, path: Path) -> Path | None:
    """Completion time against size (log-log, with the median of each size), and the
    distribution of completion times, for the flows with a size that finished."""
    f = res.flows
    if f.is_empty() or "size_bytes" not in f.columns or "completion_time_s" not in f.columns:
        return None
    done = f.filter(pl.col("size_bytes").is_not_null() & pl.col("completion_time_s").is_not_null())
    if done.is_empty():
        return None
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    size_kb = done["size_bytes"].to_numpy() / 1e3
    fct = done["completion_time_s"].to_numpy()
    left.plot(size_kb, fct, ".", ms=3, alpha=0.4, label="a flow")
    centres, medians = _binned_medians(size_kb, fct)
    if len(centres) > 1:
        left.plot(centres, medians, "-o", ms=3, color="C3", label="median (sizes in 1/4-decade bins)")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("size (kB of payload)")
    left.set_ylabel("completion time (s)")
    left.set_title(f"{res.name}: completion time against size")
    left.legend(loc="upper left", fontsize="small")
    left.grid(True, which="both", alpha=0.3)
    ordered = sorted(fct)
    right.step(ordered, [(i + 1) / len(ordered) for i in range(len(ordered))], where="post")
    right.set_xscale("log")
    right.set_ylim(0, 1)
    right.set_xlabel("completion time (s)")
    right.set_ylabel("fraction of flows")
    right.set_title(f"{len(done)} of {f['size_bytes'].is_not_null().sum()} transfers finished")
    return _finish(fig, right, path)


def plot_all(res: Results, out: str | Path) -> list[Path]:
    """Write every plot that has data into directory ``out``; returns the files."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    made = [
        plot_queues(res, out / "queue.png"),
        plot_windows(res, out / "windows.png"),
        plot_throughput(res, out / "throughput.png"),
        plot_completion(res, out / "completion.png"),
    ]
    return [p for p in made if p is not None]
