"""PNG plots of the sizing models (matplotlib, Agg backend)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from aqmlab.theory import short_flows as sf  # noqa: E402
from aqmlab.theory import sizing  # noqa: E402


def utilization_vs_buffer(bdp: float, ns: list[int], path: Path, title: str = "") -> Path:
    """Eq 3.7's utilization bound against buffer (in packets, log scale) for each n, with the
    single-flow sawtooth utilization (digest 003 section 2.2) for comparison and the
    BDP/sqrt(n) points marked (Appenzeller section 3.2)."""
    b = np.logspace(math.log10(max(bdp / math.sqrt(max(ns)) / 20, 0.5)), math.log10(2 * bdp), 400)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n in sorted(ns):
        u = sizing.util_lower_bound(b, bdp, n)
        (ln,) = ax.plot(b, 100 * u, label=f"n = {n} (Eq 3.7)")
        bn = bdp / math.sqrt(n)
        ax.plot([bn], [100 * sizing.util_lower_bound(bn, bdp, n)], "o", color=ln.get_color())
    u1 = [100 * sizing.single_flow_utilization(x, bdp) for x in b]
    ax.plot(b, u1, "k--", label="one flow (fluid sawtooth)")
    ax.axvline(bdp, color="grey", lw=0.8)
    ax.text(bdp, 1, " RTT x C", color="grey", va="bottom")
    ax.set_xscale("log")
    ax.set_ylim(0, 101)
    ax.set_xlabel("buffer (packets)")
    ax.set_ylabel("utilization (%)")
    ax.set_title(title or "Utilization against buffer")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def short_flow_tail(lengths: list[int], load: float, path: Path) -> Path:
    """Short-flow queue tail P(Q >= b): effective bandwidth of 2nd order (thesis section
    4.1.2), 3rd order and exact root (Appendix A.3), and the M/D/1 tail, at one load."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bmax = max(sf.eb_buffer_for_loss(1e-6, load, sf.burst_distribution(l), "exact") for l in lengths)
    b = np.linspace(0, bmax, 300)
    for l in lengths:
        d = sf.burst_distribution(l)
        (ln,) = ax.plot(b, sf.eb_tail(b, load, d, 2), label=f"l = {l}, 2nd order")
        ax.plot(b, sf.eb_tail(b, load, d, "exact"), ":", color=ln.get_color(),
                label=f"l = {l}, exact root")
    ax.plot(b, sf.md1_tail(b, load), "k--", label="M/D/1 (smoothed)")
    ax.set_yscale("log")
    ax.set_ylim(1e-6, 1.1)
    ax.set_xlabel("queue b (packets)")
    ax.set_ylabel("P(Q >= b)")
    ax.set_title(f"Short-flow queue tail, load {load:g}")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
