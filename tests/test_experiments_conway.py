"""Seed 004's experiments (aqmlab.experiments.conway) at quick fidelity: what the simulation
must show (orderings, DCBT's thresholds following the flows, ChIPS's lower jitter), not the
paper's verdicts."""

from __future__ import annotations

import polars as pl
import pytest

import aqmlab
from aqmlab import experiments
from aqmlab.experiments import conway
from aqmlab.scenario import Scenario


def test_registered_after_appenzeller_in_seed_order():
    ids = [e.id for e in experiments.all_experiments()]
    assert ids[-4:] == ["conway.two_flow", "conway.three_flow", "conway.jitter", "conway.cost"]
    assert ids.index("conway.two_flow") > max(i for i, x in enumerate(ids) if x.startswith("appenzeller."))


def test_scenarios_follow_the_reports_setup():
    s = conway.scenario("e3", "dcbt", conway._three_flow(), 40.0, 1)
    Scenario.model_validate(s)
    q = s["topology"]["bottleneck"]["qdisc"]
    assert q["limit"] == "20000B" and q["min_th"] == "5000B" and q["max_th"] == "15000B" and q["max_p"] == 0.01
    assert q["flow_key"] == "host_pair" and q["udp_flows"] == "all_udp"
    assert conway.qdisc("droptail") == {"kind": "droptail", "limit": "20000B"}
    assert conway.qdisc("dcbt_untagged")["udp_flows"] == "untagged"
    udp, mm = s["flows"][1], s["flows"][2]
    # 10 and 1 binary megabits of 1000-byte payloads, carried in 1066-byte frames
    assert udp["rate"] == f"{10 * 2**20 * 1066 / 1000:.0f}bps" and not udp["tagged"]
    assert mm["tagged"] and mm["src"] == s["flows"][0]["src"] == "s0"  # client1 is the tagged host
    assert (udp["start"], udp["stop"]) == ("10000000us", "40000000us")


def test_two_flow(reproduce_quick):
    rep = reproduce_quick("conway.two_flow", workers=1)
    f = rep.meta["findings"]
    for d in ("droptail", "red_linux"):
        assert f[f"{d}_tcp_share"] < 0.05  # UDP takes the link
    for d in ("cbt", "dcbt"):
        assert 0.4 < f[f"{d}_tcp_share"] < 0.8  # TCP protected
    # One TCP and one UDP flow: DCBT's UDP threshold, 1/2 x 4000 B, is CBT's 2 packets.
    for k in ("tcp_with_udp", "udp_with_tcp", "jain"):
        assert f[f"dcbt_{k}"] == pytest.approx(f[f"cbt_{k}"], rel=1e-9)
    # a lone flow gets the same under every discipline (digest 4.6 criterion 7)
    for k in ("tcp_alone", "udp_alone"):
        v = [f[f"{d}_{k}"] for d in conway.TABLE_DISCIPLINES]
        assert max(v) < 1.03 * min(v)
    assert f["droptail_udp_alone"] == pytest.approx(1145, rel=0.01)  # the 10BaseT ceiling, digest 6
    assert f["dcbt_udp_first_tcp_share"] > 0.8 * f["dcbt_tcp_share"]  # Fig 5.3: TCP joins without collapse


def test_three_flow_thresholds_follow_the_flows(reproduce_quick):
    rep = reproduce_quick("conway.three_flow", workers=1)
    f = rep.meta["findings"]
    # UDP's threshold beside one TCP and one multimedia flow: 2/3 x 4000 B counting every UDP
    # flow, CBT's 2000 B, 1/3 x 4000 B counting untagged flows only; UDP's throughput follows.
    assert f["dcbt_udp_with_tcp_mm"] > f["cbt_udp_with_tcp_mm"] > f["dcbt_untagged_udp_with_tcp_mm"]
    assert f["dcbt_jain"] > f["cbt_jain"] > f["dcbt_untagged_jain"]
    for d in ("cbt", "dcbt", "chips"):
        assert f[f"{d}_mm_fraction"] > 0.97  # the multimedia flow gets its rate
    for d in ("droptail", "red_linux"):
        assert f[f"{d}_tcp_share"] < 0.05
        assert f[f"{d}_mm_fraction"] < f["cbt_mm_fraction"]
    assert f["chips_tcp_over_dcbt"] == pytest.approx(1.0, abs=0.05)


def test_chips_lowers_the_multimedia_jitter(reproduce_quick):
    rep = reproduce_quick("conway.jitter", workers=1)
    f = rep.meta["findings"]
    assert f["three_chips_jitter_mean_ms"] < 0.9 * f["three_dcbt_jitter_mean_ms"]
    assert f["three_chips_jitter_p99_ms"] < f["three_dcbt_jitter_p99_ms"]
    assert f["three_chips_sojourn_p99_ms"] < f["three_dcbt_sojourn_p99_ms"]
    assert f["three_chips_mm_reordered"] == 0  # the in-order queue
    series = rep.table.filter((pl.col("row") == "series") & (pl.col("qdisc") == "chips"))
    assert series.height >= 2 * 29 and series["jitter_ms"].min() > 0


def test_rfc3550_jitter_is_iperfs_estimator():
    # transit times 10, 12, 11 ms: J = 2/16, then J + (1 - J)/16
    j = conway.rfc3550_jitter([0.010, 0.012, 0.011])
    assert j[0] == 0 and j[1] == pytest.approx(0.002 / 16)
    assert j[2] == pytest.approx(j[1] + (0.001 - j[1]) / 16)


def test_cost_times_every_discipline_on_the_same_traffic(tmp_path):
    rep = experiments.reproduce("conway.cost", "quick", out=tmp_path)
    t = rep.table
    assert (t["ns_per_packet"] > 0).all() and t["ns_per_packet"].is_finite().all()
    # 1.12 x the link rate: every discipline drops the excess, about 1 - 1/1.12 of the arrivals
    assert t["drop_fraction"].is_between(0.10, 0.115).all()
    assert sorted(t.filter(pl.col("row") == "flows")["flows"].to_list()) == [2, 70, 1000]


def _udp_beside_four_tcp(flow_key: str) -> float:
    """UDP's throughput (KiB/s) beside four TCP connections between one pair of hosts,
    under DCBT counting host pairs or transport flows."""
    flows = (*(conway.Flow(f"tcp{i}", "tcp", "s0", "d0", 0.0) for i in range(4)),
             conway.Flow("udp", "udp", "s1", "d0", 0.0, None, 10.0))
    s = conway.scenario("key", "dcbt", flows, 15.0, 1)
    s["topology"]["bottleneck"]["qdisc"]["flow_key"] = flow_key
    res = aqmlab.run(s)
    return float(res.flows.filter(pl.col("group") == "udp")["throughput_bps"].item()) / 8 / 1024


def test_dcbt_counts_the_flow_key_a_scenario_chooses():
    # host pairs: TCP is one flow, th_UDP = 1/2 x 4000 B; transport flows: 4 TCP, 1/5 x 4000 B
    assert _udp_beside_four_tcp("host_pair") > 1.3 * _udp_beside_four_tcp("flow")


def test_a_bad_flow_key_names_its_field():
    s = conway.scenario("bad", "dcbt", conway._two_flow(), 40.0, 1)
    s["topology"]["bottleneck"]["qdisc"]["flow_key"] = "ports"
    with pytest.raises(aqmlab.errors.UserError, match="flow_key"):
        aqmlab.run(s)
