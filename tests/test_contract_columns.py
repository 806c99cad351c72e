"""The column-wise contract: it round-trips through resolved.json, a results directory
runs again as it is, a large scenario stays columns (no object per flow), and bad
column data is refused by the core with the field and element named (exit status 2
from the CLI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aqmlab
from aqmlab import contract
from aqmlab.results import Results

ROOT = Path(__file__).resolve().parents[1]
UDP_MIX = ROOT / "scenarios" / "udp-mix.toml"
TABLES = ["flows.parquet", "queues.parquet", "timeseries.parquet", "histograms.parquet", "summary.json"]


def _same(a, b) -> bool:
    """Two resolved scenarios hold the same values (arrays compared by value)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


def test_resolved_json_round_trips(tmp_path):
    res = aqmlab.run(UDP_MIX)
    res.write(tmp_path / "a")
    back = Results.read(tmp_path / "a")
    assert _same(res.scenario, back.scenario)
    assert contract.dumps(back.scenario) == contract.dumps(res.scenario)
    for path, dtype in contract.COLUMNS.items():
        parent, key = contract._parent(back.scenario, path)
        if path in contract.OPTIONAL_COLUMNS and key not in parent:
            continue
        assert isinstance(parent[key], np.ndarray), path
    # Written again, the file is the same to the byte.
    back.write(tmp_path / "b")
    assert (tmp_path / "a" / "resolved.json").read_bytes() == (tmp_path / "b" / "resolved.json").read_bytes()


def test_a_results_directory_runs_again_to_the_same_results(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    aqmlab_cli = [sys.executable, "-m", "aqmlab", "run"]
    subprocess.run([*aqmlab_cli, str(UDP_MIX), "--out", str(tmp_path / "a"), "-q"], check=True, env=env)
    subprocess.run([*aqmlab_cli, str(tmp_path / "a"), "--out", str(tmp_path / "b"), "-q"], check=True, env=env)
    subprocess.run([*aqmlab_cli, str(tmp_path / "a" / "resolved.json"), "--out", str(tmp_path / "c"), "-q"], check=True, env=env)
    for name in [*TABLES, "resolved.json"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "c" / name).read_bytes(), name


def test_twenty_thousand_flows_stay_columns():
    """What makes a million flows fit: the contract holds no Python object per flow or
    link, its names are a few runs, and the core's JSON text does not grow with flows.
    (Memory itself is measured by bench/python_memory.py, not here.)"""
    n = 20_000
    d = aqmlab.Scenario.load(ROOT / "scenarios" / "bench-dumbbell-1000.toml").to_dict()
    d["topology"]["senders"] = d["flows"][0]["count"] = n
    r = aqmlab.Scenario.coerce(d).resolve()
    for path, dtype in contract.COLUMNS.items():
        parent, key = contract._parent(r, path)
        if path in contract.OPTIONAL_COLUMNS and key not in parent:
            continue
        column = parent[key]
        assert isinstance(column, np.ndarray) and column.dtype == dtype, path
    assert len(r["links"]["from"]) == 4 * n + 2 and contract.flow_count(r) == n
    assert len(r["nodes"]) <= 3 and len(r["links"]["names"]) <= 3 and len(r["links"]["qdiscs"]) == 2
    assert len(r["flows"]["groups"]) == 1
    text, columns = contract.for_core(r)
    assert len(text) < 10_000 and set(columns) == set(contract.COLUMNS) - contract.OPTIONAL_COLUMNS
    assert sum(c.nbytes for c in columns.values()) < 250 * n  # bytes a flow, links included
    # Flow i runs s{i} -> d{i}: its access link, the bottleneck, d{i}'s access link.
    names = contract.names(r["links"]["names"])
    i = 12_345
    assert [names[li] for li in contract.route(r["flows"]["path"], i)] == [f"access_s{i}", "bottleneck", f"access_d{i}"]
    assert [names[li] for li in contract.route(r["flows"]["reverse_path"], i)] == [f"access_d{i}_rev", "bottleneck_rev", f"access_s{i}_rev"]
    nodes = contract.names(r["nodes"])
    assert (nodes[int(r["flows"]["src"][i])], nodes[int(r["flows"]["dst"][i])]) == (f"s{i}", f"d{i}")


def _set(path: str, index: int, value):
    def change(r):
        parent, key = contract._parent(r, path)
        parent[key][index] = value
    return change


def _drop_last(path: str):
    def change(r):
        parent, key = contract._parent(r, path)
        parent[key].pop()
    return change


# (id, change to the JSON form of the udp-mix contract, text the error must contain)
BAD_COLUMNS = [
    ("wrong-length", _drop_last("links.rate_bps"), "links.rate_bps: has 33 values but links.from has 34"),
    ("node-out-of-range", _set("links.from", 3, 1000), "links.from[3]: no such node"),
    ("negative", _set("flows.start_ns", 2, -5), "flows.start_ns[2]: must not be negative"),
    ("qdisc-out-of-range", _set("links.qdisc", 5, 9), "links.qdisc[5]: no such discipline"),
    ("zero-rate", _set("links.rate_bps", 1, 0), "links.rate_bps[1]: must be positive"),
    ("group-out-of-range", _set("flows.group", 0, 7), "flows.group[0]: no such group"),
    ("link-out-of-range", _set("flows.path.links", 0, 99), "flows.path[0]: no link 99"),
    ("offsets-short", _drop_last("flows.reverse_path.offsets"), "flows.reverse_path.offsets: has"),
    ("offsets-falling", _set("flows.path.offsets", 1, 0), "flows.path"),
    ("not-integers", _set("links.delay_ns", 0, 1.5), "links.delay_ns: expected a buffer of integers"),
    ("too-large", _set("links.to", 0, 2**40), "links.to[0]: 1099511627776 is too large"),
    ("names-short", lambda r: r["links"]["names"][0]["names"].pop(), "links.names: names 33, but there are 34"),
    ("no-such-column", lambda r: r["flows"].update(colour=[1]), "colour"),
    ("stops-short", lambda r: r["flows"].update(stop_ns=[5]), "flows.stop_ns: has 1 values"),
]


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad-columns")
    good = json.loads(contract.dumps(aqmlab.Scenario.load(UDP_MIX).resolve()))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    procs = {}
    for name, change, _ in BAD_COLUMNS:
        bad = json.loads(json.dumps(good))
        change(bad)
        p = d / f"{name}.json"
        p.write_text(json.dumps(bad))
        procs[name] = subprocess.Popen(
            [sys.executable, "-m", "aqmlab", "run", str(p), "--out", str(d / name), "-q"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
    return {name: (p.wait(120), *p.communicate()) for name, p in procs.items()}


@pytest.mark.parametrize("name,expected", [(b[0], b[2]) for b in BAD_COLUMNS], ids=[b[0] for b in BAD_COLUMNS])
def test_bad_column_data_exits_2_naming_the_field(refusals, name, expected):
    code, out, err = refusals[name]
    assert code == 2, (out, err)
    assert "Traceback" not in err and err.startswith("error: ")
    assert expected in err, err
