"""``--vary FIELD=VALUES``: parsing, and the grid of scenarios it makes.

FIELD is a dotted path into the scenario's TOML shape, with list indices::

    duration    tcp.variant    topology.bottleneck.qdisc.limit    flows[0].count

VALUES is one of

- a comma list: ``50pkt,100pkt,200pkt``, ``reno,newreno``, ``true,false``, ``1,2,5``;
- a range ``start:stop:step``, each with the same unit or none: ``10pkt:100pkt:10pkt``,
  ``1:5:1``, ``0.5:2:0.5``; ``stop`` is included when it falls on a step;
- a log range ``log:start:stop:count``: ``count`` values spaced geometrically from
  ``start`` to ``stop`` (both included); ``log:10pkt:1000pkt:5`` gives 10, 32, 100, 316,
  1000 packets. Values in packets or bytes, and plain numbers when both ends are
  integers, are rounded to integers (duplicates after rounding are dropped); others
  keep 6 significant digits.

Each value keeps its unit as text (``"50pkt"``); a plain number becomes an int or
float, ``true``/``false`` a boolean, anything else a string.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from ..errors import UserError

_NUM = re.compile(r"^\s*(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>[^\d\s:,][^:,]*?)?\s*$")
_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")
_INDEX = re.compile(r"\[(\d+)\]")
#: Units whose values are whole numbers (rounded in log ranges).
_INTEGER_UNITS = {"pkt", "pkts", "packet", "packets", "B"}
#: Most values a single --vary may make (a guard against a typo like 1:1e9:1).
MAX_VALUES = 100_000


def _arg(field: str, values: str) -> str:
    return f"--vary {field}={values}"


def _number(text: str, arg: str) -> tuple[Decimal, str]:
    m = _NUM.match(text)
    if not m:
        raise UserError(f"expected a number with an optional unit, got {text!r}", arg)
    try:
        return Decimal(m["num"]), (m["unit"] or "").strip()
    except InvalidOperation:  # pragma: no cover - the regex admits only numbers
        raise UserError(f"expected a number, got {text!r}", arg) from None


def _plain(d: Decimal) -> int | float:
    if d == d.to_integral_value():
        return int(d)
    return float(d)


def _with_unit(d: Decimal, unit: str) -> Any:
    if not unit:
        return _plain(d)
    return f"{format(d.normalize(), 'f')}{unit}"


def _scalar(text: str) -> Any:
    """One item of a comma list: a number, a boolean or a string (units kept as text)."""
    t = text.strip()
    if t in ("true", "false"):
        return t == "true"
    try:
        d = Decimal(t)
    except InvalidOperation:
        return t
    if not d.is_finite():
        return t
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    return float(d)


def _range(parts: list[str], arg: str) -> list[Any]:
    (a, ua), (b, ub), (s, us) = (_number(p, arg) for p in parts)
    unit = ua or ub or us
    for u in (ua, ub, us):
        if u and u != unit:
            raise UserError(f"start, stop and step must have the same unit, got {ua!r}, {ub!r}, {us!r}", arg)
    if (not ua or not ub) and unit:
        raise UserError(f"start and stop need the unit {unit!r}", arg)
    if s <= 0:
        raise UserError("the step must be greater than zero", arg)
    if b < a:
        raise UserError("stop must not be less than start", arg)
    n = int((b - a) / s) + 1
    if n > MAX_VALUES:
        raise UserError(f"the range makes {n} values (at most {MAX_VALUES})", arg)
    return [_with_unit(a + i * s, unit) for i in range(n)]


def _log_range(parts: list[str], arg: str) -> list[Any]:
    (a, ua), (b, ub) = _number(parts[0], arg), _number(parts[1], arg)
    if ua != ub:
        raise UserError(f"start and stop must have the same unit, got {ua!r} and {ub!r}", arg)
    try:
        count = int(parts[2])
    except ValueError:
        raise UserError(f"the count must be an integer, got {parts[2]!r}", arg) from None
    if count < 2 or count > MAX_VALUES:
        raise UserError(f"the count must be in [2, {MAX_VALUES}], got {count}", arg)
    if a <= 0 or b <= 0:
        raise UserError("a log range needs start and stop greater than zero", arg)
    if b < a:
        raise UserError("stop must not be less than start", arg)
    la, lb = math.log(float(a)), math.log(float(b))
    raw = [math.exp(la + (lb - la) * i / (count - 1)) for i in range(count)]
    raw[0], raw[-1] = float(a), float(b)
    integer = ua in _INTEGER_UNITS or (not ua and a == a.to_integral_value() and b == b.to_integral_value())
    out: list[Any] = []
    for x in raw:
        d = Decimal(round(x)) if integer else Decimal(f"{x:.6g}")
        v = _with_unit(d, ua)
        if v not in out:
            out.append(v)
    return out


def parse_values(field: str, text: str) -> list[Any]:
    """The values of one ``--vary`` (see the module's docstring)."""
    arg = _arg(field, text)
    t = text.strip()
    if not t:
        raise UserError("no values after '='", arg)
    if t.startswith("log:"):
        parts = t[4:].split(":")
        if len(parts) != 3:
            raise UserError("a log range is log:START:STOP:COUNT, e.g. log:10pkt:1000pkt:5", arg)
        return _log_range(parts, arg)
    if ":" in t:
        parts = t.split(":")
        if len(parts) != 3 or "," in t:
            raise UserError("a range is START:STOP:STEP, e.g. 10pkt:100pkt:10pkt", arg)
        return _range(parts, arg)
    items = t.split(",")
    if any(not i.strip() for i in items):
        raise UserError("empty value in the comma list", arg)
    return [_scalar(i) for i in items]


def parse_path(field: str, arg: str) -> list[str | int]:
    """``flows[0].count`` -> ``["flows", 0, "count"]``."""
    if not field:
        raise UserError("no field before '='", arg)
    path: list[str | int] = []
    for seg in field.split("."):
        m = _SEGMENT.match(seg)
        if not m:
            raise UserError(f"malformed field path {field!r} (e.g. topology.bottleneck.qdisc.limit, flows[0].count)", arg)
        path.append(m[1])
        path.extend(int(i) for i in _INDEX.findall(m[2]))
    return path


def parse_vary(expr: str) -> tuple[str, list[Any]]:
    """``"FIELD=VALUES"`` -> ``(FIELD, [values])``."""
    if "=" not in expr:
        raise UserError("expected FIELD=VALUES, e.g. topology.bottleneck.qdisc.limit=50pkt,100pkt", f"--vary {expr}")
    field, _, values = expr.partition("=")
    field = field.strip()
    parse_path(field, _arg(field, values))
    return field, parse_values(field, values)


def _show_path(path: list[str | int]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def set_path(data: dict[str, Any], full: dict[str, Any], field: str, value: Any, arg: str) -> None:
    """Set ``field`` of ``data`` (the user's scenario dict) to ``value``.

    A table on the way that the user left out is copied from ``full`` (the scenario
    with every default filled in); a field that neither has is unknown, except the
    last key of a table, which the schema then judges (unknown fields are refused)."""
    path = parse_path(field, arg)
    node: Any = data
    ref: Any = full
    for depth, key in enumerate(path[:-1]):
        here = _show_path(path[: depth + 1])
        if isinstance(key, int):
            if not isinstance(node, list) or key >= len(node):
                n = len(node) if isinstance(node, list) else 0
                raise UserError(f"unknown field {here} (the list has {n} item(s))" if isinstance(node, list) else f"unknown field {here}: not a list", arg)
            node, ref = node[key], (ref[key] if isinstance(ref, list) and key < len(ref) else None)
            continue
        if not isinstance(node, dict):
            raise UserError(f"unknown field {here}: {_show_path(path[:depth]) or 'the scenario'} is not a table", arg)
        if key not in node:
            if isinstance(ref, dict) and isinstance(ref.get(key), (dict, list)):
                node[key] = copy.deepcopy(ref[key])
            else:
                raise UserError(f"unknown field {here}", arg)
        node, ref = node[key], (ref.get(key) if isinstance(ref, dict) else None)
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise UserError(f"unknown field {field}", arg)
        node[last] = value
    else:
        if not isinstance(node, dict):
            raise UserError(f"unknown field {field}: {_show_path(path[:-1])} is not a table", arg)
        node[last] = value


def grid(varies: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    """The cartesian product of the varied values, first --vary outermost."""
    fields = [f for f, _ in varies]
    if len(set(fields)) != len(fields):
        dup = next(f for f in fields if fields.count(f) > 1)
        raise UserError("the same field is varied twice", f"--vary {dup}")
    return [dict(zip(fields, combo)) for combo in itertools.product(*(v for _, v in varies))]


def vary_arg(field: str, values: list[Any]) -> str:
    return _arg(field, ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values))
