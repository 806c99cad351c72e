"""The resolved scenario (the contract between Python and the core) in its column-wise
form: which fields are columns, its JSON text, its hash, and how it crosses into Rust.

What grows with the number of flows is a numpy array per field: the links' and the
flows' columns, routes as offsets into a flat array of links (``crates/sim/src/
scenario.rs``, ``Links`` and ``Flows``). A million flows are then a few hundred bytes
each in Python, where a dict per flow and per link took several kilobytes, and they
cross into the core as buffers beside a small JSON text of everything else.

``resolved.json`` holds the same value: the columns as JSON lists, written a slice at
a time, so that no text of the whole is ever built.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import orjson

#: Every column: its path in the contract, and the type resolve gives it.
COLUMNS: dict[str, Any] = {
    "links.from": np.uint32,
    "links.to": np.uint32,
    "links.rate_bps": np.int64,
    "links.delay_ns": np.int64,
    "links.qdisc": np.uint32,
    "links.monitor": np.bool_,
    "links.loss": np.float64,
    "flows.group": np.uint32,
    "flows.src": np.uint32,
    "flows.dst": np.uint32,
    "flows.start_ns": np.int64,
    "flows.stop_ns": np.int64,
    "flows.path.offsets": np.int64,
    "flows.path.links": np.uint32,
    "flows.reverse_path.offsets": np.int64,
    "flows.reverse_path.links": np.uint32,
}

#: Columns present only when some value is not the default: a flow's own stop (0: its
#: group's), written only if a flow has one, and a link's random loss, only if a link
#: has some, so that other scenarios resolve as before.
OPTIONAL_COLUMNS = frozenset({"flows.stop_ns", "links.loss"})

#: Values of a column written to JSON at a time.
_SLICE = 1 << 16


def _parent(resolved: dict[str, Any], path: str) -> tuple[dict[str, Any] | None, str]:
    """The dict holding the field at ``path`` (None if it is not there), and its key."""
    *outer, key = path.split(".")
    d: Any = resolved
    for part in outer:
        d = d.get(part) if isinstance(d, dict) else None
    return (d if isinstance(d, dict) else None), key


# -- JSON --------------------------------------------------------------------


def _scalar_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON: {type(value).__name__}")


def iter_json(value: Any, indent: int | None = 2, level: int = 0) -> Iterator[str]:
    """The JSON text of a resolved scenario, in pieces: sorted keys; with ``indent``,
    one field a line and each column on one line; without, compact."""
    if isinstance(value, np.ndarray):
        # orjson writes a slice of a column straight from its buffer (integers and
        # flags as json does; floats, the links' loss, in their shortest form).
        yield "["
        for start in range(0, len(value), _SLICE):
            piece = orjson.dumps(np.ascontiguousarray(value[start : start + _SLICE]), option=orjson.OPT_SERIALIZE_NUMPY)
            yield ("," if start else "") + piece.decode()[1:-1]
        yield "]"
    elif isinstance(value, dict) and value:
        inner = "" if indent is None else "\n" + " " * (indent * (level + 1))
        yield "{"
        for i, key in enumerate(sorted(value)):
            yield ("," if i else "") + inner + json.dumps(str(key)) + (": " if indent is not None else ":")
            yield from iter_json(value[key], indent, level + 1)
        yield ("" if indent is None else "\n" + " " * (indent * level)) + "}"
    else:
        text = json.dumps(
            value, sort_keys=True, indent=indent, allow_nan=False, default=_scalar_default,
            separators=(",", ":") if indent is None else None,
        )
        yield text if indent is None else text.replace("\n", "\n" + " " * (indent * level))


def dumps(resolved: dict[str, Any], indent: int | None = None) -> str:
    return "".join(iter_json(resolved, indent))


def write(path: str | Path, resolved: dict[str, Any]) -> None:
    """Write ``resolved.json`` a piece at a time."""
    with open(path, "w", encoding="utf-8") as f:
        for piece in iter_json(resolved):
            f.write(piece)
        f.write("\n")


def digest(resolved: dict[str, Any], suffix: str = "") -> str:
    """SHA-256 of the compact JSON text (sorted keys) followed by ``suffix``,
    computed a piece at a time."""
    h = hashlib.sha256()
    for piece in iter_json(resolved, indent=None):
        h.update(piece.encode())
    h.update(suffix.encode())
    return h.hexdigest()


def from_json(value: dict[str, Any]) -> dict[str, Any]:
    """A resolved scenario read from JSON, its columns made arrays again.

    Integers stay as they are, negative ones too: the core checks every column and
    names the element it refuses (``links.from[3]: must not be negative``)."""
    for path, dtype in COLUMNS.items():
        parent, key = _parent(value, path)
        if parent is not None and isinstance(parent.get(key), list):
            column = parent[key]
            # Floats stay floats (a loss of 0 written as an integer is still a probability).
            floats = dtype if dtype is np.float64 else None
            parent[key] = np.asarray(column, dtype=floats) if column else np.empty(0, dtype=dtype)
    return value


def load(path: str | Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return from_json(json.load(f))


# -- into the core -----------------------------------------------------------


def for_core(resolved: dict[str, Any]) -> tuple[str, dict[str, np.ndarray]]:
    """The core's input: the JSON text of all but the columns, and the columns (numpy
    arrays, flags as bytes: the core reads integers)."""
    small = dict(resolved)
    columns: dict[str, np.ndarray] = {}
    for path in COLUMNS:
        *outer, key = path.split(".")
        d = small
        for part in outer:  # copy each dict on the way: the caller's stays whole
            if not isinstance(d.get(part), dict):
                break
            d[part] = d = dict(d[part])
        else:
            if isinstance(d.get(key), np.ndarray):
                column = np.ascontiguousarray(d.pop(key))
                columns[path] = column.view(np.uint8) if column.dtype == np.bool_ else column
    return json.dumps(small, sort_keys=True, allow_nan=False, default=_scalar_default), columns


# -- reading it --------------------------------------------------------------


def names(runs: list[dict[str, Any]]) -> Any:
    """The contract's runs of names as a :class:`~aqmlab.names.NameList`."""
    from .names import NameList

    return NameList.from_contract(runs)


def flow_count(resolved: dict[str, Any]) -> int:
    return len(resolved["flows"]["group"])


def route(paths: dict[str, np.ndarray], i: int) -> list[int]:
    """Route ``i`` of a column of routes (``flows.path``, ``flows.reverse_path``)."""
    o = paths["offsets"]
    return [int(link) for link in paths["links"][int(o[i]) : int(o[i + 1])]]


def link_rows(resolved: dict[str, Any]) -> list[dict[str, Any]]:
    """Every link as a dict (its name written out, its discipline's spec): for small
    scenarios and tests."""
    links = resolved["links"]
    return [
        {
            "name": name,
            "from": int(links["from"][i]),
            "to": int(links["to"][i]),
            "rate_bps": int(links["rate_bps"][i]),
            "delay_ns": int(links["delay_ns"][i]),
            "qdisc": links["qdiscs"][int(links["qdisc"][i])],
            "monitor": bool(links["monitor"][i]),
            "loss": float(links["loss"][i]) if "loss" in links else 0.0,
        }
        for i, name in enumerate(names(links["names"]))
    ]


def flow_rows(resolved: dict[str, Any]) -> list[dict[str, Any]]:
    """Every flow as a dict: its group's fields (``group`` its label), its route and
    its start. For small scenarios and tests."""
    fl = resolved["flows"]
    rows = []
    for i in range(flow_count(resolved)):
        row = dict(fl["groups"][int(fl["group"][i])])
        row["group"] = row.pop("label")
        row["route"] = {
            "src": int(fl["src"][i]),
            "dst": int(fl["dst"][i]),
            "path": route(fl["path"], i),
            "reverse_path": route(fl["reverse_path"], i),
        }
        row["start_ns"] = int(fl["start_ns"][i])
        if "stop_ns" in fl and int(fl["stop_ns"][i]):
            row["stop_ns"] = int(fl["stop_ns"][i])
        rows.append(row)
    return rows


def as_rows(resolved: dict[str, Any]) -> dict[str, Any]:
    """The resolved scenario with a dict per node, link and flow (the contract's form
    before it went column-wise): for small scenarios and tests."""
    return {
        **resolved,
        "nodes": [{"name": name} for name in names(resolved["nodes"])],
        "links": link_rows(resolved),
        "flows": flow_rows(resolved),
    }


def monitored_links(resolved: dict[str, Any]) -> list[str]:
    """The names of the links whose queues are monitored."""
    links = resolved["links"]
    all_names = names(links["names"])
    return [all_names[int(i)] for i in np.nonzero(np.asarray(links["monitor"]))[0]]
