"""The queue disciplines as Python learns them from the core: every kind, every
parameter's unit and default, and the conversion of the user's units."""

import re
import tomllib
from pathlib import Path

import pytest

from aqmlab import qdiscs
from aqmlab.errors import UserError

CATALOGUE = qdiscs.catalogue()
UNITS = {
    "time", "bytes", "packets", "buffer", "rate", "number", "flag", "choice", "text",
    "numbers", "choices", "table", "tables",
}


def _model(kind: str, table: dict):
    model = next(m for m in qdiscs.QDISC_MODELS if m.model_fields["kind"].annotation.__args__ == (kind,))
    return model.model_validate({"kind": kind, **table})


def _every_parameter():
    for kind in CATALOGUE.values():
        for p in kind.parameters.values():
            yield kind.kind, p
            for inner in p.parameters.values():
                yield kind.kind, inner


def test_every_kind_of_the_core_is_a_scenario_kind():
    assert list(qdiscs.KINDS) == list(CATALOGUE)
    assert len(qdiscs.QDISC_MODELS) == len(CATALOGUE) == 25
    assert {"droptail", "red", "codel", "qsdrr", "chips"} <= set(CATALOGUE)
    assert all(qdiscs.KINDS.values())


def test_every_parameter_has_a_known_unit_and_a_doc():
    for kind, p in _every_parameter():
        assert p.unit in UNITS, f"{kind}.{p.name}: {p.unit}"
        assert p.doc, f"{kind}.{p.name}"
    units = {(kind, p.name): p.unit for kind, p in _every_parameter()}
    assert units["codel", "target"] == "time"
    assert units["red_linux", "min_th"] == "bytes"
    assert units["fq_codel", "limit"] == "packets"
    assert units["red", "limit"] == "buffer"
    assert units["red", "link_rate_bps"] == "rate"
    assert units["qsdrr", "period"] == "time"  # bloom.period


@pytest.mark.parametrize("kind", list(CATALOGUE))
def test_defaults_round_trip_from_the_core_through_the_users_units(kind):
    """Each default the core declares, written as a user writes it ("5ms"), reads back
    as the core's value, and the core takes the whole table as its defaults."""
    params = CATALOGUE[kind].parameters
    written = {}
    for p in params.values():
        if p.required:
            written[p.key] = "30pkt"
        elif p.default is not None:
            written[p.key] = qdiscs.to_user(p, p.default)
    defaults = {p.name: {"packets": 30} if p.required else p.default for p in params.values()}
    read = qdiscs.in_core(_model(kind, written).to_spec("qdisc"), "qdisc")
    assert read == {"kind": kind, **defaults}
    required = {p.key: "30pkt" for p in params.values() if p.required}
    assert qdiscs.in_core(_model(kind, required).to_spec("qdisc"), "qdisc") == read
    for p in params.values():
        if p.unit in ("time", "bytes", "packets", "buffer", "rate") and p.default:
            assert isinstance(written[p.key], str), f"{kind}.{p.name} is written with its unit"


def test_a_table_of_its_own_converts_its_units():
    table = {"limit": "100pkt", "queues": 4, "mapping": "bloom", "bloom": {"period": "1s", "delta": "100ms"}}
    spec = _model("qsdrr", table).to_spec("q")
    assert (spec["bloom"]["period"], spec["bloom"]["delta"]) == (10**9, 10**8)
    assert spec["limit"] == {"packets": 100}


def test_a_rate_is_written_without_bps():
    assert _model("red", {"link_rate": "100Mbps"}).to_spec("q")["link_rate_bps"] == 100_000_000
    with pytest.raises(UserError) as e:
        _model("red", {"link_rate_bps": 100_000_000}).to_spec("q")
    assert e.value.field == "q.link_rate_bps"


@pytest.mark.parametrize(
    "kind,table,field,words",
    [
        ("codel", {"target": 5}, "q.target", 'write a time with its unit, e.g. "5ms"'),
        ("pie", {"max_burst": 150.5}, "q.max_burst", 'write a time with its unit, e.g. "150ms"'),
        ("codel", {"mtu": 1500}, "q.mtu", 'write a size with its unit, e.g. "1500B"'),
        ("fred", {"limit": 60}, "q.limit", 'write a packet count with its unit, e.g. "60pkt"'),
        ("drr", {"limit": 100}, "q.limit", 'write a buffer with its unit, e.g. "100pkt"'),
        ("qsdrr", {"limit": "9pkt", "bloom": {"delta": 50}}, "q.bloom.delta", "write a time with its unit"),
    ],
)
def test_a_bare_number_is_refused_where_a_unit_belongs(kind, table, field, words):
    with pytest.raises(UserError) as e:
        _model(kind, table).to_spec("q")
    assert e.value.field == field
    assert words in str(e.value)


def test_zero_needs_no_unit():
    assert _model("sfb", {"rehash_interval": 0, "warmup_time": 0}).to_spec("q")["rehash_interval"] == 0


@pytest.mark.parametrize(
    "kind,table,field,words",
    [
        ("codel", {"tagret": "5ms"}, "q.tagret", "unknown parameter"),
        ("red", {"max_p": float("nan")}, "q.max_p", "finite number"),
        ("red", {"max_p": -0.1}, "q.max_p", "not a probability"),
        ("chips", {"chips_ratio": float("inf")}, "q.chips_ratio", "finite number"),
        ("sfed", {"limit": "10pkt", "max_p": 1.5}, "q.max_p", "not a probability"),
        ("fq_codel", {"flows": 1.5}, "q.flows", "expected a whole number, 0 or more, got 1.5"),
        ("red", {"gentle": "yes"}, "q.gentle", 'expected true or false, got "yes"'),
        ("drr", {}, "q.limit", "required"),
    ],
)
def test_the_core_names_the_field_in_the_users_words(kind, table, field, words):
    with pytest.raises(UserError) as e:
        _model(kind, table).to_spec("q")
    assert e.value.field == field
    assert words in str(e.value)
    assert "u32" not in str(e.value) and "u64" not in str(e.value)


def test_user_units_are_written_exactly():
    time = qdiscs.Param("t", "time", "", False, None)
    size = qdiscs.Param("s", "bytes", "", False, None)
    rate = qdiscs.Param("link_rate_bps", "rate", "", False, None)
    times = [qdiscs.to_user(time, v) for v in (5_000_000, 1_500_000_000, 1_001, 0)]
    assert times == ["5ms", "1500ms", "1001ns", "0ns"]
    sizes = [qdiscs.to_user(size, v) for v in (1500, 20_000, 32 << 20, 16384)]
    assert sizes == ["1500B", "20kB", "32MiB", "16KiB"]
    assert qdiscs.to_user(rate, 10_000_000) == "10Mbps"
    assert rate.key == "link_rate"


def _documented_tables():
    """Every ``qdisc = { ... }`` of the docs' examples (a table may span lines)."""
    root = Path(__file__).resolve().parents[1]
    for page in sorted((root / "docs").rglob("*.md")):
        text = page.read_text()
        for start in (m.end() for m in re.finditer(r"qdisc\s*=\s*(?=\{)", text)):
            depth, end = 0, start
            for end, c in enumerate(text[start:], start):
                depth += {"{": 1, "}": -1}.get(c, 0)
                if depth == 0:
                    break
            table = tomllib.loads("q = " + text[start : end + 1].replace("\n", " "))["q"]
            if "kind" in table:
                yield f"{page.name}: {table['kind']}", table


DOCUMENTED = list(_documented_tables())


@pytest.mark.parametrize("table", [t for _, t in DOCUMENTED], ids=[i for i, _ in DOCUMENTED])
def test_every_documented_table_is_a_valid_discipline(table):
    _model(table["kind"], {k: v for k, v in table.items() if k != "kind"}).to_spec("q")
