"""Checks a resolved scenario against the Rust contract, read from the Rust sources
(crates/sim/src/scenario.rs, crates/qdisc/src/lib.rs) and, for the queue disciplines
(declared each in its own file), from the core itself, so that a change on either
side that breaks the other fails a Python test. The value checked is the contract's
JSON form (resolved.json: the columns as lists), which is also what crosses into Rust,
the columns as buffers beside it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from aqmlab import contract
from aqmlab.run import _core

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [
    ROOT / "crates/sim/src/scenario.rs",
    ROOT / "crates/qdisc/src/lib.rs",  # Limit
    ROOT / "crates/qdisc/src/source.rs",  # UdpSource, Dist (shared with the emulator's UDP sources)
]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _fields(body: str) -> dict[str, tuple[str, bool]]:
    """field -> (rust type, has a serde default). Types never contain commas here."""
    body = "\n".join(line for line in body.splitlines() if not line.strip().startswith("//"))
    out: dict[str, tuple[str, bool]] = {}
    default = False
    for m in re.finditer(r"#\[serde\(([^)]*)\)\]|(?:pub\s+)?(\w+)\s*:\s*([^,\n]+)", body):
        if m[1] is not None:
            default = "default" in m[1]
        else:
            out[m[2]] = (m[3].strip(), default)
            default = False
    return out


def load_contract() -> tuple[dict[str, Any], dict[str, Any]]:
    """(structs, enums): struct -> fields; enum -> (tag key, variant tag -> fields)."""
    structs: dict[str, Any] = {}
    enums: dict[str, Any] = {}
    for path in SOURCES:
        text = path.read_text()
        for m in re.finditer(r"((?:#\[[^\n]*\]\n)*)pub struct (\w+) \{(.*?)\n\}", text, re.S):
            fields = _fields(m[3])
            if re.search(r"#\[serde\([^)]*\bdefault\b", m[1]):  # every field has a default
                fields = {name: (rust_type, True) for name, (rust_type, _) in fields.items()}
            structs[m[2]] = fields
        for m in re.finditer(r"((?:#\[[^\n]*\]\n)*)pub enum (\w+) \{(.*?)\n\}", text, re.S):
            attrs, name, body = m[1], m[2], m[3]
            tag = re.search(r'tag = "(\w+)"', attrs)
            variants = {}
            for v in re.finditer(r"(\w+)\s*\{([^}]*)\}", body):
                variants[_snake(v[1])] = _fields(v[2])
            for v in re.finditer(r"^\s*(\w+)\((\w+)\),?$", body, re.M):
                variants[_snake(v[1])] = v[2]
            for v in re.finditer(r"^\s*(\w+),?\s*$", body, re.M):  # unit variants
                variants.setdefault(_snake(v[1]), None)
            enums[name] = (tag[1] if tag else None, variants)
    return structs, enums


class Checker:
    def __init__(self) -> None:
        self.structs, self.enums = load_contract()

    def check(self, value: Any, rust_type: str, where: str) -> None:
        t = rust_type.strip()
        if t.startswith("Option<"):
            if value is None:
                return
            return self.check(value, t[7:-1], where)
        if m := re.fullmatch(r"\[(\w+); (\d+)\]", t):
            assert isinstance(value, list) and len(value) == int(m[2]), f"{where}: expected {m[2]} values"
            for i, v in enumerate(value):
                self.check(v, m[1], f"{where}[{i}]")
            return
        if t.startswith("Vec<"):
            assert isinstance(value, list), f"{where}: expected a list"
            for i, v in enumerate(value):
                self.check(v, t[4:-1], f"{where}[{i}]")
            return
        if t in ("u64", "u32"):
            assert isinstance(value, int) and not isinstance(value, bool), f"{where}: expected an integer, got {value!r}"
            assert 0 <= value < 2 ** (64 if t == "u64" else 32), f"{where}: {value} out of range for {t}"
            return
        if t == "f64":
            assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{where}: expected a number"
            return
        if t == "bool":
            assert isinstance(value, bool), f"{where}: expected a bool"
            return
        if t == "String":
            assert isinstance(value, str), f"{where}: expected a string"
            return
        if t == "QdiscSpec":  # each discipline declares its own: ask the core
            try:
                _core().validate_qdisc(json.dumps(value))
            except ValueError as e:
                raise AssertionError(f"{where}: {e.args}") from None
            return
        if t in self.structs:
            self._object(value, self.structs[t], None, where)
            return
        if t in self.enums:
            tag, variants = self.enums[t]
            if tag is None:
                if isinstance(value, str):  # unit variants (TcpVariant)
                    assert variants.get(value, 0) is None, f"{where}: {value!r} is not a variant of {t}"
                    return
                assert isinstance(value, dict) and len(value) == 1, f"{where}: externally tagged {t}"
                (k, v), = value.items()
                assert k in variants, f"{where}: unknown {t} variant {k}"
                self.check(v, variants[k], f"{where}.{k}")
                return
            assert isinstance(value, dict), f"{where}: expected a table for {t}"
            assert value.get(tag) in variants, f"{where}: {tag}={value.get(tag)!r} is not a variant of {t}"
            self._object(value, variants[value[tag]], tag, where)
            return
        raise AssertionError(f"{where}: the checker does not know the type {t}")

    def _object(self, value: Any, fields: dict[str, tuple[str, bool]], tag: str | None, where: str) -> None:
        assert isinstance(value, dict), f"{where}: expected a table"
        keys = set(value) - ({tag} if tag else set())
        unknown = keys - set(fields)
        assert not unknown, f"{where}: fields unknown to Rust: {sorted(unknown)}"
        for name, (rtype, has_default) in fields.items():
            if name not in value:
                assert has_default, f"{where}: required field {name} missing"
                continue
            self.check(value[name], rtype, f"{where}.{name}")


def json_form(r: dict[str, Any]) -> dict[str, Any]:
    """A resolved scenario as resolved.json holds it."""
    return json.loads(contract.dumps(r))


def check_resolved(r: dict[str, Any]) -> None:
    """The shape of ``r`` (the JSON form) matches the Rust model, and its indices are
    consistent."""
    Checker().check(r, "Scenario", "scenario")
    n_nodes = len(contract.names(r["nodes"]))
    columns = {k: len(v) for k, v in r["links"].items() if k not in ("names", "qdiscs")}
    assert len(set(columns.values())) == 1, f"links: columns of different lengths {columns}"
    links = contract.link_rows(r)
    assert len(links) == columns["from"], "links.names: one name a link"
    for i, link in enumerate(links):
        assert link["from"] < n_nodes and link["to"] < n_nodes, f"links[{i}]"
        assert link["from"] != link["to"]
    names = [link["name"] for link in links]
    assert len(set(names)) == len(names), "link names are unique"
    fl = r["flows"]
    n_flows = len(fl["group"])
    assert len(fl["src"]) == len(fl["dst"]) == len(fl["start_ns"]) == n_flows, "flows: columns of one length"
    for paths in ("path", "reverse_path"):
        offsets = fl[paths]["offsets"]
        assert len(offsets) == n_flows + 1 and offsets[0] == 0 and offsets[-1] == len(fl[paths]["links"]), paths
        assert all(a <= b for a, b in zip(offsets, offsets[1:])), f"flows.{paths}.offsets never fall"
    assert all(g < len(fl["groups"]) for g in fl["group"]), "flows.group: a group each"

    def walk(path: list[int], a: int, b: int, where: str) -> None:
        at = a
        for li in path:
            assert links[li]["from"] == at, f"{where}: path is not contiguous"
            at = links[li]["to"]
        assert at == b, f"{where}: path does not end at its destination"

    def route(rt: dict[str, Any], where: str, acks: bool) -> None:
        assert rt["path"], f"{where}: empty path"
        walk(rt["path"], rt["src"], rt["dst"], f"{where}.path")
        if acks:
            assert rt["reverse_path"], f"{where}: a TCP flow needs a reverse path"
            walk(rt["reverse_path"], rt["dst"], rt["src"], f"{where}.reverse_path")

    for i, f in enumerate(contract.flow_rows(r)):
        route(f["route"], f"flows[{i}].route", f["kind"] == "tcp")
        if f["kind"] == "tcp":
            assert f["profile"] < len(r["tcp_profiles"])
    for i, a in enumerate(r["arrivals"]):
        assert a["routes"]
        for j, rt in enumerate(a["routes"]):
            route(rt, f"arrivals[{i}].routes[{j}]", True)
        assert a["profile"] < len(r["tcp_profiles"])
        assert a["rate_per_s"] > 0


# ---------------------------------------------------------------------------
# tests

import pytest  # noqa: E402

from aqmlab.scenario import Scenario  # noqa: E402

SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))


def test_the_contract_parser_reads_the_rust_model():
    structs, enums = load_contract()
    assert {"Scenario", "NameRun", "Links", "Flows", "Paths", "TcpProfile", "Route", "ArrivalSpec"} <= set(structs)
    assert structs["Scenario"]["flows"][1] is True  # #[serde(default)]
    assert structs["Scenario"]["seed"] == ("u64", False)
    assert structs["Links"]["rate_bps"] == ("Vec<u64>", True)
    assert structs["NameRun"]["numbers"] == ("Option<[u32; 2]>", True)
    assert enums["FlowGroup"][0] == "kind" and set(enums["FlowGroup"][1]) == {"tcp", "udp"}
    assert enums["UdpSource"][0] == "model" and "on_off" in enums["UdpSource"][1]
    assert enums["Dist"][0] == "dist" and "pareto" in enums["Dist"][1]
    assert set(enums["TcpVariant"][1]) == {"tahoe", "reno", "newreno", "sack", "cubic"}
    assert structs["CubicParams"]["beta"] == ("f64", True)  # #[serde(default)] on the struct
    assert structs["TcpProfile"]["cubic"] == ("CubicParams", True)
    assert enums["Limit"][0] is None and set(enums["Limit"][1]) == {"packets", "bytes"}


def test_the_checker_rejects_what_rust_would_refuse():
    good = json_form(Scenario.load(ROOT / "scenarios" / "udp-mix.toml").resolve())
    check_resolved(good)
    first_route = slice(0, good["flows"]["path"]["offsets"][1])

    def reverse_first_route(r):
        r["flows"]["path"]["links"][first_route] = r["flows"]["path"]["links"][first_route][::-1]

    for breakage in (
        lambda r: r.update(extra=1),
        lambda r: r["links"]["rate_bps"].__setitem__(0, -1),
        lambda r: r["links"]["monitor"].pop(),
        lambda r: r["links"]["qdiscs"][0].update(limit={"pkts": 3}),
        lambda r: r["links"]["names"][0]["names"].pop(),
        lambda r: r["tcp_profiles"][0].pop("syn"),
        reverse_first_route,
        lambda r: r["flows"]["path"]["offsets"].pop(),
        lambda r: r["flows"]["group"].__setitem__(0, len(r["flows"]["groups"])),
        lambda r: r["flows"]["groups"][-1]["source"].update(model="onoff"),
        lambda r: r["flows"]["groups"][0].update(size_bytes=1.5),
        lambda r: r["tcp_profiles"][0].update(variant="vegas"),
        lambda r: r["tcp_profiles"][0].update(cubic={"beta": 0.7, "k": 2}),
    ):
        import copy

        bad = copy.deepcopy(good)
        breakage(bad)
        with pytest.raises(AssertionError):
            check_resolved(bad)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_example_resolves_to_the_contract(path):
    check_resolved(json_form(Scenario.load(path).resolve()))
