"""ns-2 beside aqmlab: the translator, its refusals, and the live comparison.

ns-2 2.35 is a Debian package that `make setup` installs; these tests run it.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from aqmlab.errors import UserError
from aqmlab.ns2 import to_tcl
from aqmlab.ns2.matrix import CASES, QUICK, Case, run_case
from aqmlab.scenario import Scenario


def resolved(**changes):
    """A small dumbbell, resolved, with ``changes`` merged into the scenario."""
    base = Case("t", flows=2).scenario()
    for path, value in changes.items():
        node = base
        *outer, last = path.split(".")
        for key in outer:
            node = node[key]
        node[last] = value
    return Scenario.coerce(base).resolve()


def test_droptail_limits_count_what_ns2_counts():
    tcl = to_tcl(resolved(**{"topology.bottleneck.qdisc": {"kind": "droptail", "limit": "30pkt"}}))
    assert "$q set limit_ 31" in tcl  # ns-2 drops at length() + 1 >= limit_
    tcl = to_tcl(resolved(**{"topology.bottleneck.qdisc": {"kind": "droptail", "limit": "30000B"}}))
    assert "$q set queue_in_bytes_ true" in tcl and "$q set limit_ 30001" in tcl


def test_red_maps_every_parameter():
    red = {"kind": "red", "limit": "80pkt", "min_th": 10, "max_th": 30, "w_q": 0.004, "max_p": 0.05, "gentle": True}
    tcl = to_tcl(resolved(**{"topology.bottleneck.qdisc": red}))
    for line in ("thresh_ 10.0", "maxthresh_ 30.0", "q_weight_ 0.004", "linterm_ 20.0", "gentle_ true",
                 "wait_ false", "limit_ 80", "mean_pktsize_ 1000"):
        assert f"$q set {line}" in tcl, line
    tcl = to_tcl(resolved(**{"topology.bottleneck.qdisc": red | {"wait": True, "mean_packet_size": "500B"}}))
    assert "$q set wait_ true" in tcl and "$q set mean_pktsize_ 500" in tcl


def test_tcp_profile_becomes_agent_variables():
    tcl = to_tcl(resolved(**{"tcp.variant": "newreno", "tcp.delayed_ack": True, "tcp.min_rto": "1s"}))
    assert "new Agent/TCP/Newreno" in tcl and "new Agent/TCPSink/DelAck" in tcl
    for var in ("packetSize_ 1000", "useHeaders_ false", "minrto_ 1.0", "newreno_changes1_ 1", "singledup_ 0",
                "window_ 10000", "windowInit_ 2", "tcpTick_ 0.01"):
        assert f"$tcp set {var}" in tcl, var


def test_sampling_is_scheduled_only_at_an_interval_above_zero():
    # A sample interval of 0 samples nothing; rescheduling the sampler at +0 s would never end.
    never = to_tcl(resolved(sample_interval="0s"))
    assert '$ns at 0.0 "sample ' not in never and "$ns run" in never
    every = to_tcl(resolved(sample_interval="100ms"))
    assert '$ns at 0.0 "sample 0.1 ' in every


@pytest.mark.parametrize(
    "change, field",
    [
        ({"topology.bottleneck.qdisc": {"kind": "codel"}}, "links.qdiscs[0].kind"),
        ({"topology.bottleneck.qdisc": {"kind": "drr", "limit": "50pkt"}}, "links.qdiscs[0].limit"),
        ({"tcp.variant": "cubic"}, "tcp_profiles[0].variant"),
    ],
)
def test_what_ns2_lacks_is_refused_by_name(change, field):
    with pytest.raises(UserError) as e:
        to_tcl(resolved(**change))
    assert e.value.field == field


def test_cli_refuses_with_exit_status_2(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'name = "x"\nduration = "2s"\n[topology]\nkind = "dumbbell"\nsenders = 1\n'
        'bottleneck = { rate = "1Mbps", delay = "1ms", qdisc = { kind = "pie" } }\naccess = { rate = "10Mbps", delay = "1ms" }\n'
        '[[flows]]\nkind = "tcp"\nsrc = "senders"\n'
    )
    done = subprocess.run([sys.executable, "-m", "aqmlab", "crosscheck", "ns2", str(scenario), "-o", str(tmp_path / "o")],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "links.qdiscs[0].kind" in done.stderr and "ns-2 has no 'pie'" in done.stderr


def test_matrix_has_thirty_cases_that_all_translate():
    assert len(CASES) >= 30
    for case in CASES:
        to_tcl(Scenario.coerce(case.scenario()).resolve())


@pytest.mark.parametrize("name", QUICK)
def test_quick_matrix_case_is_within_bounds_of_ns2(name, tmp_path):
    """Live: aqmlab with ns-2's model choices against ns-2 on two start-time draws,
    within every bound of docs/validation.md."""
    case = next(c for c in CASES if c.name == name)
    table = run_case(case, 2, tmp_path)
    bounded = table.filter(pl.col("within").is_not_null())
    assert len(bounded) >= 3
    misses = bounded.filter(~pl.col("within")).select("figure", "aqmlab_ns2", "ns2", "difference").rows()
    assert not misses, misses


def test_crosscheck_writes_its_tables(tmp_path):
    out = tmp_path / "cc"
    done = subprocess.run(
        [sys.executable, "-m", "aqmlab", "crosscheck", "ns2", "scenarios/single-flow-bdp.toml", "-o", str(out)],
        capture_output=True, text=True, cwd=Path(__file__).parents[1],
    )
    assert done.returncode == 0, done.stderr
    assert "utilization" in done.stdout and "ns-2" in done.stdout
    table = pl.read_parquet(out / "crosscheck.parquet")
    util = table.filter(pl.col("figure") == "utilization").row(0, named=True)
    assert math.isclose(util["aqmlab"], util["ns2"], abs_tol=0.001)
    assert (out / "draw0" / "scenario.tcl").exists() and (out / "crosscheck_flows.parquet").exists()


def test_a_lossy_link_becomes_ns2_s_error_model_and_loses_as_much(tmp_path):
    """A link's ``loss`` is ns-2's uniform ErrorModel after the link (link-lossmodel):
    a UDP flow loses p of its packets on the bottleneck in both simulators, within
    binomial bounds, and ns-2's queue counts no drop for them."""
    import aqmlab
    from aqmlab.ns2.run import run_ns2

    p = 0.05
    s = {
        "name": "lossy", "seed": 2, "duration": "20s", "warmup": "2s", "sample_interval": "0s",
        "topology": {"kind": "dumbbell", "senders": 1,
                     "bottleneck": {"rate": "10Mbps", "delay": "10ms", "qdisc": {"kind": "droptail", "limit": "100pkt"},
                                    "loss": p},
                     "access": {"rate": "100Mbps", "delay": "1ms"}},
        "flows": [{"kind": "udp", "rate": "2Mbps", "packet_size": "500B"}],
    }
    r = Scenario.coerce(s).resolve()
    tcl = to_tcl(r)
    assert "wire_loss 0 " in tcl and f" {p!r}" in tcl
    theirs = run_ns2(r, tmp_path).queues.row(0, named=True)
    ours = aqmlab.run(s).queues.filter(pl.col("link") == "bottleneck").row(0, named=True)
    for q in (theirs, ours):
        trials = q["window_arrivals"]  # no queue drop: every arrival went on the wire
        assert trials > 8_000 and q["window_drops"] == 0
        assert abs(q["window_lost"] - trials * p) < 4 * math.sqrt(trials * p * (1 - p)), q


@pytest.mark.parametrize("syn", [False, True])
def test_a_short_flow_completes_when_ns2_s_does_with_and_without_a_syn(syn, tmp_path):
    """With ``syn``, ns-2 sends the SYN alone and opens windowInit_ on its ACK
    (``delay_growth_``), as aqmlab's handshake does: a short flow on an idle path takes
    the same round trips in both, one more than without a SYN."""
    import aqmlab
    from aqmlab.ns2.run import run_ns2

    s = {
        "name": "syn", "seed": 1, "duration": "3s", "sample_interval": "0s",
        "topology": {"kind": "dumbbell", "senders": 1,
                     "bottleneck": {"rate": "100Mbps", "delay": "50ms", "qdisc": {"kind": "droptail", "limit": "1000pkt"}},
                     "access": {"rate": "1Gbps", "delay": "0ms"}},
        "tcp": {"syn": syn},
        "flows": [{"kind": "tcp", "size": "20pkt", "start": "0s"}],
    }
    r = Scenario.coerce(s).resolve()
    theirs = run_ns2(r, tmp_path).flows.row(0, named=True)["completion_time_s"]
    ours = aqmlab.run(s).flows.row(0, named=True)["completion_time_s"]
    rtt = 0.1
    # 20 packets from a window of 2 doubling: 2 + 4 + 8 + 6, four round trips of data
    assert round(ours / rtt) == round(theirs / rtt) == (5 if syn else 4), (ours, theirs)


@pytest.mark.parametrize("keep", [False, True])
def test_an_on_off_source_sends_as_ns2_s_does(keep, tmp_path):
    """An on-off TCP source is ns-2's agent given each transfer in turn: reset for a
    fresh connection, or, ``keep_connection``, given more (its window closed to one
    packet by the timer that fires in the idle second): on an idle path both simulators
    send the same packets and have the same ones acknowledged."""
    import aqmlab
    from aqmlab.ns2.run import run_ns2

    s = {
        "name": "onoff", "seed": 1, "duration": "10s", "sample_interval": "0s",
        "topology": {"kind": "dumbbell", "senders": 1,
                     "bottleneck": {"rate": "10Mbps", "delay": "50ms", "qdisc": {"kind": "droptail", "limit": "1000pkt"}},
                     "access": {"rate": "100Mbps", "delay": "0ms"}},
        "flows": [{"kind": "tcp", "size": "20pkt", "off_time": "1s", "keep_connection": keep}],
    }
    r = Scenario.coerce(s).resolve()
    assert "onoff 0 " in to_tcl(r)
    theirs = run_ns2(r, tmp_path).flows.row(0, named=True)
    ours = aqmlab.run(s).flows.row(0, named=True)
    assert ours["transfers_completed"] == 7
    assert (theirs["packets_sent"], theirs["throughput_bps"]) == (ours["packets_sent"], ours["throughput_bps"])
    # Nothing is lost: the timer that fires once a transfer is acknowledged is neither a
    # timeout nor a fast retransmit (ns-2's ncwndcuts_ counts it; ncwndcuts1_ does not).
    assert theirs["timeouts"] == theirs["fast_retransmits"] == ours["timeouts"] == ours["fast_retransmits"] == 0


def test_an_on_off_source_idles_as_ns2_can():
    with pytest.raises(UserError) as e:
        to_tcl(resolved(flows=[{"kind": "tcp", "size": "20pkt",
                                "off_time": {"dist": "uniform", "low": "1s", "high": "2s"}}]))
    assert e.value.field == "flows[0].off_time"
