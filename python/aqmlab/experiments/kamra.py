"""Seed 002: Kamra, Kapila, Khurana, Yadav, Shorey, Saran and Juneja, *SFED: a rate
control based active queue management discipline* (sections V-VI and the appendix;
digest 002 sections 4, 5 and 8).

The paper ran ns-2 with TCP NewReno and CBR, 512-byte packets, and gives little of the
topology. The settings left open are decided as digest 002 recommends (section 5 and
item 7 of section 7), once, here:

* a dumbbell: each sender on its own access link (10 Mb/s, 1 ms; 100 Mb/s for the
  45 Mb/s experiment), the bottleneck with a 20 ms delay (1 ms at 45 Mb/s), a 1 ms
  link to the receivers;
* every data packet is 512 bytes on the wire, TCP's included (472 bytes of payload):
  SFED's tokens count packets, so with equal sizes a flow's share of packets is its
  share of bandwidth, and "the percentage of throughput" means one thing for both
  kinds of flow (digest item 11);
* TCP NewReno as ns-2 runs it: initial window 1 (ns-2's `windowInit_` of 2000), an ACK
  per packet, receiver window 10,000 packets (none), ns-2's RTT estimator with its
  100 ms tick of the time and a 1 s minimum RTO... as ns-2.35's defaults: 200 ms
  minimum RTO, 10 ms tick (see :data:`TCP`);
* CBR with 2% send-time jitter, so that no run locks into one phase (digest 5: the
  paper cites Floyd and Jacobson on phase effects);
* RED, FRED and CHOKe with min_th = B/4, max_th = B/2, max_p = 0.02, w_q = 0.002
  (CHOKe's thresholds are not given: RED's, digest item 17); FRED's min_q = 2; SFED
  with lambda1 = 1/2, lambda2 = 1/4, max_p = 0.02, alpha = 1;
* throughput is measured where the paper's tables do, at the bottleneck's output: the
  bytes of each flow leaving the bottleneck (the packet trace's dequeue events, user
  guide "Traces") in the measurement window, every run 100 s measured over [5, 100] s
  (digest item 14).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from .core import Experiment, Reference, run_dirs

PACKET_BYTES = 512
HEADER_BYTES = 40
BOTTLENECK = "bottleneck"

#: TCP as the paper's ns-2 ran it (module docstring).
TCP = {
    "variant": "newreno",
    "packet_size": f"{PACKET_BYTES}B",
    "header_size": f"{HEADER_BYTES}B",
    "initial_window": 1,
    "receiver_window": 10000,
    "delayed_ack": False,
    "min_rto": "200ms",
    "clock_granularity": "10ms",
    "rtt_estimator": "ns2",
}

CBR_JITTER = 0.02

#: The disciplines of Tables I-II, in the paper's row order, and DropTail beside them.
SCHEMES = ("red", "choke", "fred", "sfed", "rsfed", "droptail")
LABELS = {"red": "RED", "choke": "CHOKe", "fred": "FRED", "sfed": "SFED", "rsfed": "R-SFED", "droptail": "DropTail"}


def qdisc(scheme: str, buffer: int, **extra: Any) -> dict[str, Any]:
    """The bottleneck's discipline with the paper's parameters at buffer B (module docstring)."""
    limit = f"{buffer}pkt"
    red_like = {"limit": limit, "min_th": buffer / 4, "max_th": buffer / 2, "max_p": 0.02, "w_q": 0.002,
                "mean_packet_size": f"{PACKET_BYTES}B"}
    table: dict[str, dict[str, Any]] = {
        "red": {"kind": "red", **red_like, "variant": "ns2"},
        "fred": {"kind": "fred", **red_like, "min_q": 2},
        "choke": {"kind": "choke", **red_like},
        "droptail": {"kind": "droptail", "limit": limit},
        "sfed": {"kind": "sfed", "limit": limit, "randomized": False},
        "rsfed": {"kind": "sfed", "limit": limit, "randomized": True},
    }
    return {**table[scheme], **extra}


def _us(seconds: float) -> str:
    return f"{round(seconds * 1e6)}us"


@dataclass(frozen=True)
class Dumbbell:
    """A bottleneck with one sender per flow (the module docstring's topology)."""

    rate_bps: float
    delay_s: float = 0.020
    access_bps: float = 10e6
    access_delay_s: float | list[float] = 0.001
    receiver_delay_s: float = 0.001

    def scenario(self, name: str, qdisc: dict[str, Any], flows: list[dict[str, Any]], duration_s: float,
                 warmup_s: float, seed: int, trace_flows: list[int] | None = None) -> dict[str, Any]:
        """``flows`` in the scenario's shape, one sender each (``src`` filled in here);
        the bottleneck's departures are traced (of ``trace_flows`` only, if given)."""
        delay = self.access_delay_s
        packets: dict[str, Any] = {"links": [BOTTLENECK], "events": ["dequeue"]}
        if trace_flows is not None:
            packets["flows"] = trace_flows
        return {
            "name": name,
            "description": "seed 002 (aqmlab.experiments.kamra)",
            "seed": seed,
            "duration": _us(duration_s),
            "warmup": _us(warmup_s),
            "sample_interval": "0s",
            "tcp": dict(TCP),
            "topology": {
                "kind": "dumbbell",
                "senders": len(flows),
                "bottleneck": {"rate": f"{self.rate_bps:.0f}bps", "delay": _us(self.delay_s), "qdisc": qdisc},
                "access": {
                    "rate": f"{self.access_bps:.0f}bps",
                    "delay": [_us(d) for d in delay] if isinstance(delay, list) else _us(delay),
                },
                "receiver_access": {"delay": _us(self.receiver_delay_s)},
            },
            "flows": [{**f, "src": f"s{i}", "dst": f"d{i}"} for i, f in enumerate(flows)],
            "trace": {"packets": packets},
        }


def tcp_flow(group: str, start_s: float = 0.0, stop_s: float | None = None, **tcp: Any) -> dict[str, Any]:
    f: dict[str, Any] = {"kind": "tcp", "group": group, "start": _us(start_s)}
    if stop_s is not None:
        f["stop"] = _us(stop_s)
    if tcp:
        f["tcp"] = tcp
    return f


def cbr_flow(group: str, rate_bps: float, start_s: float = 0.0, stop_s: float | None = None) -> dict[str, Any]:
    f: dict[str, Any] = {"kind": "udp", "group": group, "model": "cbr", "rate": f"{rate_bps:.0f}bps",
                         "packet_size": f"{PACKET_BYTES}B", "jitter": CBR_JITTER, "start": _us(start_s)}
    if stop_s is not None:
        f["stop"] = _us(stop_s)
    return f


def departures(run_dir: Path, start_s: float, end_s: float, bin_s: float | None = None) -> pl.DataFrame:
    """Bits per second of each flow leaving the bottleneck over [start, end): one row per
    flow (``flow``, ``bps``), or with ``bin_s`` one per flow and bin (``time_s`` the bin's
    end), from the run's dequeue trace."""
    t = pl.read_parquet(run_dir / "trace.parquet", columns=["time_ns", "event", "link", "flow", "size"])
    t = t.filter((pl.col("event") == "dequeue") & (pl.col("link") == BOTTLENECK)
                 & (pl.col("time_ns") >= int(start_s * 1e9)) & (pl.col("time_ns") < int(end_s * 1e9)))
    if bin_s is None:
        return (t.group_by("flow").agg((pl.col("size").sum() * 8 / (end_s - start_s)).alias("bps")).sort("flow"))
    bins = int(round((end_s - start_s) / bin_s))
    t = t.with_columns(((pl.col("time_ns") - int(start_s * 1e9)) // int(bin_s * 1e9)).alias("bin"))
    got = t.group_by("flow", "bin").agg((pl.col("size").sum() * 8 / bin_s).alias("bps"))
    flows = pl.DataFrame({"flow": sorted(set(t["flow"].to_list()))}, schema={"flow": t.schema["flow"]})
    grid = flows.join(pl.DataFrame({"bin": list(range(bins))}, schema={"bin": pl.Int64}), how="cross")
    out = grid.join(got.with_columns(pl.col("bin").cast(pl.Int64)), on=["flow", "bin"], how="left")
    return (out.with_columns(pl.col("bps").fill_null(0.0), (start_s + (pl.col("bin") + 1) * bin_s).alias("time_s"))
            .select("flow", "time_s", "bps").sort("flow", "time_s"))


def jain(xs: list[float]) -> float:
    """The paper's fairness coefficient r = (sum b)^2 / (N sum b^2) (section V)."""
    s2 = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * s2) if s2 > 0 else math.nan


def _pyplot() -> Any:
    from ..plots import _pyplot as plt

    return plt()


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


# ---------------------------------------------------------------------------
# E1: one TCP against one 1.4 Mb/s CBR on a T1 (Tables I-II, Figs 4-9)

T1_BPS = 1.54e6
E1_CBR_BPS = 1.4e6
E1_BUFFERS = (8, 16, 24, 32, 48)  #: (1/2, 1, 3/2, 2, 3) x P_bd = 16 packets

#: Table I: the TCP flow's percentage of the throughput, by scheme and buffer.
TABLE_I = {
    "red": (12.9, 14.8, 13.9, 14.1, 12.4),
    "choke": (32.0, 34.4, 37.0, 36.2, 36.0),
    "fred": (22.2, 32.1, 39.7, 45.9, 47.1),
    "sfed": (37.3, 40.1, 44.1, 45.8, 47.1),
    "rsfed": (35.7, 39.2, 43.8, 45.5, 46.8),
}
#: Table II: the fairness coefficient r.
TABLE_II = {
    "red": (0.642, 0.668, 0.655, 0.660, 0.639),
    "choke": (0.777, 0.793, 0.842, 0.851, 0.838),
    "fred": (0.764, 0.887, 0.959, 0.993, 0.996),
    "sfed": (0.939, 0.961, 0.986, 0.993, 0.996),
    "rsfed": (0.925, 0.956, 0.985, 0.992, 0.996),
}


@dataclass(frozen=True)
class E1Params:
    buffers: tuple[int, ...] = E1_BUFFERS
    schemes: tuple[str, ...] = SCHEMES
    seeds: int = 5
    duration_s: float = 100.0
    warmup_s: float = 5.0

    def scenario(self, scheme: str, buffer: int, seed: int) -> dict[str, Any]:
        # the TCP starts a little after the CBR, at a time of its own per seed
        tcp_start = 0.1 + 0.1 * ((seed * 7919) % 10) / 10
        return Dumbbell(T1_BPS).scenario(
            f"kamra-e1-{scheme}-b{buffer}", qdisc(scheme, buffer),
            [tcp_flow("tcp", tcp_start), cbr_flow("cbr", E1_CBR_BPS)],
            self.duration_s, self.warmup_s, seed)


def _e1_runs(runner: Any, p: E1Params, label: str) -> dict[tuple[str, int], list[Path]]:
    points = [(s, b) for s in p.schemes for b in p.buffers]
    dirs = run_dirs(runner, [[p.scenario(s, b, 1 + k) for k in range(p.seeds)] for s, b in points], label)
    return dict(zip(points, dirs))


class Table1(Experiment):
    id = "kamra.table1"
    title = "TCP against CBR over the buffer sizes: TCP's share and fairness (Tables I-II)"
    source = "seed 002 (Kamra et al., SFED), section V-A, Tables I and II, Fig 4; digest 002 sections 5.1, 8"
    summary = (
        "One TCP NewReno flow and one 1.4 Mb/s CBR share a 1.54 Mb/s bottleneck (base RTT 44 ms, BDP 16.5 "
        "packets of 512 B); buffers of 8, 16, 24, 32 and 48 packets (1/2 to 3 x P_bd); RED, CHOKe, FRED, SFED, "
        "R-SFED and DropTail. TCP's percentage of the bottleneck's throughput and the fairness coefficient r "
        "of the two flows, measured over [5, 100] s of 100 s runs, mean over seeds."
    )
    differences = (
        "The orderings the paper states are the references; the paper's numbers are compared for SFED and "
        "R-SFED (the subject) within 5 points, for the baselines only where docs/experiments.md explains why "
        "their values depend on what the paper leaves open: FRED favours TCP more than the paper's at 16-24 "
        "packets, CHOKe less (docs/experiments.md, seed 002)."
    )
    fidelities = {
        "quick": E1Params(buffers=(8, 24, 48), seeds=2, duration_s=50.0),
        "paper": E1Params(),
    }

    def measure(self, runner: Any, p: E1Params) -> pl.DataFrame:
        runs = _e1_runs(runner, p, f"{self.id} ({len(p.schemes) * len(p.buffers)} points)")
        rows = []
        for (scheme, buffer), dirs in runs.items():
            shares, rs, tcp, cbr = [], [], [], []
            for d in dirs:
                bps = dict(departures(d, p.warmup_s, p.duration_s).iter_rows())
                b_tcp, b_cbr = bps.get(0, 0.0), bps.get(1, 0.0)
                shares.append(100 * b_tcp / (b_tcp + b_cbr))
                rs.append(jain([b_tcp, b_cbr]))
                tcp.append(b_tcp)
                cbr.append(b_cbr)
            k = len(dirs)
            rows.append({
                "scheme": scheme, "buffer": buffer,
                "tcp_share_pct": sum(shares) / k, "tcp_share_min": min(shares), "tcp_share_max": max(shares),
                "fairness": sum(rs) / k, "tcp_mbps": sum(tcp) / k / 1e6, "cbr_mbps": sum(cbr) / k / 1e6,
                "paper_tcp_share_pct": _paper(TABLE_I, scheme, buffer), "paper_fairness": _paper(TABLE_II, scheme, buffer),
            })
        return pl.DataFrame(rows)

    def findings(self, t: pl.DataFrame, p: E1Params) -> dict[str, float | None]:
        def at(scheme: str, b: int, col: str = "tcp_share_pct") -> float:
            return t.filter((pl.col("scheme") == scheme) & (pl.col("buffer") == b))[col].item()

        out: dict[str, float | None] = {}
        for b in p.buffers:
            for s in p.schemes:
                out[f"share_{s}_b{b}"] = at(s, b)
                out[f"r_{s}_b{b}"] = at(s, b, "fairness")
            out[f"sfed_minus_choke_b{b}"] = at("sfed", b) - at("choke", b)
            out[f"choke_minus_red_b{b}"] = at("choke", b) - at("red", b)
            out[f"sfed_minus_fred_b{b}"] = at("sfed", b) - at("fred", b)
            out[f"sfed_minus_rsfed_b{b}"] = at("sfed", b) - at("rsfed", b)
        sf = [at("sfed", b) for b in p.buffers]
        out["sfed_rise"] = sf[-1] - sf[0]
        out["red_max_share"] = max(at("red", b) for b in p.buffers)
        return out

    def references(self, p: E1Params) -> list[Reference]:
        refs = []
        tab = "Table I, section V-A"
        for i, b in enumerate(E1_BUFFERS):
            if b not in p.buffers:
                continue
            refs.append(Reference(
                f"sfed_minus_choke_b{b}", f"SFED minus CHOKe, TCP share, B = {b} (points)", 0.0, "at_least", 0.0,
                tab, "'SFED consistently outperforms RED and CHOKe at all buffer sizes'"))
            refs.append(Reference(
                f"choke_minus_red_b{b}", f"CHOKe minus RED, TCP share, B = {b} (points)", 0.0, "at_least", 0.0,
                tab, "CHOKe's row above RED's at every buffer (Table I)"))
            for s in ("sfed", "rsfed"):
                refs.append(Reference(
                    f"share_{s}_b{b}", f"{LABELS[s]} TCP share, B = {b} (%)", TABLE_I[s][i], "abs", 5.0, tab))
                refs.append(Reference(
                    f"r_{s}_b{b}", f"{LABELS[s]} fairness r, B = {b}", TABLE_II[s][i], "abs", 0.03, "Table II"))
            refs.append(Reference(
                f"sfed_minus_rsfed_b{b}", f"SFED minus R-SFED, TCP share, B = {b} (points)",
                TABLE_I["sfed"][i] - TABLE_I["rsfed"][i], "abs", 2.0, tab,
                "'Randomized SFED performs almost as good as SFED'"))
            refs.append(Reference(
                f"share_red_b{b}", f"RED TCP share, B = {b} (%)", TABLE_I["red"][i], "abs", 5.0, tab))
            refs.append(Reference(
                f"share_choke_b{b}", f"CHOKe TCP share, B = {b} (%)", TABLE_I["choke"][i], "abs", 5.0, tab,
                note="See docs/experiments.md (seed 002, CHOKe): the paper's own Table II implies 23-29%."))
            refs.append(Reference(
                f"share_fred_b{b}", f"FRED TCP share, B = {b} (%)", TABLE_I["fred"][i], "abs", 5.0, tab,
                note="See docs/experiments.md (seed 002, FRED)."))
        small, large = min(p.buffers), max(p.buffers)
        if small == 8:
            refs.append(Reference(
                "sfed_minus_fred_b8", "SFED minus FRED, TCP share, B = 8 (points)", 15.1, "at_least", 7.1, tab,
                "'at low buffer sizes it is much better than FRED' (digest 8: at least +8)"))
        if 16 in p.buffers:
            refs.append(Reference(
                "sfed_minus_fred_b16", "SFED minus FRED, TCP share, B = 16 (points)", 8.0, "at_least", 8.0, tab,
                "SFED above FRED at P_bd (paper +8.0)", "See docs/experiments.md (seed 002, FRED)."))
        for b in (32, 48):
            if b in p.buffers:
                refs.append(Reference(
                    f"sfed_minus_fred_b{b}", f"SFED minus FRED, TCP share, B = {b} (points)",
                    TABLE_I["sfed"][E1_BUFFERS.index(b)] - TABLE_I["fred"][E1_BUFFERS.index(b)], "abs", 3.0, tab,
                    "'It also performs as well as FRED at high buffer sizes'"))
        refs.append(Reference(
            "sfed_rise", f"SFED TCP share, B = {large} minus B = {small} (points)",
            TABLE_I["sfed"][E1_BUFFERS.index(large)] - TABLE_I["sfed"][E1_BUFFERS.index(small)], "at_least",
            TABLE_I["sfed"][E1_BUFFERS.index(large)] - TABLE_I["sfed"][E1_BUFFERS.index(small)], tab,
            "SFED's share rises with the buffer (> 0)"))
        refs.append(Reference(
            "red_max_share", "RED TCP share, highest over the buffers (%)", 20.0, "at_most", 0.0, tab,
            "RED gives TCP at most 14.8% (digest 8: <= 20%)"))
        return refs

    def plot(self, t: pl.DataFrame, p: E1Params, path: Path) -> Path:
        plt = _pyplot()
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
        for s, marker in zip(p.schemes, "osD^vx"):
            d = t.filter(pl.col("scheme") == s).sort("buffer")
            line = left.plot(d["buffer"], d["tcp_share_pct"], marker=marker, label=f"{LABELS[s]} (ours)")[0]
            right.plot(d["buffer"], d["fairness"], marker=marker, color=line.get_color(), label=f"{LABELS[s]} (ours)")
            if s in TABLE_I:
                left.plot(E1_BUFFERS, TABLE_I[s], ls=":", color=line.get_color(), alpha=0.7)
                right.plot(E1_BUFFERS, TABLE_II[s], ls=":", color=line.get_color(), alpha=0.7)
        left.axhline(50, color="grey", lw=0.8)
        left.set_ylabel("TCP's share of the throughput (%)")
        right.set_ylabel("fairness coefficient r")
        for ax in (left, right):
            ax.set_xlabel("buffer (packets; P_bd = 16)")
            ax.set_xticks(list(E1_BUFFERS))
            ax.grid(True, alpha=0.3)
        left.legend(fontsize="small", title="dotted: the paper")
        fig.suptitle(f"1 TCP vs 1.4 Mb/s CBR on 1.54 Mb/s (Tables I-II), {p.seeds} seeds")
        return _save(fig, path)

    def example_scenario(self, p: E1Params) -> dict[str, Any]:
        return p.scenario("sfed", 24, 1)


def _paper(table: dict[str, tuple[float, ...]], scheme: str, buffer: int) -> float | None:
    if scheme not in table or buffer not in E1_BUFFERS:
        return None
    return table[scheme][E1_BUFFERS.index(buffer)]


EXPERIMENTS: list[Experiment] = [Table1()]
