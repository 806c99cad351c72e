"""Resolution: a validated :class:`~aqmlab.scenario.Scenario` -> the contract value.

The output is the JSON model of ``crates/sim/src/scenario.rs`` (``Scenario``) with
``crates/qdisc/src/spec.rs`` (``QdiscSpec``): integers in nanoseconds, bits per
second and bytes; nodes and links referenced by index; one TCP profile per distinct
set of TCP parameters.

Random values drawn here (per-sender delays and rates, flow start times) come from
streams seeded by (scenario seed, a key naming their purpose): the topology's keys
are the field paths (``topology.access.delay``), a flow entry's keys start with its
group label (``flow:<group>:start``). Adding or removing a flow entry therefore does
not change the draws of the others, as long as their group labels stay the same.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from . import units
from .errors import UserError
from .schema import is_scalar, user_error
from .topology import Network, build, expand


def group_label(flow: Any, index: int) -> str:
    return flow.group or f"{flow.kind}{index}"


def tcp_profile(cfg: Any, where: str) -> dict[str, Any]:
    """A TcpConfig -> the contract's TcpProfile, with checks across its fields."""
    from .schema import packets_value

    packet = units.parse_bytes(cfg.packet_size, f"{where}.packet_size")
    header = units.parse_bytes(cfg.header_size, f"{where}.header_size")
    if header >= packet:
        raise UserError(f"must be smaller than packet_size ({cfg.packet_size})", f"{where}.header_size")
    rwnd = packets_value(cfg.receiver_window)
    ssthresh = rwnd if cfg.initial_ssthresh is None else packets_value(cfg.initial_ssthresh)
    min_rto = units.parse_time(cfg.min_rto, f"{where}.min_rto")
    max_rto = units.parse_time(cfg.max_rto, f"{where}.max_rto")
    if min_rto > max_rto:
        raise UserError(f"must not be less than min_rto ({cfg.min_rto})", f"{where}.max_rto")
    limit = 2**32 - 1
    for name, value in (("packet_size", packet), ("receiver_window", rwnd), ("initial_ssthresh", ssthresh),
                        ("initial_window", packets_value(cfg.initial_window))):
        if value > limit:
            raise UserError(f"must be below 2^32, got {value}", f"{where}.{name}")
    return {
        "variant": cfg.variant,
        "packet_size": packet,
        "header_size": header,
        "ack_size": units.parse_bytes(cfg.ack_size, f"{where}.ack_size"),
        "initial_window": packets_value(cfg.initial_window),
        "initial_ssthresh": ssthresh,
        "receiver_window": rwnd,
        "delayed_ack": cfg.delayed_ack,
        "delayed_ack_timeout_ns": units.parse_time(cfg.delayed_ack_timeout, f"{where}.delayed_ack_timeout"),
        "dupack_threshold": cfg.dupack_threshold,
        "min_rto_ns": min_rto,
        "max_rto_ns": max_rto,
        "initial_rto_ns": units.parse_time(cfg.initial_rto, f"{where}.initial_rto"),
        "clock_granularity_ns": units.parse_time(cfg.clock_granularity, f"{where}.clock_granularity"),
        "syn": cfg.syn,
        "ecn": cfg.ecn,
    }


class _Profiles:
    """Resolved TCP profiles, deduplicated."""

    def __init__(self, base: Any):
        self.base = base
        self.list: list[dict[str, Any]] = []
        self._index: dict[str, int] = {}
        self._base: tuple[int, dict[str, Any]] | None = None

    def index(self, override: Any, where: str) -> tuple[int, dict[str, Any]]:
        from .scenario import TcpConfig

        if override is None and self._base is not None:
            return self._base
        cfg = self.base
        place = "tcp"
        if override is not None:
            data = {**self.base.model_dump(), **override.model_dump(exclude_none=True)}
            try:
                cfg = TcpConfig.model_validate(data)
            except ValidationError as e:  # pragma: no cover - every value was validated
                raise user_error(TcpConfig, e, prefix=f"{where}.") from None
            place = where
        prof = tcp_profile(cfg, place)
        key = json.dumps(prof, sort_keys=True)
        if key not in self._index:
            self._index[key] = len(self.list)
            self.list.append(prof)
        if override is None:
            self._base = (self._index[key], prof)
        return self._index[key], prof


def sim_dist(spec: Any, kind: str, where: str, payload: int = 1) -> dict[str, Any]:
    """A value or distribution -> the contract's ``Dist`` (ns for "time", bytes for "size")."""

    def num(v: Any, f: str) -> float:
        if kind == "time":
            return float(units.parse_time(v, f, allow_zero=False))
        return units.payload_amount(v, payload, f)

    if is_scalar(spec):
        return {"dist": "fixed", "value": num(spec, where)}
    if spec.dist == "uniform":
        lo, hi = num(spec.low, f"{where}.low"), num(spec.high, f"{where}.high")
        if lo > hi:
            raise UserError(f"must not be less than low ({spec.low})", f"{where}.high")
        return {"dist": "uniform", "low": lo, "high": hi}
    if spec.dist == "exponential":
        return {"dist": "exponential", "mean": num(spec.mean, f"{where}.mean")}
    if spec.dist == "pareto":
        return {"dist": "pareto", "mean": num(spec.mean, f"{where}.mean"), "shape": float(spec.shape)}
    raise UserError(f"unknown distribution {spec.dist!r}", f"{where}.dist")  # pragma: no cover


def dist_mean(d: dict[str, Any]) -> float:
    if d["dist"] == "fixed":
        return d["value"]
    if d["dist"] == "uniform":
        return (d["low"] + d["high"]) / 2
    return d["mean"]


def _members(net: Network, spec: str | list[str], where: str) -> list[str]:
    if isinstance(spec, str):
        return net.members(spec, where)
    out: list[str] = []
    for i, name in enumerate(spec):
        out += net.members(name, f"{where}[{i}]")
    return out


def _endpoints(net: Network, f: Any, where: str) -> tuple[list[str], list[str]]:
    path = getattr(f, "path", None)
    src = f.src or (path[0] if path else None) or net.default_src
    if src is None:
        raise UserError("required here (a node or group name)", f"{where}.src")
    srcs = _members(net, src, f"{where}.src")
    dst = f.dst or (path[-1] if path else None) or (net.default_dst.get(src) if isinstance(src, str) else None)
    if dst is None:
        raise UserError(f"required here: no default destination for src {json.dumps(src)}", f"{where}.dst")
    dsts = _members(net, dst, f"{where}.dst")
    if path is not None:
        if len(srcs) != 1 or len(dsts) != 1 or path[0] != srcs[0] or path[-1] != dsts[0]:
            raise UserError("must run from the flow's src node to its dst node (single nodes)", f"{where}.path")
    return srcs, dsts


def _route(net: Network, a: str, b: str, where: str, f: Any, acks: bool) -> dict[str, Any]:
    if a == b:
        raise UserError(f"a flow would go from {a} to itself", where)
    path_names = getattr(f, "path", None)
    if path_names is not None:
        path = net.along(path_names, f"{where}.path")
        rev_names = list(reversed(path_names))
        if not acks:
            rev: list[int] = []
        elif net.has_path(rev_names):
            rev = net.along(rev_names, f"{where}.path")
        else:
            rev = net.shortest(b, a, where, "path for ACKs")
    else:
        path = net.shortest(a, b, where)
        rev = net.shortest(b, a, where, "path for ACKs") if acks else []
    return {"src": net.node_index[a], "dst": net.node_index[b], "path": path, "reverse_path": rev}


def resolve(s: Any) -> dict[str, Any]:
    """The contract dict for scenario ``s`` (a validated Scenario)."""
    seed = s.seed
    duration = units.parse_time(s.duration, "duration")
    net = build(s.topology, seed)
    profiles = _Profiles(s.tcp)
    profiles.index(None, "tcp")  # the base profile is always index 0
    flows: list[dict[str, Any]] = []
    arrivals: list[dict[str, Any]] = []
    labels: dict[str, int] = {}
    for i, f in enumerate(s.flows):
        where = f"flows[{i}]"
        label = group_label(f, i)
        if label in labels:
            raise UserError(f'"{label}" is also the group of flows[{labels[label]}]', f"{where}.group")
        labels[label] = i
        key = f"flow:{label}"
        srcs, dsts = _endpoints(net, f, where)
        if f.kind in ("tcp", "udp"):
            starts = expand(f.start, f.count, "time", f"{where}.start", seed, f"{key}:start", "flows")
            for j in range(f.count):
                a, b = srcs[j % len(srcs)], dsts[j % len(dsts)]
                route = _route(net, a, b, where, f, acks=f.kind == "tcp")
                flows.append(_flow(f, where, label, route, starts[j], profiles))
        else:
            flows_arr = _arrivals(f, where, label, net, srcs, dsts, profiles, duration)
            arrivals.append(flows_arr)
    return {
        "seed": seed,
        "duration_ns": duration,
        "warmup_ns": units.parse_time(s.warmup, "warmup"),
        "sample_interval_ns": units.parse_time(s.sample_interval, "sample_interval"),
        "nodes": [{"name": n} for n in net.nodes],
        "links": net.links,
        "tcp_profiles": profiles.list,
        "flows": flows,
        "arrivals": arrivals,
    }


def _flow(f: Any, where: str, label: str, route: dict[str, Any], start: int, profiles: _Profiles) -> dict[str, Any]:
    if f.kind == "tcp":
        idx, prof = profiles.index(f.tcp, f"{where}.tcp")
        payload = prof["packet_size"] - prof["header_size"]
        size = None if f.size == "inf" else units.parse_payload(f.size, payload, f"{where}.size")
        return {
            "kind": "tcp",
            "group": label,
            "route": route,
            "profile": idx,
            "start_ns": start,
            "size_bytes": size,
            "off_time": None if f.off_time is None else sim_dist(f.off_time, "time", f"{where}.off_time"),
            "trace_cwnd": f.trace_cwnd,
        }
    rate = units.parse_rate(f.rate, f"{where}.rate")
    if f.model == "cbr":
        source: dict[str, Any] = {"model": "cbr", "rate_bps": rate, "jitter": float(f.jitter)}
    elif f.model == "poisson":
        source = {"model": "poisson", "rate_bps": rate}
    else:
        source = {
            "model": "on_off",
            "rate_bps": rate,
            "on": sim_dist(f.on, "time", f"{where}.on"),
            "off": sim_dist(f.off, "time", f"{where}.off"),
        }
    stop = None if f.stop is None else units.parse_time(f.stop, f"{where}.stop")
    if stop is not None and stop <= start:
        raise UserError(f"must be later than the start ({units.format_time(start)})", f"{where}.stop")
    return {
        "kind": "udp",
        "group": label,
        "route": route,
        "packet_size": units.parse_bytes(f.packet_size, f"{where}.packet_size"),
        "start_ns": start,
        "stop_ns": stop,
        "tagged": f.tagged,
        "source": source,
    }


def _arrivals(
    f: Any, where: str, label: str, net: Network, srcs: list[str], dsts: list[str], profiles: _Profiles,
    duration: int,
) -> dict[str, Any]:
    idx, prof = profiles.index(f.tcp, f"{where}.tcp")
    payload = prof["packet_size"] - prof["header_size"]
    size = sim_dist(f.size, "size", f"{where}.size", payload)
    routes = [
        _route(net, srcs[j % len(srcs)], dsts[j % len(dsts)], where, f, acks=True)
        for j in range(max(len(srcs), len(dsts)))
    ]
    if f.rate is not None:
        rate = units.parse_frequency(f.rate, f"{where}.rate")
    else:
        capacity = min(net.links[li]["rate_bps"] for r in routes for li in r["path"])
        wire_bits = dist_mean(size) * prof["packet_size"] / payload * 8
        rate = f.load * capacity / wire_bits
    start = units.parse_time(f.start, f"{where}.start")
    stop = None if f.stop is None else units.parse_time(f.stop, f"{where}.stop")
    if stop is not None and stop <= start:
        raise UserError(f"must be later than start ({f.start})", f"{where}.stop")
    if start >= duration:
        raise UserError(f"must be earlier than the end of the run ({units.format_time(duration)})", f"{where}.start")
    return {
        "group": label,
        "rate_per_s": rate,
        "size_bytes": size,
        "routes": routes,
        "profile": idx,
        "start_ns": start,
        "stop_ns": stop,
    }
