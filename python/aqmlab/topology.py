"""Topology builders: from a validated ``[topology]`` table to nodes, links, named
groups of nodes and routes.

Every builder returns a :class:`Network` whose links are already in the contract's
form (``LinkSpec`` of ``crates/sim/src/scenario.rs``). Routes are shortest paths by
total propagation delay, ties broken by hop count and then by the node names along
the path, so they never depend on dictionary order. End hosts with a single access
link ("stubs") are routed through their router directly, which keeps resolving a
1000-sender dumbbell fast.

Naming, per builder:

* dumbbell / multi_rtt: nodes ``s0..s{N-1}``, ``r1``, ``r2``, ``d0..d{M-1}``; links
  ``bottleneck`` (r1->r2), ``bottleneck_rev``, ``access_s{i}`` (s{i}->r1),
  ``access_s{i}_rev``, ``access_d{j}`` (r2->d{j}), ``access_d{j}_rev``. Groups
  ``senders``, ``receivers``; multi_rtt adds each RTT group's name (its senders) and
  ``<name>_receivers``.
* parking_lot: routers ``r0..r{H}``; links ``hop{i}`` (r{i}->r{i+1}) and ``hop{i}_rev``;
  through hosts ``src{k}``/``dst{k}``, cross hosts of hop i ``x{i}_src{k}``/``x{i}_dst{k}``;
  access links ``access_<host>`` (in the direction of data) and ``access_<host>_rev``.
  Groups ``through``, ``through_dst``, ``cross``, ``cross_dst`` (cross hosts interleaved
  over the hops: x0_src0, x1_src0, ..., x0_src1, ...), ``cross{i}``, ``cross{i}_dst``.
* graph: the user's node names; links ``from->to`` and the duplex twin ``to->from``
  (or ``<name>`` and ``<name>_rev`` when the link is named); the user's groups.
"""

from __future__ import annotations

import hashlib
import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import units
from .errors import UserError
from .schema import is_list, is_scalar

if TYPE_CHECKING:  # numpy is imported when a distribution is drawn (it is slow to import)
    import numpy as np

# ---------------------------------------------------------------------------
# random draws


def rng(seed: int, key: str) -> np.random.Generator:
    """The random stream for one purpose: seeded from (master seed, a stable hash of
    ``key``), so adding draws elsewhere never changes this stream."""
    import numpy as np

    h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, h])))


_PARSERS = {"time": units.parse_time, "rate": units.parse_rate}


def expand(spec: Any, n: int, kind: str, where: str, seed: int, key: str, members: str) -> list[int]:
    """One integer per member (``n`` of them) from a value, a list or a distribution.

    ``kind`` is "time" (ns) or "rate" (bit/s); ``where`` names the field in errors;
    ``members`` says what the list is indexed by ("senders", "flows")."""
    parse = _PARSERS[kind]
    if is_scalar(spec):
        return [parse(spec, where)] * n
    if is_list(spec):
        if len(spec) != n:
            raise UserError(f"has {len(spec)} values but there are {n} {members}", where)
        return [parse(v, f"{where}[{i}]") for i, v in enumerate(spec)]
    import numpy as np

    d = spec.dist
    g = rng(seed, key)
    if d == "uniform":
        lo, hi = parse(spec.low, f"{where}.low"), parse(spec.high, f"{where}.high")
        if lo > hi:
            raise UserError(f"must not be less than low ({spec.low})", f"{where}.high")
        vals = g.uniform(lo, hi, n)
    elif d == "normal":
        mean = parse(spec.mean, f"{where}.mean")
        std = parse(spec.std, f"{where}.std", allow_zero=True)
        vals = g.normal(mean, std, n)
        for _ in range(1000):
            neg = vals < 0
            if not neg.any():
                break
            vals[neg] = g.normal(mean, std, int(neg.sum()))
        vals = np.maximum(vals, 0)
    elif d == "exponential":
        mean = parse(spec.mean, f"{where}.mean")
        if mean <= 0:
            raise UserError("must be greater than zero", f"{where}.mean")
        vals = g.exponential(mean, n)
    elif d == "linear":
        first, last = parse(spec.first, f"{where}.first"), parse(spec.last, f"{where}.last")
        vals = np.array([first + (last - first) * i / (n - 1) if n > 1 else first for i in range(n)], dtype=float)
    else:  # pragma: no cover - the schema admits no other dist
        raise UserError(f"unknown distribution {d!r}", f"{where}.dist")
    out = [int(v) for v in np.rint(vals)]
    if kind == "rate":
        out = [max(1, v) for v in out]
    return out


# ---------------------------------------------------------------------------
# the network


@dataclass
class Network:
    nodes: list[str] = field(default_factory=list)
    node_index: dict[str, int] = field(default_factory=dict)
    links: list[dict[str, Any]] = field(default_factory=list)
    link_index: dict[str, int] = field(default_factory=dict)
    out: list[list[int]] = field(default_factory=list)
    groups: dict[str, list[str]] = field(default_factory=dict)
    #: the src used when a flow gives none (None: src is required)
    default_src: str | None = None
    #: src group -> the dst used when a flow gives none
    default_dst: dict[str, str] = field(default_factory=dict)
    #: end host -> (its router, link host->router, link router->host)
    stubs: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    _paths: dict[tuple[str, str], list[int] | None] = field(default_factory=dict)
    _core_paths: dict[tuple[str, str], list[int] | None] = field(default_factory=dict)

    def add_node(self, name: str, where: str = "topology") -> int:
        if name in self.node_index:
            raise UserError(f'node "{name}" is defined twice', where)
        self.node_index[name] = len(self.nodes)
        self.nodes.append(name)
        self.out.append([])
        return self.node_index[name]

    def add_link(
        self, name: str, a: str, b: str, rate: int, delay: int, qdisc: dict[str, Any],
        monitor: bool = False, where: str = "topology",
    ) -> int:
        if name in self.link_index:
            raise UserError(f'link name "{name}" is used twice', where)
        i = len(self.links)
        self.links.append(
            {
                "name": name,
                "from": self.node_index[a],
                "to": self.node_index[b],
                "rate_bps": rate,
                "delay_ns": delay,
                "qdisc": qdisc,
                "monitor": monitor,
            }
        )
        self.link_index[name] = i
        self.out[self.node_index[a]].append(i)
        return i

    def add_group(self, name: str, members: list[str], where: str = "topology") -> None:
        if name in self.node_index:
            raise UserError(f'group "{name}" has the name of a node', where)
        self.groups[name] = members

    # -- names ---------------------------------------------------------------

    def members(self, name: str, where: str) -> list[str]:
        """The nodes a flow's src or dst names: a node, or a group of nodes."""
        if name in self.groups:
            return self.groups[name]
        if name in self.node_index:
            return [name]
        groups = ", ".join(sorted(self.groups)) or "none"
        shown = ", ".join(self.nodes[:8]) + (", ..." if len(self.nodes) > 8 else "")
        raise UserError(f'unknown node or group "{name}" (groups: {groups}; nodes: {shown})', where)

    # -- routes --------------------------------------------------------------

    def shortest(self, a: str, b: str, where: str, what: str = "route") -> list[int]:
        """Links of the shortest path a -> b by (delay, hops, node names)."""
        key = (a, b)
        if key not in self._paths:
            prefix: list[int] = []
            suffix: list[int] = []
            start, end = a, b
            if a in self.stubs:
                start, up, _ = self.stubs[a]
                prefix = [up]
            if b in self.stubs:
                end, _, down = self.stubs[b]
                suffix = [down]
            if a in self.stubs and start == b:
                path: list[int] | None = prefix
            elif b in self.stubs and end == a:
                path = suffix
            else:
                if start == end:
                    mid: list[int] | None = []
                else:
                    if (start, end) not in self._core_paths:
                        self._core_paths[start, end] = self._dijkstra(start, end)
                    mid = self._core_paths[start, end]
                path = None if mid is None else prefix + mid + suffix
            self._paths[key] = path
        path = self._paths[key]
        if path is None:
            raise UserError(f"no {what} from {a} to {b} in the topology", where)
        return path

    def _dijkstra(self, a: str, b: str) -> list[int] | None:
        src, dst = self.node_index[a], self.node_index[b]
        skip = {self.node_index[h] for h in self.stubs} if self.stubs else set()
        best: dict[int, tuple[int, int, tuple[str, ...]]] = {}
        heap: list[tuple[int, int, tuple[str, ...], int, tuple[int, ...]]] = [(0, 0, (a,), src, ())]
        while heap:
            delay, hops, names, node, links = heapq.heappop(heap)
            if node in best:
                continue
            best[node] = (delay, hops, names)
            if node == dst:
                return list(links)
            for li in self.out[node]:
                link = self.links[li]
                nxt = link["to"]
                if nxt in best or (nxt in skip and nxt != dst):
                    continue
                heapq.heappush(
                    heap,
                    (delay + link["delay_ns"], hops + 1, names + (self.nodes[nxt],), nxt, links + (li,)),
                )
        return None

    def along(self, node_path: list[str], where: str) -> list[int]:
        """Links along an explicit path of node names (the fastest link of each hop)."""
        for i, n in enumerate(node_path):
            if n not in self.node_index:
                raise UserError(f'unknown node "{n}"', f"{where}[{i}]")
        out = []
        for i, (x, y) in enumerate(zip(node_path, node_path[1:])):
            ix, iy = self.node_index[x], self.node_index[y]
            cands = [li for li in self.out[ix] if self.links[li]["to"] == iy]
            if not cands:
                raise UserError(f"no link from {x} to {y}", f"{where}[{i + 1}]")
            out.append(min(cands, key=lambda li: (self.links[li]["delay_ns"], self.links[li]["name"])))
        return out

    def has_path(self, node_path: list[str]) -> bool:
        try:
            self.along(node_path, "")
            return True
        except UserError:
            return False

    def delay(self, links: list[int]) -> int:
        return sum(self.links[li]["delay_ns"] for li in links)


# ---------------------------------------------------------------------------
# builders


def build(topo: Any, seed: int) -> Network:
    """The network of a validated ``[topology]`` table."""
    return {
        "dumbbell": _dumbbell,
        "multi_rtt": _multi_rtt,
        "parking_lot": _parking_lot,
        "graph": _graph,
    }[topo.kind](topo, seed)


def _qdisc(model: Any, where: str) -> dict[str, Any]:
    return model.to_spec(where)


def _two_routers(
    net: Network, topo: Any, seed: int, n: int, m: int, send_rates: list[int], send_delays: list[int],
    recv_rates: list[int], recv_delays: list[int],
) -> None:
    t = "topology"
    b = topo.bottleneck
    for i in range(n):
        net.add_node(f"s{i}")
    net.add_node("r1")
    net.add_node("r2")
    for j in range(m):
        net.add_node(f"d{j}")
    brate = units.parse_rate(b.rate, f"{t}.bottleneck.rate")
    bdelay = units.parse_time(b.delay, f"{t}.bottleneck.delay")
    net.add_link("bottleneck", "r1", "r2", brate, bdelay, _qdisc(b.qdisc, f"{t}.bottleneck.qdisc"), monitor=True)
    net.add_link("bottleneck_rev", "r2", "r1", brate, bdelay, _qdisc(topo.reverse_qdisc, f"{t}.reverse_qdisc"))
    aq = _qdisc(topo.access_qdisc, f"{t}.access_qdisc")
    for i in range(n):
        up = net.add_link(f"access_s{i}", f"s{i}", "r1", send_rates[i], send_delays[i], aq)
        down = net.add_link(f"access_s{i}_rev", "r1", f"s{i}", send_rates[i], send_delays[i], aq)
        net.stubs[f"s{i}"] = ("r1", up, down)
    for j in range(m):
        down = net.add_link(f"access_d{j}", "r2", f"d{j}", recv_rates[j], recv_delays[j], aq)
        up = net.add_link(f"access_d{j}_rev", f"d{j}", "r2", recv_rates[j], recv_delays[j], aq)
        net.stubs[f"d{j}"] = ("r2", up, down)
    net.add_group("senders", [f"s{i}" for i in range(n)])
    net.add_group("receivers", [f"d{j}" for j in range(m)])
    net.default_src = "senders"
    net.default_dst.update({"senders": "receivers", "receivers": "senders"})


def _receivers(topo: Any, seed: int, m: int, send_rates: list[int]) -> tuple[list[int], list[int]]:
    ra = topo.receiver_access
    where = "topology.receiver_access"
    if ra.rate is None:
        rates = [max(send_rates)] * m
    else:
        rates = expand(ra.rate, m, "rate", f"{where}.rate", seed, f"{where}.rate", "receivers")
    delays = expand(ra.delay, m, "time", f"{where}.delay", seed, f"{where}.delay", "receivers")
    return rates, delays


def _dumbbell(topo: Any, seed: int) -> Network:
    n = topo.senders
    m = topo.receivers or n
    w = "topology.access"
    rates = expand(topo.access.rate, n, "rate", f"{w}.rate", seed, f"{w}.rate", "senders")
    delays = expand(topo.access.delay, n, "time", f"{w}.delay", seed, f"{w}.delay", "senders")
    rrates, rdelays = _receivers(topo, seed, m, rates)
    net = Network()
    _two_routers(net, topo, seed, n, m, rates, delays, rrates, rdelays)
    return net


def _multi_rtt(topo: Any, seed: int) -> Network:
    n = sum(g.senders for g in topo.groups)
    m = topo.receivers or n
    w = "topology.access"
    rates = expand(topo.access.rate, n, "rate", f"{w}.rate", seed, f"{w}.rate", "senders")
    rrates, rdelays = _receivers(topo, seed, m, rates)
    bdelay = units.parse_time(topo.bottleneck.delay, "topology.bottleneck.delay")
    delays: list[int] = []
    names: list[tuple[str, list[int]]] = []
    i = 0
    for gi, g in enumerate(topo.groups):
        rtt = units.parse_time(g.rtt, f"topology.groups[{gi}].rtt")
        idx = []
        for _ in range(g.senders):
            d = rtt // 2 - bdelay - rdelays[i % m]
            if d < 0:
                raise UserError(
                    f"{g.rtt} is shorter than the two-way delay of the bottleneck and receiver "
                    f"links alone ({units.format_time(2 * (bdelay + rdelays[i % m]))})",
                    f"topology.groups[{gi}].rtt",
                )
            delays.append(d)
            idx.append(i)
            i += 1
        names.append((g.name or f"g{gi}", idx))
    net = Network()
    _two_routers(net, topo, seed, n, m, rates, delays, rrates, rdelays)
    for gi, (name, idx) in enumerate(names):
        where = f"topology.groups[{gi}].name"
        if name in net.groups or f"{name}_receivers" in net.groups:
            raise UserError(f'group name "{name}" is used twice or is reserved', where)
        net.add_group(name, [f"s{k}" for k in idx], where)
        net.add_group(f"{name}_receivers", [f"d{k % m}" for k in idx], where)
        net.default_dst[name] = f"{name}_receivers"
    return net


def _parking_lot(topo: Any, seed: int) -> Network:
    t = "topology"
    h = topo.hops
    hops = topo.hop if isinstance(topo.hop, list) else [topo.hop] * h
    if len(hops) != h:
        raise UserError(f"has {len(hops)} links but hops = {h}", f"{t}.hop")
    net = Network()
    for i in range(h + 1):
        net.add_node(f"r{i}")
    for i, hop in enumerate(hops):
        w = f"{t}.hop[{i}]" if isinstance(topo.hop, list) else f"{t}.hop"
        rate = units.parse_rate(hop.rate, f"{w}.rate")
        delay = units.parse_time(hop.delay, f"{w}.delay")
        net.add_link(f"hop{i}", f"r{i}", f"r{i + 1}", rate, delay, _qdisc(hop.qdisc, f"{w}.qdisc"), monitor=True)
        net.add_link(f"hop{i}_rev", f"r{i + 1}", f"r{i}", rate, delay, _qdisc(topo.reverse_qdisc, f"{t}.reverse_qdisc"))
    arate = units.parse_rate(topo.access.rate, f"{t}.access.rate")
    adelay = units.parse_time(topo.access.delay, f"{t}.access.delay")
    aq = _qdisc(topo.access_qdisc, f"{t}.access_qdisc")

    def host(name: str, router: str, sender: bool) -> None:
        net.add_node(name)
        if sender:
            up = net.add_link(f"access_{name}", name, router, arate, adelay, aq)
            down = net.add_link(f"access_{name}_rev", router, name, arate, adelay, aq)
        else:
            down = net.add_link(f"access_{name}", router, name, arate, adelay, aq)
            up = net.add_link(f"access_{name}_rev", name, router, arate, adelay, aq)
        net.stubs[name] = (router, up, down)

    for k in range(topo.through):
        host(f"src{k}", "r0", True)
        host(f"dst{k}", f"r{h}", False)
    for i in range(h):
        for k in range(topo.cross):
            host(f"x{i}_src{k}", f"r{i}", True)
            host(f"x{i}_dst{k}", f"r{i + 1}", False)
    net.add_group("through", [f"src{k}" for k in range(topo.through)])
    net.add_group("through_dst", [f"dst{k}" for k in range(topo.through)])
    net.default_dst["through"] = "through_dst"
    if topo.cross:
        net.add_group("cross", [f"x{i}_src{k}" for k in range(topo.cross) for i in range(h)])
        net.add_group("cross_dst", [f"x{i}_dst{k}" for k in range(topo.cross) for i in range(h)])
        net.default_dst["cross"] = "cross_dst"
        for i in range(h):
            net.add_group(f"cross{i}", [f"x{i}_src{k}" for k in range(topo.cross)])
            net.add_group(f"cross{i}_dst", [f"x{i}_dst{k}" for k in range(topo.cross)])
            net.default_dst[f"cross{i}"] = f"cross{i}_dst"
    return net


def _graph(topo: Any, seed: int) -> Network:
    t = "topology"
    net = Network()
    for i, node in enumerate(topo.nodes):
        net.add_node(node if isinstance(node, str) else node.name, f"{t}.nodes[{i}]")
    for i, link in enumerate(topo.links):
        w = f"{t}.links[{i}]"
        for end, name in (("from", link.from_), ("to", link.to)):
            if name not in net.node_index:
                raise UserError(f'unknown node "{name}"', f"{w}.{end}")
        if link.from_ == link.to:
            raise UserError("a link cannot connect a node to itself", f"{w}.to")
        rate = units.parse_rate(link.rate, f"{w}.rate")
        delay = units.parse_time(link.delay, f"{w}.delay")
        name = link.name or f"{link.from_}->{link.to}"
        net.add_link(name, link.from_, link.to, rate, delay, _qdisc(link.qdisc, f"{w}.qdisc"), link.monitor, f"{w}.name")
        if link.duplex:
            twin = f"{link.name}_rev" if link.name else f"{link.to}->{link.from_}"
            net.add_link(
                twin, link.to, link.from_, rate, delay, _qdisc(link.reverse_qdisc, f"{w}.reverse_qdisc"),
                False, f"{w}.name",
            )
    for gname, members in topo.groups.items():
        for k, n in enumerate(members):
            if n not in net.node_index:
                raise UserError(f'unknown node "{n}"', f"{t}.groups.{gname}[{k}]")
        net.add_group(gname, list(members), f"{t}.groups.{gname}")
    return net
