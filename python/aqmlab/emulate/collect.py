"""The router's report and the applications' reports as the simulator's result tables.

The tables have the simulator's columns and types (flows.parquet, queues.parquet,
timeseries.parquet, summary.json), so that everything reading results reads an emulated
run as it reads a simulated one. What only the kernel knows and iperf3 does not say is
null (timeouts, fast retransmits, duplicate packets); what the router measures comes
from the router, counted at the links, on the run's clock (the router's samples shifted
by the instant the traffic started).

Throughput counts payload, as the simulator's: the bytes a flow's packets delivered
less their headers (IPv4 and TCP with Linux's timestamps, 52 bytes; IPv4 and UDP, 28),
after the warm-up.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ..names import NameList
from . import traffic

#: Header bytes of a data packet as the kernel sends it: IPv4 20 + TCP 20 + timestamps 12.
TCP_WIRE_HEADERS = 52

_FLOW_SCHEMA = {
    "flow_id": pl.Int64, "group": pl.String, "kind": pl.String, "src": pl.String, "dst": pl.String,
    "start_s": pl.Float64, "size_bytes": pl.Int64, "packets_sent": pl.Int64, "bytes_sent": pl.Int64,
    "unique_bytes_delivered": pl.Int64, "retransmissions": pl.Int64, "timeouts": pl.Int64,
    "fast_retransmits": pl.Int64, "completion_time_s": pl.Float64, "transfers_completed": pl.Int64,
    "mean_completion_time_s": pl.Float64, "throughput_bps": pl.Float64, "base_rtt_s": pl.Float64,
    "final_cwnd": pl.Float64, "packets_dropped": pl.Int64, "duplicate_packets": pl.Int64,
    "delay_min_s": pl.Float64, "delay_mean_s": pl.Float64, "delay_max_s": pl.Float64, "jitter_s": pl.Float64,
    "packets_reordered": pl.Int64, "queues": pl.List(pl.UInt32),
}
_QUEUE_SCHEMA = {
    "link": pl.String, "from": pl.String, "to": pl.String, "qdisc": pl.String, "rate_bps": pl.Int64,
    "delay_s": pl.Float64, "monitored": pl.Boolean, "arrivals": pl.Int64, "departures": pl.Int64,
    "drops": pl.Int64, "drops_overflow": pl.Int64, "drops_early": pl.Int64, "drops_push_out": pl.Int64,
    "drops_policy": pl.Int64, "buffered_drop_bytes": pl.Int64, "marks": pl.Int64, "arrival_bytes": pl.Int64,
    "departure_bytes": pl.Int64, "backlog_packets": pl.Int64, "peak_packets": pl.Int64,
    "window_arrivals": pl.Int64, "window_drops": pl.Int64, "lost": pl.Int64, "window_lost": pl.Int64,
    "utilization": pl.Float64, "loss_rate": pl.Float64, "mean_delay_s": pl.Float64, "p50_delay_s": pl.Float64, "p99_delay_s": pl.Float64,
}


class Clock:
    """The router's samples on the run's clock: sample i was taken at ``times[i]``
    seconds of the run (negative before the traffic started)."""

    def __init__(self, report: dict[str, Any], t0_monotonic_ns: int, resolved: dict[str, Any]) -> None:
        self.t0_ns = t0_monotonic_ns
        offset = t0_monotonic_ns - int(report["router"]["start_monotonic_ns"])
        self.times = (np.asarray(report["sample_times_ns"], dtype=np.int64) - offset) / 1e9
        self.warmup = int(resolved["warmup_ns"]) / 1e9
        self.duration = int(resolved["duration_ns"]) / 1e9

    def window(self) -> tuple[int, int] | None:
        """The samples nearest the end of the warm-up and the end of the run."""
        if len(self.times) < 2:
            return None
        first = int(np.argmin(np.abs(self.times - self.warmup)))
        last = int(np.argmin(np.abs(self.times - self.duration)))
        return (first, last) if last > first else None

    def in_run(self) -> np.ndarray:
        return (self.times > 0) & (self.times <= self.duration + 1e-9)

    def of_monotonic(self, ns: Any) -> np.ndarray:
        """Instants of CLOCK_MONOTONIC (ns) on the run's clock (s)."""
        return (np.asarray(ns, dtype=np.int64) - self.t0_ns) / 1e9


class KernelReadings:
    """A kernel queue's counters as read during the run (kernel_poll.py), on the run's clock."""

    def __init__(self, readings: list[dict[str, Any]], clock: Clock) -> None:
        self.times = clock.of_monotonic([r["time_ns"] for r in readings])
        self.columns = {k: np.asarray([r[k] for r in readings], dtype=np.float64)
                        for k in ("backlog_packets", "backlog_bytes", "drops", "sent_bytes", "sent_packets")}
        self.clock = clock

    def window(self) -> tuple[int, int] | None:
        """The readings nearest the end of the warm-up and the end of the run."""
        if len(self.times) < 2:
            return None
        first = int(np.argmin(np.abs(self.times - self.clock.warmup)))
        last = int(np.argmin(np.abs(self.times - self.clock.duration)))
        return (first, last) if last > first else None

    def arrivals(self, a: int, b: int) -> int:
        """Packets that reached the qdisc between readings a and b: sent, dropped or still queued."""
        c = self.columns
        return int(sum(c[k][b] - c[k][a] for k in ("sent_packets", "drops", "backlog_packets")))

    def in_run(self) -> np.ndarray:
        """The readings of the run: the last is taken as it ends, a little after its end."""
        slack = float(np.median(np.diff(self.times))) / 2 if len(self.times) > 1 else 0.0
        return (self.times > 0) & (self.times <= self.clock.duration + slack)

    def rate_bps(self, a: int, b: int) -> float:
        """What the shaper sent between readings a and b, in bits per second."""
        sent = self.columns["sent_bytes"]
        return float((sent[b] - sent[a]) * 8 / (self.times[b] - self.times[a]))


def _flow_tuples(report: dict[str, Any], p: traffic.FlowPlan, addr: dict[int, str]) -> list[dict[str, Any]]:
    """The router's 5-tuples carrying flow ``p``'s data (its control connection too)."""
    proto = 6 if p.kind == "tcp" else 17
    return [
        f for f in report["flows"]
        if f["proto"] == proto and f["src"] == addr[p.src] and f["dst"] == addr[p.dst] and f["dport"] == p.port
    ]


def _series_at(f: dict[str, Any], i: int) -> tuple[int, int]:
    """Bytes and packets delivered by sample i."""
    k = i - int(f["first_sample"])
    if k < 0 or not f["delivered_series"]:
        return (0, 0)
    b, n = f["delivered_series"][min(k, len(f["delivered_series"]) - 1)]
    return (int(b), int(n))


def _payload(tuples: list[dict[str, Any]], i: int, header: int) -> int:
    return sum(b - n * header for b, n in (_series_at(f, i) for f in tuples))


def flows_frame(report: dict[str, Any], plans: list[traffic.FlowPlan], apps: dict[int, dict[str, Any]],
                addr: dict[int, str], nodes: NameList, clock: Clock) -> pl.DataFrame:
    window = clock.window()
    rows = []
    for p in plans:
        tuples = _flow_tuples(report, p, addr)
        app = apps.get(p.index, {})
        header = TCP_WIRE_HEADERS if p.kind == "tcp" else traffic.IPV4_UDP_HEADERS
        delivered = sum(f["delivered_bytes"] - f["delivered"] * header for f in tuples)
        throughput = None
        if window is not None:
            a, b = window
            span = clock.times[b] - clock.times[a]
            throughput = (_payload(tuples, b, header) - _payload(tuples, a, header)) * 8 / span
        transit = [f["transit"] for f in tuples if f["transit"]["count"]]
        data = max(tuples, key=lambda f: f["delivered_bytes"], default=None)
        rows.append({
            "flow_id": p.index, "group": p.group, "kind": p.kind, "src": nodes[p.src], "dst": nodes[p.dst],
            "start_s": p.start_ns / 1e9, "size_bytes": p.size_bytes,
            "packets_sent": sum(f["arrivals"] for f in tuples), "bytes_sent": sum(f["arrival_bytes"] for f in tuples),
            "unique_bytes_delivered": max(0, delivered), "retransmissions": app.get("retransmissions"),
            "timeouts": None, "fast_retransmits": None,
            "completion_time_s": app.get("seconds") if p.size_bytes is not None else None,
            "transfers_completed": (1 if app.get("seconds") and not app.get("error") else 0) if p.size_bytes is not None else None,
            "mean_completion_time_s": app.get("seconds") if p.size_bytes is not None else None,
            "throughput_bps": throughput, "base_rtt_s": app.get("rtt_min_s"),
            "final_cwnd": app.get("final_cwnd_bytes") / p.packet_size if app.get("final_cwnd_bytes") else None,
            "packets_dropped": sum(sum(f["drops"]) + f["lost"] for f in tuples), "duplicate_packets": None,
            "delay_min_s": min((t["min_s"] for t in transit), default=None),
            "delay_mean_s": (data["transit"]["mean_s"] if data and data["transit"]["count"] else None),
            "delay_max_s": max((t["max_s"] for t in transit), default=None),
            "jitter_s": data["jitter_s"] if data and p.kind == "udp" else None,
            "packets_reordered": data.get("reordered") if data and p.kind == "udp" else None, "queues": None,
        })
    return pl.DataFrame(rows, schema=_FLOW_SCHEMA)


def queues_frame(report: dict[str, Any], nodes: NameList, clock: Clock,
                 kernel: dict[str, dict[str, Any]] | None = None) -> pl.DataFrame:
    """One row per link; a link queued by the kernel (the kernel baseline) has the
    kernel qdisc's own counters (``tc -s``), and no peak (the kernel keeps none)."""
    window = clock.window()
    rows = []
    for link in report["links"]:
        if link.get("kernel") is not None:
            rows.append(_kernel_queue(link, nodes, clock, (kernel or {}).get(link["name"], {})))
            continue
        drops = link["drops"]
        samples = link["samples"]
        w_arrivals = w_drops = None
        utilization = None
        if window is not None and samples:
            a, b = window
            w_arrivals = samples[b][3] - samples[a][3]
            w_drops = samples[b][4] - samples[a][4]
            utilization = (samples[b][2] - samples[a][2]) * 8 / (link["rate_bps"] * (clock.times[b] - clock.times[a]))
        sojourn = link["sojourn"]
        rows.append({
            "link": link["name"], "from": nodes[link["from"]], "to": nodes[link["to"]], "qdisc": link["qdisc"],
            "rate_bps": link["rate_bps"], "delay_s": link["delay_ns"] / 1e9, "monitored": link["monitor"],
            "arrivals": link["arrivals"], "departures": link["departures"], "drops": sum(drops),
            "drops_overflow": drops[0], "drops_early": drops[1], "drops_push_out": drops[2], "drops_policy": drops[3],
            "buffered_drop_bytes": link["buffered_drop_bytes"], "marks": link["marks"],
            "arrival_bytes": link["arrival_bytes"], "departure_bytes": link["departure_bytes"],
            "backlog_packets": link["backlog_packets"], "peak_packets": link["peak_packets"],
            "window_arrivals": w_arrivals, "window_drops": w_drops, "utilization": utilization,
            # Lost on the wire: the router counts them over the run, not per sample.
            "lost": link["lost"], "window_lost": None,
            "loss_rate": (w_drops / w_arrivals) if w_arrivals else 0.0,
            "mean_delay_s": sojourn["mean_s"], "p50_delay_s": sojourn["p50_s"], "p99_delay_s": sojourn["p99_s"],
        })
    return pl.DataFrame(rows, schema=_QUEUE_SCHEMA)


def _kernel_queue(link: dict[str, Any], nodes: NameList, clock: Clock, counters: dict[str, Any]) -> dict[str, Any]:
    """A kernel-queued link: the router's counts of what went in and came out; the
    qdisc's own drops, backlog and bytes sent (``tc -s``), read during the run and at
    its end (kernel_poll.py): utilization and the window's drops from the readings
    nearest the end of the warm-up and of the run."""
    tc = counters.get("at_end", {})
    readings = KernelReadings(counters.get("readings", []), clock)
    window = readings.window()
    utilization = w_drops = w_arrivals = None
    if window is not None:
        a, b = window
        utilization = readings.rate_bps(a, b) / link["rate_bps"]
        w_drops = int(readings.columns["drops"][b] - readings.columns["drops"][a])
        w_arrivals = readings.arrivals(a, b)
    drops = tc.get("drops")
    sojourn = link["sojourn"]
    return {
        "link": link["name"], "from": nodes[link["from"]], "to": nodes[link["to"]],
        "qdisc": f"kernel:{tc.get('kind', '?')}", "rate_bps": link["rate_bps"], "delay_s": link["delay_ns"] / 1e9,
        "monitored": link["monitor"], "arrivals": link["arrivals"], "departures": link["departures"],
        "drops": drops, "drops_overflow": drops, "drops_early": 0, "drops_push_out": 0, "drops_policy": 0,
        "buffered_drop_bytes": None, "marks": 0, "arrival_bytes": link["arrival_bytes"],
        "departure_bytes": link["departure_bytes"], "backlog_packets": tc.get("backlog_packets"), "peak_packets": None,
        "window_arrivals": w_arrivals, "window_drops": w_drops, "utilization": utilization,
        "lost": link["lost"], "window_lost": None,
        "loss_rate": w_drops / w_arrivals if w_drops is not None and w_arrivals else None,
        "mean_delay_s": sojourn["mean_s"], "p50_delay_s": sojourn["p50_s"], "p99_delay_s": sojourn["p99_s"],
    }


def _kernel_series(add: Any, link: dict[str, Any], readings: KernelReadings) -> None:
    """A kernel queue's length and its link's utilization at the readings of the run."""
    keep = np.flatnonzero(readings.in_run())
    keep = keep[keep > 0]  # utilization needs the reading before
    if not len(keep):
        return
    t, c = readings.times, readings.columns
    add("queue_packets", link["name"], t[keep], c["backlog_packets"][keep])
    add("queue_bytes", link["name"], t[keep], c["backlog_bytes"][keep])
    sent = c["sent_bytes"][keep] - c["sent_bytes"][keep - 1]
    add("link_utilization", link["name"], t[keep], sent * 8 / (link["rate_bps"] * (t[keep] - t[keep - 1])))


def _jitter_at_samples(tuples: list[dict[str, Any]], samples: int) -> np.ndarray | None:
    """The RFC 3550 jitter of a UDP flow's data tuple at every sample (NaN before its
    first packet), or None if the router saw none."""
    data = max(tuples, key=lambda f: f["delivered_bytes"], default=None)
    if data is None or not data.get("jitter_series"):
        return None
    out = np.full(samples, np.nan)
    first = int(data["first_sample"])
    series = np.asarray(data["jitter_series"], dtype=np.float64)[: max(0, samples - first)]
    out[first : first + len(series)] = series
    return out


def timeseries_frame(report: dict[str, Any], plans: list[traffic.FlowPlan], addr: dict[int, str], clock: Clock,
                     apps: dict[int, dict[str, Any]] | None = None,
                     kernel: dict[str, dict[str, Any]] | None = None) -> pl.DataFrame:
    """Queue length and utilization of the monitored links, and every flow's throughput
    (the simulator's metrics of the same names), and every UDP flow's RFC 3550 jitter
    so far (``jitter_s``, as Iperf reports it each interval), at the router's samples; the kernel's
    congestion window (``cwnd``, in packets of the flow's payload) of the flows that ask
    for it, at iperf3's intervals. A kernel-queued link's queue and utilization are the
    kernel's own, at the instants its counters were read (kernel_poll.py)."""
    keep = np.flatnonzero(clock.in_run())
    times, metrics, entities, values = [], [], [], []

    def add(metric: str, entity: str, t: np.ndarray, v: np.ndarray) -> None:
        times.append(t)
        metrics.extend([metric] * len(t))
        entities.extend([entity] * len(t))
        values.append(np.asarray(v, dtype=np.float64))

    if len(keep) >= 2:
        t = clock.times[keep]
        dt = np.diff(clock.times[keep[0] - 1 : keep[-1] + 1]) if keep[0] > 0 else np.diff(np.r_[0.0, t])
        for link in report["links"]:
            if not link["monitor"]:
                continue
            if link.get("kernel") is not None:
                _kernel_series(add, link, KernelReadings((kernel or {}).get(link["name"], {}).get("readings", []), clock))
                continue
            s = np.asarray(link["samples"], dtype=np.float64)
            add("queue_packets", link["name"], t, s[keep, 0])
            add("queue_bytes", link["name"], t, s[keep, 1])
            sent = np.diff(s[:, 2], prepend=0.0)[keep]
            add("link_utilization", link["name"], t, sent * 8 / (link["rate_bps"] * dt))
        for p in plans:
            header = TCP_WIRE_HEADERS if p.kind == "tcp" else traffic.IPV4_UDP_HEADERS
            tuples = _flow_tuples(report, p, addr)
            payload = np.array([_payload(tuples, int(i), header) for i in range(len(clock.times))], dtype=np.float64)
            add("throughput_bps", str(p.index), t, np.diff(payload, prepend=0.0)[keep] * 8 / dt)
            if p.kind == "udp" and (jitter := _jitter_at_samples(tuples, len(clock.times))) is not None:
                add("jitter_s", str(p.index), t, jitter[keep])
    for p in plans:
        series = (apps or {}).get(p.index, {}).get("cwnd_series") if p.trace_cwnd else None
        if series:
            t = np.array([p.start_ns / 1e9 + end for end, _ in series])
            keep_t = t <= clock.duration
            v = np.array([b for _, b in series], dtype=np.float64) / (p.packet_size - TCP_WIRE_HEADERS)
            add("cwnd", str(p.index), t[keep_t], v[keep_t])
    if not times:
        return pl.DataFrame(schema={"time_s": pl.Float64, "metric": pl.String, "entity": pl.String, "value": pl.Float64})
    return pl.DataFrame({
        "time_s": np.concatenate(times), "metric": metrics, "entity": entities, "value": np.concatenate(values),
    })


def summary(resolved: dict[str, Any], flows: pl.DataFrame, queues: pl.DataFrame, report: dict[str, Any]) -> dict[str, Any]:
    """The simulator's run-level figures that the emulator measures, and its own."""
    thr = flows["throughput_bps"].drop_nulls().to_numpy()
    jain = float(thr.sum() ** 2 / (len(thr) * (thr**2).sum())) if len(thr) and (thr**2).sum() > 0 else None
    out: dict[str, Any] = {
        "engine": "emulator",
        "seed": int(resolved["seed"]),
        "duration_s": int(resolved["duration_ns"]) / 1e9,
        "warmup_s": int(resolved["warmup_ns"]) / 1e9,
        "flows": len(flows),
        "packets_injected": int(flows["packets_sent"].sum()),
        "packets_dropped": int(queues["drops"].sum() + queues["lost"].sum()),
        "packets_lost": int(queues["lost"].sum()),
        "goodput_bps": float(thr.sum()) if len(thr) else None,
        "jain_index": jain,
        "unroutable_packets": report["unroutable"],
        "ignored_packets": report["ignored"],
    }
    for kind in ("tcp", "udp"):
        t = flows.filter(pl.col("kind") == kind)["throughput_bps"].drop_nulls().to_numpy()
        if len(t) > 1 and (t**2).sum() > 0:
            out[f"jain_index.{kind}"] = float(t.sum() ** 2 / (len(t) * (t**2).sum()))
    monitored = queues.filter(pl.col("monitored"))
    if len(monitored):
        b = monitored.row(0, named=True)
        out.update({
            "bottleneck": b["link"], "bottleneck_utilization": b["utilization"],
            "bottleneck_loss_rate": b["loss_rate"], "bottleneck_mean_delay_s": b["mean_delay_s"],
        })
    return out


def timing(report: dict[str, Any], wall_s: float) -> dict[str, Any]:
    """The router's cost and the run's wall time (timing.json: they differ between runs)."""
    r = report["router"]
    lateness = report["lateness"]
    return {
        "total_wall_time_s": wall_s,
        "router_elapsed_s": r["elapsed_s"],
        "router_cpu_user_s": r["cpu_user_s"],
        "router_cpu_system_s": r["cpu_system_s"],
        "router_cpu_per_packet_ns": r["cpu_per_packet_ns"],
        "router_max_rss_kb": r["max_rss_kb"],
        "router_packets_read": r["packets_read"],
        "router_write_failures": r["write_failures"],
        "router_lateness_p50_s": lateness["p50_s"],
        "router_lateness_p99_s": lateness["p99_s"],
        "router_lateness_max_s": lateness["max_s"],
    }
