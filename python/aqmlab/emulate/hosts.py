"""The hosts of an emulated run, their addresses, and the namespaces that hold them.

Every node a flow starts or ends at is a host: an address of its own (10.99.0.1,
10.99.0.2, ...) and, in the router, its own node of the network with its own links
(its access link's rate, delay and queue). A run of at most :data:`MAX_NAMESPACES`
hosts gives each its namespace. Beyond that, hosts share namespaces: one TUN device
carries the addresses of several hosts, each application binds to its host's address,
and the router tells the hosts of a device apart by the source address of what it
reads (crates/router, ``network.rs``), so 400 senders fit in 58 namespaces and each
keeps its own round-trip time.

Hosts share a namespace only when its kernel's settings suit them all (the route's
``rto_min`` and ``initcwnd`` and ``net.ipv4.tcp_ecn`` belong to the namespace:
:func:`.traffic.host_settings`), when they play the same part (senders with senders,
receivers with receivers), and when no flow runs between two of them: the kernel
would deliver it itself, past the router.
"""

from __future__ import annotations

import ipaddress
import json
import math
from typing import Any

from ..errors import UserError

#: Namespaces (and TUN devices) a run creates for its hosts, at most.
MAX_NAMESPACES = 64
#: The hosts' addresses: 10.99.0.1, 10.99.0.2, ...
SUBNET = ipaddress.ip_network("10.99.0.0/16")


def nodes_of(resolved: dict[str, Any]) -> list[int]:
    """The nodes that send or receive (one host each), in order."""
    flows = resolved["flows"]
    nodes = sorted(set(int(n) for n in flows["src"]) | set(int(n) for n in flows["dst"]))
    if len(nodes) > SUBNET.num_addresses - 2:
        raise UserError(f"the emulator gives each host an address of {SUBNET}; the flows use {len(nodes)} hosts", "flows")
    return nodes


def addresses(nodes: list[int]) -> dict[int, str]:
    """Each host's address."""
    return {n: str(SUBNET.network_address + k + 1) for k, n in enumerate(nodes)}


def namespaces(nodes: list[int], flows: list[tuple[int, int]], settings: dict[int, Any]) -> list[list[int]]:
    """The hosts of each namespace: one each up to :data:`MAX_NAMESPACES`, otherwise
    as few per namespace as fit, among hosts of the same settings and part. ``flows``:
    each flow's (source, destination); ``settings``: the kernel settings of each host
    that has some."""
    if len(nodes) <= MAX_NAMESPACES:
        return [[n] for n in nodes]
    sends, receives = {s for s, _ in flows}, {d for _, d in flows}
    kinds: dict[str, list[int]] = {}
    for n in nodes:
        key = json.dumps([settings.get(n), n in sends, n in receives], sort_keys=True)
        kinds.setdefault(key, []).append(n)
    per, largest = math.ceil(len(nodes) / MAX_NAMESPACES), max(len(k) for k in kinds.values())
    while sum(math.ceil(len(k) / per) for k in kinds.values()) > MAX_NAMESPACES:
        if per >= largest:
            raise UserError(f"the hosts have more than {MAX_NAMESPACES} different kernel settings (min_rto, "
                            "initial_window, ecn): a namespace holds hosts of one setting", "flows")
        per += 1
    out = [k[i:i + per] for k in kinds.values() for i in range(0, len(k), per)]
    home = {n: i for i, hosts in enumerate(out) for n in hosts}
    for j, (s, d) in enumerate(flows):
        if home[s] == home[d]:
            raise UserError(f"flow {j} would run inside one namespace (its hosts share one when a run has more than "
                            f"{MAX_NAMESPACES} hosts): use fewer hosts", "flows")
    return out
