"""Local processes and a real Dask scheduler with workers on loopback give the
same tables for the same sweep and seeds (Python API and `aqmlab sweep --cluster`)."""

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import aqmlab

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
BASE = (ROOT / "scenarios" / "dumbbell.toml").read_text()
VARY = {"topology.bottleneck.qdisc.limit": ["20pkt", "60pkt"], "tcp.variant": ["reno", "newreno"]}


@pytest.fixture(scope="module")
def scheduler():
    """A scheduler and two single-threaded worker processes on 127.0.0.1."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close(timeout=30)


def test_local_and_dask_tables_identical(tmp_path, scheduler):
    assert scheduler.startswith("tcp://127.0.0.1:")
    scen = tmp_path / "db.toml"
    scen.write_text(BASE.replace('duration = "60s"', 'duration = "5s"').replace('warmup = "10s"', 'warmup = "1s"'))
    local = aqmlab.sweep(scen, VARY, seeds=2, workers=2, store=tmp_path / "local")
    dask = aqmlab.sweep(scen, VARY, seeds=2, executor=scheduler, store=tmp_path / "dask")
    assert local.computed == dask.computed == 8
    assert local.runs.height == 8 and local.runs["status"].to_list() == ["ok"] * 8
    # the stores are different directories; everything else is equal
    assert local.runs.drop("store_path").equals(dask.runs.drop("store_path"))
    assert local.summary.equals(dask.summary)
    # the Dask workers wrote their entries into the store
    assert all(Path(p).is_relative_to(tmp_path / "dask") and (Path(p) / "done").exists() for p in dask.runs["store_path"])

    # the command line, against the same scheduler, into a third store
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "aqmlab", "sweep", str(scen), "--seeds", "2", "--cluster", scheduler,
           "--store", str(tmp_path / "cli"), "--out", str(tmp_path / "out"), "-q"]  # fmt: skip
    for f, v in VARY.items():
        cmd += ["--vary", f"{f}={','.join(v)}"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    cli = pl.read_parquet(tmp_path / "out" / "sweep.parquet")
    assert cli.drop("store_path").equals(local.runs.drop("store_path"))
    assert pl.read_parquet(tmp_path / "out" / "sweep_summary.parquet").equals(local.summary)


def test_unreachable_scheduler_is_a_user_error(tmp_path):
    scen = tmp_path / "db.toml"
    scen.write_text(BASE.replace('duration = "60s"', 'duration = "5s"').replace('warmup = "10s"', 'warmup = "1s"'))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    env["DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT"] = "2s"
    cmd = [sys.executable, "-m", "aqmlab", "sweep", str(scen), "--vary", "tcp.variant=reno",
           "--cluster", "tcp://127.0.0.1:9", "--store", str(tmp_path / "s"), "-q"]  # fmt: skip
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "--cluster: cannot connect to the Dask scheduler at tcp://127.0.0.1:9" in p.stderr
    assert "Traceback" not in p.stderr
