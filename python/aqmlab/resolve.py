"""Resolution: a validated :class:`~aqmlab.scenario.Scenario` -> the contract value.

The output is the model of ``crates/sim/src/scenario.rs`` (``Scenario``) with
``crates/qdisc/src/spec.rs`` (``QdiscSpec``, each discipline's parameters in its
own file beside it): integers in nanoseconds, bits per second and bytes; nodes and
links referenced by index; one TCP profile per distinct set of TCP parameters.
Links and flows are column-wise: a numpy array per field (routes as offsets into a
flat array of links), each distinct discipline and each flow entry's shared
parameters (its group) listed once (see :mod:`aqmlab.contract`).

Random values drawn here (per-sender delays and rates, flow start times) come from
streams seeded by (scenario seed, a key naming their purpose): the topology's keys
are the field paths (``topology.access.delay``), a flow entry's keys start with its
group label (``flow:<group>:start``). Adding or removing a flow entry therefore does
not change the draws of the others, as long as their group labels stay the same.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from pydantic import ValidationError

from . import contract, units
from .errors import UserError
from .schema import is_scalar, user_error
from .topology import Network, build, expand


def group_label(flow: Any, index: int) -> str:
    return flow.group or f"{flow.kind}{index}"


def packet_and_header(cfg: Any, where: str) -> tuple[int, int]:
    """A flow's packet size on the wire and the header bytes inside it (fewer)."""
    packet = units.parse_bytes(cfg.packet_size, f"{where}.packet_size")
    header = units.parse_bytes(cfg.header_size, f"{where}.header_size", allow_zero=True)
    if header >= packet:
        raise UserError(f"must be smaller than packet_size ({cfg.packet_size})", f"{where}.header_size")
    return packet, header


def tcp_profile(cfg: Any, where: str) -> dict[str, Any]:
    """A TcpConfig -> the contract's TcpProfile, with checks across its fields."""
    from .schema import packets_value

    packet, header = packet_and_header(cfg, where)
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
        # Only when not the default, so that other profiles resolve as before it.
        **({"rtt_estimator": cfg.rtt_estimator} if cfg.rtt_estimator != "rfc6298" else {}),
        **({"timeout_cwnd": cfg.timeout_cwnd} if cfg.timeout_cwnd != "restart" else {}),
        # CUBIC's parameters only for CUBIC, and only those set (the rest are
        # Rust's defaults): other profiles resolve as they did before it.
        **({"cubic": cubic} if cfg.variant == "cubic" and (cubic := cfg.cubic.model_dump(exclude_none=True)) else {}),
    }


class _Profiles:
    """Resolved TCP profiles, deduplicated."""

    def __init__(self, base: Any):
        self.base = base
        self.list: list[dict[str, Any]] = []
        self._index: dict[str, int] = {}
        self._base: tuple[int, dict[str, Any]] | None = None

    def index(self, override: Any, where: str) -> tuple[int, dict[str, Any]]:
        if override is None and self._base is not None:
            return self._base
        cfg = self.base
        place = "tcp"
        if override is not None:
            base, changes = self.base.model_dump(), override.model_dump(exclude_none=True)
            # A flow's `cubic` table overrides the base's field by field.
            changes["cubic"] = {**base["cubic"], **changes.get("cubic", {})}
            data = {**base, **changes}
            config = type(self.base)  # the scenario's TcpConfig
            try:
                cfg = config.model_validate(data)
            except ValidationError as e:  # pragma: no cover - every value was validated
                raise user_error(config, e, prefix=f"{where}.") from None
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


def _members(net: Network, spec: str | list[str], where: str) -> np.ndarray:
    if isinstance(spec, str):
        return net.members(spec, where)
    parts = [net.members(name, f"{where}[{i}]") for i, name in enumerate(spec)]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def _endpoints(net: Network, f: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
    """The indices of the nodes a flow entry's flows go from and to, taken in turn."""
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
        if len(srcs) != 1 or len(dsts) != 1 or path[0] != net.nodes[int(srcs[0])] or path[-1] != net.nodes[int(dsts[0])]:
            raise UserError("must run from the flow's src node to its dst node (single nodes)", f"{where}.path")
    if getattr(f, "count", 1) and (not len(srcs) or not len(dsts)):
        raise UserError("names a group without nodes", f"{where}.{'src' if not len(srcs) else 'dst'}")
    return srcs, dsts


#: Routes as the contract has them: offsets (one more than routes) into flat links.
Paths = tuple[np.ndarray, np.ndarray]


def _repeat(path: list[int], n: int) -> Paths:
    """The same route ``n`` times."""
    offsets = np.arange(n + 1, dtype=np.int64) * len(path)
    return offsets, np.tile(np.array(path, dtype=np.uint32), n)


def _routes(net: Network, srcs: np.ndarray, dsts: np.ndarray, where: str, f: Any, acks: bool) -> tuple[Paths, Paths]:
    """Each flow's route srcs[i] -> dsts[i], and the route back for its ACKs (no
    links each, without ACKs)."""
    n = len(srcs)
    same = srcs == dsts
    if same.any():
        a = net.nodes[int(srcs[np.argmax(same)])]
        raise UserError(f"a flow would go from {a} to itself", where)
    path_names = getattr(f, "path", None)
    no_acks = (np.zeros(n + 1, dtype=np.int64), np.empty(0, dtype=np.uint32))
    if path_names is not None:
        forward = _repeat(net.along(path_names, f"{where}.path"), n)
        rev_names = list(reversed(path_names))
        if not acks:
            return forward, no_acks
        if net.has_path(rev_names):
            return forward, _repeat(net.along(rev_names, f"{where}.path"), n)
        return forward, net.routes(dsts, srcs, where, "path for ACKs")
    forward = net.routes(srcs, dsts, where)
    return forward, (net.routes(dsts, srcs, where, "path for ACKs") if acks else no_acks)


class _FlowColumns:
    """The contract's ``flows``, gathered a flow entry at a time."""

    def __init__(self) -> None:
        self.groups: list[dict[str, Any]] = []
        self.blocks: list[dict[str, np.ndarray]] = []
        self.paths: list[tuple[Paths, Paths]] = []

    def add(self, group: dict[str, Any], srcs: np.ndarray, dsts: np.ndarray, starts: np.ndarray,
            routes: tuple[Paths, Paths], stops: np.ndarray | None = None) -> None:
        n = len(srcs)
        self.blocks.append({
            "group": np.full(n, len(self.groups), dtype=np.uint32),
            "src": srcs.astype(np.uint32),
            "dst": dsts.astype(np.uint32),
            "start_ns": np.asarray(starts, dtype=np.int64),
            # 0: the group's stop (the column is written only if a flow has its own)
            "stop_ns": np.zeros(n, dtype=np.int64) if stops is None else np.asarray(stops, dtype=np.int64),
        })
        self.groups.append(group)
        self.paths.append(routes)

    def to_contract(self) -> dict[str, Any]:
        out: dict[str, Any] = {"groups": self.groups}
        for name, dtype in (("group", np.uint32), ("src", np.uint32), ("dst", np.uint32), ("start_ns", np.int64)):
            out[name] = np.concatenate([b[name] for b in self.blocks]) if self.blocks else np.empty(0, dtype=dtype)
        if any(b["stop_ns"].any() for b in self.blocks):
            out["stop_ns"] = np.concatenate([b["stop_ns"] for b in self.blocks])
        for k, name in enumerate(("path", "reverse_path")):
            parts = [routes[k] for routes in self.paths]
            out[name] = _join(parts)
        return out


def _join(parts: list[Paths]) -> dict[str, np.ndarray]:
    """Blocks of routes as one: each block's offsets moved past the links before it."""
    offsets, links, total = [np.zeros(1, dtype=np.int64)], [], 0
    for o, li in parts:
        offsets.append(o[1:] + total)
        links.append(li)
        total += len(li)
    return {
        "offsets": np.concatenate(offsets),
        "links": np.concatenate(links) if links else np.empty(0, dtype=np.uint32),
    }


def resolve(s: Any) -> dict[str, Any]:
    """The contract dict for scenario ``s`` (a validated Scenario): numpy arrays for
    the columns of links and flows, plain values for the rest."""
    seed = s.seed
    duration = units.parse_time(s.duration, "duration")
    net = build(s.topology, seed)
    profiles = _Profiles(s.tcp)
    profiles.index(None, "tcp")  # the base profile is always index 0
    flows = _FlowColumns()
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
            if not f.count:
                continue
            j = np.arange(f.count)
            src, dst = srcs[j % len(srcs)], dsts[j % len(dsts)]
            routes = _routes(net, src, dst, where, f, acks=f.kind == "tcp")
            stops = None
            if f.kind == "udp" and f.stop is not None and not is_scalar(f.stop):
                stops = expand(f.stop, f.count, "time", f"{where}.stop", seed, f"{key}:stop", "flows")
                if (early := stops <= starts).any():
                    i = int(np.argmax(early))
                    raise UserError(f"must be later than the start of flow {i} ({units.format_time(int(starts[i]))})",
                                    f"{where}.stop")
            flows.add(_group(f, where, label, starts, profiles), src, dst, starts, routes, stops)
        else:
            arrivals.append(_arrivals(f, where, label, net, srcs, dsts, profiles, duration))
    nodes, links = net.to_contract()
    resolved = {
        "seed": seed,
        "duration_ns": duration,
        "warmup_ns": units.parse_time(s.warmup, "warmup"),
        "sample_interval_ns": units.parse_time(s.sample_interval, "sample_interval"),
        "nodes": nodes,
        "links": links,
        "tcp_profiles": profiles.list,
        "flows": flows.to_contract(),
        "arrivals": arrivals,
    }
    if s.trace is not None:
        resolved["trace"] = _trace(s.trace, net, resolved)
    if s.ties != "hashed":  # the default stays out, so that resolved scenarios keep their hashes
        resolved["ties"] = s.ties
    from .limits import check

    check(resolved, {label: f"flows[{i}]" for label, i in labels.items()})
    return resolved


def _trace(t: Any, net: Network, resolved: dict[str, Any]) -> dict[str, Any]:
    """The contract's ``Trace``: links by number, every name and flow checked, and no
    filter that matches nothing (the core checks the same, ``check.rs``)."""
    out: dict[str, Any] = {}
    if t.packets is not None:
        where = "trace.packets"
        links = None if t.packets.links is None else _trace_links(t.packets.links, net, f"{where}.links")
        _check_filter(links, t.packets.flows, set(t.packets.events) == {"deliver"}, where, net, resolved)
        out["packets"] = {"links": links, "flows": t.packets.flows, "events": list(t.packets.events)}
    if t.pcap is not None:
        links = _trace_links(t.pcap.links, net, "trace.pcap.links")
        _check_filter(links, t.pcap.flows, False, "trace.pcap", net, resolved)
        out["pcap"] = {"links": links, "flows": t.pcap.flows}
    if t.flow_series is not None:
        out["flow_series_ns"] = units.parse_time(t.flow_series, "trace.flow_series", allow_zero=False)
    if t.flow_stats:
        out["flow_stats"] = True
    if t.flow_queues is not None:
        out["flow_queues"] = _link_number(t.flow_queues, net, "trace.flow_queues")
    if t.queue_flows is not None:
        out["queue_flows"] = _link_number(t.queue_flows, net, "trace.queue_flows")
    return out


def _trace_links(names: list[str], net: Network, where: str) -> list[int]:
    """Link names -> their numbers."""
    return [_link_number(name, net, f"{where}[{i}]") for i, name in enumerate(names)]


def _link_number(name: str, net: Network, where: str) -> int:
    link = net.link_names.index(name)
    if link is None:
        shown = ", ".join(net.link_names[k] for k in range(min(8, len(net.link_names))))
        more = ", ..." if len(net.link_names) > 8 else ""
        raise UserError(f'no link named "{name}" (links: {shown}{more})', where)
    return link


def _check_filter(links: list[int] | None, flows: list[int] | None, last_hop_only: bool, where: str,
                  net: Network, resolved: dict[str, Any]) -> None:
    """Each flow named exists and reaches a link named; each link named is reached by a
    flow named (by any flow, without names). Deliveries reach a route's last link only."""
    fl = resolved["flows"]
    count = len(fl["group"])
    for i, f in enumerate(flows or []):
        if f >= count:
            note = " (flows of tcp_arrivals are numbered as they arrive, and cannot be named)" if resolved["arrivals"] else ""
            raise UserError(f"no flow {f}: the scenario has {count} flows, numbered from 0{note}", f"{where}.flows[{i}]")
    if links is None:
        return

    def reached(route: list[int]) -> list[int]:
        return route[-1:] if last_hop_only else route

    def routes(f: int) -> list[list[int]]:
        return [contract.route(fl["path"], f), contract.route(fl["reverse_path"], f)]

    crosses = "arrives over" if last_hop_only else "crosses"
    met: set[int] = set()
    if flows is None:
        for paths in (fl["path"], fl["reverse_path"]):
            o, li = paths["offsets"], paths["links"]
            met.update((li[o[1:][o[1:] > o[:-1]] - 1] if last_hop_only else li).tolist())
        for a in resolved["arrivals"]:
            for r in a["routes"]:
                met.update(reached(r["path"]) + reached(r["reverse_path"]))
    else:
        for f in flows:
            for route in routes(f):
                met.update(reached(route))
    whose = "any flow" if flows is None else f"{where}.flows"
    for i, link in enumerate(links):
        if link not in met:
            raise UserError(f'no packet of {whose} {crosses} link "{net.link_names[link]}"', f"{where}.links[{i}]")
    for i, f in enumerate(flows or []):
        if not any(set(reached(route)) & set(links) for route in routes(f)):
            raise UserError(f"no packet of flow {f} {crosses} a link of {where}.links", f"{where}.flows[{i}]")


def _group(f: Any, where: str, label: str, starts: np.ndarray, profiles: _Profiles) -> dict[str, Any]:
    """What the flows of one entry share: the contract's ``FlowGroup``."""
    if f.kind == "tcp":
        idx, prof = profiles.index(f.tcp, f"{where}.tcp")
        payload = prof["packet_size"] - prof["header_size"]
        size = None if f.size == "inf" else units.parse_payload(f.size, payload, f"{where}.size")
        return {
            "kind": "tcp",
            "label": label,
            "profile": idx,
            "size_bytes": size,
            "off_time": None if f.off_time is None else sim_dist(f.off_time, "time", f"{where}.off_time"),
            **(_keep_connection(f, where) if f.keep_connection else {}),
            "trace_cwnd": f.trace_cwnd,
            # Only when set: a flow that writes to the end resolves as before.
            **({} if f.stop is None else {"stop_ns": _stop(f.stop, starts, where)}),
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
    packet_size, header_size = packet_and_header(f, where)
    # a stop per flow is a column (see the caller), not the group's
    stop = _stop(f.stop, starts, where) if f.stop is not None and is_scalar(f.stop) else None
    return {
        "kind": "udp",
        "label": label,
        "packet_size": packet_size,
        "header_size": header_size,
        "stop_ns": stop,
        "tagged": f.tagged,
        "source": source,
    }


def _keep_connection(f: Any, where: str) -> dict[str, bool]:
    """Written only when set, so that every other flow resolves as before."""
    if f.off_time is None:
        raise UserError("only an on-off source (off_time) has a next transfer", f"{where}.keep_connection")
    return {"keep_connection": True}


def _stop(text: str, starts: np.ndarray, where: str) -> int:
    """A group's stop time, later than every start of its flows."""
    stop = units.parse_time(text, f"{where}.stop")
    if (late := starts >= stop).any():
        start = int(starts[np.argmax(late)])
        raise UserError(f"must be later than the start ({units.format_time(start)})", f"{where}.stop")
    return stop


def _arrivals(
    f: Any, where: str, label: str, net: Network, srcs: np.ndarray, dsts: np.ndarray, profiles: _Profiles,
    duration: int,
) -> dict[str, Any]:
    idx, prof = profiles.index(f.tcp, f"{where}.tcp")
    payload = prof["packet_size"] - prof["header_size"]
    size = sim_dist(f.size, "size", f"{where}.size", payload)
    j = np.arange(max(len(srcs), len(dsts)))
    src, dst = srcs[j % len(srcs)], dsts[j % len(dsts)]
    (fo, fl), (ro, rl) = _routes(net, src, dst, where, f, acks=True)
    routes = [
        {"src": int(src[k]), "dst": int(dst[k]), "path": fl[fo[k]:fo[k + 1]].tolist(),
         "reverse_path": rl[ro[k]:ro[k + 1]].tolist()}
        for k in range(len(j))
    ]
    if f.rate is not None:
        rate = units.parse_frequency(f.rate, f"{where}.rate")
    else:
        capacity = int(net.links["rate_bps"][fl].min())
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
