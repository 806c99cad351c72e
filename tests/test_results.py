"""Results, their files and plots, `aqmlab.run` and `aqmlab run`, against a stand-in
for the compiled core (``aqmlab._core``) that honours its documented interface. The
real simulator is tested in tests/test_sim_*.py."""

import hashlib
import json
import sys
import time
import types
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import aqmlab
from aqmlab import contract
from aqmlab.errors import UserError
from aqmlab.results import Results

ROOT = Path(__file__).resolve().parents[1]
DUMBBELL = ROOT / "scenarios" / "dumbbell.toml"


def as_core_table(columns: dict[str, list]) -> dict[str, tuple]:
    """A table in the core's hand-over form (``crates/py``): numbers as bytes in
    native order, optional ones with a presence mask, text as UTF-8 bytes and offsets."""
    import numpy as np

    def column(values: list) -> tuple:
        known = [v for v in values if v is not None]
        if all(isinstance(v, str) for v in known) and known:
            sizes = [len(v.encode()) for v in values]
            return ("str", (np.cumsum([0, *sizes], dtype=np.int64).tobytes(), "".join(values).encode()))
        if all(isinstance(v, bool) for v in known) and known:
            return ("bool", np.array(values, dtype=np.bool_).tobytes())
        kind = "u64" if all(isinstance(v, int) for v in known) else "f64"
        dtype = np.uint64 if kind == "u64" else np.float64
        data = np.array([0 if v is None else v for v in values], dtype=dtype).tobytes()
        if len(known) == len(values):
            return (kind, data)
        return ("opt_" + kind, data, np.array([v is not None for v in values], dtype=np.bool_).tobytes())

    return {name: column(values) for name, values in columns.items()}


def fake_run(scenario_json, columns, progress=None, engine="fast"):
    """Deterministic results shaped like ``_core.run``'s; wall time varies per call."""
    import numpy as np

    s = json.loads(scenario_json)
    for path, column in columns.items():  # each column back in its place
        *outer, key = path.split(".")
        d = s
        for part in outer:
            d = d[part]
        d[key] = column
    s = contract.as_rows(s)
    if s["seed"] == 666:
        raise ValueError("links[0].rate_bps: must be positive")
    if s["seed"] == 667:
        raise RuntimeError("internal error")
    g = np.random.default_rng(s["seed"])
    dur = s["duration_ns"] / 1e9
    if progress is not None:
        progress(dur / 2)
        progress(dur)
    names = [n["name"] for n in s["nodes"]]
    flows = s["flows"]
    thr = g.uniform(0.5e6, 1.5e6, len(flows))
    monitored = [link["name"] for link in s["links"] if link["monitor"]]
    times = [round(0.1 * k, 1) for k in range(int(dur * 10))]
    ts = {"time_s": [], "metric": [], "entity": [], "value": []}
    for link in monitored:
        for t in times:
            ts["time_s"].append(t)
            ts["metric"].append("queue_packets")
            ts["entity"].append(link)
            ts["value"].append(float(g.integers(0, 60)))
    for t in times:
        ts["time_s"].append(t)
        ts["metric"].append("sum_cwnd")
        ts["entity"].append("")
        ts["value"].append(float(g.integers(50, 120)))
    for i, f in enumerate(flows):
        if f.get("trace_cwnd"):
            for t in times:
                ts["time_s"].append(t)
                ts["metric"].append("cwnd")
                ts["entity"].append(str(i))
                ts["value"].append(float(g.integers(2, 20)))
    return {
        "summary": {
            "seed": s["seed"],
            "duration_s": dur,
            "warmup_s": s["warmup_ns"] / 1e9,
            "events": 12345,
            "wall_time_s": time.perf_counter(),
            "data_packets_delivered": 1000,
            "jain_index": float(thr.sum() ** 2 / (len(thr) * (thr**2).sum())),
            "conservation_ok": True,
            "nan_metric": float("nan"),
        },
        "flows": as_core_table({
            "flow_id": list(range(len(flows))),
            "group": [f["group"] for f in flows],
            "kind": [f["kind"] for f in flows],
            "src": [names[f["route"]["src"]] for f in flows],
            "dst": [names[f["route"]["dst"]] for f in flows],
            "throughput_bps": thr.tolist(),
            "completion_time_s": [None] * len(flows),
        }),
        "queues": as_core_table({
            "link": [link["name"] for link in s["links"]],
            "qdisc": [link["qdisc"]["kind"] for link in s["links"]],
            "utilization": [0.97] * len(s["links"]),
            "loss_rate": [0.01] * len(s["links"]),
            "mean_delay_s": [0.02] * len(s["links"]),
        }),
        "timeseries": as_core_table(ts),
        "histograms": as_core_table({"link": ["bottleneck"] * 3, "bin_low_s": [0.0, 0.01, 0.02], "count": [5, 3, 1]}),
    }


@pytest.fixture
def fake_core(monkeypatch):
    real = sys.modules["aqmlab.run"]._core()
    core = types.ModuleType("aqmlab._core")
    core.run = fake_run
    # the disciplines are the real core's
    core.qdisc_catalogue, core.validate_qdisc = real.qdisc_catalogue, real.validate_qdisc
    monkeypatch.setitem(sys.modules, "aqmlab._core", core)
    monkeypatch.setattr(aqmlab, "_core", core, raising=False)
    return core


def _digest(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())}


def test_run_returns_data_frames(fake_core):
    res = aqmlab.run(DUMBBELL)
    assert isinstance(res, Results)
    assert isinstance(res.flows, pl.DataFrame) and len(res.flows) == 10
    assert set(res.timeseries.columns) == {"time_s", "metric", "entity", "value"}
    assert res.summary["seed"] == 1 and "wall_time_s" not in res.summary
    assert res.timing["wall_time_s"] > 0 and res.timing["total_wall_time_s"] > 0
    assert contract.link_rows(res.scenario)[0]["name"] == "bottleneck"
    assert res.metric("queue_packets", "bottleneck").columns == ["time_s", "entity", "value"]


def test_run_accepts_a_dict_a_scenario_and_a_seed(fake_core):
    s = aqmlab.Scenario.load(DUMBBELL)
    assert aqmlab.run(s.to_dict()).summary["seed"] == 1
    assert aqmlab.run(s, seed=5).summary["seed"] == 5


def test_same_seed_gives_byte_identical_files(fake_core, tmp_path):
    a = aqmlab.run(DUMBBELL).write(tmp_path / "a")
    b = aqmlab.run(DUMBBELL).write(tmp_path / "b")
    c = aqmlab.run(DUMBBELL, seed=2).write(tmp_path / "c")
    da, db, dc = _digest(a), _digest(b), _digest(c)
    assert set(da) == {
        "scenario.toml", "resolved.json", "summary.json", "timing.json",
        "flows.parquet", "queues.parquet", "timeseries.parquet", "histograms.parquet",
    }
    assert da.pop("timing.json") != db.pop("timing.json")  # wall clock lives only here
    assert da == db
    dc.pop("timing.json")
    assert {k for k in da if da[k] != dc[k]} >= {"scenario.toml", "resolved.json", "summary.json", "flows.parquet"}


def test_written_files_read_back(fake_core, tmp_path):
    res = aqmlab.run(DUMBBELL)
    out = res.write(tmp_path / "r")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["nan_metric"] is None and list(summary) == sorted(summary)
    back = Results.read(out)
    assert back.flows.equals(res.flows) and back.timeseries.equals(res.timeseries)
    assert back.summary == json.loads(json.dumps(summary))
    assert back.source.to_dict() == res.source.to_dict()
    assert aqmlab.Scenario.load(out / "scenario.toml").resolved_json() == res.source.resolved_json()


def test_plots_are_written(fake_core, tmp_path):
    from aqmlab.plots import plot_all

    res = aqmlab.run(DUMBBELL)
    made = plot_all(res, tmp_path)
    assert sorted(p.name for p in made) == ["queue.png", "throughput.png", "windows.png"]
    for p in made:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


def test_plots_skip_what_has_no_data(tmp_path):
    from aqmlab.plots import plot_all

    res = Results({"summary": {}, "flows": {}, "timeseries": {}}, {"warmup_ns": 0, "links": []})
    assert plot_all(res, tmp_path) == []


def test_progress_callable_receives_simulated_seconds(fake_core):
    seen = []
    aqmlab.run(DUMBBELL, progress=seen.append)
    assert seen == [30.0, 60.0]


def test_simulator_refusals_become_user_errors(fake_core):
    with pytest.raises(UserError, match=r"links\[0\]\.rate_bps"):
        aqmlab.run(DUMBBELL, seed=666)
    with pytest.raises(RuntimeError):
        aqmlab.run(DUMBBELL, seed=667)


def test_missing_core_is_a_user_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "aqmlab._core", None)  # makes the import fail
    monkeypatch.delattr(aqmlab, "_core", raising=False)
    with pytest.raises(UserError, match="not built"):
        aqmlab.run(DUMBBELL)


def test_cli_run_writes_results_and_plots(fake_core, tmp_path, monkeypatch):
    from aqmlab.cli import app

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["run", str(DUMBBELL), "--plot", "--seed", "3"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "results" / "dumbbell"
    assert (out / "queue.png").exists() and (out / "flows.parquet").exists()
    assert json.loads((out / "summary.json").read_text())["seed"] == 3
    assert "queue bottleneck: utilization 97.00%" in r.output and "Jain fairness index" in r.output
    r = CliRunner().invoke(app, ["run", str(DUMBBELL), "--out", "elsewhere", "--quiet"])
    assert r.exit_code == 0 and r.output == "results: elsewhere/\n" and (tmp_path / "elsewhere" / "summary.json").exists()


def test_cli_main_turns_user_errors_into_exit_2(fake_core, capsys):
    from aqmlab.cli import main

    with pytest.raises(SystemExit) as e:
        main(["run", str(DUMBBELL), "--seed", "666", "--quiet"])
    assert e.value.code == 2
    assert "links[0].rate_bps" in capsys.readouterr().err


def test_core_columns_decode_to_their_kinds_types_whatever_the_values():
    import numpy as np

    from aqmlab.results import _frame

    codes = np.array([1, 0, 1], dtype=np.uint32).tobytes()
    frame = _frame({
        **as_core_table({"count": [3, 2**40, 0], "rate": [0.5, float("nan"), 2.0], "on": [True, False, True]}),
        "size": as_core_table({"size": [1000, None, 7]})["size"],
        "never": as_core_table({"never": [None, None, None]})["never"],
        "kind": ("cat", as_core_table({"k": ["tcp", "udp"]})["k"][1], codes),
    })
    assert dict(zip(frame.columns, map(str, frame.dtypes))) == {
        "count": "Int64", "rate": "Float64", "on": "Boolean", "size": "Int64", "never": "Int64", "kind": "String",
    }
    assert frame["count"].to_list() == [3, 2**40, 0]
    assert frame["size"].to_list() == [1000, None, 7]
    assert frame["kind"].to_list() == ["udp", "tcp", "udp"]
    assert np.isnan(frame["rate"][1]) and frame["rate"].null_count() == 0  # NaN is a value, not a missing one
    assert frame["never"].null_count() == 3
    # No rows, or no value in any row: the schema is still the kind's.
    assert _frame({"empty": ("f64", b"")})["empty"].dtype == pl.Float64
    assert _frame({"empty": ("str", (np.zeros(1, dtype=np.int64).tobytes(), b""))})["empty"].dtype == pl.String
    assert _frame({"empty": ("cat", (np.zeros(1, dtype=np.int64).tobytes(), b""), b"")})["empty"].dtype == pl.String
