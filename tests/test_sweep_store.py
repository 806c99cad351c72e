"""The result store: resuming a killed sweep, half-written entries, failed runs,
and the tables written by `aqmlab sweep`."""

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pytest

import aqmlab
from aqmlab.sweeps import plan
from aqmlab.sweeps.store import DONE, entry_status
from aqmlab.sweeps.store import damage as store_damage

ROOT = Path(__file__).resolve().parents[1]
BASE = (ROOT / "scenarios" / "dumbbell.toml").read_text()


def _scenario(tmp_path, duration="5s", name="db"):
    p = tmp_path / f"{name}.toml"
    p.write_text(
        BASE.replace('duration = "60s"', f'duration = "{duration}"')
        .replace('warmup = "10s"', 'warmup = "1s"')
        .replace('sample_interval = "50ms"', 'sample_interval = "1s"')
        .replace("trace_cwnd = true", "trace_cwnd = false")
    )
    return p


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _done_entries(store: Path) -> dict[str, tuple[int, int, int]]:
    """hash -> (inode of the directory, inode and mtime of its done file)."""
    out = {}
    if not store.exists():
        return out
    for d in store.iterdir():
        if not d.name.startswith(".") and entry_status(d) == "ok":
            st = (d / DONE).stat()
            out[d.name] = (d.stat().st_ino, st.st_ino, st.st_mtime_ns)
    return out


def test_killed_sweep_resumes_without_recomputing(tmp_path):
    scen = _scenario(tmp_path, duration="300s")  # about 0.3 s of work per run
    store, out = tmp_path / "store", tmp_path / "out"
    vary = "topology.bottleneck.qdisc.limit=20pkt:90pkt:10pkt"  # 8 runs
    cmd = [sys.executable, "-m", "aqmlab", "sweep", str(scen), "--vary", vary, "--workers", "1", "--store", str(store), "--out", str(out), "-q"]
    proc = subprocess.Popen(cmd, env=_env(), start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(_done_entries(store)) < 2:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the sweep stored nothing in 60 s"
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its worker processes
        proc.wait(timeout=30)
    before = _done_entries(store)
    assert 2 <= len(before) < 8, f"{len(before)} runs stored before the kill: the test needs some but not all"
    assert not (out / "sweep.parquet").exists()

    res = aqmlab.sweep(scen, {"topology.bottleneck.qdisc.limit": "20pkt:90pkt:10pkt"}, workers=1, store=store)
    after = _done_entries(store)
    for h, ident in before.items():
        assert after[h] == ident, f"entry {h} was rewritten"
    assert res.reused == len(before)
    assert res.computed == 8 - len(before)
    assert len(after) == 8
    runs = res.runs
    assert runs.height == 8 and runs["status"].to_list() == ["ok"] * 8
    assert runs["topology.bottleneck.qdisc.limit"].to_list() == [f"{n}pkt" for n in range(20, 100, 10)]
    assert runs["bottleneck_utilization"].null_count() == 0
    # the resumed table is the table of a sweep that was never stopped
    fresh = aqmlab.sweep(scen, {"topology.bottleneck.qdisc.limit": "20pkt:90pkt:10pkt"}, store=tmp_path / "fresh")
    assert fresh.computed == 8
    assert runs.drop("store_path").equals(fresh.runs.drop("store_path"))


def test_half_written_entry_is_recomputed(tmp_path):
    scen = _scenario(tmp_path)
    store = tmp_path / "store"
    vary = {"tcp.variant": ["reno", "newreno"]}
    _, tasks = plan(scen, vary)
    # a run killed half-way: its directory in place, no completion marker, a bogus row
    half = store / tasks[1].hash
    half.mkdir(parents=True)
    (half / "row.json").write_text(json.dumps({"hash": tasks[1].hash, "status": "ok", "error": None, "summary": {"jain_index": 42.0}}))
    (half / "summary.json").write_text("{")
    # and a leftover temporary directory of another run
    (store / f".tmp-{tasks[0].hash[:16]}-1-deadbeef").mkdir()
    res = aqmlab.sweep(scen, vary, store=store, executor=ThreadPoolExecutor(1))
    assert res.computed == 2 and res.reused == 0
    assert entry_status(half) == "ok"
    assert json.loads((half / "summary.json").read_text())["jain_index"] < 1
    assert res.runs["jain_index"].to_list()[1] < 1
    assert res.runs["status"].to_list() == ["ok", "ok"]
    # and now both are results
    again = aqmlab.sweep(scen, vary, store=store, executor=ThreadPoolExecutor(1))
    assert again.computed == 0 and again.reused == 2
    assert again.runs.equals(res.runs)


def _refuse_seed(monkeypatch, seed: int, message: str):
    """Put in the simulator's place one that refuses every run with ``seed`` (raising
    ``message``) and runs the others; the real one is returned."""
    run_module = sys.modules["aqmlab.run"]
    real = run_module._core()

    class Core:
        validate_qdisc = staticmethod(real.validate_qdisc)
        check = staticmethod(real.check)
        qdisc_catalogue = staticmethod(real.qdisc_catalogue)

        @staticmethod
        def run(text, columns, callback, engine="fast"):
            if json.loads(text)["seed"] == seed:
                raise ValueError(message)
            return real.run(text, columns, callback, engine)

    monkeypatch.setattr(run_module, "_core", lambda: Core)
    return real


def test_failed_run_is_recorded_and_others_complete(tmp_path, monkeypatch):
    scen = _scenario(tmp_path)
    store = tmp_path / "store"
    run_module = sys.modules["aqmlab.run"]
    real = _refuse_seed(monkeypatch, 2, "seed 2 is refused for this test")
    vary = {"topology.bottleneck.qdisc.limit": ["30pkt", "60pkt"]}
    res = aqmlab.sweep(scen, vary, seeds=3, store=store, executor=ThreadPoolExecutor(2))
    runs = res.runs
    assert runs.select("point", "seed").rows() == [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]
    assert runs["status"].to_list() == ["ok", "failed", "ok", "ok", "failed", "ok"]
    failed = runs.filter(pl.col("status") == "failed")
    assert all("seed 2 is refused" in e for e in failed["error"].to_list())
    assert failed["bottleneck_utilization"].null_count() == 2
    assert runs.filter(pl.col("status") == "ok")["bottleneck_utilization"].null_count() == 0
    for p in failed["store_path"].to_list():
        assert "seed 2 is refused" in json.loads((Path(p) / "error.json").read_text())["error"]
        assert entry_status(Path(p)) == "failed"
    s = res.summary
    assert s["runs"].to_list() == [3, 3] and s["failed"].to_list() == [1, 1]
    ok = runs.filter(pl.col("status") == "ok")
    means = ok.group_by("point", maintain_order=True).agg(pl.col("jain_index").mean())["jain_index"].to_list()
    assert s["jain_index_mean"].to_list() == pytest.approx(means)
    # a failed run is not a result: the next sweep tries it again (and it now succeeds)
    monkeypatch.setattr(run_module, "_core", lambda: real)
    again = aqmlab.sweep(scen, vary, seeds=3, store=store, executor=ThreadPoolExecutor(2))
    assert again.computed == 2 and again.reused == 4
    assert again.runs["status"].to_list() == ["ok"] * 6


def test_cli_writes_tables_and_matches_run(tmp_path):
    scen = _scenario(tmp_path)
    store, out = tmp_path / "store", tmp_path / "out"
    cmd = [
        sys.executable, "-m", "aqmlab", "sweep", str(scen),
        "--vary", "topology.bottleneck.qdisc.limit=log:20pkt:80pkt:3",
        "--vary", "tcp.variant=reno,newreno",
        "--seeds", "3", "--workers", "2", "--store", str(store), "--out", str(out),
    ]  # fmt: skip
    p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "18 runs (18 computed, 0 from the store, 0 failed)" in p.stdout
    assert "sweep summary" in p.stdout
    runs = pl.read_parquet(out / "sweep.parquet")
    summary = pl.read_parquet(out / "sweep_summary.parquet")
    assert runs.height == 18 and summary.height == 6
    assert runs["topology.bottleneck.qdisc.limit"].unique(maintain_order=True).to_list() == ["20pkt", "40pkt", "80pkt"]
    assert runs.select("point", "seed").rows() == [(p, s) for p in range(6) for s in (1, 2, 3)]
    assert not any("wall" in c for c in runs.columns + summary.columns)
    # a row is the run `aqmlab run` makes of that grid point and seed
    row = runs.row(7, named=True)  # point 2 (40pkt, reno), seed 2
    assert (row["topology.bottleneck.qdisc.limit"], row["tcp.variant"], row["seed"]) == ("40pkt", "reno", 2)
    s = aqmlab.Scenario.load(scen).to_dict()
    s["topology"]["bottleneck"]["qdisc"]["limit"] = "40pkt"
    direct = aqmlab.run(s, seed=2).summary
    for k in ("bottleneck_utilization", "jain_index", "packets_dropped", "peak_packets_in_flight"):
        assert row[k] == direct[k]
    # the 95% CI: t(0.975, 2) * std / sqrt(3)
    from scipy import stats

    x = runs.filter(pl.col("point") == 2)["jain_index"].to_numpy()
    got = summary.filter(pl.col("point") == 2).row(0, named=True)
    assert got["jain_index_mean"] == pytest.approx(x.mean())
    assert got["jain_index_std"] == pytest.approx(x.std(ddof=1))
    assert got["jain_index_ci95"] == pytest.approx(stats.t.ppf(0.975, 2) * x.std(ddof=1) / 3**0.5)
    # run again: everything from the store, the same tables
    p2 = subprocess.run(cmd[:-2] + ["--out", str(tmp_path / "out2"), "-q"], env=_env(), capture_output=True, text=True, timeout=120)
    assert p2.returncode == 0, p2.stderr
    assert p2.stdout.startswith("18 runs (0 computed, 18 from the store, 0 failed)")  # the last line only
    assert "sweep summary" not in p2.stdout
    assert pl.read_parquet(tmp_path / "out2" / "sweep.parquet").equals(runs)
    assert pl.read_parquet(tmp_path / "out2" / "sweep_summary.parquet").equals(summary)


def test_progress_shows_done_running_failed_and_time_left(tmp_path, monkeypatch):
    import io

    from rich.console import Console

    scen = _scenario(tmp_path)
    _refuse_seed(monkeypatch, 1, "refused")
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=150, color_system=None)
    aqmlab.sweep(scen, {"tcp.variant": ["reno", "newreno"]}, seeds=2, store=tmp_path / "s", executor=ThreadPoolExecutor(1), progress=console)
    text = buf.getvalue()
    assert "sweep db" in text and "running" in text and "elapsed," in text and "left" in text
    assert "4/4 done, 0 running, 2 failed" in text


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _random_bytes(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = os.urandom(64)
    path.write_bytes(bytes(data))


def _edit_value(path: Path) -> None:
    row = json.loads(path.read_text())
    row["summary"]["jain_index"] = 0.999
    path.write_text(json.dumps(row))


def _strip_checksums(path: Path) -> None:
    path.write_text(json.dumps({"status": "ok"}))


#: (file, what is done to it, words of the warning)
DAMAGE = {
    "truncated row.json": ("row.json", _truncate, "row.json"),
    "random bytes in flows.parquet": ("flows.parquet", _random_bytes, "flows.parquet"),
    "truncated summary.json": ("summary.json", _truncate, "summary.json"),
    "hand-edited row.json": ("row.json", _edit_value, "row.json"),
    "a file removed": ("queues.parquet", Path.unlink, "queues.parquet: missing"),
    "a file added": ("notes.txt", lambda p: p.write_text("mine"), "notes.txt"),
    "done without checksums": (DONE, _strip_checksums, "no checksums"),
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_damaged_entry_is_reported_by_name_and_recomputed(tmp_path, capsys, kind):
    scen = _scenario(tmp_path, duration="3s")
    store = tmp_path / "store"
    vary = {"tcp.variant": ["reno", "newreno"]}
    first = aqmlab.sweep(scen, vary, store=store, executor=ThreadPoolExecutor(1))
    assert first.computed == 2
    entry = store / first.runs["hash"][0]
    name, spoil, words = DAMAGE[kind]
    spoil(entry / name)
    capsys.readouterr()

    again = aqmlab.sweep(scen, vary, store=store, executor=ThreadPoolExecutor(1))
    err = capsys.readouterr().err
    assert f"store entry {entry} is damaged" in err and words in err, err
    assert again.computed == 1 and again.reused == 1  # recomputed, not reused, not fatal
    assert again.runs.drop("store_path").equals(first.runs.drop("store_path"))
    assert store_damage(entry) is None  # the entry was written afresh
    third = aqmlab.sweep(scen, vary, store=store, executor=ThreadPoolExecutor(1))
    assert third.computed == 0 and third.reused == 2
    assert capsys.readouterr().err == ""
