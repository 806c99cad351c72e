"""Topology builders: from a validated ``[topology]`` table to nodes, links, named
groups of nodes and routes.

Every builder returns a :class:`Network` whose links are already in the contract's
column-wise form (``Links`` of ``crates/sim/src/scenario.rs``): numpy columns, each
distinct discipline once, names as runs; a block of numbered hosts is added with its
access links at once, without a Python object per host or link. Routes are shortest paths by
total propagation delay, ties broken by hop count and then by the node names along
the path, so they never depend on dictionary order. End hosts with a single access
link ("stubs") are routed through their router directly, which keeps resolving a
million-sender dumbbell fast: its routes are found for each pair of routers, not for
each flow.

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
import json
from typing import Any

import numpy as np

from . import units
from .errors import UserError
from .names import NameList
from .schema import is_list, is_scalar

# ---------------------------------------------------------------------------
# random draws


def rng(seed: int, key: str) -> np.random.Generator:
    """The random stream for one purpose: seeded from (master seed, a stable hash of
    ``key``), so adding draws elsewhere never changes this stream."""
    h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, h])))


_PARSERS = {"time": units.parse_time, "rate": units.parse_rate}


def expand(spec: Any, n: int, kind: str, where: str, seed: int, key: str, members: str) -> np.ndarray:
    """One integer per member (``n`` of them, an int64 array) from a value, a list or a
    distribution.

    ``kind`` is "time" (ns) or "rate" (bit/s); ``where`` names the field in errors;
    ``members`` says what the list is indexed by ("senders", "flows")."""
    parse = _PARSERS[kind]
    if is_scalar(spec):
        return np.full(n, parse(spec, where), dtype=np.int64)
    if is_list(spec):
        if len(spec) != n:
            raise UserError(f"has {len(spec)} values but there are {n} {members}", where)
        return np.array([parse(v, f"{where}[{i}]") for i, v in enumerate(spec)], dtype=np.int64)

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
    out = np.rint(vals).astype(np.int64)
    if kind == "rate":
        out = np.maximum(out, 1)
    return out


# ---------------------------------------------------------------------------
# the network


#: The contract's type of each link column.
LINK_DTYPES = {"from": "uint32", "to": "uint32", "rate_bps": "int64", "delay_ns": "int64", "qdisc": "uint32", "monitor": "bool"}


class Network:
    """Nodes, links (column-wise, appended in blocks), named groups of nodes and routes.

    Nodes and links are numbered in the order they are added; their names are
    :class:`~aqmlab.names.NameList` runs, so a block of numbered hosts costs no string
    each. Call :meth:`finish` once every link is added: routes read the columns."""

    def __init__(self) -> None:
        self.nodes = NameList()
        self.link_names = NameList()
        self.qdiscs: list[dict[str, Any]] = []
        self._qdisc_keys: dict[str, int] = {}
        self._blocks: list[dict[str, Any]] = []  # link columns, a block at a time
        self._pending: dict[str, list[Any]] = {k: [] for k in LINK_DTYPES}  # single links not yet in a block
        self._losses: dict[int, float] = {}  # link -> its wire's loss, for the lossy links only
        self.links: dict[str, np.ndarray] = {}  # the columns, after finish()
        self.n_links = 0
        #: group name -> its nodes' indices
        self.groups: dict[str, np.ndarray] = {}
        #: the src used when a flow gives none (None: src is required)
        self.default_src: str | None = None
        #: src group -> the dst used when a flow gives none
        self.default_dst: dict[str, str] = {}
        # End hosts with a single access link ("stubs"), by node: their router,
        # their link to it and its link back (-1: not a stub). Grown in blocks.
        self._stub_blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.stub_router = self.stub_up = self.stub_down = np.empty(0, dtype=np.int64)
        self._core_paths: dict[tuple[int, int], list[int] | None] = {}
        self._adjacency: dict[int, list[int]] | None = None

    # -- building ------------------------------------------------------------

    def add_node(self, name: str, where: str = "topology") -> int:
        if self.nodes.index(name) is not None:
            raise UserError(f'node "{name}" is defined twice', where)
        return self.nodes.add(name)

    def add_numbered_nodes(self, templates: list[str], count: int) -> int:
        """Nodes ``templates`` for each number below ``count`` (the builders' own
        names, unique by construction); returns the first one's index."""
        return self.nodes.add_numbered(templates, count)

    def qdisc_index(self, spec: dict[str, Any]) -> int:
        """The index of a discipline in the list of distinct ones."""
        key = json.dumps(spec, sort_keys=True)
        if key not in self._qdisc_keys:
            self._qdisc_keys[key] = len(self.qdiscs)
            self.qdiscs.append(spec)
        return self._qdisc_keys[key]

    def add_link(
        self, name: str, a: str, b: str, rate: int, delay: int, qdisc: dict[str, Any],
        monitor: bool = False, where: str = "topology", loss: float = 0.0,
    ) -> int:
        if self.link_names.index(name) is not None:
            raise UserError(f'link name "{name}" is used twice', where)
        self.link_names.add(name)
        row = {"from": self.node(a), "to": self.node(b), "rate_bps": rate, "delay_ns": delay,
               "qdisc": self.qdisc_index(qdisc), "monitor": monitor}
        for k, v in row.items():
            self._pending[k].append(v)
        if loss:
            self._losses[self.n_links] = loss
        self.n_links += 1
        return self.n_links - 1

    def _flush(self) -> None:
        if self._pending["from"]:
            self._blocks.append({k: np.array(v, dtype=LINK_DTYPES[k]) for k, v in self._pending.items()})
            self._pending = {k: [] for k in LINK_DTYPES}

    def add_access(
        self, count: int, hosts: list[tuple[str, int, int, int, bool]], rates: list[np.ndarray],
        delays: list[np.ndarray], qdiscs: tuple[dict[str, Any], dict[str, Any]],
    ) -> None:
        """Access links of ``count`` numbered hosts of each kind in ``hosts``: (name
        template, index of host 0, index step, router index, sender?). For each number,
        for each kind: the link named ``access_<host>`` (host -> router for a sender,
        router -> host for a receiver) and ``access_<host>_rev`` the other way, at that
        kind's ``rates[number]`` and ``delays[number]``. ``qdiscs``: the disciplines
        of the links leaving the hosts and of those into them."""
        if not count:
            return
        self._flush()
        k = len(hosts)
        number = np.arange(count, dtype=np.int64)
        host = np.stack([first + step * number for _, first, step, _, _ in hosts], axis=1)  # (count, k)
        router = np.broadcast_to(np.array([h[3] for h in hosts], dtype=np.int64), (count, k))
        sender = np.array([h[4] for h in hosts])
        # Columns shaped (count, kinds, 2): the named link, then its twin.
        first_end = np.where(sender, host, router)
        second_end = np.where(sender, router, host)
        block = {
            "from": np.stack([first_end, second_end], axis=2),
            "to": np.stack([second_end, first_end], axis=2),
            "rate_bps": np.repeat(np.stack(rates, axis=1)[:, :, None], 2, axis=2),
            "delay_ns": np.repeat(np.stack(delays, axis=1)[:, :, None], 2, axis=2),
        }
        block = {name: col.reshape(-1).astype(LINK_DTYPES[name]) for name, col in block.items()}
        leaving, into = (self.qdisc_index(q) for q in qdiscs)
        named_qdisc = np.where(sender, leaving, into)
        block["qdisc"] = np.tile(np.stack([named_qdisc, np.where(sender, into, leaving)], axis=1).reshape(-1), count)
        block["qdisc"] = block["qdisc"].astype(np.uint32)
        block["monitor"] = np.zeros(2 * k * count, dtype=bool)
        self._blocks.append(block)
        self.link_names.add_numbered([t for name, *_ in hosts for t in (f"access_{name}", f"access_{name}_rev")], count)
        named = self.n_links + 2 * (number[:, None] * k + np.arange(k))  # (count, kinds)
        up = np.where(sender, named, named + 1).reshape(-1)
        down = np.where(sender, named + 1, named).reshape(-1)
        self._stub_blocks.append((host.reshape(-1), router.reshape(-1), up, down))
        self.n_links += 2 * k * count

    def add_group(self, name: str, members: Any, where: str = "topology") -> None:
        if self.nodes.index(name) is not None:
            raise UserError(f'group "{name}" has the name of a node', where)
        self.groups[name] = np.asarray(members, dtype=np.int64)

    def finish(self) -> None:
        """The link columns and the stub tables, once every link is added."""
        self._flush()
        self.links = {
            k: np.concatenate([b[k] for b in self._blocks]) if self._blocks else np.empty(0, dtype=LINK_DTYPES[k])
            for k in LINK_DTYPES
        }
        self._blocks = []
        if self._losses:
            # A column only when some link loses packets: lossless scenarios resolve as before.
            self.links["loss"] = np.zeros(self.n_links, dtype=np.float64)
            self.links["loss"][list(self._losses)] = list(self._losses.values())
        n = len(self.nodes)
        self.stub_router, self.stub_up, self.stub_down = (np.full(n, -1, dtype=np.int64) for _ in range(3))
        for hosts, router, up, down in self._stub_blocks:
            self.stub_router[hosts], self.stub_up[hosts], self.stub_down[hosts] = router, up, down
        self._stub_blocks = []

    # -- names ---------------------------------------------------------------

    def node(self, name: str) -> int:
        i = self.nodes.index(name)
        if i is None:
            raise KeyError(name)
        return i

    def members(self, name: str, where: str) -> np.ndarray:
        """The nodes a flow's src or dst names (their indices): a node, or a group."""
        if name in self.groups:
            return self.groups[name]
        i = self.nodes.index(name)
        if i is not None:
            return np.array([i], dtype=np.int64)
        groups = ", ".join(sorted(self.groups)) or "none"
        shown = ", ".join(self.nodes[k] for k in range(min(8, len(self.nodes)))) + (", ..." if len(self.nodes) > 8 else "")
        raise UserError(f'unknown node or group "{name}" (groups: {groups}; nodes: {shown})', where)

    # -- routes --------------------------------------------------------------

    def routes(self, src: np.ndarray, dst: np.ndarray, where: str, what: str = "route") -> tuple[np.ndarray, np.ndarray]:
        """Shortest paths src[i] -> dst[i] by (delay, hops, node names), as offsets
        (one more than routes) into a flat array of links.

        A stub goes through its router: its path is its access link, the path
        between the routers, and the access link of the stub at the far end."""
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        start = np.where(self.stub_router[src] >= 0, self.stub_router[src], src)
        end = np.where(self.stub_router[dst] >= 0, self.stub_router[dst], dst)
        pairs, pair_of = np.unique(start * len(self.nodes) + end, return_inverse=True)
        pair_of = pair_of.reshape(-1)
        middles = []
        for k, pair in enumerate(pairs.tolist()):
            a, b = divmod(pair, len(self.nodes))
            middle = [] if a == b else self._core_path(a, b)
            if middle is None:
                j = int(np.argmax(pair_of == k))
                raise UserError(f"no {what} from {self.nodes[int(src[j])]} to {self.nodes[int(dst[j])]} in the topology", where)
            middles.append(middle)
        prefix, suffix = self.stub_up[src] >= 0, self.stub_down[dst] >= 0
        middle_len = np.array([len(m) for m in middles], dtype=np.int64)[pair_of]
        offsets = np.zeros(len(src) + 1, dtype=np.int64)
        np.cumsum(prefix + middle_len + suffix, out=offsets[1:])
        links = np.empty(int(offsets[-1]), dtype=np.uint32)
        at = offsets[:-1] + prefix
        links[offsets[:-1][prefix]] = self.stub_up[src[prefix]]
        for k, middle in enumerate(middles):
            if middle:
                mine = at[pair_of == k]
                for hop, link in enumerate(middle):
                    links[mine + hop] = link
        links[(at + middle_len)[suffix]] = self.stub_down[dst[suffix]]
        return offsets, links

    def shortest(self, a: str, b: str, where: str, what: str = "route") -> list[int]:
        """Links of the shortest path a -> b (see :meth:`routes`)."""
        _, links = self.routes(np.array([self.node(a)]), np.array([self.node(b)]), where, what)
        return links.tolist()

    def _core_path(self, a: int, b: int) -> list[int] | None:
        if (a, b) not in self._core_paths:
            self._core_paths[a, b] = self._dijkstra(a, b)
        return self._core_paths[a, b]

    def _dijkstra(self, src: int, dst: int) -> list[int] | None:
        """Between two nodes that are not stubs, never through a stub."""
        if self._adjacency is None:
            # The links between non-stubs only: a million access links stay out.
            f, t = self.links["from"].astype(np.int64), self.links["to"].astype(np.int64)
            inner = np.nonzero((self.stub_router[f] < 0) & (self.stub_router[t] < 0))[0]
            self._adjacency = {}
            for li in inner.tolist():
                self._adjacency.setdefault(int(f[li]), []).append(li)
        to, delay = self.links["to"], self.links["delay_ns"]
        best: dict[int, tuple[int, int, tuple[str, ...]]] = {}
        heap: list[tuple[int, int, tuple[str, ...], int, tuple[int, ...]]] = [(0, 0, (self.nodes[src],), src, ())]
        while heap:
            d, hops, names, node, links = heapq.heappop(heap)
            if node in best:
                continue
            best[node] = (d, hops, names)
            if node == dst:
                return list(links)
            for li in self._adjacency.get(node, []):
                nxt = int(to[li])
                if nxt in best:
                    continue
                heapq.heappush(heap, (d + int(delay[li]), hops + 1, names + (self.nodes[nxt],), nxt, links + (li,)))
        return None

    def along(self, node_path: list[str], where: str) -> list[int]:
        """Links along an explicit path of node names (the fastest link of each hop)."""
        for i, n in enumerate(node_path):
            if self.nodes.index(n) is None:
                raise UserError(f'unknown node "{n}"', f"{where}[{i}]")
        out = []
        for i, (x, y) in enumerate(zip(node_path, node_path[1:])):
            ix, iy = self.node(x), self.node(y)
            cands = np.nonzero((self.links["from"] == ix) & (self.links["to"] == iy))[0].tolist()
            if not cands:
                raise UserError(f"no link from {x} to {y}", f"{where}[{i + 1}]")
            out.append(min(cands, key=lambda li: (int(self.links["delay_ns"][li]), self.link_names[li])))
        return out

    def has_path(self, node_path: list[str]) -> bool:
        try:
            self.along(node_path, "")
            return True
        except UserError:
            return False

    def to_contract(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The contract's ``nodes`` and ``links``."""
        return self.nodes.to_contract(), {"names": self.link_names.to_contract(), "qdiscs": self.qdiscs, **self.links}


# ---------------------------------------------------------------------------
# builders


def build(topo: Any, seed: int) -> Network:
    """The network of a validated ``[topology]`` table."""
    net = {
        "dumbbell": _dumbbell,
        "multi_rtt": _multi_rtt,
        "parking_lot": _parking_lot,
        "graph": _graph,
    }[topo.kind](topo, seed)
    net.finish()
    return net


def _qdisc(model: Any, where: str) -> dict[str, Any]:
    return model.to_spec(where)


def _access_qdiscs(topo: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The disciplines of the access links leaving the hosts and into them."""
    return (_qdisc(topo.access_qdisc, "topology.access_qdisc"), _qdisc(topo.delivery_qdisc, "topology.delivery_qdisc"))


def _two_routers(
    net: Network, topo: Any, seed: int, n: int, m: int, send_rates: np.ndarray, send_delays: np.ndarray,
    recv_rates: np.ndarray, recv_delays: np.ndarray,
) -> tuple[int, int]:
    """The dumbbell's nodes and links; returns the indices of s0 and d0."""
    t = "topology"
    b = topo.bottleneck
    senders = net.add_numbered_nodes(["s{}"], n)
    r1, r2 = net.add_node("r1"), net.add_node("r2")
    receivers = net.add_numbered_nodes(["d{}"], m)
    brate = units.parse_rate(b.rate, f"{t}.bottleneck.rate")
    bdelay = units.parse_time(b.delay, f"{t}.bottleneck.delay")
    net.add_link("bottleneck", "r1", "r2", brate, bdelay, _qdisc(b.qdisc, f"{t}.bottleneck.qdisc"), monitor=True, loss=b.loss)
    net.add_link("bottleneck_rev", "r2", "r1", brate, bdelay, _qdisc(topo.reverse_qdisc, f"{t}.reverse_qdisc"))
    aq = _access_qdiscs(topo)
    net.add_access(n, [("s{}", senders, 1, r1, True)], [send_rates], [send_delays], aq)
    net.add_access(m, [("d{}", receivers, 1, r2, False)], [recv_rates], [recv_delays], aq)
    net.add_group("senders", senders + np.arange(n))
    net.add_group("receivers", receivers + np.arange(m))
    net.default_src = "senders"
    net.default_dst.update({"senders": "receivers", "receivers": "senders"})
    return senders, receivers


def _receivers(topo: Any, seed: int, m: int, send_rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ra = topo.receiver_access
    where = "topology.receiver_access"
    if ra.rate is None:
        rates = np.full(m, send_rates.max(), dtype=np.int64)
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
    delays: list[np.ndarray] = []
    names: list[tuple[str, np.ndarray]] = []
    i = 0
    for gi, g in enumerate(topo.groups):
        rtt = units.parse_time(g.rtt, f"topology.groups[{gi}].rtt")
        idx = np.arange(i, i + g.senders)
        d = rtt // 2 - bdelay - rdelays[idx % m]
        if (d < 0).any():
            rdelay = int(rdelays[idx[np.argmax(d < 0)] % m])
            raise UserError(
                f"{g.rtt} is shorter than the two-way delay of the bottleneck and receiver "
                f"links alone ({units.format_time(2 * (bdelay + rdelay))})",
                f"topology.groups[{gi}].rtt",
            )
        delays.append(d)
        names.append((g.name or f"g{gi}", idx))
        i += g.senders
    net = Network()
    senders, receivers = _two_routers(net, topo, seed, n, m, rates, np.concatenate(delays), rrates, rdelays)
    for gi, (name, idx) in enumerate(names):
        where = f"topology.groups[{gi}].name"
        if name in net.groups or f"{name}_receivers" in net.groups:
            raise UserError(f'group name "{name}" is used twice or is reserved', where)
        net.add_group(name, senders + idx, where)
        net.add_group(f"{name}_receivers", receivers + idx % m, where)
        net.default_dst[name] = f"{name}_receivers"
    return net


def _parking_lot(topo: Any, seed: int) -> Network:
    t = "topology"
    h = topo.hops
    hops = topo.hop if isinstance(topo.hop, list) else [topo.hop] * h
    if len(hops) != h:
        raise UserError(f"has {len(hops)} links but hops = {h}", f"{t}.hop")
    net = Network()
    routers = [net.add_node(f"r{i}") for i in range(h + 1)]
    for i, hop in enumerate(hops):
        w = f"{t}.hop[{i}]" if isinstance(topo.hop, list) else f"{t}.hop"
        rate = units.parse_rate(hop.rate, f"{w}.rate")
        delay = units.parse_time(hop.delay, f"{w}.delay")
        net.add_link(f"hop{i}", f"r{i}", f"r{i + 1}", rate, delay, _qdisc(hop.qdisc, f"{w}.qdisc"), monitor=True, loss=hop.loss)
        net.add_link(f"hop{i}_rev", f"r{i + 1}", f"r{i}", rate, delay, _qdisc(topo.reverse_qdisc, f"{t}.reverse_qdisc"))
    arate = units.parse_rate(topo.access.rate, f"{t}.access.rate")
    adelay = units.parse_time(topo.access.delay, f"{t}.access.delay")
    aq = _access_qdiscs(topo)

    def pairs(src: str, dst: str, count: int, src_router: int, dst_router: int) -> np.ndarray:
        """``count`` numbered (src, dst) host pairs, each with its access links;
        returns the srcs' indices (each dst is its src's index + 1)."""
        first = net.add_numbered_nodes([src, dst], count)
        rates, delays = [np.full(count, arate, dtype=np.int64)] * 2, [np.full(count, adelay, dtype=np.int64)] * 2
        net.add_access(count, [(src, first, 2, src_router, True), (dst, first + 1, 2, dst_router, False)], rates, delays, aq)
        return first + 2 * np.arange(count)

    through = pairs("src{}", "dst{}", topo.through, routers[0], routers[h])
    cross = [pairs(f"x{i}_src{{}}", f"x{i}_dst{{}}", topo.cross, routers[i], routers[i + 1]) for i in range(h)]
    net.add_group("through", through)
    net.add_group("through_dst", through + 1)
    net.default_dst["through"] = "through_dst"
    if topo.cross:
        # Interleaved over the hops: x0_src0, x1_src0, ..., x0_src1, ...
        interleaved = np.stack(cross, axis=1).reshape(-1)
        net.add_group("cross", interleaved)
        net.add_group("cross_dst", interleaved + 1)
        net.default_dst["cross"] = "cross_dst"
        for i in range(h):
            net.add_group(f"cross{i}", cross[i])
            net.add_group(f"cross{i}_dst", cross[i] + 1)
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
            if net.nodes.index(name) is None:
                raise UserError(f'unknown node "{name}"', f"{w}.{end}")
        if link.from_ == link.to:
            raise UserError("a link cannot connect a node to itself", f"{w}.to")
        rate = units.parse_rate(link.rate, f"{w}.rate")
        delay = units.parse_time(link.delay, f"{w}.delay")
        name = link.name or f"{link.from_}->{link.to}"
        net.add_link(
            name, link.from_, link.to, rate, delay, _qdisc(link.qdisc, f"{w}.qdisc"), link.monitor, f"{w}.name", link.loss,
        )
        if link.duplex:
            twin = f"{link.name}_rev" if link.name else f"{link.to}->{link.from_}"
            net.add_link(
                twin, link.to, link.from_, rate, delay, _qdisc(link.reverse_qdisc, f"{w}.reverse_qdisc"),
                False, f"{w}.name", link.reverse_loss,
            )
        elif link.reverse_loss:
            raise UserError("a simplex link has no twin to lose packets", f"{w}.reverse_loss")
    for gname, members in topo.groups.items():
        for k, n in enumerate(members):
            if net.nodes.index(n) is None:
                raise UserError(f'unknown node "{n}"', f"{t}.groups.{gname}[{k}]")
        net.add_group(gname, [net.node(n) for n in members], f"{t}.groups.{gname}")
    return net
