"""Queue disciplines as scenario files write them.

Every link has a ``qdisc`` table chosen by its ``kind``::

    qdisc = { kind = "droptail", limit = "100pkt" }

The disciplines, their parameters and each parameter's unit and default live in
one place, the core: each discipline declares its parameters in its own file of
``crates/qdisc/src/``, and the core's catalogue (``_core.qdisc_catalogue()``) hands
them to this module. Here the user's units are converted to the core's integers by
that catalogue (``target = "5ms"`` -> 5000000 ns), and the core checks the result,
so every mistake is named by its field. A discipline added to the core is known
here without a line changed.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field as dataclass_field
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, SerializerFunctionWrapHandler, model_serializer

from .errors import UserError
from .schema import Model, tagged_union
from .units import parse_buffer, parse_bytes, parse_packets, parse_rate, parse_time

#: How each unit that a value carries is read (the others are plain values).
_PARSERS = {
    "time": parse_time,
    "bytes": parse_bytes,
    "packets": parse_packets,
    "buffer": parse_buffer,
    "rate": parse_rate,
}

#: What a bare number lacks, by unit: its name and an example when the parameter
#: has no default to show.
_UNITS = {
    "time": ("a time", "20ms"),
    "bytes": ("a size", "1500B"),
    "packets": ("a packet count", "100pkt"),
    "buffer": ("a buffer", "100pkt"),
    "rate": ("a rate", "10Mbps"),
}


@dataclass(frozen=True)
class Param:
    """One parameter of a discipline, as the core describes it."""

    name: str  #: the core's name
    unit: str  #: "time", "bytes", "packets", "buffer", "rate", "number", "flag", ...
    doc: str
    required: bool
    default: Any  #: the core's value (nanoseconds, bytes, ...); None when required or unset
    parameters: dict[str, Param] = dataclass_field(default_factory=dict)  #: a table's own

    @property
    def key(self) -> str:
        """The name a scenario writes: a rate without the core's ``_bps``."""
        if self.unit == "rate" and self.name.endswith("_bps"):
            return self.name[: -len("_bps")]
        return self.name


@dataclass(frozen=True)
class Kind:
    """One discipline: what it is, and its parameters."""

    kind: str
    summary: str
    parameters: dict[str, Param]


def _params(raw: list[dict[str, Any]]) -> dict[str, Param]:
    return {
        p["name"]: Param(
            p["name"], p["unit"], p["doc"], p["required"], p["default"], _params(p.get("parameters", []))
        )
        for p in raw
    }


@functools.cache
def catalogue() -> dict[str, Kind]:
    """Every discipline the core has, in its order, by kind."""
    from .run import _core

    return {
        k["kind"]: Kind(k["kind"], k["summary"], _params(k["parameters"]))
        for k in json.loads(_core().qdisc_catalogue())
    }


#: Every kind with a one-line summary (the user guide and the "unknown discipline"
#: message list them). Pages: docs/disciplines/<kind>.md.
KINDS: dict[str, str] = {k.kind: k.summary for k in catalogue().values()}


# ---------------------------------------------------------------------------
# units


def to_core(params: dict[str, Param], table: dict[str, Any], where: str) -> dict[str, Any]:
    """A table of parameters as the user wrote them, in the core's names and units.
    Names the core does not know are passed on for the core to refuse by name."""
    by_key = {p.key: p for p in params.values()}
    out: dict[str, Any] = {}
    for key, value in table.items():
        at = f"{where}.{key}"
        p = by_key.get(key)
        if p is None:
            if key in params:  # the core's own name of a parameter written otherwise
                p = params[key]
                raise UserError(f'write `{p.key}` with its unit, e.g. "{_example(p)}"', at)
            out[key] = value
            continue
        out[p.name] = _value(p, value, at)
    return out


def _value(p: Param, value: Any, at: str) -> Any:
    parse = _PARSERS.get(p.unit)
    if parse is not None:
        if _is_number(value) and value != 0:
            what, _ = _UNITS[p.unit]
            raise UserError(f'write {what} with its unit, e.g. "{_example(p)}" (got {value!r})', at)
        return parse(value, at)
    if p.unit == "table" and isinstance(value, dict):
        return to_core(p.parameters, value, at)
    if p.unit == "tables" and isinstance(value, list):
        return [
            to_core(p.parameters, item, f"{at}[{i}]") if isinstance(item, dict) else item
            for i, item in enumerate(value)
        ]
    if isinstance(value, float) and not math.isfinite(value):
        raise UserError(f"must be a finite number, got {value}", at)
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _example(p: Param) -> str:
    """The parameter's default as the user writes it, else a typical value."""
    if p.default is not None and p.default != 0:
        return to_user(p, p.default)
    return _UNITS[p.unit][1]


def to_user(p: Param, value: Any) -> Any:
    """A core value of ``p`` as a scenario writes it (``5000000`` ns -> ``"5ms"``),
    exactly, so that reading it back gives ``value``."""
    if value is None:
        return None
    if p.unit == "time":
        return _scaled(value, (("s", 10**9), ("ms", 10**6), ("us", 10**3)), "ns")
    if p.unit == "bytes":
        return _bytes(value)
    if p.unit == "packets":
        return f"{value}pkt"
    if p.unit == "buffer":
        ((unit, n),) = value.items()
        return f"{n}pkt" if unit == "packets" else _bytes(n)
    if p.unit == "rate":
        return _scaled(value, (("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)), "bps")
    if p.unit == "table":
        return _table_to_user(p.parameters, value)
    if p.unit == "tables":
        return [_table_to_user(p.parameters, item) for item in value]
    return value


def _table_to_user(params: dict[str, Param], table: dict[str, Any]) -> dict[str, Any]:
    # The core leaves out some parameters at their default (see params! in the core).
    return {p.key: to_user(p, table[name]) for name, p in params.items() if table.get(name) is not None}


def _scaled(n: int, units: tuple[tuple[str, int], ...], base: str) -> str:
    for unit, mult in units:
        if n and n % mult == 0:
            return f"{n // mult}{unit}"
    return f"{n}{base}"


def _bytes(n: int) -> str:
    return _scaled(n, (("MB", 10**6), ("kB", 10**3), ("MiB", 2**20), ("KiB", 2**10)), "B")


# ---------------------------------------------------------------------------
# the scenario's tables


class Discipline(Model):
    """A discipline of the catalogue with its parameters, as the user wrote them.
    Their defaults and checks live in the core: here units are converted and the
    core is asked to read and check the result."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=False)

    summary: ClassVar[str] = ""

    def to_spec(self, field: str) -> dict[str, Any]:
        """The core's spec, every default filled in: one discipline, however it is
        written, gives one spec (and one run hash)."""
        kind: str = self.kind  # type: ignore[attr-defined]
        spec = {"kind": kind, **to_core(catalogue()[kind].parameters, dict(self.model_extra or {}), field)}
        return in_core(spec, field)

    @model_serializer(mode="wrap")
    def _with_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """As the user would write it with every default filled in, in the user's units
        (a written scenario.toml shows what the core ran)."""
        kind: str = self.kind  # type: ignore[attr-defined]
        try:
            full = self.to_spec("qdisc")
        except UserError:  # not valid: shown as written, for the message that follows
            return handler(self)
        params = catalogue()[kind].parameters
        filled = {params[name].key: to_user(params[name], v) for name, v in full.items() if name in params}
        return {"kind": kind, **{k: v for k, v in filled.items() if v is not None}}


def in_core(spec: dict[str, Any], field: str) -> dict[str, Any]:
    """Have the core read and check the spec; return it as the core reads it, every
    default filled in. The core's mistakes name their field."""
    from .run import _core

    try:
        return json.loads(_core().validate_qdisc(json.dumps(spec)))
    except ValueError as e:
        path, message = e.args
        raise UserError(message, f"{field}.{path}" if path else field) from None


def _model(kind: Kind) -> type[Model]:
    return type(
        f"Qdisc_{kind.kind}",
        (Discipline,),
        {
            "__annotations__": {"kind": Literal[kind.kind]},  # type: ignore[valid-type]
            "summary": kind.summary,
            "__doc__": kind.summary,
        },
    )


QDISC_MODELS: list[type[Model]] = [_model(k) for k in catalogue().values()]


Qdisc = tagged_union("kind", QDISC_MODELS, "queue discipline")

#: A DropTail so large it never drops in practice (100,000 packets): the default of
#: the queues that only carry what a bottleneck let through, at no more than its rate
#: (a router's queue towards a host, the ACKs' way back).
LARGE_QDISC: dict[str, Any] = {"kind": "droptail", "limit": "100000pkt"}

#: ns-2's default queue (DropTail, ``Queue set limit_ 50``): the default of a host's
#: own queue, where a window that outgrew the path would otherwise wait unbounded,
#: and of a graph's links (docs/user-guide.md, "Default queues").
NS2_QDISC: dict[str, Any] = {"kind": "droptail", "limit": "50pkt"}


def _droptail(spec: dict[str, Any]) -> Model:
    return QDISC_MODELS[list(catalogue()).index("droptail")].model_validate(spec)


def large_qdisc() -> Model:
    return _droptail(LARGE_QDISC)


def ns2_qdisc() -> Model:
    return _droptail(NS2_QDISC)
