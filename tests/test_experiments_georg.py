"""Seed 001's experiments (aqmlab.experiments.georg) at quick fidelity: what the simulation
must show (orderings, the interference classes against the theory), not the paper's verdicts."""

from __future__ import annotations

import pytest

from aqmlab import experiments
from aqmlab.experiments import georg
from aqmlab.scenario import Scenario
from aqmlab.theory.mqfq import capture_bound

C_KBPS = georg.CAPACITY_BPS / 1e3


def test_scenarios_follow_the_reports_setup():
    s = georg.Setup(100.0, 10.0, 1)
    a2 = georg.scenario("a2", georg.qdisc("mqfq", 100, 16), georg.CBR_CASES["A2"], s, 1)
    assert a2["topology"]["senders"] == 50 and a2["topology"]["access"]["delay"] == "5000us"  # RTT 60 ms
    assert a2["topology"]["bottleneck"]["qdisc"] == {"kind": "mqfq", "limit": "100pkt", "queues": 16, "hashes": 2,
                                                     "quantum": "1000B"}
    assert [f["rate"] for f in a2["flows"]] == ["2500kbps", "100kbps"]
    b4 = georg.scenario("b4", georg.qdisc("sfb", 100, 16), georg.TCP_CASES["B4"], s, 1)
    delays = b4["topology"]["access"]["delay"]
    assert delays[0] == "5000us" and delays[-1] == "250000us" and len(delays) == 50  # RTT 60 .. 550 ms
    Scenario.model_validate(b4)


def test_fig1_interference_classes_match_the_theory(reproduce_quick):
    rep = reproduce_quick("georg.fig1")
    f = rep.meta["findings"]
    assert all(c.ok for c in rep.comparisons), [(c.key, c.ours, c.paper) for c in rep.comparisons if not c.ok]
    for case in ("A2", "B3"):
        # the flows that share every queue with the misbehaver do worst, those sharing none best
        assert f[f"{case}_sfq_shared_kbps"] < f[f"{case}_sfq_none_kbps"]
        assert f[f"{case}_mqfq_one_shared_kbps"] < f[f"{case}_mqfq_none_kbps"]
        # SFQ has no partial class: one queue per flow
        assert f[f"{case}_sfq_one_shared_share"] == 0.0
    # with one queue shared an MQFQ flow keeps most of its fair share (it uses the other)
    assert f["A2_mqfq_one_shared_kbps"] > 0.7 * georg.FAIR_KBPS


def test_cbr_orderings(reproduce_quick):
    rep = reproduce_quick("georg.cbr")
    f = rep.meta["findings"]
    # MQFQ's misbehaver holds at most two queues' worth; MQFQ's range is narrower (A1)
    assert f["A2_mqfq_misbehaver"] <= 1.1 * capture_bound(2, 16, C_KBPS)
    assert f["A1_range_mqfq_minus_sfq"] < 0
    # the weakest flows do better under MQFQ (A2); five misbehavers take more under MQFQ (A3)
    assert f["A2_lowest_mqfq_minus_sfq"] > 0
    assert f["A3_misbehaver_mqfq_minus_sfq"] > 0
    # 50 x 150 kb/s overload: SFQ and MQFQ keep the link busy
    assert f["A1_sfq_utilization"] > 0.99 and f["A1_mqfq_utilization"] > 0.99


def test_tcp_orderings(reproduce_quick):
    rep = reproduce_quick("georg.tcp")
    f = rep.meta["findings"]
    # the CBR flow takes one queue's fair share under SFQ, two under MQFQ (B3)
    assert f["B3_sfq_cbr"] == pytest.approx(capture_bound(1, 16, C_KBPS), rel=0.15)
    assert f["B3_mqfq_cbr"] == pytest.approx(capture_bound(2, 16, C_KBPS), rel=0.15)
    # MQFQ gives the best minimum (B1, B2, B3)
    for case in ("B1", "B2", "B3"):
        assert f[f"{case}_lowest_mqfq_minus_sfq"] > 0
    # throughput falls with RTT under every scheme (B4)
    assert all(f[f"B4_{s}_rtt_correlation"] < -0.3 for s in georg.SCHEMES)


def test_more_hashes_give_the_misbehaver_more(reproduce_quick):
    rep = reproduce_quick("georg.hashes")
    f = rep.meta["findings"]
    d = georg.MoreHashes.fidelities["quick"].hashes
    cbr = [f[f"C2_d{x}_cbr"] for x in d]
    assert cbr == sorted(cbr)
    # at d >= 2 it is held under d queues' fair share of the 32
    assert all(f[f"C2_d{x}_cbr"] <= 1.1 * capture_bound(x, 32, C_KBPS) for x in d if x >= 2)
    assert f["C1_lowest_d2_minus_d1"] > 0
    # the fluid max-min allocation over the runs' own hashes: more choices lift the weakest
    # flows towards the fair 100 kb/s, and no flow gets more than its fair share at d = 6
    fluid = [f[f"C1_d{x}_fluid_lowest5"] for x in d]
    assert fluid == sorted(fluid) and fluid[-1] <= 100.0 + 1e-6


def test_fig10_fairness_changes_little_with_the_number_of_flows(reproduce_quick):
    rep = reproduce_quick("georg.fig10")
    f = rep.meta["findings"]
    assert f["jain_spread"] <= 0.1


def test_fig2_reordering_and_its_two_fixes(reproduce_quick):
    rep = reproduce_quick("georg.fig2")
    f = rep.meta["findings"]
    assert f["none_reordered"] > 0
    assert f["resequence_reordered"] == 0 and f["cells_reordered"] == 0
