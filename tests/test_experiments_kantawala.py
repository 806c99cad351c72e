"""Seed 000 (Kantawala & Turner), chapters 2, 3 and 6, at quick fidelity: what the
simulation must show, by the mechanisms of the policies (not the paper's numbers, which
the experiments' comparisons hold). Chapters 4, 5 and 7: test_experiments_kantawala_ch457.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from aqmlab import experiments
from aqmlab.errors import UserError
from aqmlab.experiments.kantawala import chapter6
from aqmlab.experiments.kantawala import common as c
from aqmlab.scenario import Scenario

# ---------------------------------------------------------------------------
# the common setup


def test_registered_in_chapter_order_before_the_other_seeds():
    ids = [e.id for e in experiments.all_experiments()]
    ours = [i for i in ids if i.startswith("kantawala.")]
    assert ids[: len(ours)] == ours
    for e in ("e2_taildrop", "e2_red", "e2_rtt", "e3_sb", "e3_mrtt", "e3_mh", "e3_short", "e6_sb", "e6_maxmin",
              "e6_mrtt", "e6_mh", "e6_short", "e6_episodes", "e6_membw"):
        e = f"kantawala.{e}"
        assert e in ours
    assert ours.index("kantawala.e2_rtt") < ours.index("kantawala.e3_sb") < ours.index("kantawala.e6_sb")


def test_the_topologies_are_the_papers_scaled():
    paper, tenth = c.Scale(), c.Scale(factor=0.1, duration_s=100.0)
    for build in c.TOPOLOGIES.values():
        for kind in ("long", "short"):
            s = Scenario.model_validate(build("qsdrr", 1000, tenth, kind=kind))
            assert s.topology.access_qdisc.limit == "50pkt"  # ns-2's default (issue 28)
            assert s.tcp.min_rto == "1s" and s.tcp.header_size == "0B" and not s.tcp.delayed_ack
    sb = c.single_bottleneck("red", 1000, paper)
    q = sb["topology"]["bottleneck"]["qdisc"]
    assert (q["min_th"], q["max_th"], q["max_p"], q["w_q"]) == (200, 1000, 0.01, 0.001)  # Table 3.1
    # the rest as ns-2's Queue/RED of 2001-2004 (issue 28: wait_ is Table 2.3's difference)
    assert (q["variant"], q["wait"], q["gentle"], q["mean_packet_size"]) == ("ns2", True, True, "500B")
    assert sb["topology"]["senders"] == 100 and sb["topology"]["bottleneck"]["rate"] == "500000000bps"
    small = c.single_bottleneck("qsdrr", 1000, tenth)
    assert small["topology"]["senders"] == 10 and small["topology"]["bottleneck"]["qdisc"]["limit"] == "100pkt"
    mrtt = c.multi_rtt("blue", 800, paper, kind="short")
    assert [g["senders"] for g in mrtt["topology"]["groups"]] == [500, 500]
    assert mrtt["flows"][0]["size"] == "256pkt" and mrtt["topology"]["access"]["rate"] == "100Mbps"
    mh = c.multi_hop("dtdrr", 400, paper)
    assert mh["topology"]["through"] == 50 and mh["flows"][1]["count"] == 150
    assert c.qdisc("tdrr_w8", 100)["weight"] == 0.125
    with pytest.raises(ValueError, match="unknown policy"):
        c.qdisc("codel", 100)


def test_fair_share_statistics():
    s = c.fair_share_stats([5e6] * 10)
    assert s == {"mean_pct": 100.0, "std_fair": 0.0, "max_min": 1.0}
    s = c.fair_share_stats([4e6, 6e6])  # mean 5, sigma 1 (population): (5 + 3)/(5 - 3) = 4
    assert s["mean_pct"] == 100.0 and s["std_fair"] == pytest.approx(0.2) and s["max_min"] == pytest.approx(4.0)
    assert c.fair_share_stats([1e6, 9e6])["max_min"] == math.inf
    flows = pl.DataFrame({"policy": ["a"] * 4, "seed": [1, 1, 2, 2], "goodput_bps": [4e6, 6e6, 5e6, 5e6]})
    g = c.group_stats(flows, ["policy"]).row(0, named=True)
    assert g["mean_pct"] == 100.0 and g["std_fair"] == pytest.approx(0.1) and g["max_min"] == pytest.approx(2.5)


def test_dup_only_reno_is_a_tcp_field_ns2_cannot_express(tmp_path):
    from aqmlab.ns2.translate import sender_vars

    s = Scenario.model_validate(c.single_bottleneck("droptail", 100, c.Scale(0.1, 1.0), tcp={"timeout_cwnd": "half"}))
    (profile,) = s.resolve()["tcp_profiles"]
    assert profile["timeout_cwnd"] == "half"
    plain = Scenario.model_validate(c.single_bottleneck("droptail", 100, c.Scale(0.1, 1.0)))
    assert "timeout_cwnd" not in plain.resolve()["tcp_profiles"][0]
    with pytest.raises(UserError, match="timeout_cwnd"):
        sender_vars(profile, "tcp_profiles[0]")
    with pytest.raises(Exception, match="timeout_cwnd"):
        Scenario.model_validate(c.single_bottleneck("droptail", 100, c.Scale(0.1, 1.0), tcp={"timeout_cwnd": "one"}))


def test_episodes_from_a_trace():
    ms = 1_000_000
    # flow 1: a queue of 2, a drop marks it at 3 ms, it empties at 7 ms; flow 2: a
    # drop while its queue is empty marks nothing
    t = pl.DataFrame({
        "time_ns": [0, 1 * ms, 3 * ms, 3 * ms, 4 * ms, 5 * ms, 5 * ms, 7 * ms, 8 * ms, 8 * ms],
        "event": ["enqueue", "enqueue", "enqueue", "drop", "dequeue", "enqueue", "drop", "dequeue", "enqueue", "drop"],
        "flow": [1, 1, 1, 1, 1, 1, 1, 1, 2, 2],
    })
    assert chapter6.dsdrr_episodes(t, 0) == [0.004]
    drops = pl.DataFrame({"time_ns": [0, 1 * ms, 4 * ms, 6 * ms, 9 * ms], "event": ["drop"] * 5,
                          "flow": [3, 3, 5, 5, 3]})
    assert chapter6.qsdrr_episodes(drops, 0) == [0.004, 0.005]  # 3 from 0 to 4 ms, 5 from 4 to 9 ms
    assert chapter6.qsdrr_episodes(drops, 1 * ms) == [0.005]
    assert chapter6.qsdrr_drop_spans(drops, 0) == [0.001, 0.002]  # 3 from 0 to 1 ms, 5 from 4 to 6 ms


# ---------------------------------------------------------------------------
# the experiments at quick fidelity (one store: chapter 6 reuses chapter 3's runs)


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("reproduce")


def reproduce(exp_id: str, out: Path, store: Path) -> tuple[pl.DataFrame, dict]:
    rep = experiments.reproduce(exp_id, "quick", out=out, store=store, workers=1)
    d = rep.directory
    assert (d / "figure.png").stat().st_size > 10_000
    comparisons = json.loads((d / "comparison.json").read_text())
    exp = experiments.get(exp_id)
    assert [x["key"] for x in comparisons] == [r.key for r in exp.references(exp.fidelities["quick"])]
    Scenario.model_validate(__import__("tomllib").loads((d / "scenario.toml").read_text()))
    return rep.table, rep.meta["findings"]


def at(t: pl.DataFrame, policy: str, buffer: int, col: str, **where) -> float:
    d = t.filter((pl.col("policy") == policy) & (pl.col("buffer") == buffer))
    for k, v in where.items():
        d = d.filter(pl.col(k) == v)
    return float(d[col].item())


def test_e2_taildrop_cycles(out, store):
    t, f = reproduce("kantawala.e2_taildrop", out, store)
    dup = t.filter(pl.col("variant") == "dup").sort("buffer")
    assert (dup["cycles"] >= 2).all()
    # the model's mechanism: a larger buffer means larger windows at overflow, so
    # a deeper fall and a longer climb back
    d4, d8 = (dup.filter(pl.col("buffer") == b).row(0, named=True) for b in (4167, 8333))
    assert d8["queue_drop"] > d4["queue_drop"] and d8["cycle_s"] > d4["cycle_s"]
    # a flow that waits for a timeout sends nothing meanwhile: the queue falls further
    # than the model's (every loss detected within one RTT)
    assert f["dup_drop_over_model_4167"] > 1 and f["dup_drop_over_model_8333"] > 1
    # 800 packets is less than the model's fall: the queue empties
    assert min(t.filter(pl.col("buffer") == 800)["queue"][0].to_list()[300:]) == 0


def test_e2_red_lower_max_p_more_throughput(out, store):
    _, f = reproduce("kantawala.e2_red", out, store)
    assert f["mean_0.01"] > f["mean_0.02"] > f["mean_0.05"]


def test_e2_rtt_red_is_unfair_to_long_rtts(out, store):
    t, f = reproduce("kantawala.e2_rtt", out, store)
    for b in (800, 4167):
        # equal windows (RED drops in proportion to arrivals): throughput ~ 1/RTT
        assert f[f"red_{b}_rtt40"] > 2.5 * f[f"red_{b}_rtt200"]
        assert 0.6 < f[f"red_{b}_window_ratio"] < 1.5
    # Tail Drop lets the long flows' windows grow larger than RED does
    assert f["droptail_4167_window_ratio"] > f["red_4167_window_ratio"]
    assert f["droptail_4167_rtt200"] > f["red_4167_rtt200"]


def test_e3_sb_per_flow_queues_spread_less(out, store):
    t, f = reproduce("kantawala.e3_sb", out, store)
    assert t.filter(pl.col("policy") == "qsdrr").height == 5
    for b in (600, 1500, 5000):
        assert at(t, "qsdrr", b, "std_fair") < at(t, "droptail", b, "std_fair")
        assert at(t, "qsdrr", b, "max_min") < at(t, "droptail", b, "max_min")
    assert f["qsdrr_std"] < f["red_std"] and f["drr_std"] < f["droptail_std"]
    # push-out policies write packets they drop later; Tail Drop never does
    assert (t.filter(pl.col("policy") == "droptail")["buffered_drop_bytes"] == 0).all()
    assert (t.filter(pl.col("policy") == "qsdrr")["buffered_drop_bytes"] > 0).all()
    assert len(t.filter((pl.col("policy") == "qsdrr") & (pl.col("buffer") == 200))["goodputs_mbps"][0]) == 10


def test_e3_mrtt_drr_family_shares_with_long_rtts(out, store):
    t, _ = reproduce("kantawala.e3_mrtt", out, store)
    for b in (600, 1500, 5000):
        long = {p: at(t, p, b, "mean_pct", **{"class": "rtt200"}) for p in c.CHAPTER3_POLICIES}
        for fair in ("drr", "tdrr", "qsdrr"):
            assert long[fair] > max(long["red"], long["blue"]) + 10, (b, long)
        assert at(t, "red", b, "mean_pct", **{"class": "rtt40"}) > 120


def test_e3_mh_end_to_end_flows(out, store):
    t, _ = reproduce("kantawala.e3_mh", out, store)
    for b in (600, 1500, 5000):
        through = {p: at(t, p, b, "mean_pct", **{"class": "through"}) for p in c.CHAPTER3_POLICIES}
        assert through["qsdrr"] > max(through["red"], through["blue"], through["droptail"]), (b, through)


def test_e3_short_bursts(out, store):
    t, f = reproduce("kantawala.e3_short", out, store)
    assert set(t["topology"].unique()) == {"sb", "mrtt", "mh"}
    ratio = t.filter(pl.col("class") == "ratio")
    # per-flow queues give the 200 ms flows' bursts the same service as the 40 ms
    # flows': their completion times come closer than under one FIFO
    assert at(ratio.filter(pl.col("topology") == "mrtt"), "qsdrr", 5000, "completion_s") < \
        at(ratio.filter(pl.col("topology") == "mrtt"), "blue", 5000, "completion_s")
    assert f["qsdrr_mh_goodput"] > f["red_mh_goodput"]
    assert (t.filter(pl.col("class") != "ratio")["bursts"] > 0).all()


def test_e6_discard_on_arrival(out, store):
    t, f = reproduce("kantawala.e6_sb", out, store)
    for b in (600, 1500, 5000):
        for p in ("dtdrr", "dsdrr"):
            assert at(t, p, b, "std_fair") < at(t, "droptail", b, "std_fair")
        assert at(t, "dtdrr", b, "buffered_drop_bytes") == at(t, "dsdrr", b, "buffered_drop_bytes") == 0
    m, fm = reproduce("kantawala.e6_membw", out, store)
    for p in ("droptail", "red", "blue", "dtdrr", "dsdrr"):
        assert fm[f"{p}_of_arrivals"] == 0
    for p in ("drr", "tdrr", "qsdrr"):
        assert (m.filter(pl.col("policy") == p)["of_arrivals"] > 0).all()
    mrtt, _ = reproduce("kantawala.e6_mrtt", out, store)
    for p in ("dtdrr", "dsdrr"):
        assert at(mrtt, p, 1500, "mean_pct", **{"class": "rtt200"}) > at(mrtt, "red", 1500, "mean_pct",
                                                                          **{"class": "rtt200"})


def test_e6_discard_episodes(out, store):
    t, f = reproduce("kantawala.e6_episodes", out, store)
    assert f["dsdrr_count"] > 50 and f["qsdrr_count"] > 50
    # a DSDRR queue leaves discard state as soon as it empties; QSDRR's drop queue stays
    # until another queue is picked: DSDRR's episodes are shorter and more regular
    assert f["dsdrr_max"] < f["qsdrr_max"] and f["dsdrr_std"] < f["qsdrr_std"]
    # most of a tenure is spent waiting for the next overflow, not dropping
    assert f["qsdrr_span_mean"] < 0.6 * f["qsdrr_mean"]


def test_e6_max_min_over_time(out, store):
    t, f = reproduce("kantawala.e6_maxmin", out, store)
    assert t["time_s"].max() == pytest.approx(100.0)
    # per-flow queues serve every backlogged flow alike: over a run the largest and
    # smallest flows' throughputs come closer than through one FIFO
    for p in ("qsdrr", "dtdrr", "dsdrr"):
        assert f[f"{p}_end"] < f["droptail_end"]
