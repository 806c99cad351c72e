"""The emulator end to end: real Linux TCP and UDP (iperf3) in network namespaces
through aqmlab's router (crates/router). Each run takes its scenario's duration in
real time (3 s here); they need root, /dev/net/tun, iperf3 and the router built
(`make setup`), and are skipped, saying which is missing, without them."""

from __future__ import annotations

import math

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from aqmlab.emulate import netns
from aqmlab.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
#: Seconds of real time each emulated run takes (plus about a second).
DURATION = 2.5


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if not os.path.exists("/dev/net/tun"):
        return "needs /dev/net/tun"
    if shutil.which("iperf3") is None:
        return "needs iperf3 (make system)"
    try:
        from aqmlab.emulate.session import router_binary

        router_binary()
    except UserError as e:
        return str(e)
    return None


needs_machine = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def scenario(qdisc: dict[str, Any], flows: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A one-sender dumbbell: 4 Mb/s, 10 ms bottleneck, 1 ms access links, DURATION seconds."""
    topology = {
        "kind": "dumbbell",
        "senders": extra.pop("senders", 1),
        "bottleneck": {"rate": "4Mbps", "delay": "10ms", "qdisc": qdisc},
        "access": {"rate": "100Mbps", "delay": extra.pop("access_delay", "1ms")},
    }
    return {
        "name": "emulated", "duration": f"{DURATION}s", "warmup": "0.5s", "sample_interval": "100ms",
        "tcp": {"variant": "cubic", "packet_size": "1500B", **extra.pop("tcp", {})},
        "topology": topology, "flows": flows, **extra,
    }


def ours(pid: int | None = None) -> list[str]:
    """Namespaces of the emulator runs of process ``pid`` (this one's by default): other
    runs on the machine (another engineer's) come and go meanwhile."""
    prefix = f"{netns.PREFIX}{pid or os.getpid()}x"
    return [n for n in netns.listed() if n.startswith(prefix)]


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, with their command lines."""
    out = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if f"\nPPid:\t{pid}\n" in status.read_text():
                out.append(int(status.parent.name))
        except OSError:
            pass
    return out


def alive(pids: list[int]) -> list[int]:
    return [p for p in pids if Path(f"/proc/{p}").exists() and "\nState:\tZ" not in _status(p)]


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""


@pytest.fixture
def emulate():
    from aqmlab.emulate import emulate as run

    yield run
    assert not ours(), "a run left namespaces behind"


@needs_machine
def test_a_tcp_flow_through_droptail_fills_the_link(emulate, tmp_path):
    res = emulate(scenario({"kind": "droptail", "limit": "30pkt"}, [{"kind": "tcp", "trace_cwnd": True}]), tmp_path)
    rate = 4e6 * (1500 - 52) / 1500  # the link's payload rate (IPv4, TCP, timestamps)
    flow = res.flows.row(0, named=True)
    assert 0.9 * rate < flow["throughput_bps"] <= 1.005 * rate
    assert res.summary["bottleneck_utilization"] > 0.95
    # Departures count when a packet starts on the transmitter: one may straddle the window's end.
    assert res.summary["bottleneck_utilization"] <= 1 + 1500 * 8 / 4e6 / (DURATION - 0.5 - 0.1)
    assert res.queues.filter(res.queues["link"] == "bottleneck")["peak_packets"][0] <= 30
    # The kernel's window, every 0.1 s: above the path's BDP (22 ms at 4 Mb/s: 7 packets) when the link is full.
    cwnd = res.metric("cwnd", "0")
    assert len(cwnd) >= 20 and cwnd["value"].max() > 7
    res.write(tmp_path / "out")
    for name in ("summary.json", "flows.parquet", "queues.parquet", "timeseries.parquet"):
        assert (tmp_path / "out" / name).exists()


@needs_machine
def test_a_udp_flow_above_the_rate_gets_the_rate_and_the_rest_is_dropped(emulate, tmp_path):
    res = emulate(scenario({"kind": "droptail", "limit": "20pkt"}, [{"kind": "udp", "rate": "8Mbps", "packet_size": "1000B"}]), tmp_path)
    rate = 4e6 * (1000 - 28) / 1000
    flow = res.flows.row(0, named=True)
    assert flow["throughput_bps"] == pytest.approx(rate, rel=0.01)
    q = res.queues.filter(res.queues["link"] == "bottleneck").row(0, named=True)
    assert q["drops_overflow"] == q["drops"] > 0
    assert q["loss_rate"] == pytest.approx(0.5, abs=0.05)  # half of 8 Mb/s is dropped
    assert q["peak_packets"] == 20  # a buffer of B packets holds B packets
    assert q["arrivals"] == q["departures"] + q["drops"] + q["backlog_packets"]


@needs_machine
def test_a_lossy_bottleneck_loses_its_share_of_a_udp_flow(emulate, tmp_path):
    """The scenario's ``loss`` reaches the router's link: it loses p of the packets it
    sends, within binomial bounds, counted apart from its queue's drops."""
    p = 0.1
    s = scenario({"kind": "droptail", "limit": "20pkt"}, [{"kind": "udp", "rate": "2Mbps", "packet_size": "1000B"}])
    s["topology"]["bottleneck"]["loss"] = p
    res = emulate(s, tmp_path)
    q = res.queues.filter(res.queues["link"] == "bottleneck").row(0, named=True)
    trials = q["departures"]  # each packet sent whole was a trial (the last one may still be on the wire)
    assert trials > 500
    assert abs(q["lost"] - trials * p) < 4 * math.sqrt(trials * p * (1 - p)) + 1, (q["lost"], trials)
    assert q["drops"] == 0 and res.summary["packets_lost"] == q["lost"]
    lossless = res.queues.filter(res.queues["link"] != "bottleneck")
    assert lossless["lost"].sum() == 0
    flow = res.flows.row(0, named=True)
    # about 500 packets measured: 4 binomial s.d. of the delivered share, sqrt(p / (1 - p) / 500)
    assert flow["throughput_bps"] == pytest.approx(2e6 * (1000 - 28) / 1000 * (1 - p), rel=0.06)


@needs_machine
def test_qsdrr_shares_the_link_between_two_tcp_flows_of_different_rtts(emulate, tmp_path):
    # A queue per flow (SFQ's 16 buckets would put both flows in one, one run in 16).
    flows = [{"kind": "tcp", "count": 2, "src": ["s0", "s1"], "dst": ["d0", "d1"]}]
    s = scenario({"kind": "qsdrr", "limit": "40pkt"}, flows, senders=2, access_delay=["1ms", "25ms"])
    res = emulate(s, tmp_path)
    thr = res.flows["throughput_bps"].to_list()
    assert min(thr) > 0.35 * sum(thr), thr
    assert res.summary["jain_index"] > 0.9
    assert res.summary["bottleneck_utilization"] > 0.9


@needs_machine
def test_red_with_ecn_marks_ce_and_the_flow_keeps_its_rate(emulate, tmp_path):
    red = {"kind": "red", "limit": "60pkt", "min_th": 3, "max_th": 12, "max_p": 0.1, "w_q": 0.02, "ecn": True}
    res = emulate(scenario(red, [{"kind": "tcp"}], tcp={"ecn": True}), tmp_path)
    q = res.queues.filter(res.queues["link"] == "bottleneck").row(0, named=True)
    assert q["marks"] > 0
    report = (tmp_path / "emulator" / "report.json").read_text()
    import json

    marked = sum(f["marked"] for f in json.loads(report)["flows"] if f["proto"] == 6)
    assert marked > 0, "packets reached the receiver with CE set"
    # The receiver's kernel took the marked packets (their checksums are right): the flow kept the link busy.
    assert res.summary["bottleneck_utilization"] > 0.8


@needs_machine
def test_the_rtt_is_the_configured_propagation_delay(emulate, tmp_path):
    udp = {"kind": "udp", "rate": "100kbps", "packet_size": "200B", "jitter": 0.5, "tagged": True}
    res = emulate(scenario({"kind": "droptail", "limit": "30pkt"}, [udp, {"kind": "tcp", "size": "20kB"}]), tmp_path)
    # Two ways over 1 ms + 10 ms + 0 ms, plus serialization of a 1500-byte packet at 4 Mb/s and 100 Mb/s.
    propagation = 2 * 0.011
    tcp = res.flows.filter(res.flows["kind"] == "tcp").row(0, named=True)
    assert propagation <= tcp["base_rtt_s"] < propagation + 0.006
    udp = res.flows.filter(res.flows["kind"] == "udp").row(0, named=True)
    # One way: the propagation delay and the serialization on three links (100, 4, 100 Mb/s).
    one_way = 0.011 + 200 * 8 * (2 / 100e6 + 1 / 4e6)
    assert 0.011 < udp["delay_min_s"] <= one_way
    assert udp["delay_mean_s"] < one_way + 0.001
    # aqmlab-udp's CBR: 100 kb/s of 200-byte packets for the run, its gaps jittered by half
    # (uniform in [0.5, 1.5] gaps): over n gaps the count strays by sqrt(n) x 0.5/sqrt(3)
    # packets (one s.d.), a packet above or below; within four of them.
    expected = DURATION * 100e3 / (200 * 8)
    assert abs(udp["packets_sent"] - expected) <= 4 * math.sqrt(expected) * 0.5 / math.sqrt(3) + 1
    # The router's RFC 3550 jitter: what the network added (a 20 kB TCP transfer crossed it).
    assert 0 <= udp["jitter_s"] < 0.005
    # The router kept its schedule: packets left it within a millisecond of it at the median.
    assert res.timing["router_lateness_p50_s"] < 1e-3


@needs_machine
def test_an_on_off_udp_flow_sends_in_its_on_periods_as_the_simulators_does(emulate, tmp_path):
    from aqmlab.run import run

    # On for 0.3 s at 2 Mb/s, off for 0.3 s: bursts of 75 packets of 1000 B, 600 ms apart;
    # the run ends in an off period, so that both engines send four whole bursts.
    onoff = {"kind": "udp", "rate": "2Mbps", "packet_size": "1000B", "model": "onoff", "on": "0.3s", "off": "0.3s"}
    s = scenario({"kind": "droptail", "limit": "30pkt"}, [onoff])
    s["duration"] = "2.2s"
    res = emulate(s, tmp_path)
    sim = run(s)
    sent, simulated = res.flows["packets_sent"][0], sim.flows["packets_sent"][0]
    assert simulated == 4 * 75 and abs(sent - simulated) <= 2, (sent, simulated)
    # Its rate over time (samples every 0.1 s): 2 Mb/s of payload in the middle of the
    # on periods, nothing at the end of the off periods (a late start shifts both by ms).
    thr = res.metric("throughput_bps", "0").with_columns(k=(pl.col("time_s") * 10).round().cast(pl.Int64) % 6)
    on, off = thr.filter(pl.col("k") == 2)["value"], thr.filter(pl.col("k") == 5)["value"]
    assert len(on) >= 3 and len(off) >= 3
    assert on.min() > 0.9 * 2e6 * 972 / 1000 and off.max() == 0, (on.to_list(), off.to_list())
    # Any of the scenario's distributions: exponential on periods, Pareto off periods.
    s["flows"][0] |= {"on": {"dist": "exponential", "mean": "0.2s"}, "off": {"dist": "pareto", "mean": "0.2s", "shape": 1.5}}
    s["duration"] = "1.5s"
    assert emulate(s, tmp_path / "random").flows["packets_sent"][0] > 0


def test_fields_the_emulator_cannot_honour_are_refused_by_name(tmp_path):
    from aqmlab.emulate import emulate
    from aqmlab.tomlout import dumps

    cases = {
        "ties": {"ties": "numbered"},
        "tcp.delayed_ack": {"tcp": {"packet_size": "1500B", "delayed_ack": True}},
        "tcp.variant": {"tcp": {"variant": "tahoe"}},
        "flows[0].tcp.dupack_threshold": {"flows": [{"kind": "tcp", "tcp": {"dupack_threshold": 4}}]},
        "flows[0].kind": {"flows": [{"kind": "tcp_arrivals", "rate": "5/s", "size": "10pkt"}]},
    }
    for field, change in cases.items():
        s = {**scenario({"kind": "droptail", "limit": "30pkt"}, [{"kind": "tcp"}]), **change}
        with pytest.raises(UserError) as e:
            emulate(s, tmp_path / "o")
        assert e.value.exit_code == 2 and field in str(e.value), (field, str(e.value))
    # The command line says the same and exits with status 2, before creating anything.
    path = tmp_path / "s.toml"
    path.write_text(dumps({**scenario({"kind": "droptail", "limit": "30pkt"}, [{"kind": "tcp"}]), "ties": "numbered"}))
    done = subprocess.run([sys.executable, "-m", "aqmlab", "emulate", str(path), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "ties" in done.stderr, done.stderr
    assert not (tmp_path / "o").exists()


def test_what_the_machine_lacks_is_named(monkeypatch):
    from aqmlab.emulate import session

    with monkeypatch.context() as m:
        m.setattr(os, "geteuid", lambda: 1000)
        with pytest.raises(UserError) as e:
            session.check_machine()
        assert e.value.exit_code == 2 and e.value.field == "root"
    with monkeypatch.context() as m:
        m.setattr(os.path, "exists", lambda p: p != "/dev/net/tun")
        with pytest.raises(UserError) as e:
            session.check_machine()
        assert e.value.field == "/dev/net/tun"
    with monkeypatch.context() as m:
        m.setattr(session.shutil, "which", lambda p: None if p == "iperf3" else "/usr/bin/" + p)
        with pytest.raises(UserError) as e:
            session.check_machine()
        assert e.value.field == "iperf3" and "apt-get install iperf3" in str(e.value)
    with monkeypatch.context() as m:
        m.setattr(session.os, "access", lambda *a: False)
        m.setattr(session.shutil, "which", lambda p: None)
        with pytest.raises(UserError) as e:
            session.router_binary()
        assert e.value.field == "aqmlab-router" and "cargo build" in str(e.value)


def _start_cli(tmp_path: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """A 20-second run of the command line, once its applications run; with the
    processes it started (router, servers, clients)."""
    from aqmlab.tomlout import dumps

    s = scenario({"kind": "droptail", "limit": "30pkt"}, [{"kind": "tcp"}, {"kind": "udp", "rate": "1Mbps"}])
    s["duration"] = "20s"
    path = tmp_path / "long.toml"
    path.write_text(dumps(s))
    p = subprocess.Popen([sys.executable, "-m", "aqmlab", "emulate", str(path), "--out", str(tmp_path / "o")],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 15
    started: list[int] = []
    while time.monotonic() < deadline and len(started) < 5:  # router, 2 servers, 2 clients
        time.sleep(0.1)
        started = children(p.pid)
    assert ours(p.pid), "the run created its namespaces"
    return p, started


@needs_machine
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_leaves_nothing_behind(tmp_path, sig):
    p, started = _start_cli(tmp_path)
    assert len(started) >= 5, started
    p.send_signal(sig)
    p.wait(timeout=20)
    assert p.returncode != 0
    assert not ours(p.pid)
    assert not alive(started)


@needs_machine
def test_a_killed_run_leaves_names_the_next_run_removes(tmp_path):
    p, started = _start_cli(tmp_path)
    p.kill()
    p.wait(timeout=10)
    left = set(ours(p.pid))
    assert left, "SIGKILL leaves the namespaces"
    removed = netns.remove_stale()
    assert left <= set(removed)
    assert not ours(p.pid)
    deadline = time.monotonic() + 5
    while alive(started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(started)


@needs_machine
def test_a_sweep_runs_on_the_emulator_and_stores_its_runs_apart(tmp_path):
    from aqmlab.sweeps import sweep
    from aqmlab.sweeps.store import run_hash

    s = scenario({"kind": "droptail", "limit": "20pkt"}, [{"kind": "udp", "rate": "6Mbps", "packet_size": "1000B"}])
    s["duration"] = "1.5s"
    result = sweep(s, {"topology.bottleneck.rate": ["3Mbps"]}, engine="emulator", store=tmp_path / "store")
    row = result.runs.to_dicts()[0]
    assert row["status"] == "ok", row["error"]
    assert row["goodput_bps"] == pytest.approx(3e6 * 0.972, rel=0.02)
    assert row["engine"] == "emulator"
    # Stored under the emulator's hash, never where the simulator's run of the same scenario goes.
    from aqmlab.scenario import Scenario

    s["topology"]["bottleneck"]["rate"] = "3Mbps"
    assert not (tmp_path / "store" / run_hash(Scenario.model_validate(s).resolve())).exists()
    assert Path(row["store_path"]).exists()


def test_an_unknown_engine_is_refused():
    from aqmlab.sweeps import Runner

    with pytest.raises(UserError) as e:
        Runner(engine="qemu")
    assert e.value.field == "--engine"


@needs_machine
def test_the_kernel_is_asked_which_qdiscs_it_has():
    from aqmlab.emulate import kernel

    found = kernel.available()
    assert not ours()
    for kind in ("pfifo", "bfifo", "htb", "tbf"):  # the baseline's needs, on any Linux
        assert found[kind] is None, (kind, found[kind])
    # Every kind is answered: accepted, or refused with the kernel's words.
    assert set(found) == set(kernel.KINDS)
    assert all(v is None or v for v in found.values())


@needs_machine
def test_our_droptail_and_the_kernels_pfifo_give_the_same_rate_loss_and_queue(emulate, tmp_path):
    # One flow: two periodic flows in a FIFO share by the phase of their arrivals,
    # which a few microseconds change (the phase effect), in the kernel as in ours.
    s = scenario({"kind": "droptail", "limit": "20pkt"}, [{"kind": "udp", "rate": "6Mbps", "packet_size": "1000B"}])
    s["duration"] = "2s"
    ours_ = emulate(s, tmp_path / "ours")
    q0 = ours_.queues.filter(ours_.queues["link"] == "bottleneck").row(0, named=True)
    assert q0["utilization"] == pytest.approx(1.0, abs=0.005)
    for shaper in ("tbf", "htb"):
        kernels = emulate(s, tmp_path / shaper, baseline="kernel", shaper=shaper)
        q = kernels.queues.filter(kernels.queues["link"] == "bottleneck").row(0, named=True)
        assert q["qdisc"] == f"kernel:{shaper}+pfifo"
        # The kernel's own counters (what its shaper sent between two readings), not the router's view.
        assert q["utilization"] == pytest.approx(1.0, abs=0.02), shaper
        # A third of 6 Mb/s is dropped, in the kernel's window as in ours (and over the whole run).
        assert q["loss_rate"] == pytest.approx(q0["loss_rate"], abs=0.02), shaper
        assert q["drops"] / q["arrivals"] == pytest.approx(q0["drops"] / q0["arrivals"], abs=0.02), shaper
        assert kernels.flows["throughput_bps"][0] == pytest.approx(ours_.flows["throughput_bps"][0], rel=0.02), shaper
        # The queue stays full: a packet waits for the 20 ahead of it, in both.
        assert q["mean_delay_s"] == pytest.approx(q0["mean_delay_s"], rel=0.1), shaper
        # The kernel queue's length over time, read every sample interval, as ours is sampled.
        length, mine = kernels.metric("queue_packets", "bottleneck"), ours_.metric("queue_packets", "bottleneck")
        assert abs(len(length) - len(mine)) <= 2, (len(length), len(mine))
        after_warmup = length.filter(pl.col("time_s") > 0.5)["value"]
        assert after_warmup.max() <= 20 and after_warmup.median() >= 15, shaper
        assert kernels.metric("queue_bytes", "bottleneck")["value"].max() <= 20 * 1000
        busy = kernels.metric("link_utilization", "bottleneck").filter(pl.col("time_s") > 0.5)["value"]
        assert busy.mean() == pytest.approx(1.0, abs=0.03), shaper


def test_the_kernel_baseline_refuses_a_discipline_linux_has_no_qdisc_for(tmp_path):
    from aqmlab.emulate import emulate as run

    with pytest.raises(UserError) as e:
        run(scenario({"kind": "cbt"}, [{"kind": "tcp"}]), tmp_path, baseline="kernel")
    assert e.value.field == "topology.bottleneck.qdisc.kind" and "cbt" in str(e.value)


def _spec(qdisc: dict[str, Any]) -> dict[str, Any]:
    """The resolved spec of a bottleneck discipline (its defaults filled in)."""
    from aqmlab.scenario import Scenario

    r = Scenario.coerce(scenario(qdisc, [{"kind": "tcp"}])).resolve()
    return r["links"]["qdiscs"][int(r["links"]["qdisc"][list(r["links"]["monitor"]).index(True)])]


#: Disciplines with a kernel qdisc, with defaults and with parameters set.
MAPPED = [
    {"kind": "droptail", "limit": "30pkt"}, {"kind": "droptail", "limit": "45000B"},
    {"kind": "red"}, {"kind": "red", "limit": "100pkt", "min_th": 10, "max_th": 30, "w_q": 0.02, "ecn": True},
    {"kind": "red_linux"}, {"kind": "choke"}, {"kind": "sfq", "limit": "100pkt", "buckets": 32},
    {"kind": "fq_codel"}, {"kind": "codel", "ecn": True}, {"kind": "pie"},
    {"kind": "pie", "alpha": 0.25, "estimator": "timestamp"}, {"kind": "sfb"},
    {"kind": "sfb", "rehash_interval": "600s", "warmup_time": "60s", "penalty_rate": 10},
]


def test_our_disciplines_translate_to_the_kernels_parameters():
    from aqmlab.emulate.kernel_qdiscs import ewma_log, translate

    def args(q: dict[str, Any]) -> list[str]:
        return translate(_spec(q), 4_000_000, 1500, "q").args

    assert args({"kind": "droptail", "limit": "30pkt"}) == ["pfifo", "limit", "30"]
    assert args({"kind": "droptail", "limit": "45000B"}) == ["bfifo", "limit", "45000"]
    red = translate(_spec({"kind": "red"}), 4_000_000, 1500, "q")
    a = dict(zip(red.args[1::2], red.args[2::2]))
    # FJ93's defaults: 5 and 15 packets of the MTU, 60 packets of buffer, w_q 0.002 as 2^-9.
    assert (a["min"], a["max"], a["limit"], a["probability"], a["bandwidth"]) == ("7500", "22500", "90000", "0.02", "4000000bit")
    assert ewma_log(7500, int(a["burst"]), 1500) == 9 and ewma_log(7500, int(a["burst"]) - 1, 1500) != 9
    assert any(u.startswith("w_q: 0.002 is 2^-9") for u in red.untranslated)
    assert args({"kind": "red_linux"})[:11] == ["red", "limit", "20000", "min", "5000", "max", "15000", "avpkt", "1000", "burst", "8"]
    assert args({"kind": "pie"})[:11] == ["pie", "limit", "1000", "target", "15000us", "tupdate", "15000us", "alpha", "2", "beta", "20"]
    assert args({"kind": "pie"})[-2:] == ["noecn", "dq_rate_estimator"]
    assert args({"kind": "fq_codel"})[-1] == "ecn" and "5000us" in args({"kind": "fq_codel"})
    assert args({"kind": "sfq", "limit": "100pkt", "buckets": 32})[:5] == ["sfq", "limit", "100", "divisor", "32"]
    sfb = dict(zip(args({"kind": "sfb"})[1::2], args({"kind": "sfb"})[2::2]))
    assert (sfb["limit"], sfb["target"], sfb["increment"], sfb["rehash"]) == ("100", "5", "0.0025", "86400000")
    assert args({"kind": "choke"})[:3] == ["choke", "limit", "300"]


def test_what_the_kernels_qdisc_cannot_take_is_refused_by_field():
    from aqmlab.emulate.kernel_qdiscs import translate

    cases = {
        "q.gentle": {"kind": "red", "gentle": True},
        "q.wait": {"kind": "red", "wait": True},
        "q.alpha": {"kind": "pie", "alpha": 0.1},
        "q.max_burst": {"kind": "pie", "max_burst": "100ms"},
        "q.buckets": {"kind": "sfq", "limit": "100pkt", "buckets": 10},
        "q.limit": {"kind": "codel", "limit": "100000B"},
        "q.kind": {"kind": "drr", "limit": "100pkt"},
    }
    for field, q in cases.items():
        with pytest.raises(UserError) as e:
            translate(_spec(q), 4_000_000, 1500, "q")
        assert e.value.field == field and e.value.exit_code == 2, (field, str(e.value))


@needs_machine
def test_tc_parses_every_translation_and_the_kernel_answers_for_its_kinds():
    from aqmlab.emulate import kernel
    from aqmlab.emulate.kernel_qdiscs import translate

    with netns.Namespaces() as spaces:
        ns = spaces.create("tcparse")
        for q in MAPPED:
            queue = translate(_spec(q), 4_000_000, 1500, "q")
            done = subprocess.run(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", *queue.args],
                                  capture_output=True, text=True, timeout=10)
            # tc parses the arguments itself, then the kernel accepts the qdisc or does not have it.
            assert done.returncode == 0 or "Specified qdisc kind is unknown" in done.stderr, (queue.args, done.stderr)
            subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", "lo", "root"], capture_output=True, timeout=10)
    assert kernel.available(("pfifo", "red"))["pfifo"] is None


@needs_machine
def test_a_qdisc_the_kernel_lacks_is_refused_by_name_with_status_2(tmp_path):
    from aqmlab.emulate import kernel
    from aqmlab.tomlout import dumps

    found = kernel.available()
    missing = [q for q in MAPPED if translate_kind(q) and found.get(translate_kind(q)) is not None]
    if not missing:
        pytest.skip("this kernel has every qdisc the baseline maps")
    q = missing[0]
    path = tmp_path / "s.toml"
    path.write_text(dumps(scenario(q, [{"kind": "tcp"}])))
    cli = subprocess.Popen([sys.executable, "-m", "aqmlab", "emulate", str(path), "--out", str(tmp_path / "o"),
                            "--baseline", "kernel"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    _, err = cli.communicate(timeout=60)
    assert cli.returncode == 2, err
    assert f"no {translate_kind(q)} qdisc" in err and "topology.bottleneck.qdisc.kind" in err, err
    assert not ours(cli.pid)


def translate_kind(q: dict[str, Any]) -> str:
    from aqmlab.emulate.kernel_qdiscs import translate

    return translate(_spec(q), 4_000_000, 1500, "q").kind


def test_unknown_emulator_options_are_refused_by_name(tmp_path):
    from aqmlab.emulate import emulate as run

    s = scenario({"kind": "droptail", "limit": "30pkt"}, [{"kind": "tcp"}])
    for kwargs, field in (({"flow_key": "ports"}, "--flow-key"), ({"baseline": "bsd"}, "--baseline"), ({"shaper": "cbq"}, "--shaper")):
        with pytest.raises(UserError) as e:
            run(s, tmp_path, **kwargs)
        assert e.value.field == field


def test_the_kernel_queues_counters_are_read_from_tc_and_give_the_rate_between_readings():
    from aqmlab.emulate import collect, kernel

    tc = ('[{"kind":"tbf","handle":"1:","root":true,"bytes":5000,"packets":5,"drops":1,"backlog":2000,"qlen":2},'
          '{"kind":"pfifo","handle":"10:","parent":"1:1","bytes":5000,"packets":5,"drops":1,"backlog":2000,"qlen":2}]')
    c = kernel.counters(tc)
    assert c == {"kind": "tbf+pfifo", "drops": 1, "backlog_packets": 2, "backlog_bytes": 2000,
                 "sent_bytes": 5000, "sent_packets": 5, "overlimits": None}
    assert kernel.counters("not json") == {}

    class FakeClock:
        warmup, duration, t0_ns = 1.0, 3.0, 10**9

        def of_monotonic(self, ns):
            return (np.asarray(ns, dtype=np.int64) - self.t0_ns) / 1e9

    # Readings every 0.5 s of a link sending 1 Mb/s (62,500 bytes each), the one at the
    # end of the warm-up read 10 ms late: its bytes and its time are both late.
    times = [0.0, 0.5, 1.01, 1.5, 2.0, 2.5, 3.0]
    readings = [{"time_ns": int(10**9 + t * 1e9), "spread_ns": 0, "backlog_packets": 3, "backlog_bytes": 3000,
                 "drops": int(10 * t), "sent_bytes": int(125_000 * t), "sent_packets": int(125 * t)} for t in times]
    r = collect.KernelReadings(readings, FakeClock())
    assert r.window() == (2, 6)
    assert r.rate_bps(*r.window()) == pytest.approx(1e6, rel=1e-4)
    assert r.arrivals(2, 6) == (375 - 126) + (30 - 10)
    assert r.in_run().tolist() == [False, True, True, True, True, True, True]


@needs_machine
def test_hosts_beyond_the_namespace_limit_share_namespaces_and_keep_their_own_round_trips(emulate, tmp_path, monkeypatch):
    """Six senders and a receiver with room for three namespaces: the senders pack
    three to a namespace (several addresses on one device, several iperf3 clients),
    and each flow keeps its own sender's access link (the router tells the hosts of a
    device apart by source address)."""
    import json

    from aqmlab.emulate import hosts

    monkeypatch.setattr(hosts, "MAX_NAMESPACES", 3)
    delays = ["1ms", "30ms"] * 3
    flows = [{"kind": "tcp", "count": 6, "start": {"dist": "uniform", "low": "0s", "high": "0.3s"}}]
    # Window-limited flows (10 packets) through a 100 Mb/s bottleneck: no queue, so that
    # each flow's fastest packet shows its own path.
    s = scenario({"kind": "droptail", "limit": "30pkt"}, flows, senders=6, access_delay=delays,
                 tcp={"receiver_window": 10})
    s["topology"]["receivers"] = 1
    s["topology"]["bottleneck"]["rate"] = "100Mbps"
    res = emulate(s, tmp_path)
    config = json.loads((tmp_path / "emulator" / "router.json").read_text())
    devices = [h["device"] for h in config["hosts"]]
    assert len(devices) == 7 and len(set(devices)) == 3, devices
    assert len({h["addr"] for h in config["hosts"]}) == 7  # an address each
    f = res.flows.sort("flow_id")
    # Each flow's fastest packet through the router: its sender's access link (1 ms or
    # 30 ms) and the 10 ms bottleneck, plus serialization (0.24 ms at most).
    for transit, delay in zip(f["delay_min_s"], delays):
        one_way = 0.010 + float(delay.removesuffix("ms")) / 1e3
        assert one_way <= transit < one_way + 0.001, (transit, delay)
    assert (f["throughput_bps"] > 0).all()


def _rtos(namespaces: list[str], ports: set[int]) -> dict[int, list[int]]:
    """The kernel's retransmission timeout (ms) of every established TCP connection to
    ``ports`` in ``namespaces``, as `ss -ti` reports it (before the handshake's round
    trip it is the initial 1 s)."""
    import re

    out: dict[int, list[int]] = {}
    for ns in namespaces:
        text = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tin", "state", "established"], capture_output=True,
                              text=True).stdout
        for port, rto in re.findall(r":(\d+)\s*\n.*?\brto:(\d+)", text):
            if int(port) in ports:
                out.setdefault(int(port), []).append(int(rto))
    return out


@needs_machine
def test_a_flows_min_rto_is_its_senders_route_rto_min(emulate, tmp_path):
    """tcp.min_rto of 1 s on one sender's flow, the default on the other's: the
    kernel's timer of the first stays above 1 s (Linux: RTO = srtt + max(rto_min,
    4 x mdev)); the other's is about 200 ms plus the round trip."""
    import threading

    flows = [{"kind": "tcp", "src": "s0", "dst": "d0", "tcp": {"min_rto": "1000ms"}}, {"kind": "tcp", "src": "s1", "dst": "d1"}]
    s = scenario({"kind": "droptail", "limit": "30pkt"}, flows, senders=2)
    done = threading.Thread(target=emulate, args=(s, tmp_path))
    done.start()
    rtos: dict[int, list[int]] = {}
    deadline = time.monotonic() + 20
    while done.is_alive() and time.monotonic() < deadline and len(rtos) < 2:
        time.sleep(0.3)
        rtos = _rtos(ours(), {5201, 5202})
    done.join()
    assert set(rtos) == {5201, 5202}, rtos
    assert min(rtos[5201]) >= 1000, rtos  # flow 0: 1 s + its round trip
    assert max(rtos[5202]) < 1000, rtos  # flow 1: the kernel's 200 ms + its round trip
