"""Queue disciplines as scenario files write them.

Every link has a ``qdisc`` table chosen by its ``kind``::

    qdisc = { kind = "droptail", limit = "100pkt" }

To add a discipline: write one model below (a ``kind`` literal, its parameters with
their defaults and units, and ``to_spec`` returning the matching variant of Rust's
``QdiscSpec`` in ``crates/qdisc/src/spec.rs``), then append it to ``QDISC_MODELS``.
The scenario schema, its error messages and the user guide's list of kinds all read
that list.
"""

import json
import re
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from .errors import UserError

from .schema import Buffer, Model, tagged_union
from .units import parse_buffer, parse_bytes, parse_packets, parse_rate, parse_time


class DropTail(Model):
    """First in, first out; an arrival that does not fit is dropped (Linux ``pfifo`` /
    ``bfifo``, ns-2 ``DropTail``)."""

    summary: ClassVar[str] = "FIFO; drops arrivals that do not fit"

    kind: Literal["droptail"]
    limit: Buffer = Field(
        description='Buffer size, in packets ("100pkt") or bytes ("150kB"). Required.'
    )

    def to_spec(self, field: str) -> dict[str, Any]:
        return {"kind": "droptail", "limit": parse_buffer(self.limit, f"{field}.limit")}



class Discipline(Model):
    """Any discipline of the catalogue other than DropTail. Its parameters are
    those of its page in ``docs/disciplines/``; their defaults and their checks
    live once, in the Rust core (``crates/qdisc/src/spec.rs``): here units are
    converted, and the core is asked to parse and validate the result, so every
    mistake is named by field."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=False)

    summary: ClassVar[str] = ""

    def to_spec(self, field: str) -> dict[str, Any]:
        raw = {k: v for k, v in (self.model_extra or {}).items()}
        spec: dict[str, Any] = {"kind": self.kind}  # type: ignore[attr-defined]
        for name, value in raw.items():
            key, converted = _convert(self.kind, name, value, f"{field}.{name}")  # type: ignore[attr-defined]
            spec[key] = converted
        _validate_in_core(spec, field)
        return spec


#: Every kind besides DropTail, with a one-line summary (the user guide and the
#: "unknown discipline" message list them). Pages: docs/disciplines/<kind>.md.
KINDS: dict[str, str] = {
    # Seed 000 (Kantawala and Turner): per-flow queues served by DRR
    "drr": "per-flow queues, deficit round robin, longest-queue drop",
    "tdrr": "DRR dropping from the queue with the highest throughput average",
    "qsdrr": "DRR with queue-state discard: front drops from a sticky chosen queue",
    "dtdrr": "DRR with dynamic per-queue thresholds alpha*B/(1+alpha*n)",
    "dsdrr": "DRR with discard bits and a periodically updated W",
    "wdrr": "weighted deficit round robin",
    "scfq": "self-clocked fair queueing (O(log n))",
    "wf2q_plus": "WF2Q+ (O(log n))",
    # Seed 001 (MQFQ report) and Blue
    "sfq": "stochastic fair queueing as ns-2 implements it",
    "mqfq": "multiple-queue fair queueing: d hashes, rounds-before-service choice",
    "blue": "Blue: drop probability driven by loss and idle events",
    "sfb": "stochastic fair Blue: Blue per bin, levels x bins",
    # Seed 002
    "sfed": "selective fair early detection: token buckets per flow (exact or randomized)",
    # Classic and modern AQMs
    "red": "random early detection (Floyd-Jacobson 1993), gentle, byte mode, ECN",
    "ared": "adaptive RED (Floyd, Gummadi, Shenker 2001)",
    "fred": "flow RED (Lin and Morris 1997)",
    "choke": "CHOKe: drop a matching pair, as Linux sch_choke",
    "codel": "CoDel (RFC 8289)",
    "fq_codel": "FQ-CoDel (RFC 8290), as Linux sch_fq_codel",
    "pie": "PIE (RFC 8033)",
    # Seed 004
    "red_linux": "RED as Linux 2.4 implements it (fixed point, byte averages)",
    "cbt": "class-based thresholds over Linux RED",
    "dcbt": "dynamic CBT: per-class active-flow counting",
    "chips": "ChIPS: DCBT with cut-in for multimedia, kept in order",
}

#: Parameters whose values carry units, by name. A kind may mean something else
#: by the same name (below).
_TIME = {
    "freeze_time", "rehash_interval", "warmup_time", "flow_timeout", "gc_interval", "interval",
    "max_burst", "t_update", "target", "target_delay", "period", "delta",
}
_BYTES = {"quantum", "mtu", "memory_limit", "mean_packet_size", "max_packet_size", "avpkt", "cell", "dq_threshold"}
#: ``limit`` is a count of packets for these, bytes (as tc's) for the Linux RED family,
#: and a buffer (packets or bytes) for every other kind.
_LIMIT_PACKETS = {"fred", "choke", "fq_codel"}
_BYTES_RED = {"red_linux", "cbt", "dcbt", "chips"}


def _convert(kind: str, name: str, value: Any, field: str) -> tuple[str, Any]:
    if name == "link_rate":
        return "link_rate_bps", parse_rate(value, field)
    if name == "limit":
        if kind in _LIMIT_PACKETS:
            return name, parse_packets(value, field)
        if kind in _BYTES_RED:
            return name, parse_bytes(value, field)
        return name, parse_buffer(value, field)
    if name in ("min_th", "max_th") and kind in _BYTES_RED:
        return name, parse_bytes(value, field)
    if name in _TIME and isinstance(value, str):
        return name, parse_time(value, field)
    if name in _BYTES and isinstance(value, str):
        return name, parse_bytes(value, field)
    if isinstance(value, dict):
        return name, {k: _convert(kind, k, v, f"{field}.{k}")[1] for k, v in value.items()}
    return name, value


def _validate_in_core(spec: dict[str, Any], field: str) -> None:
    """Have the core parse and check the spec, when it is built (validation
    without it checks units only)."""
    try:
        from . import _core  # type: ignore[attr-defined]
    except ImportError:
        return
    try:
        _core.validate_qdisc(json.dumps(spec))
    except ValueError as e:
        message = str(e)
        named = re.match(r"unknown field `(\w+)`", message)
        if named:
            raise UserError(message.split(" at line")[0], f"{field}.{named.group(1)}") from None
        sub, sep, rest = message.partition(": ")
        if sep and re.fullmatch(r"\w+", sub):
            raise UserError(rest, f"{field}.{sub}") from None
        raise UserError(message.split(" at line")[0], field) from None


def _model(kind: str, summary: str) -> type[Model]:
    return type(
        f"Qdisc_{kind}",
        (Discipline,),
        {"__annotations__": {"kind": Literal[kind]}, "summary": summary, "__doc__": summary},  # type: ignore[valid-type]
    )


QDISC_MODELS: list[type[Model]] = [DropTail] + [_model(k, s) for k, s in KINDS.items()]


Qdisc = tagged_union("kind", QDISC_MODELS, "queue discipline")

#: The default for every link whose ``qdisc`` is not given: a DropTail so large it
#: never drops in practice (100,000 packets).
LARGE_QDISC: dict[str, Any] = {"kind": "droptail", "limit": "100000pkt"}


def large_qdisc() -> Model:
    return DropTail.model_validate(LARGE_QDISC)
