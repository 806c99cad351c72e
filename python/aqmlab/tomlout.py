"""A small TOML writer for scenarios (the standard library only reads TOML).

Handles what a scenario holds: tables, arrays of tables, strings, integers, floats,
booleans and lists of those; dictionaries inside lists become inline tables.
``None`` values are left out (TOML has no null). Output is deterministic: keys keep
the order of the dictionaries given.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k, ensure_ascii=False)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        items = [f"{_key(k)} = {_value(x)}" for k, x in v.items() if x is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _small(v: Any) -> bool:
    """A flat table of a few scalars, written inline (``qdisc = { kind = ..., limit = ... }``)."""
    return (
        isinstance(v, dict)
        and 0 < len(v) <= 4
        and all(not isinstance(x, (dict, list)) for x in v.values())
    )


def _table(path: list[str], d: dict[str, Any], out: list[str], header: str | None) -> None:
    def inline(v: Any) -> bool:
        if v is None:
            return False
        if isinstance(v, dict):
            return bool(path) and _small(v)
        return not _is_table_array(v)

    simple = [(k, v) for k, v in d.items() if inline(v)]
    nested = [(k, v) for k, v in d.items() if v is not None and not inline(v)]
    if header is not None:
        out.append("")
        out.append(header)
    for k, v in simple:
        out.append(f"{_key(k)} = {_value(v)}")
    for k, v in nested:
        sub = path + [_key(k)]
        if isinstance(v, dict):
            _table(sub, v, out, "[" + ".".join(sub) + "]")
        else:
            for item in v:
                _table(sub, item, out, "[[" + ".".join(sub) + "]]")


def dumps(d: dict[str, Any]) -> str:
    """``d`` as a TOML document."""
    out: list[str] = []
    _table([], d, out, None)
    return "\n".join(out).lstrip("\n") + "\n"
