"""Hardening (issue 26): no input crashes aqmlab, runaway runs are refused before they
start, interrupts stop runs and sweeps within a second, and a sweep's workers die
with it. (The store's checks are in test_sweep_store.py, the fuzzer in
test_fuzz_scenarios.py.)"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import aqmlab
from aqmlab import limits
from aqmlab.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
BASE = (ROOT / "scenarios" / "dumbbell.toml").read_text()

UDP = """duration = "60s"
[topology]
kind = "dumbbell"
senders = 1
bottleneck = { rate = "10Mbps", delay = "20ms", qdisc = { kind = "droptail", limit = "60pkt" } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
kind = "udp"
rate = "RATE"
"""


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _aqmlab(*args):
    return [sys.executable, "-m", "aqmlab", *map(str, args)]


# (id, the file's bytes, words the message must hold (the field or the file))
INPUTS = [
    ("binary-garbage", bytes(range(256)) * 40, "not UTF-8 text"),
    ("latin-1", BASE.replace("# The default demo", "# Caf\u00e9").encode("latin-1"), "not UTF-8 text"),
    ("huge-duration", BASE.replace('duration = "60s"', 'duration = "1e30s"').encode(), "duration: a time is too large"),
    ("enormous-number", BASE.replace('delay = "20ms"', 'delay = "1e999999999ms"').encode(), "topology.bottleneck.delay"),
    ("senders-1e12", BASE.replace("senders = 10", "senders = 1e12").encode(), "topology.senders: too large"),
    ("count-1e12", BASE.replace("count = 10", "count = 1e12").encode(), "flows[0].count: too large"),
    ("count-1e8", BASE.replace("count = 10", "count = 1e8").encode(), "flows[0].count: the run would take about"),
    ("nested-100000-lists", ("x = " + "[" * 100_000 + "]" * 100_000 + "\n").encode(), "nested more than"),
    ("nested-100000-tables", ("x = " + "{a=" * 100_000 + "}" * 100_000 + "\n").encode(), "nested more than"),
    ("sample-interval-1ns", BASE.replace('sample_interval = "50ms"', 'sample_interval = "1ns"').encode(),
     "sample_interval: the run would take about"),
    ("duration-1e9s", BASE.replace('duration = "60s"', 'duration = "1000000000s"').encode(),
     "duration: the run would take up to"),
    ("udp-1e15bps", UDP.replace("RATE", "1e15bps").encode(), "flows[0].rate: the run would take up to"),
    ("loss-1", BASE.replace('limit = "60pkt" } }', 'limit = "60pkt" }, loss = 1.0 }').encode(),
     "topology.bottleneck.loss: should be less than 1"),
    ("loss-negative", BASE.replace('limit = "60pkt" } }', 'limit = "60pkt" }, loss = -0.01 }').encode(),
     "topology.bottleneck.loss: should be greater than or equal to 0"),
    ("loss-nan", BASE.replace('limit = "60pkt" } }', 'limit = "60pkt" }, loss = nan }').encode(),
     "topology.bottleneck.loss"),
    ("loss-text", BASE.replace('limit = "60pkt" } }', 'limit = "60pkt" }, loss = "2%" }').encode(),
     "topology.bottleneck.loss"),
]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    d = tmp_path_factory.mktemp("adversary")
    big = d / "too-big.toml"
    with open(big, "wb") as f:
        f.write(b"# " + b"x" * (limits.MAX_FILE_BYTES + 10) + b"\n")
    files = {name: d / f"{name}.toml" for name, _, _ in INPUTS}
    for name, data, _ in INPUTS:
        files[name].write_bytes(data)
    files["too-big"] = big
    procs = {
        name: subprocess.Popen(_aqmlab("validate", p), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=d)
        for name, p in files.items()
    }
    return {name: (p.wait(120), *p.communicate()) for name, p in procs.items()}


@pytest.mark.parametrize("name,expected", [(i[0], i[2]) for i in INPUTS] + [("too-big", "larger than 64 MiB")],
                         ids=[i[0] for i in INPUTS] + ["too-big"])
def test_no_input_crashes_the_cli(outcomes, name, expected):
    code, out, err = outcomes[name]
    assert code == 2, (out, err)
    assert "Traceback" not in err
    assert err.startswith("error: ") and expected in err, err
    if "the run would take" in err:  # the estimate is in the message, and the way past it
        assert "--force" in err


@pytest.mark.parametrize("name,expected", [(i[0], i[2]) for i in INPUTS if i[0] != "binary-garbage"],
                         ids=[i[0] for i in INPUTS if i[0] != "binary-garbage"])
def test_no_input_crashes_the_api(tmp_path, monkeypatch, name, expected):
    data = dict((i[0], i[1]) for i in INPUTS)[name]
    p = tmp_path / f"{name}.toml"
    p.write_bytes(data)
    monkeypatch.setattr(sys.modules["aqmlab.run"], "run_resolved", lambda *a, **k: pytest.fail("the run started"))
    with pytest.raises(UserError) as e:
        aqmlab.run(p)
    assert expected in str(e.value)


def test_deep_nesting_from_python_is_refused():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    scenario = {"duration": "1s", "topology": {"kind": "dumbbell"}, "flows": deep}
    with pytest.raises(UserError, match="nested more than"):
        aqmlab.Scenario.model_validate(scenario)


def test_runaway_run_is_refused_before_it_starts_and_force_runs_it(tmp_path, monkeypatch):
    p = tmp_path / "db.toml"
    p.write_text(BASE.replace('duration = "60s"', 'duration = "3s"').replace('warmup = "10s"', 'warmup = "1s"'))
    est = limits.estimate(aqmlab.Scenario.load(p).resolve())
    monkeypatch.setattr(limits, "EVENT_BUDGET", int(est.events) - 1)
    with pytest.raises(UserError) as e:
        aqmlab.run(p)
    assert e.value.field == "duration" and "--force" in str(e.value)
    assert f"up to {limits._count(est.events)} events" in str(e.value)
    res = aqmlab.run(p, force=True)
    assert res.timing["events"] <= est.events
    # the sweep refuses it before any run, naming the grid point; forced, it runs
    with pytest.raises(UserError, match="the run would take up to"):
        aqmlab.sweep(p, {"tcp.variant": ["reno", "newreno"]}, store=tmp_path / "store")
    assert not list((tmp_path / "store").glob("*")) if (tmp_path / "store").exists() else True
    sw = aqmlab.sweep(p, {"tcp.variant": ["reno"]}, store=tmp_path / "store", force=True, workers=1)
    assert sw.runs["status"].to_list() == ["ok"]


def test_memory_refusal_follows_the_memory_available(tmp_path, monkeypatch):
    p = tmp_path / "db.toml"
    p.write_text(BASE.replace('duration = "60s"', 'duration = "2s"').replace('warmup = "10s"', 'warmup = "1s"'))
    aqmlab.Scenario.load(p)  # fits this machine
    monkeypatch.setattr(limits, "available_memory", lambda: 100 * 2**20)
    with pytest.raises(UserError, match="more than the 80 MiB this machine can give it"):
        aqmlab.Scenario.load(p)
    with limits.forced():
        aqmlab.Scenario.load(p)


@pytest.mark.parametrize("scenario", ["dumbbell.toml", "udp-mix.toml", "short-flows.toml", "graph.toml"])
@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_run_stays_within_its_estimate(scenario, engine):
    s = aqmlab.Scenario.load(ROOT / "scenarios" / scenario)
    s = aqmlab.Scenario.model_validate(s.to_dict() | {"duration": "10s", "warmup": "1s"})
    est = limits.estimate(s.resolve())
    res = aqmlab.run(s, engine=engine)
    assert 0 < res.timing["events"] <= est.events


# ---------------------------------------------------------------------------
# interrupts


def _long_run_file(tmp_path: Path) -> Path:
    p = tmp_path / "long.toml"
    p.write_text(BASE.replace('duration = "60s"', 'duration = "100000s"').replace("trace_cwnd = true", ""))
    return p


def _wait_for(pred, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_quiet_run_stops_within_a_second(tmp_path, sig):
    scen = _long_run_file(tmp_path)
    proc = subprocess.Popen(_aqmlab("run", scen, "--quiet", "--out", tmp_path / "out"), env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(4)  # imported, resolved and well into the run
        assert proc.poll() is None, proc.communicate()
        t0 = time.monotonic()
        proc.send_signal(sig)
        proc.wait(timeout=10)
        elapsed = time.monotonic() - t0
    finally:
        proc.kill()
    _, err = proc.communicate()
    assert elapsed < 1.0, f"stopped {elapsed:.2f} s after the signal"
    assert proc.returncode != 0 and "Traceback" not in err, err


def test_the_api_run_without_progress_stops_on_sigint(tmp_path):
    code = (
        "import aqmlab, sys\n"
        "try:\n"
        f"    aqmlab.run({str(_long_run_file(tmp_path))!r})\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(42)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env=_env(), stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(4)
        assert proc.poll() is None, proc.communicate()
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
        elapsed = time.monotonic() - t0
    finally:
        proc.kill()
    assert proc.returncode == 42, proc.communicate()
    assert elapsed < 1.0, f"stopped {elapsed:.2f} s after SIGINT"


def _descendants(pid: int) -> set[int]:
    """Every process whose ancestry leads to ``pid`` (from /proc)."""
    parent = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - out
        out |= frontier
    return out


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(p)
    return alive


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_stopped_sweep_leaves_no_process_and_no_half_entry(tmp_path, sig):
    scen = _long_run_file(tmp_path)
    store = tmp_path / "store"
    cmd = _aqmlab("sweep", scen, "--vary", "tcp.variant=reno,newreno", "--workers", "2", "--store", store, "-q")
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert _wait_for(lambda: len(list(store.glob(".tmp-*"))) == 2, 60), "the two workers did not start their runs"
        family = _descendants(proc.pid)
        assert len(family) >= 4, family  # the forkserver and two workers, the resource tracker
        t0 = time.monotonic()
        os.kill(proc.pid, sig)
        proc.wait(timeout=10)
        assert _wait_for(lambda: not _alive(family), 5), f"left running: {_alive(family)}"
        elapsed = time.monotonic() - t0
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert elapsed < 2.0, f"the sweep's processes took {elapsed:.2f} s to end"
    assert "Traceback" not in proc.stderr.read()
    if sig != signal.SIGKILL:  # stopped in order: nothing half-written is left
        assert not list(store.glob(".tmp-*"))
    assert not [d for d in store.iterdir() if not d.name.startswith(".")]  # no run was finished


def _spoil_resolved(r: dict, how: str) -> dict:
    if how == "no-links":
        return {"seed": 1}
    if how == "short-column":
        r["links"]["rate_bps"] = r["links"]["rate_bps"][:3]
    elif how == "link-out-of-range":
        r["flows"]["path"]["links"] = [999_999] * len(r["flows"]["path"]["links"])
    elif how == "duration-text":
        r["duration_ns"] = "60s"
    elif how == "negative-interval":
        r["sample_interval_ns"] = -5
    elif how == "runaway":
        r["duration_ns"] = 10**18
    return r


def test_a_damaged_resolved_scenario_is_refused_by_name(tmp_path):
    import json

    good = tmp_path / "good"
    subprocess.run(_aqmlab("run", ROOT / "scenarios" / "dumbbell.toml", "-q", "--out", good), env=_env(), check=True)
    procs = {}
    for how in ("no-links", "short-column", "link-out-of-range", "duration-text", "negative-interval", "runaway"):
        p = tmp_path / f"{how}.json"
        p.write_text(json.dumps(_spoil_resolved(json.loads((good / "resolved.json").read_text()), how)))
        procs[how] = subprocess.Popen(_aqmlab("run", p, "-q", "--out", tmp_path / how), env=_env(),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    errors = {}
    for how, proc in procs.items():
        out, errors[how] = proc.communicate(timeout=120)
        assert proc.returncode == 2, (how, out, errors[how])
        assert errors[how].startswith("error: ") and "Traceback" not in errors[how], (how, errors[how])
    assert "duration: the run would take up to" in errors["runaway"]
    assert "flows.path" in errors["link-out-of-range"]
