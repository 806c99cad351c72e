"""The applications of an emulated run: a client and a server per flow.

TCP flows run the kernel's congestion control named by the scenario's variant
(``-C``), with the scenario's packet size as MSS (``-M``: packet size less 40 bytes of
IPv4 and TCP headers; Linux puts its 12 bytes of timestamps inside it) and, when the
scenario sets one, its receiver window as the socket buffer (``-w``). UDP flows are
aqmlab's own source (``aqmlab-udp send``, crates/router/src/bin/aqmlab-udp.rs): the
simulator's sending process (CBR with its send-time jitter, Poisson, or on-off with
on and off periods of any of the scenario's distributions; the same code,
``aqmlab_qdisc::source``), each packet at its own instant, tagged multimedia with TOS 0xb8 (DSCP EF),
which the router reads as the tag; ``aqmlab-udp recv`` takes them at the destination.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from .support import KERNEL_CC

#: The TOS byte of tagged multimedia UDP (DSCP 46, EF).
TAG_TOS = 0xB8
#: The first flow's port; flow j uses FIRST_PORT + j.
FIRST_PORT = 5201
#: How long an iperf3 client tries to connect, in ms: a SYN dropped at a full buffer is
#: sent again after 1, 3, 7 and 15 s (the kernel's initial RTO, doubling).
CONNECT_TIMEOUT_MS = 20_000
IPV4_TCP_HEADERS = 40
IPV4_UDP_HEADERS = 28


@dataclass
class FlowPlan:
    """What runs for flow ``index``: where, when, and the commands."""

    index: int
    kind: str
    group: str
    src: int
    dst: int
    port: int
    start_ns: int
    stop_ns: int | None
    size_bytes: int | None
    packet_size: int
    header_size: int
    client: list[str] = field(default_factory=list)
    server: list[str] = field(default_factory=list)
    ecn: bool = False
    #: Route options of the sender's host (ip route ... rto_min, initcwnd), where set.
    route: dict[str, str] = field(default_factory=dict)
    #: Whether the scenario asks for the flow's congestion window over time.
    trace_cwnd: bool = False


def _explicit(scenario: Any, group: int, name: str) -> bool:
    """Whether the scenario asks for TCP field ``name`` (not its default) for the
    flows of ``group``; otherwise the kernel's own behaviour stands."""
    from .support import asked

    flow_tcp = getattr(scenario.flows[group], "tcp", None)
    return (flow_tcp is not None and name in asked(flow_tcp)) or name in asked(scenario.tcp)


def plan(scenario: Any, resolved: dict[str, Any], addr: dict[int, str], udp: str = "aqmlab-udp") -> list[FlowPlan]:
    """One plan per flow of the resolved scenario."""
    flows, groups = resolved["flows"], resolved["flows"]["groups"]
    duration = int(resolved["duration_ns"])
    plans = []
    for j in range(len(flows["group"])):
        gi = int(flows["group"][j])
        g = groups[gi]
        p = FlowPlan(
            index=j,
            kind=g["kind"],
            group=g["label"],
            src=int(flows["src"][j]),
            dst=int(flows["dst"][j]),
            port=FIRST_PORT + j,
            start_ns=int(flows["start_ns"][j]),
            stop_ns=g.get("stop_ns"),
            size_bytes=g.get("size_bytes"),
            packet_size=0,
            header_size=0,
        )
        if p.start_ns >= duration:
            raise UserError("starts after the end of the run", f"flows[{gi}].start")
        server = ["iperf3", "-s", "-1", "-p", str(p.port), "-B", addr[p.dst], "-J"]
        p.trace_cwnd = bool(g.get("trace_cwnd"))
        # iperf3 reports the kernel's window every interval (0.1 s at the finest).
        interval = max(0.1, int(resolved["sample_interval_ns"]) / 1e9) if p.trace_cwnd else 1.0
        client = ["iperf3", "-c", addr[p.dst], "-p", str(p.port), "-B", addr[p.src], "-J", "-i", f"{interval:g}"]
        client += ["--connect-timeout", str(CONNECT_TIMEOUT_MS)]
        if p.kind == "tcp":
            profile = resolved["tcp_profiles"][g["profile"]]
            p.packet_size, p.header_size = int(profile["packet_size"]), int(profile["header_size"])
            client += ["-C", KERNEL_CC[profile["variant"]], "-M", str(p.packet_size - IPV4_TCP_HEADERS)]
            if _explicit(scenario, gi, "receiver_window"):
                client += ["-w", str(int(profile["receiver_window"]) * p.packet_size)]
            if p.size_bytes is not None:
                client += ["-n", str(int(p.size_bytes))]
            p.ecn = bool(profile["ecn"])
            if _explicit(scenario, gi, "min_rto"):
                p.route["rto_min"] = f"{int(profile['min_rto_ns']) // 1_000_000}ms"
            if _explicit(scenario, gi, "initial_window"):
                p.route["initcwnd"] = str(int(profile["initial_window"]))
        else:
            p.packet_size, p.header_size = int(g["packet_size"]), IPV4_UDP_HEADERS
            source = g["source"]
            tos = TAG_TOS if g.get("tagged") else 0
            seed = (int(resolved["seed"]) * 1_000_003 + j) % 2**63
            client = [udp, "send", addr[p.src], f"{addr[p.dst]}:{p.port}", str(p.packet_size), str(tos), str(seed),
                      json.dumps(source)]
            server = [udp, "recv", f"{addr[p.dst]}:{p.port}"]
            p.client, p.server = client, server
            plans.append(p)
            continue
        if p.size_bytes is None:
            # Longer than the run: the run stops the client (SIGINT) at its end or stop time.
            client += ["-t", str(math.ceil(duration / 1e9) + 2)]
        p.client, p.server = client, server
        plans.append(p)
    return plans


def host_settings(plans: list[FlowPlan], scenario: Any) -> dict[int, dict[str, Any]]:
    """Per sending host: its kernel's ECN setting and route options, which all its
    flows share (a conflict is refused by field)."""
    out: dict[int, dict[str, Any]] = {}
    for p in plans:
        if p.kind != "tcp":
            continue
        want = {"ecn": p.ecn, "route": p.route}
        have = out.setdefault(p.src, want)
        if have != want:
            raise UserError(
                "flows from one host share its kernel's ECN setting and route options (min_rto, "
                "initial_window): give them the same values",
                f"flows[{p.index}].tcp",
            )
    return out


def client_report(text: str) -> dict[str, Any]:
    """What an iperf3 client's JSON says of its flow (empty if it said nothing)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    intervals = data.get("intervals") or []
    streams = [s for i in intervals for s in i.get("streams", [])]
    out: dict[str, Any] = {"error": data.get("error")}
    if any("retransmits" in s for s in streams):
        out["retransmissions"] = sum(int(s.get("retransmits", 0)) for s in streams)
        rtts = [s["rtt"] for s in streams if s.get("rtt")]
        out["rtt_min_s"] = min(rtts) / 1e6 if rtts else None
        cwnd = [(i["sum"]["end"], s["snd_cwnd"]) for i in intervals for s in i.get("streams", []) if "snd_cwnd" in s]
        out["final_cwnd_bytes"] = cwnd[-1][1] if cwnd else None
        out["cwnd_series"] = cwnd
    end = data.get("end") or {}
    for stream in end.get("streams", []):
        sender = stream.get("sender") or {}
        if "min_rtt" in sender:
            out["rtt_min_s"] = sender["min_rtt"] / 1e6
            out["retransmissions"] = sender.get("retransmits", out.get("retransmissions"))
        udp = stream.get("udp") or {}
        if "jitter_ms" in udp:
            out["jitter_s"] = udp["jitter_ms"] / 1e3
            out["packets_reordered"] = udp.get("out_of_order")
    if "sum_sent" in end:
        out["seconds"] = end["sum_sent"].get("seconds")
    return out
