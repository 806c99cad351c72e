"""Seed 003, chapter 6 in simulation: the lab router of section 6.1 (Fig 6.1, digest 003
section 5.1, R18) and its short flows (Figs 6.2-6.4, R19), and the Stanford gateway of
section 6.2 (Fig 6.9, section 5.2, R20)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ...plots import pyplot as _pyplot
from ...plots import save as _save
from ..core import Experiment, Reference, run_dirs, run_points
from .common import PACKET_BYTES, LongFlows, ShortFlowParams, finish, queue_bytes, short_arrivals, us


# ---------------------------------------------------------------------------
# The lab router of section 6.1 (Fig 6.1)
#
# The lab: a Cisco GSR 12410 with an OC3 egress (149.26 Mb/s after PPP/SONET framing), a
# hardware delay generator, Harpoon's TCP flows from Linux and BSD hosts, 1500-byte
# packets, RTT x C = 1291 packets. The router's interface ASIC holds 43 packets the
# queue limit does not count (the "hidden FIFO"), so the router buffered B + 43.

GSR_BPS = 149.26e6
GSR_PACKET_BYTES = 1500
GSR_BDP = 1291  #: RTT x C in packets, as printed
GSR_HIDDEN_FIFO = 43
GSR_RTT_S = GSR_BDP * 8 * GSR_PACKET_BYTES / GSR_BPS  #: 103.8 ms

#: Fig 6.1: flows, buffer as a multiple of RTT x C/sqrt(n), packets, and the thesis's
#: model, ns-2 and experiment columns (utilization)
GSR_TABLE = (
    (100, 0.5, 64, 0.969, 0.947, 0.949), (100, 1, 129, 0.999, 0.993, 0.981),
    (100, 2, 258, 1.0, 0.999, 0.998), (100, 3, 387, 1.0, 0.998, 0.997),
    (200, 0.5, 46, 0.988, 0.970, 0.986), (200, 1, 91, 0.999, 0.992, 0.997),
    (200, 2, 182, 1.0, 0.998, 0.998), (200, 3, 273, 1.0, 1.0, 0.998),
    (300, 0.5, 37, 0.995, 0.986, 0.996), (300, 1, 74, 1.0, 0.993, 0.998),
    (300, 2, 148, 1.0, 0.999, 0.998), (300, 3, 222, 1.0, 1.0, 1.0),
    (400, 0.5, 32, 0.997, 0.992, 0.995), (400, 1, 64, 1.0, 0.998, 1.0),
    (400, 2, 128, 1.0, 1.0, 1.0), (400, 3, 192, 1.0, 1.0, 0.999),
)


@dataclass(frozen=True)
class LabParams:
    setup: LongFlows
    flows: tuple[int, ...]
    multiples: tuple[float, ...]
    hidden_fifo: int = GSR_HIDDEN_FIFO
    as_configured: bool = True  #: also run B without the hidden FIFO (the router as configured)

    def rows(self) -> list[tuple[int, float, int, float, float, float]]:
        return [r for r in GSR_TABLE if r[0] in self.flows and r[1] in self.multiples]

    def points(self) -> list[tuple[int, int]]:
        """Each run's (n, buffer): B as configured (if asked) and B + the hidden FIFO."""
        extras = (0, self.hidden_fifo) if self.as_configured else (self.hidden_fifo,)
        return [(n, b + extra) for n, _, b, *_ in self.rows() for extra in extras]

    def scenarios(self) -> list[dict[str, Any]]:
        """Every scenario the fidelity runs."""
        return [s for n, b in self.points() for s in self.setup.seeds_of(n, b)]


#: TCP's timers at full rate (ns-2's, the scenario's defaults), in ms.
TCP_TIMERS_MS = {"min_rto": 200, "initial_rto": 1000, "max_rto": 60000, "clock_granularity": 10}
#: The timers a Linux host lets the emulator set: the minimum RTO, a route attribute
#: (`ip route ... rto_min`; docs/emulator.md). The initial and maximum RTO and the
#: clock are the kernel's own (1 s, 120 s, its jiffies).
KERNEL_TIMERS = ("min_rto",)


@dataclass(frozen=True)
class ScaledFlows(LongFlows):
    """LongFlows whose TCP timers (those named in ``scaled``: by default the minimum,
    initial and maximum RTO and the clock tick) run ``timers`` times slower than the
    defaults; sampled every ``sample_s`` (0: not sampled; the emulator measures
    utilization between its samples)."""

    timers: float = 1.0
    scaled: tuple[str, ...] = tuple(TCP_TIMERS_MS)
    sample_s: float = 0.0

    def scenario(self, n: int, buffer: int, seed: int) -> dict[str, Any]:
        s = super().scenario(n, buffer, seed)
        if self.sample_s:
            s["sample_interval"] = us(self.sample_s)
        if self.timers == 1:
            return s
        timers = {name: f"{TCP_TIMERS_MS[name] * self.timers:g}ms" for name in self.scaled}
        return {**s, "tcp": {**s["tcp"], **timers}}


def lab_setup(scale: float, warmup_s: float, measure_s: float, seeds: int, scaled: tuple[str, ...] = tuple(TCP_TIMERS_MS),
              sample_s: float = 0.0) -> LongFlows:
    """The lab's link slowed down ``scale`` times and its round trip lengthened as much,
    TCP's timers with it (those named in ``scaled``): the BDP in packets, the windows,
    the buffers and n stay, and so does everything that happens in units of a round
    trip; only the clock runs ``scale`` times slower, so the warm-up and the measurement
    (given at full rate) are ``scale`` times longer (docs/experiments/appenzeller.md)."""
    return ScaledFlows(GSR_BPS / scale, GSR_RTT_S * scale, warmup_s=warmup_s * scale, measure_s=measure_s * scale,
                       seeds=seeds, start_window_s=10.0 * scale, packet_bytes=GSR_PACKET_BYTES, timers=scale,
                       scaled=scaled, sample_s=sample_s)


class Fig61(Experiment):
    id = "appenzeller.fig6_1"
    acceptance = {"util_n*": "R18"}
    title = "The lab router: utilization against buffer, model, ns-2, experiment and ours (Fig 6.1)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 6.1, section 6.1; digest 003 section 5.1, R18"
    summary = (
        "The GSR lab experiment in simulation: 100 to 400 long-lived Reno flows through a 149.26 Mb/s "
        "bottleneck (OC3 after framing) with RTT x C = 1291 packets of 1500 B (2T_p 103.8 ms, spread 20%), "
        "DropTail buffers of 0.5, 1, 2 and 3 x 1291/sqrt(n) packets (the thesis's packet counts), each "
        "run as configured (B) and as the router held it (B + its 43-packet hidden FIFO). Beside them the "
        "thesis's model, ns-2 and measured columns, and Eq 3.7 computed with and without the FIFO."
    )
    differences = (
        "The thesis's model column cannot be recomputed from Eq 3.7 with the listed packets (digest 7.5): "
        "with the hidden FIFO added it comes within 1.6 points, so both are in the table and neither is "
        "judged. Ours is judged against the measured column, within 2 points (the thesis's own ns-2 is "
        "within 1.6 of it), using the run with the FIFO: the router's buffer. Harpoon's flows ran on Linux "
        "and BSD stacks; ours are the thesis's ns-2 Reno. The 'scaled' fidelity is the same experiment at "
        "an eighth of the rate with eight times the round trip and TCP's timers eight times slower. The "
        "'testbed' fidelity is what the emulator runs of it in 40 minutes of real time: n = 100 and 400 at "
        "0.5 and 2 x the rule, 20 s of warm-up and 45 s measured at full-rate time (160 s and 360 s real), "
        "only the minimum RTO scaled (the one timer Linux lets a host set; the kernel's initial RTO, maximum "
        "RTO and clock stay its own), the bottleneck sampled every second; on the emulator its flows are the "
        "kernel's Reno (NewReno with SACK) with delayed ACKs (docs/experiments/appenzeller.md)."
    )
    fidelities = {
        "quick": LabParams(lab_setup(1, warmup_s=30, measure_s=30, seeds=1), flows=(100, 400), multiples=(0.5, 2)),
        "paper": LabParams(lab_setup(1, warmup_s=30, measure_s=120, seeds=3), flows=(100, 200, 300, 400),
                           multiples=(0.5, 1, 2, 3)),
        "scaled": LabParams(lab_setup(8, warmup_s=30, measure_s=60, seeds=1), flows=(100, 200, 300, 400),
                            multiples=(0.5, 1, 2, 3), as_configured=False),
        "testbed": LabParams(lab_setup(8, warmup_s=20, measure_s=45, seeds=1, scaled=KERNEL_TIMERS, sample_s=1.0),
                             flows=(100, 400), multiples=(0.5, 2), as_configured=False),
    }

    def measure(self, runner: Any, p: LabParams) -> pl.DataFrame:
        from ...theory.sizing import util_lower_bound

        rows, points = p.rows(), p.points()
        stats = dict(zip(points, p.setup.measure_points(runner, points, f"{self.id} ({len(points)} points)")))
        none = {"utilization": None}
        out = []
        for n, multiple, b, model, ns2, measured in rows:
            plain, with_fifo = stats.get((n, b), none), stats[(n, b + p.hidden_fifo)]
            out.append({
                "flows": n, "multiple": multiple, "buffer": b, "thesis_model": model, "thesis_ns2": ns2,
                "thesis_experiment": measured,
                "eq37": float(util_lower_bound(b, GSR_BDP, n)),
                "eq37_with_fifo": float(util_lower_bound(b + p.hidden_fifo, GSR_BDP, n)),
                "utilization": plain["utilization"], "utilization_with_fifo": with_fifo["utilization"],
                "loss_rate_with_fifo": with_fifo["loss_rate"],
            })
        return pl.DataFrame(out)

    def findings(self, t: pl.DataFrame, p: LabParams) -> dict[str, float | None]:
        return {f"util_n{r['flows']}_x{r['multiple']:g}": r["utilization_with_fifo"] for r in t.iter_rows(named=True)}

    def references(self, p: LabParams) -> list[Reference]:
        return [
            Reference(f"util_n{n}_x{m:g}", f"utilization, n = {n}, B = {b} (+43 hidden FIFO)", measured, "abs", 0.02,
                      "Fig 6.1, section 6.1 (the router's measured column)",
                      f"model {100 * model:.1f}%, ns-2 {100 * ns2:.1f}%, experiment {100 * measured:.1f}%")
            for n, m, b, model, ns2, measured in p.rows()
        ]

    def plot(self, t: pl.DataFrame, p: LabParams, path: Path) -> Path:
        plt = _pyplot()
        flows = sorted(set(t["flows"]))
        fig, axes = plt.subplots(1, len(flows), figsize=(3.2 * len(flows), 4), sharey=True, squeeze=False)
        for ax, n in zip(axes[0], flows):
            d = t.filter(pl.col("flows") == n).sort("multiple")
            for col, style, label in (("thesis_experiment", "ks-", "GSR experiment"), ("thesis_ns2", "^--", "thesis ns-2"),
                                      ("eq37_with_fifo", ":", "Eq 3.7, B + 43"), ("utilization", "o-", "ours, B"),
                                      ("utilization_with_fifo", "D-", "ours, B + 43")):
                if d[col].null_count() < d.height:  # the scaled fidelity runs B + 43 only
                    ax.plot(d["multiple"], 100 * d[col], style, label=label, ms=5)
            ax.set_title(f"n = {n}")
            ax.set_xlabel("buffer (x RTT C/sqrt(n))")
            ax.grid(True, alpha=0.3)
        axes[0][0].set_ylabel("utilization (%)")
        axes[0][0].legend(fontsize="x-small", loc="lower right")
        return _save(fig, path)

    def example_scenario(self, p: LabParams) -> dict[str, Any]:
        n, _, b, *_ = p.rows()[0]
        return p.setup.scenario(n, b + p.hidden_fifo, 1)


# ---------------------------------------------------------------------------
# The lab router's short flows (Figs 6.2-6.4)


@dataclass(frozen=True)
class LabShortParams:
    shorts: ShortFlowParams  #: the GSR's rate; load 0.85; 1 Gb/s access (the lab's Gigabit Ethernet)
    access_bps: float = 1e9
    hidden_fifo: int = GSR_HIDDEN_FIFO


class Fig62(Experiment):
    id = "appenzeller.fig6_2"
    acceptance = {"*": "R19"}
    title = "The lab router's short flows: queue distribution against the M/G/1 model (Figs 6.2-6.4)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Figs 6.2-6.4, section 6.1; digest 003 section 5.1, R19"
    summary = (
        "Short TCP flows of 62, 30, 14 or 6 packets (Poisson arrivals, about 85% load) cross the lab's "
        "149.26 Mb/s bottleneck from 1 Gb/s access links (the lab's Gigabit Ethernet), through a buffer "
        "that never fills. The distribution of the queue (data packets, sampled every 10 ms) beside the "
        "thesis's M/G/1 model of bursts: its mean queue and its effective-bandwidth tail; and how often the "
        "queue holds more than the router's 43-packet hidden FIFO, the only part its console could see."
    )
    differences = (
        "The thesis's claims, made numeric: for 62-packet flows the model 'matches remarkably well' (the mean "
        "queue within a factor 1.5 of the model's), for 30 it 'tends to overestimate' (ours at most the "
        "model's), for 14 the visible queue was non-empty in fewer than 1% of the samples and for 6 in almost "
        "none (the queue above the 43-packet FIFO in at most 1%). Our packets are 1000 bytes (the models "
        "count packets and do not depend on the rate); the lab's Harpoon hosts sent through two Ethernet "
        "switches, which smooth bursts more than our one access link does. The 'M/G/1/PS' curve of the "
        "figures is not defined in the thesis and is not drawn (digest 7.10)."
    )
    fidelities = {
        "quick": LabShortParams(ShortFlowParams(lengths=(14, 62), rates_bps=(GSR_BPS,), measure_s=20, seeds=1,
                                                load=0.85, warmup_s=10)),
        "paper": LabShortParams(ShortFlowParams(lengths=(6, 14, 30, 62), rates_bps=(GSR_BPS,), measure_s=120, seeds=1,
                                                load=0.85)),
    }

    def measure(self, runner: Any, p: LabShortParams) -> pl.DataFrame:
        from ...theory.short_flows import burst_distribution, eb_tail, mg1_mean_queue

        s = p.shorts
        dirs = run_dirs(runner, [[s.scenario(GSR_BPS, l, 1 + i, access_bps=p.access_bps) for i in range(s.seeds)]
                                 for l in s.lengths], f"{self.id} ({len(s.lengths)} lengths)")
        parts = []
        for l, runs in zip(s.lengths, dirs):
            q = (pl.concat([queue_bytes(d, s.warmup_s) for d in runs]) / PACKET_BYTES).floor().cast(pl.Int64)
            sizes = list(range(int(q.max()) + 1))
            at_least = [float((q >= b).mean()) for b in sizes]
            dist = burst_distribution(l)
            parts.append(pl.DataFrame({
                "length": l, "queue": sizes, "ccdf": at_least,
                "model_eb": [float(eb_tail(b, s.load, dist)) for b in sizes],
            }).with_columns(
                mean_queue=pl.lit(float(q.mean())), model_mean=pl.lit(mg1_mean_queue(s.load, dist)),
                above_fifo=pl.lit(float((q > p.hidden_fifo).mean())), samples=pl.lit(len(q)),
            ))
        return pl.concat(parts)

    def findings(self, t: pl.DataFrame, p: LabShortParams) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for l in p.shorts.lengths:
            d = t.filter(pl.col("length") == l)
            out[f"mean_over_model_l{l}"] = d["mean_queue"][0] / d["model_mean"][0]
            out[f"above_fifo_l{l}"] = d["above_fifo"][0]
        return out

    def references(self, p: LabShortParams) -> list[Reference]:
        refs = []
        for l in p.shorts.lengths:
            if l == 62:
                refs.append(Reference("mean_over_model_l62", "mean queue / M/G/1 model, 62-packet flows", 1.0, "factor", 1.5,
                                      "Fig 6.2, section 6.1", "'The M/G/1 model matches the experimental data remarkably well'"))
            if l == 30:
                refs.append(Reference("mean_over_model_l30", "mean queue / M/G/1 model, 30-packet flows", 1.0, "at_most", 0.0,
                                      "Fig 6.3, section 6.1", "'the model still matches well, however it tends to overestimate'"))
            if l in (6, 14):
                refs.append(Reference(f"above_fifo_l{l}", f"share of samples with the queue above the 43-packet FIFO, "
                                      f"{l}-packet flows", 0.01, "at_most", 0.0, "Fig 6.4, section 6.1",
                                      "'For 14 packet flows, we measured a non-empty queue for less than 1% of our samples'"
                                      if l == 14 else "'For six packet flows, the queue length was zero for almost all our samples'"))
        return refs

    def plot(self, t: pl.DataFrame, p: LabShortParams, path: Path) -> Path:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for l, color in zip(p.shorts.lengths, ("C0", "C1", "C2", "C3")):
            d = t.filter((pl.col("length") == l) & (pl.col("ccdf") > 0)).sort("queue")
            ax.plot(d["queue"], d["ccdf"], color=color, label=f"{l}-packet flows, simulation")
            m = t.filter(pl.col("length") == l).sort("queue")
            ax.plot(m["queue"], m["model_eb"], color=color, ls=":", lw=1)
        ax.axvline(p.hidden_fifo, color="0.5", ls="--", lw=1, label="43-packet hidden FIFO")
        ax.plot([], [], "k:", lw=1, label="model: effective-bandwidth tail")
        ax.set_ylim(1e-4, 1.1)
        return finish(fig, ax, path, "queue b (packets)", "P(Q >= b)",
                      f"GSR lab link {GSR_BPS / 1e6:g} Mb/s, load {p.shorts.load:g}, 1 Gb/s access", yscale="log")

    def example_scenario(self, p: LabShortParams) -> dict[str, Any]:
        return p.shorts.scenario(GSR_BPS, 14, 1, access_bps=p.access_bps)


# ---------------------------------------------------------------------------
# The Stanford gateway of section 6.2 (Fig 6.9)
#
# The gateway was shaped to 20 Mb/s with a queue limit and a token bucket of 10 ms
# (45 packets of the mean 557.1 B) that acts as extra buffer; 2T is assumed 250 ms, so
# the BDP is 1121 packets of 557.1 B (Eq 6.1); NetFlow brackets the long flows n between
# 400 and 1900 (Eqs 6.4, 6.5); web traffic is 30% of the bytes, UDP 4.3% (Fig 6.8).

STANFORD_BPS = 20e6
STANFORD_RTT_S = 0.250
STANFORD_PACKET_BYTES = 557  #: the mean of Fig 6.7
STANFORD_TOKEN_BUCKET = 45  #: Eq 6.8
#: Fig 6.9: queue limit (the token bucket's 45 packets come on top) and measured utilization
STANFORD_TABLE = ((455, 0.9992), (40, 0.9855), (20, 0.9755), (1, 0.9741))


@dataclass(frozen=True)
class StanfordParams:
    setup: LongFlows  #: its flows are the long TCP flows
    flows: int = 400  #: n_min, the thesis's choice (Eq 6.4)
    web_share: float = 0.30
    web_packets: int = 16  #: NetFlow's packets per web flow
    udp_share: float = 0.043
    udp_packet_bytes: int = 204
    limits: tuple[int, ...] = tuple(q for q, _ in STANFORD_TABLE)

    def scenario(self, limit: int, seed: int) -> dict[str, Any]:
        s = self.setup.scenario(self.flows, limit + STANFORD_TOKEN_BUCKET, seed)
        udp = {"kind": "udp", "group": "udp", "model": "poisson", "count": 1, "src": "s0", "dst": "receivers",
               "rate": f"{self.udp_share * self.setup.rate_bps:.0f}bps", "packet_size": f"{self.udp_packet_bytes}B"}
        return {**s, "name": f"appenzeller-stanford-q{limit}",
                "flows": [*s["flows"], short_arrivals(self.web_share, f"{self.web_packets}pkt"), udp]}


class Fig69(Experiment):
    id = "appenzeller.fig6_9"
    acceptance = {"util_b*": "R20"}
    title = "The Stanford gateway at 20 Mb/s: utilization against buffer (Fig 6.9)"
    source = "seed 003 (Appenzeller, Sizing Router Buffers), Fig 6.9, section 6.2; digest 003 section 5.2, R20"
    summary = (
        "The live experiment's reported traffic in simulation: a 20 Mb/s bottleneck, 2T_p 250 ms (the "
        "thesis's assumption, spread 20%), 557-byte packets (the measured mean; BDP 1121 packets, Eq 6.1), "
        "400 long-lived Reno flows (n_min, Eq 6.4), Poisson web flows of 16 packets carrying 30% of the "
        "link, Poisson UDP at 4.3% in 204-byte packets (Fig 6.8). DropTail buffers of the queue limits of "
        "Fig 6.9 plus the shaper's 45-packet token bucket: 500, 85, 65 and 46 packets. Utilization beside "
        "the measured values and Eq 3.7 with n = 400."
    )
    differences = (
        "The live traffic is known only by its NetFlow summary; we simulate what the thesis reports of it "
        "(long flows at n_min, web and UDP shares, the mean packet size) and count the token bucket as "
        "buffer, as the thesis does. Every packet of the TCP flows has the mean size; real traffic mixed "
        "40-byte and 1500-byte packets. Ours is judged against the measured utilization within 1.5 points; "
        "the thesis's model column is Eq 3.7 with n = 400 and is recomputed, not judged (digest 7.23)."
    )
    fidelities = {
        "quick": StanfordParams(LongFlows(STANFORD_BPS, STANFORD_RTT_S, warmup_s=30, measure_s=30, seeds=1,
                                          packet_bytes=STANFORD_PACKET_BYTES), limits=(455, 1)),
        "paper": StanfordParams(LongFlows(STANFORD_BPS, STANFORD_RTT_S, warmup_s=30, measure_s=300, seeds=3,
                                          packet_bytes=STANFORD_PACKET_BYTES)),
    }

    def measure(self, runner: Any, p: StanfordParams) -> pl.DataFrame:
        from ...theory.sizing import util_lower_bound

        measured = dict(STANFORD_TABLE)
        runs = run_points(runner, [[p.scenario(q, 1 + i) for i in range(p.setup.seeds)] for q in p.limits],
                          f"{self.id} ({len(p.limits)} points)")
        rows = []
        for q, summaries in zip(p.limits, runs):
            b = q + STANFORD_TOKEN_BUCKET
            rows.append({
                "queue_limit": q, "buffer": b, "multiple": b / (p.setup.bdp / math.sqrt(p.flows)),
                "thesis_experiment": measured[q], "eq37": float(util_lower_bound(b, p.setup.bdp, p.flows)),
                "utilization": sum(s["bottleneck_utilization"] for s in summaries) / len(summaries),
                "loss_rate": sum(s["bottleneck_loss_rate"] for s in summaries) / len(summaries),
            })
        return pl.DataFrame(rows)

    def findings(self, t: pl.DataFrame, p: StanfordParams) -> dict[str, float | None]:
        return {f"util_b{r['buffer']}": r["utilization"] for r in t.iter_rows(named=True)}

    def references(self, p: StanfordParams) -> list[Reference]:
        from ...theory.sizing import util_lower_bound

        measured = dict(STANFORD_TABLE)
        return [
            Reference(f"util_b{q + STANFORD_TOKEN_BUCKET}", f"utilization, buffer {q} + {STANFORD_TOKEN_BUCKET}",
                      measured[q], "abs", 0.015, "Fig 6.9, section 6.2 (measured)",
                      f"measured {100 * measured[q]:.2f}%; Eq 3.7 (n = {p.flows}) "
                      f"{100 * float(util_lower_bound(q + STANFORD_TOKEN_BUCKET, p.setup.bdp, p.flows)):.2f}%")
            for q in p.limits
        ]

    def plot(self, t: pl.DataFrame, p: StanfordParams, path: Path) -> Path:
        import numpy as np

        from ...theory.sizing import util_lower_bound

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        d = t.sort("buffer")
        ax.plot(d["buffer"], 100 * d["thesis_experiment"], "ks", ms=7, label="Stanford VXR, measured")
        ax.plot(d["buffer"], 100 * d["utilization"], "o", color="C0", label=f"simulation ({p.setup.seeds} seeds)")
        bs = np.linspace(1, float(d["buffer"].max()), 300)
        ax.plot(bs, [100 * float(util_lower_bound(b, p.setup.bdp, p.flows)) for b in bs], "C1-", lw=1,
                label=f"Eq 3.7, n = {p.flows}, BDP {p.setup.bdp:.0f}")
        ax.set_xscale("log")
        ax.set_xlabel("buffer: queue limit + 45-packet token bucket (packets)")
        ax.set_ylabel("utilization (%)")
        ax.set_ylim(90, 100.5)
        ax.set_title("20 Mb/s, 2T 250 ms, 557-byte packets")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize="small", loc="lower right")
        return _save(fig, path)

    def example_scenario(self, p: StanfordParams) -> dict[str, Any]:
        return p.scenario(40, 1)


EXPERIMENTS = [Fig61(), Fig62(), Fig69()]
