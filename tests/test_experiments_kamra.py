"""Seed 002 (Kamra et al., SFED) experiments at quick fidelity: what the simulation must
show (orderings, the shares' directions, the chain against its simulation), not the
paper's verdicts. docs/experiments/kamra.md."""

from __future__ import annotations

import math

import polars as pl
import pytest

from aqmlab import experiments
from aqmlab.experiments import kamra


def test_every_kamra_experiment_is_registered():
    ids = {e.id for e in experiments.all_experiments()}
    assert {"kamra.table1", "kamra.fig5_9", "kamra.fig10", "kamra.fig12", "kamra.fig13", "kamra.fig15",
            "kamra.fig16"} <= ids


def test_max_min_shares():
    assert kamra.max_min_shares(2.0, {0: 1.9, 1: math.inf}) == {0: 1.0, 1: 1.0}
    assert kamra.max_min_shares(2.0, {0: 0.3, 1: math.inf, 2: math.inf}) == {0: 0.3, 1: 0.85, 2: 0.85}
    spans = kamra.e2_intervals()
    assert [(a, b) for a, b, _ in spans] == [(0, 20), (20, 40), (40, 60), (60, 80), (80, 100), (100, 120),
                                             (120, 140)]
    assert spans[3][2] == {0: 0.5e6, 1: 0.5e6, 2: 0.5e6, 3: 0.5e6}
    assert spans[0][2] == {0: 1.9e6}


def test_table1_orderings(reproduce_quick):
    rep = reproduce_quick("kamra.table1")
    t = rep.table

    def share(s, b):
        return t.filter((pl.col("scheme") == s) & (pl.col("buffer") == b))["tcp_share_pct"].item()

    for b in kamra.Table1.fidelities["quick"].buffers:
        # SFED protects the TCP flow from the CBR better than RED, CHOKe and DropTail
        assert share("sfed", b) > share("choke", b) > share("red", b) > share("droptail", b)
        assert 30 < share("sfed", b) < 50
        # R-SFED is SFED with randomized token hand-out: close, never far above
        assert share("rsfed", b) < share("sfed", b) + 2
        assert share("rsfed", b) > share("choke", b)
    # TCP's share under SFED grows with the buffer (bigger buckets absorb its bursts)
    assert share("sfed", 8) < share("sfed", 24) < share("sfed", 48)
    # FRED's strike rule is harsh on the TCP at 8 packets (maxq = 2) and not at 48
    assert share("fred", 8) < share("sfed", 8) - 10
    assert share("fred", 48) > 40
    # the fairness coefficient is the two shares' Jain index
    for r in t.iter_rows(named=True):
        assert 0.5 <= r["fairness"] <= 1.0
        assert abs(r["tcp_mbps"] + r["cbr_mbps"] - 1.54) < 0.05  # the link stays busy


def test_fig5_9_time_series(reproduce_quick):
    rep = reproduce_quick("kamra.fig5_9")
    f = rep.meta["findings"]
    assert f["sfed_tcp_mbps"] > f["choke_tcp_mbps"] > f["red_tcp_mbps"]
    assert f["sfed_tcp_below_half_s"] == 0
    # bins cover the measured window: (duration - warmup) one-second bins per flow and scheme
    p = kamra.Fig5to9.fidelities["quick"]
    n = round(p.setup.duration_s - p.setup.warmup_s)
    assert rep.table.group_by("scheme", "flow_kind").len()["len"].to_list() == [n] * (2 * len(p.setup.schemes))


def test_fig10_shares_follow_arrivals_and_departures(reproduce_quick):
    rep = reproduce_quick("kamra.fig10")
    f = rep.meta["findings"]
    assert f["moves_with_share"] == 1.0
    # a CBR alone gets its 1.9 Mb/s; two CBRs share the link equally
    assert abs(f["CBR_0_0_20"] - 1) < 0.05 and abs(f["CBR_0_120_140"] - 1) < 0.05
    assert abs(f["CBR_0_100_120"] - 1) < 0.1 and abs(f["CBR_1_100_120"] - 1) < 0.1
    # a flow that stopped sends nothing a few seconds later
    t = rep.table
    assert t.filter((pl.col("name") == "TCP_0") & (pl.col("time_s") > 85))["bps"].max() == 0


def test_fig12_fragile_flow(reproduce_quick):
    rep = reproduce_quick("kamra.fig12")
    f = rep.meta["findings"]
    # R-SFED and FRED serve a small window almost fully; R-SFED keeps the most past the knee
    assert f["rsfed_small_w"] > 0.85 and f["fred_small_w"] > 0.85
    assert f["rsfed_minus_best_other"] > 0
    assert f["rsfed_large_w"] > 2 * max(f["red_large_w"], f["choke_large_w"])


def test_fig13_aggregates(reproduce_quick):
    rep = reproduce_quick("kamra.fig13")
    f = rep.meta["findings"]
    assert abs(f["cbr_aggregate_mbps"] - 1) < 0.15 and abs(f["tcp_aggregate_mbps"] - 1) < 0.15
    assert abs(f["cbr_aggregate_mbps"] + f["tcp_aggregate_mbps"] - 2) < 0.05


def test_fig15_hierarchy(reproduce_quick):
    rep = reproduce_quick("kamra.fig15")
    f = rep.meta["findings"]
    # weights hold inside each class, and siblings trade slack
    assert 1.5 < f["CBR_0_mbps"] / f["CBR_1_mbps"] < 2.5
    assert f["TCP_0_mbps"] > f["TCP_1_mbps"]
    assert f["TCP_0_mbps"] > f["CBR_0_mbps"]
    assert f["tcp_sibling_correlation"] < 0
    assert f["cbr_class_mbps"] + f["tcp_class_mbps"] > 11.5


def test_fig16_chain_against_its_simulation(reproduce_quick):
    rep = reproduce_quick("kamra.fig16")
    t = rep.table.sort("height")
    analytic = t.filter(pl.col("height") < 195)["analytic"].to_list()
    assert all(a > b > 0 for a, b in zip(analytic, analytic[1:]))
    assert t.filter(pl.col("height") >= 195)["analytic"].max() == 0.0
    assert t.filter(pl.col("height") >= 195)["simulated"].max() == 0.0
    for r in t.filter(pl.col("height") <= 60).iter_rows(named=True):
        assert r["simulated"] == pytest.approx(r["analytic"], rel=0.15)
