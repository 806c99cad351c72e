"""Limits: what aqmlab agrees to read, and what a run will take, known before it starts.

Input. A scenario file is UTF-8 text of at most :data:`MAX_FILE_BYTES`, its tables and
lists nested at most :data:`MAX_DEPTH` deep (:func:`read_toml`).

Runs. Before anything is built, the numbers a scenario declares (senders, hops, each
flow entry's count) are priced at what a flow, a link and a node cost in memory
(:func:`check_declared`); once resolved, the whole run is estimated, its memory and
its events (:func:`estimate`, the formula in docs/user-guide.md, "Limits"). A run whose
memory exceeds what the machine has available, or whose events exceed
:data:`EVENT_BUDGET`, is refused with the estimate in the message and the field that
makes it so, unless forced (``--force``, ``force=True``, or inside :func:`forced`).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .errors import UserError

#: The largest scenario file read (scenarios are a few kB; a list with a value per
#: sender for a million senders is about 10 MB).
MAX_FILE_BYTES = 64 * 2**20
#: The deepest nesting of tables and lists (a scenario needs 6).
MAX_DEPTH = 32
#: Events a run may be estimated to take: about five hours of the core's work at
#: :data:`EVENTS_PER_SECOND`, where the estimate is an upper bound.
EVENT_BUDGET = 10**11
#: The core's pace on a large dumbbell (docs/performance.md, about 300 ns a data
#: packet at 1.5 events a packet), for the messages.
EVENTS_PER_SECOND = 5e6
#: The share of the available memory a run may be estimated to take.
MEMORY_SHARE = 0.8
#: A count that the core numbers with 32 bits (flows, links, nodes).
MAX_COUNT = 2**32 - 1

# What a run holds in memory, in bytes (docs/performance.md, "Memory": a dumbbell
# flow with its four links takes 946 B in the core and about 1.9 kB through Python).
BASE_BYTES = 200 * 2**20  #: the interpreter, its libraries and the core
FLOW_BYTES = 1_500  #: a flow: its state in the core, its columns and its row of results
LINK_BYTES = 350  #: a link: its record and counters, its columns and its row of results
NODE_BYTES = 100  #: a node: its name and routing entry
PACKET_BYTES = 100  #: a packet in flight, with its share of the pools
SAMPLE_BYTES = 24  #: a row of a time series: time, entity, metric, value
TRACE_EVENT_BYTES = 32  #: an event of a packet trace (docs/user-guide.md, "Traces")
PCAP_PACKET_BYTES = 80  #: a captured packet: 24 B kept and 56 B in the file
#: Time-series rows a monitored link adds at each sample (queue packets and bytes,
#: arrivals, departures, drops, utilization, delay).
LINK_SERIES = 8

#: Upstream of its bottleneck a TCP flow carries what it retransmits as well.
RETRANSMISSION_ALLOWANCE = 2.0

_force: contextvars.ContextVar[bool] = contextvars.ContextVar("aqmlab_force", default=False)


@contextlib.contextmanager
def forced(on: bool = True) -> Iterator[None]:
    """Within it, runs estimated past the machine's memory or the event budget are
    not refused (``--force``)."""
    token = _force.set(on or _force.get())
    try:
        yield
    finally:
        _force.reset(token)


def is_forced() -> bool:
    return _force.get()


# ---------------------------------------------------------------------------
# input


def read_toml(path: str | Path) -> dict[str, Any]:
    """A scenario file's tables, refused by name when it is too large, not UTF-8,
    not TOML, or nested too deep."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise UserError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise UserError(f"{path} is a directory, not a scenario file") from None
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise UserError(f"{path}: larger than {MAX_FILE_BYTES // 2**20} MiB; not a scenario file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text (byte {data[e.start]:#04x} at offset {e.start}); not a scenario file") from None
    too_deep = f"{path}: tables and lists nested more than {MAX_DEPTH} deep"
    if _bracket_depth(text) > MAX_DEPTH:
        raise UserError(too_deep)
    try:
        tables = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: invalid TOML: {e}") from None
    except RecursionError:  # pragma: no cover - the depth was checked
        raise UserError(too_deep) from None
    check_depth(tables, str(path))
    return tables


def _bracket_depth(text: str) -> int:
    """An upper bound of the nesting of TOML text: the deepest run of open brackets
    and braces, strings included (cheap, and never below the real depth)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return deepest


def check_depth(value: Any, where: str = "scenario") -> None:
    """Refuse tables and lists nested more than :data:`MAX_DEPTH` deep (walked
    without recursion, so that any depth is answered)."""
    level: list[Any] = [value]
    for depth in range(MAX_DEPTH + 1):
        below = []
        for v in level:
            items = v.values() if isinstance(v, dict) else v
            below.extend(x for x in items if isinstance(x, (dict, list)))
        if not below:
            return
        level = below
    raise UserError(f"tables and lists nested more than {MAX_DEPTH} deep", where)


# ---------------------------------------------------------------------------
# memory available


def available_memory() -> int:
    """Bytes this process may still take: the kernel's MemAvailable, or less when a
    cgroup limits the process."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
            avail = 8 * 2**30
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text())
        if limit != "max":
            avail = min(avail, int(limit) - used)
    except (OSError, ValueError):
        pass
    return max(avail, 0)


def _bytes(n: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("kiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def _count(n: float) -> str:
    return f"{n:.3g}" if n >= 1e6 else f"{n:.0f}"


FORCE_HINT = "give --force (force=True in Python) to run it anyway"


def _refuse_memory(need: float, part: str, field: str) -> None:
    limit = MEMORY_SHARE * available_memory()
    if need > limit and not is_forced():
        raise UserError(
            f"the run would take about {_bytes(need)} of memory ({part}), more than the "
            f"{_bytes(limit)} this machine can give it ({MEMORY_SHARE:.0%} of {_bytes(available_memory())} "
            f"available); {FORCE_HINT}",
            field,
        )


# ---------------------------------------------------------------------------
# before resolving: the sizes a scenario declares


def _declared(scenario: Any) -> list[tuple[str, int, int, int]]:
    """(field, nodes, links, flows) of each part of a scenario that grows."""
    t = scenario.topology
    parts: list[tuple[str, int, int, int]] = []
    if t.kind in ("dumbbell", "multi_rtt"):
        if t.kind == "dumbbell":
            parts.append(("topology.senders", t.senders, 2 * t.senders, 0))
            senders = t.senders
        else:
            for i, g in enumerate(t.groups):
                parts.append((f"topology.groups[{i}].senders", g.senders, 2 * g.senders, 0))
            senders = sum(g.senders for g in t.groups)
        receivers = t.receivers if t.receivers is not None else senders
        parts.append(("topology.receivers", receivers, 2 * receivers, 0))
    elif t.kind == "parking_lot":
        parts.append(("topology.hops", t.hops, 2 * t.hops + 4 * t.cross * t.hops, 0))
        parts.append(("topology.through", 2 * t.through, 4 * t.through, 0))
        parts.append(("topology.cross", 2 * t.cross * t.hops, 4 * t.cross * t.hops, 0))
    else:
        parts.append(("topology.nodes", len(t.nodes), 2 * len(t.links), 0))
    for i, f in enumerate(scenario.flows):
        if f.kind in ("tcp", "udp"):
            parts.append((f"flows[{i}].count", 0, 0, f.count))
    return parts


def check_declared(scenario: Any) -> None:
    """Refuse, before anything is built, a scenario whose nodes, links or flows
    cannot be numbered by the core or would not fit in memory."""
    parts = _declared(scenario)
    for name, *counts in parts:
        for what, n in zip(("nodes", "links", "flows"), counts):
            if n > MAX_COUNT:
                raise UserError(f"too large: it makes {_count(n)} {what}, and the core numbers them below 2^32", name)
    cost = [(n * NODE_BYTES + li * LINK_BYTES + fl * FLOW_BYTES, name) for name, n, li, fl in parts]
    total = BASE_BYTES + sum(c for c, _ in cost)
    biggest, name = max(cost)
    what = f"{_bytes(biggest)} of it for {name}"
    _refuse_memory(total, what, name)


# ---------------------------------------------------------------------------
# after resolving: the run's memory and events


@dataclass
class Estimate:
    """What a run will take: ``memory`` (bytes, at peak) and ``events`` (an upper
    bound); the parts say where each comes from, ``fields`` which field of the
    scenario sizes each part."""

    memory: float
    events: float
    memory_parts: dict[str, float] = field(default_factory=dict)
    event_parts: dict[str, float] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)  #: part -> the field that sizes it

    def describe(self) -> str:
        """One line: the figures and their largest parts."""
        mem = max(self.memory_parts, key=self.memory_parts.__getitem__)
        ev = max(self.event_parts, key=self.event_parts.__getitem__)
        return (
            f"estimate: about {_bytes(self.memory)} of memory (largest part: {mem}), "
            f"at most {_count(self.events)} events (largest part: {ev})"
        )


def _np() -> Any:
    import numpy as np

    return np


def _route_stats(paths: dict[str, Any], rate: Any, delay: Any, slowest: bool = True) -> tuple[Any, Any, Any]:
    """Each route's slowest link (-1 for a route without links; with ``slowest``),
    hops and delay (s), in a few passes over the routes."""
    np = _np()
    offsets, links = paths["offsets"], paths["links"]
    hops = np.diff(offsets)
    summed = np.concatenate([[0.0], np.cumsum(delay[links])])
    delays = (summed[offsets[1:]] - summed[offsets[:-1]]) / 1e9
    first = np.full(len(hops), -1, dtype=np.int64)
    some = hops > 0
    if slowest and some.any():
        rates = rate[links]
        least = np.minimum.reduceat(rates, offsets[:-1][some])
        at_least = np.flatnonzero(rates == np.repeat(least, hops[some]))
        # the first link at the route's least rate: the first such position from its start
        first[some] = links[at_least[np.searchsorted(at_least, offsets[:-1][some])]]
    return first, hops, delays


@dataclass
class _Traffic:
    """TCP's routes, a row per flow and per route of an arrival process."""

    slowest: Any  #: the route's slowest link
    hops: Any  #: links there
    back_hops: Any  #: links back (the ACKs')
    rtt: Any  #: propagation round trip, s
    packet: Any  #: data packet size, B
    window: Any  #: receiver window, packets
    most: Any  #: the most data packets it may send (inf: no limit but the links)


def _tcp_routes(resolved: dict[str, Any], rate: Any, delay: Any, routes: tuple[Any, Any, Any]) -> _Traffic:
    """``routes``: the flows' routes' slowest links, hops and delays."""
    np = _np()
    fl, groups, profiles = resolved["flows"], resolved["flows"]["groups"], resolved["tcp_profiles"]
    group = np.asarray(fl["group"], dtype=np.int64)
    slowest, hops, there = routes
    _, back_hops, back = _route_stats(fl["reverse_path"], rate, delay, slowest=False)
    tcp = np.array([g["kind"] == "tcp" for g in groups] + [False])[group if len(group) else []]
    packet, window, most = (np.zeros(len(group)) for _ in range(3))
    for gi, g in enumerate(groups):
        if g["kind"] != "tcp":
            continue
        mine, prof = group == gi, profiles[g["profile"]]
        packet[mine], window[mine] = prof["packet_size"], prof["receiver_window"]
        most[mine] = _most_packets(g.get("size_bytes"), g.get("off_time"), prof)
    rows = [_Traffic(slowest[tcp], hops[tcp], back_hops[tcp], (there + back)[tcp], packet[tcp], window[tcp], most[tcp])]
    for a in resolved["arrivals"]:
        prof = profiles[a["profile"]]
        for r in a["routes"]:
            path, rev = np.asarray(r["path"], dtype=np.int64), np.asarray(r["reverse_path"], dtype=np.int64)
            b = path[np.argmin(rate[path])] if len(path) else -1
            rtt = float(delay[path].sum() + delay[rev].sum()) / 1e9
            rows.append(_Traffic(*(np.array([v]) for v in (b, len(path), len(rev), rtt, prof["packet_size"],
                                                             prof["receiver_window"], np.inf))))
    return _Traffic(*(np.concatenate([getattr(t, k) for t in rows]) for k in _Traffic.__dataclass_fields__))


def _most_packets(size: int | None, off_time: Any, prof: dict[str, Any]) -> float:
    """The most data packets a TCP flow sends: a finite transfer (not on-off) its size,
    retransmissions included; the others, no limit."""
    if size is None or off_time:
        return math.inf
    return RETRANSMISSION_ALLOWANCE * (math.ceil(size / (prof["packet_size"] - prof["header_size"])) + 1)


@dataclass
class _PerBottleneck:
    """TCP's traffic summed by slowest link: the flows whose slowest link is b carry
    together at most b's rate (with retransmissions), over at most the longest of
    their routes; an ACK at most for each data packet, over the longest route back."""

    links: Any  #: the bottlenecks
    packets: Any  #: data packets each carries over the run
    hops: Any
    back_hops: Any
    rtt: Any
    windows: Any  #: the flows' receiver windows, summed


def _per_bottleneck(t: _Traffic, rate: Any, seconds: float) -> _PerBottleneck:
    np = _np()
    t_ok = np.flatnonzero(t.slowest >= 0)
    order = t_ok[np.argsort(t.slowest[t_ok], kind="stable")]  # the routes, by slowest link
    by_link = t.slowest[order]
    starts = np.flatnonzero(np.diff(by_link, prepend=-2))
    b = by_link[starts]

    def reduce(op: Any, values: Any, start: float) -> Any:
        return op.reduceat(values[order], starts) if len(starts) else np.zeros(0)

    smallest = reduce(np.minimum, t.packet, np.inf)
    by_rate = RETRANSMISSION_ALLOWANCE * rate[b] * seconds / (8 * smallest)
    by_size = reduce(np.add, t.most, 0.0)  # inf when any flow there is unbounded
    return _PerBottleneck(
        b, np.minimum(by_rate, by_size), reduce(np.maximum, t.hops, 0.0), reduce(np.maximum, t.back_hops, 0.0),
        reduce(np.maximum, t.rtt, 0.0), reduce(np.add, t.window, 0.0),
    )


def _entry(where: dict[str, str], label: str) -> str:
    """The flow entry of a group label (``flows[2]``), as the user wrote it."""
    return where.get(label, f'flows (group "{label}")')


class _Parts:
    """An estimate's parts: name -> (amount, the field that sizes it)."""

    def __init__(self) -> None:
        self.amounts: dict[str, float] = {}
        self.fields: dict[str, str] = {}

    def add(self, name: str, amount: float, field: str) -> None:
        self.amounts[name] = self.amounts.get(name, 0.0) + float(amount)
        self.fields[name] = field


def _udp(resolved: dict[str, Any], seconds: float, hops: Any, delays: Any, where: dict[str, str],
         events: _Parts) -> tuple[float, float]:
    """Each UDP source's events (it sends at its rate, on average: 10% and ten packets
    of margin; each packet crosses at most every hop of its route); returns the
    sources' packets on links over the run, and in the pipes at a time (no more than
    its first link carries)."""
    np = _np()
    fl = resolved["flows"]
    rate = np.asarray(resolved["links"]["rate_bps"], dtype=np.float64)
    offsets, path = fl["path"]["offsets"], fl["path"]["links"]
    first_hop = np.zeros(len(hops))
    some = hops > 0
    first_hop[some] = rate[path[offsets[:-1][some]]]
    group = np.asarray(fl["group"], dtype=np.int64)
    start = np.asarray(fl["start_ns"], dtype=np.float64) / 1e9
    on_links = in_pipes = 0.0
    for gi, g in enumerate(fl["groups"]):
        if g["kind"] != "udp":
            continue
        mine, src = group == gi, g["source"]
        stop = np.full(int(mine.sum()), g["stop_ns"] / 1e9 if g.get("stop_ns") is not None else seconds)
        if "stop_ns" in fl:  # flows with a stop of their own
            own = np.asarray(fl["stop_ns"], dtype=np.float64)[mine] / 1e9
            stop = np.where(own > 0, own, stop)
        active = np.clip(np.minimum(stop, seconds) - start[mine], 0, None)
        sends = 1.1 * src["rate_bps"] * active / (8 * g["packet_size"]) + 10
        periods = 0.0
        if src["model"] == "on_off":
            cycle = max(_dist_mean(src["on"]) + _dist_mean(src["off"]), 1.0) / 1e9
            periods = float((4 * active / cycle + 10).sum())
        entry = _entry(where, g["label"])
        hops_sent = float((sends * hops[mine]).sum())
        events.add(f"UDP packets of {entry}", 2 * hops_sent + sends.sum() + periods, f"{entry}.rate")
        on_links += hops_sent
        carried = np.minimum(src["rate_bps"], first_hop[mine]) / (8 * g["packet_size"])
        in_pipes += float((carried * delays[mine]).sum())
    return on_links, in_pipes


def _tcp_timers(resolved: dict[str, Any], seconds: float, events: _Parts) -> None:
    """A retransmission timer fires at most twice a minimum RTO (it is re-armed
    lazily); an on-off flow starts a transfer at most once an off time."""
    np = _np()
    fl, profiles = resolved["flows"], resolved["tcp_profiles"]
    counts = np.bincount(np.asarray(fl["group"], dtype=np.int64), minlength=len(fl["groups"]))
    for gi, g in enumerate(fl["groups"]):
        if g["kind"] != "tcp":
            continue
        prof = profiles[g["profile"]]
        spacing = max(prof["min_rto_ns"], prof["clock_granularity_ns"], 1) / 1e9
        n = float(counts[gi]) * (2 * seconds / spacing + 8)
        if g.get("off_time"):
            n += float(counts[gi]) * 2 * seconds / max(_dist_floor(g["off_time"]), spacing)
        events.add("TCP timers", n, "duration")


def _arrivals(resolved: dict[str, Any], seconds: float) -> float:
    """The flows the arrival processes start (Poisson: the mean and six standard
    deviations, and ten)."""
    n = 0.0
    for a in resolved["arrivals"]:
        stop = a["stop_ns"] / 1e9 if a.get("stop_ns") is not None else seconds
        mean = a["rate_per_s"] * max(min(stop, seconds) - a["start_ns"] / 1e9, 0.0)
        n += mean + 6 * math.sqrt(mean) + 10
    return n


def _clock_wakes(links: dict[str, Any], duration_ns: int) -> float:
    """A clocked discipline wakes at most twice per its shortest time parameter."""
    np = _np()
    per_qdisc = np.bincount(np.asarray(links["qdisc"], dtype=np.int64), minlength=len(links["qdiscs"]))
    wakes = 0.0
    for q, spec in enumerate(links["qdiscs"]):
        tick = _min_time(spec)
        if tick:
            wakes += float(per_qdisc[q]) * (2 * duration_ns / tick + 2)
    return wakes


def estimate(resolved: dict[str, Any], where: dict[str, str] | None = None) -> Estimate:
    """The run's memory at peak and its events, from the resolved scenario alone
    (the formula: docs/user-guide.md, "Limits"). ``where`` maps a flow group's label
    to its entry (``flows[2]``), for the messages."""
    np = _np()
    links, fl = resolved["links"], resolved["flows"]
    rate = np.asarray(links["rate_bps"], dtype=np.float64)
    delay = np.asarray(links["delay_ns"], dtype=np.float64)
    seconds = resolved["duration_ns"] / 1e9
    routes = _route_stats(fl["path"], rate, delay)
    tcp = _per_bottleneck(_tcp_routes(resolved, rate, delay, routes), rate, seconds)
    events, memory = _Parts(), _Parts()
    tcp_hops = float((tcp.packets * (tcp.hops + tcp.back_hops)).sum())
    # two events a packet and a link (transmitted, arrived), three a packet at a host
    events.add("TCP packets", 2 * tcp_hops + 6 * tcp.packets.sum(), "duration")
    _tcp_timers(resolved, seconds, events)
    udp_hops, udp_in_pipes = _udp(resolved, seconds, routes[1], routes[2], where or {}, events)
    arrived = _arrivals(resolved, seconds)
    events.add("TCP flow arrivals", 12 * arrived, "duration")
    interval = resolved["sample_interval_ns"]
    samples = math.floor(resolved["duration_ns"] / interval) + 1 if interval else 0
    events.add("time-series samples", samples, "sample_interval")
    events.add("disciplines' clocks", _clock_wakes(links, resolved["duration_ns"]), "duration")
    events.add("flow starts", 4 * len(fl["group"]) + 16, "flows")
    in_flight = _in_flight(resolved, tcp, routes[0], udp_in_pipes, seconds)
    _memory(resolved, memory, arrived, samples, in_flight, tcp_hops + udp_hops)
    return Estimate(
        sum(memory.amounts.values()), sum(events.amounts.values()), memory.amounts, events.amounts,
        {**events.fields, **memory.fields},
    )


def _memory(resolved: dict[str, Any], memory: _Parts, arrived: float, samples: int, in_flight: float,
            on_links: float) -> None:
    """The parts of a run's memory: its structures, samples, packets and traces
    (``on_links``: the packets on links over the run, at most)."""
    from .contract import names

    np = _np()
    links, fl = resolved["links"], resolved["flows"]
    flows = len(fl["group"]) + arrived
    memory.add("the interpreter and libraries", BASE_BYTES, "flows")
    memory.add("flows", FLOW_BYTES * flows, "flows")
    memory.add("links", LINK_BYTES * len(links["rate_bps"]), "topology")
    memory.add("nodes", NODE_BYTES * len(names(resolved["nodes"])), "topology")
    per_group = np.bincount(np.asarray(fl["group"], dtype=np.int64), minlength=len(fl["groups"]))
    cwnd = sum(int(per_group[gi]) for gi, g in enumerate(fl["groups"]) if g.get("trace_cwnd"))
    rows = samples * (LINK_SERIES * int(np.count_nonzero(links["monitor"])) + cwnd + 4)
    memory.add("time series", SAMPLE_BYTES * rows, "sample_interval")
    memory.add("packets in flight", PACKET_BYTES * in_flight, "duration")
    trace = resolved.get("trace") or {}
    if trace.get("packets"):
        traced = _on_traced_links(resolved, trace["packets"]["links"], on_links)
        memory.add("packet trace", TRACE_EVENT_BYTES * len(trace["packets"]["events"]) * traced, "trace.packets")
    if trace.get("pcap"):
        memory.add("pcap capture", PCAP_PACKET_BYTES * _on_traced_links(resolved, trace["pcap"]["links"], on_links),
                   "trace.pcap")
    if trace.get("flow_series_ns"):
        windows = resolved["duration_ns"] / trace["flow_series_ns"] + 1
        memory.add("flow series", SAMPLE_BYTES * windows * flows, "trace.flow_series")


def _smallest_packet(resolved: dict[str, Any]) -> float:
    """The smallest packet a link is taken to carry (bytes): an ACK, a UDP packet, or 40."""
    udp = [float(g["packet_size"]) for g in resolved["flows"]["groups"] if g["kind"] == "udp"]
    return float(min([40.0] + [float(p["ack_size"]) for p in resolved["tcp_profiles"]] + udp))


def _on_traced_links(resolved: dict[str, Any], traced: list[int] | None, on_links: float) -> float:
    """The packets a trace of links ``traced`` (None: every link) sees, at most: those
    on all links, and no more than each traced link can send at its rate."""
    np = _np()
    links = resolved["links"]
    chosen = np.arange(len(links["rate_bps"])) if traced is None else np.asarray(traced, dtype=np.int64)
    smallest = _smallest_packet(resolved)
    rates = np.asarray(links["rate_bps"], dtype=np.float64)[chosen]
    return min(on_links, float(rates.sum()) * resolved["duration_ns"] / 1e9 / (8 * smallest))


def _in_flight(resolved: dict[str, Any], tcp: _PerBottleneck, slowest: Any, udp_in_pipes: float, seconds: float) -> float:
    """Packets in flight at peak: each bottleneck's queue full (a TCP-only one up to
    its flows' windows), its packets over the longest round trip of its flows in the
    pipes, twice over for the bursts queued at other links; and UDP's packets in
    its pipes."""
    np = _np()
    links = resolved["links"]
    smallest = _smallest_packet(resolved)
    qdisc = np.asarray(links["qdisc"], dtype=np.int64)
    queued = sum(
        min(_queue_packets(links["qdiscs"][int(qdisc[b])], smallest), w) for b, w in zip(tcp.links.tolist(), tcp.windows.tolist())
    )
    pipes = float((tcp.packets / max(seconds, 1e-9) * tcp.rtt).sum())
    return 2 * (queued + pipes) + udp_in_pipes + _udp_queues(resolved, smallest, slowest)


def _udp_queues(resolved: dict[str, Any], smallest: float, slowest: Any) -> float:
    """The queues UDP sources may fill: those of their routes' slowest links."""
    np = _np()
    links, fl = resolved["links"], resolved["flows"]
    udp = np.array([g["kind"] == "udp" for g in fl["groups"]] + [False])[np.asarray(fl["group"], dtype=np.int64)]
    if not udp.any():
        return 0.0
    qdisc = np.asarray(links["qdisc"], dtype=np.int64)
    return sum(_queue_packets(links["qdiscs"][int(qdisc[b])], smallest) for b in np.unique(slowest[udp & (slowest >= 0)]).tolist())


def _queue_packets(spec: dict[str, Any], packet: float) -> float:
    """The packets a discipline may hold (10,000 when it states no limit)."""
    limit = spec.get("limit")
    if isinstance(limit, dict):
        if "packets" in limit:
            return float(limit["packets"])
        if "bytes" in limit:
            return float(limit["bytes"]) / packet
    if isinstance(limit, (int, float)) and not isinstance(limit, bool):
        return float(limit)
    return 10_000.0


def _min_time(spec: Any) -> float | None:
    """The shortest time parameter of a discipline (its own or a table's, such as a
    Bloom filter's period; given or by default), in ns: its clock ticks no faster."""
    from .qdiscs import catalogue

    kind = catalogue().get(spec.get("kind")) if isinstance(spec, dict) else None
    times = _times(spec, kind.parameters) if kind is not None else []
    return float(min(times)) if times else None


def _times(table: dict[str, Any], params: dict[str, Any]) -> list[int]:
    out = []
    for name, p in params.items():
        value = table.get(name, p.default)
        if p.unit == "time" and isinstance(value, int) and value > 0:
            out.append(value)
        elif isinstance(value, dict) and p.parameters:
            out += _times(value, p.parameters)
    return out


def _dist_mean(d: dict[str, Any]) -> float:
    if d["dist"] == "fixed":
        return float(d["value"])
    if d["dist"] == "uniform":
        return (d["low"] + d["high"]) / 2
    return float(d["mean"])


def _dist_floor(d: dict[str, Any]) -> float:
    """A distribution's smallest likely value in seconds (a fixed value, a uniform's
    low end, a tenth of the mean of the others)."""
    if d["dist"] == "fixed":
        return d["value"] / 1e9
    if d["dist"] == "uniform":
        return d["low"] / 1e9
    return d["mean"] / 10e9


def check(resolved: dict[str, Any], where: dict[str, str] | None = None) -> Estimate:
    """Estimate a resolved run and refuse it, naming the field, when it exceeds the
    memory available or the event budget (unless forced); ``where`` as for
    :func:`estimate`."""
    est = estimate(resolved, where)
    if is_forced():
        return est
    names = est.fields
    if est.events > EVENT_BUDGET:
        part = max(est.event_parts, key=est.event_parts.__getitem__)
        raise UserError(
            f"the run would take up to {_count(est.events)} events (of which {part}: "
            f"{_count(est.event_parts[part])}), more than the budget of {_count(EVENT_BUDGET)} "
            f"(about {EVENT_BUDGET / EVENTS_PER_SECOND / 3600:.2g} hours of the core's work); shorten it or {FORCE_HINT}",
            names.get(part, "duration"),
        )
    part = max(est.memory_parts, key=est.memory_parts.__getitem__)
    _refuse_memory(est.memory, f"{part}: {_bytes(est.memory_parts[part])}", names.get(part, "duration"))
    return est
