"""Which fields of a scenario the emulator honours (docs/emulator.md, "Scenarios").

A field left at its default asks for nothing, and the emulator behaves as the kernel
does (Linux's TCP: SACK, delayed ACKs, its own RTO and initial window). A field set to
another value is a request: the emulator honours it or refuses it by name, before
anything is created. (Defaults, not the fields a file happens to spell out: a sweep's
scenarios have every default written in.)
"""

from __future__ import annotations

from typing import Any

from ..errors import UserError
from ..units import parse_time

#: The scenario's TCP variants as the kernel's congestion controls: Linux's Reno is
#: NewReno with SACK, so "reno", "newreno" and "sack" all run it.
KERNEL_CC = {"reno": "reno", "newreno": "reno", "sack": "reno", "cubic": "cubic"}

#: Fields honoured, per table; every other field the user wrote is refused.
_TOP = {"name", "description", "seed", "duration", "warmup", "sample_interval", "tcp", "topology", "flows", "trace"}
#: Traces the router measures: each flow's throughput per window (its samples) and its
#: delay and jitter (always counted).
_TRACE = {"flow_series", "flow_stats"}
_TCP = {"variant", "packet_size", "header_size", "ecn", "receiver_window", "min_rto", "initial_window"}
_TCP_FLOW = {"kind", "group", "count", "src", "dst", "start", "size", "stop", "tcp", "trace_cwnd"}
_UDP_FLOW = {"kind", "group", "count", "src", "dst", "rate", "packet_size", "header_size", "start", "stop", "tagged",
             "model", "jitter", "on", "off"}

_WHY = {
    "packets": "the router keeps counters and samples, not packet traces",
    "pcap": "the router keeps counters and samples, not packet traces",
    "flow_queues": "the router keeps counters and samples, not the queues flows hash to",
    "queue_flows": "the router keeps counters and samples, not the queues flows hash to",
    "ties": "real time has no ties to order",
    "path": "the router routes by shortest propagation delay",
    "off_time": "iperf3 runs one transfer per flow",
    "variant": f"the kernel has {', '.join(sorted(set(KERNEL_CC)))} (as reno or cubic)",
}


def _refuse(field: str, leaf: str) -> UserError:
    why = _WHY.get(leaf, "the kernel's TCP or iperf3 has no such setting")
    return UserError(f"the emulator cannot honour this field ({why})", field)


def asked(model: Any) -> set[str]:
    """The fields of ``model`` whose value is not their default."""
    out = set()
    for name, info in type(model).model_fields.items():
        if info.is_required() or getattr(model, name) != info.get_default(call_default_factory=True):
            out.add(name)
    return out


def _check_set(model: Any, allowed: set[str], where: str) -> None:
    for name in sorted(asked(model) - allowed):
        info = type(model).model_fields[name]
        raise _refuse(f"{where}{info.alias or name}", name)


def _check_tcp(tcp: Any, where: str) -> None:
    if tcp is None:
        return
    fields = asked(tcp)
    for name in sorted(fields - _TCP):
        raise _refuse(f"{where}{name}", name)
    if "variant" in fields and tcp.variant not in KERNEL_CC:
        raise _refuse(f"{where}variant", "variant")


def _check_trace(scenario: Any) -> None:
    """The router samples flows and queues at one interval: ``trace.flow_series`` is it,
    with ``sample_interval`` off ("0s") or the same."""
    if scenario.trace is None:
        return
    _check_set(scenario.trace, _TRACE, "trace.")
    series = scenario.trace.flow_series
    if series is not None and parse_time(scenario.sample_interval) not in (0, parse_time(series)):
        raise UserError('the router samples flows and queues at one interval: set sample_interval to it or "0s"',
                        "trace.flow_series")


def sample_interval_ns(resolved: dict[str, Any]) -> int:
    """The router's sampling interval: ``sample_interval``, or ``trace.flow_series``
    when that is off."""
    return int(resolved["sample_interval_ns"]) or int((resolved.get("trace") or {}).get("flow_series_ns") or 0)


def check(scenario: Any) -> None:
    """Refuse, by field, what the emulator cannot honour in ``scenario``."""
    _check_set(scenario, _TOP, "")
    _check_trace(scenario)
    _check_tcp(scenario.tcp, "tcp.")
    if scenario.tcp.variant not in KERNEL_CC:
        raise _refuse("tcp.variant", "variant")
    for i, flow in enumerate(scenario.flows):
        where = f"flows[{i}]."
        if flow.kind == "tcp":
            _check_set(flow, _TCP_FLOW, where)
            _check_tcp(flow.tcp, where + "tcp.")
        elif flow.kind == "udp":
            _check_set(flow, _UDP_FLOW, where)
            if flow.header_size not in (None, "28B"):
                raise UserError("the emulator's UDP packets carry IPv4 and UDP headers: 28B", where + "header_size")
        else:
            raise UserError(f"the emulator runs tcp and udp flows, not {flow.kind}", where + "kind")
