"""Seed 003's one- and two-flow reproductions at quick fidelity (appenzeller.fig2_2, fig2_4,
fig2_5, fig3_1; digest 003 E2.2-E2.5, E3.1, thesis Figs 2.2-2.5, 3.1): long-lived Reno flows,
C = 1000 packets/s, 2T_p = 142 ms, B = 100, 142 and 180 packets.

The expected values come from the fluid model in ``aqmlab.theory.sizing`` (thesis
Appendix A.2 and the digest's derived single-flow utilization), computed here, never
typed in.
"""

import pytest

import aqmlab
from aqmlab import experiments
from aqmlab.experiments.appenzeller.chapter2 import SINGLE_C_PPS, SINGLE_TWO_TP_S, SingleFlowParams
from aqmlab.theory.sizing import sawtooth_period_general, single_flow_empty_share, single_flow_utilization

BDP = SINGLE_C_PPS * SINGLE_TWO_TP_S


@pytest.fixture(scope="module")
def found(tmp_path_factory) -> dict[int, dict[str, float]]:
    """Each buffer's findings, the runs in one store."""
    store, out = tmp_path_factory.mktemp("store"), tmp_path_factory.mktemp("out")
    by_buffer = {}
    for exp_id in ("appenzeller.fig2_4", "appenzeller.fig2_2", "appenzeller.fig2_5"):
        rep = experiments.reproduce(exp_id, "quick", out=out, store=store, workers=1)
        assert (rep.directory / "figure.png").stat().st_size > 10_000
        by_buffer[rep.meta["parameters"]["buffer"]] = rep.meta["findings"]
    return by_buffer


@pytest.mark.parametrize("buffer", [100, 142, 180])
def test_sawtooth_period_within_five_percent_of_the_fluid_model(found, buffer):
    model = sawtooth_period_general(buffer, SINGLE_C_PPS, SINGLE_TWO_TP_S)
    assert found[buffer]["period_s"] == pytest.approx(model, rel=0.05)


def test_buffer_equal_to_bdp_keeps_the_link_busy_and_the_queue_just_empties(found):
    f = found[142]
    assert f["utilization"] >= 0.995
    assert f["queue_min"] <= 1  # it does drain ...
    assert f["queue_empty_fraction"] < 0.02  # ... for an instant
    # Fig 2.3: halving one full-buffer RTT after the drop, the link busy meanwhile
    assert f["drop_to_halving_s"] == pytest.approx(SINGLE_TWO_TP_S + 142 / SINGLE_C_PPS, abs=0.02)
    assert f["queue_min_after_cut"] >= 1


def test_underbuffered_utilization_and_empty_queue_match_the_fluid_model(found):
    f = found[100]
    assert f["utilization"] < 1.0
    assert f["utilization"] == pytest.approx(single_flow_utilization(100, BDP), abs=0.005)
    assert f["queue_empty_fraction"] == pytest.approx(single_flow_empty_share(100, SINGLE_C_PPS, SINGLE_TWO_TP_S), abs=0.02)


def test_overbuffered_queue_never_empties(found):
    f = found[180]
    assert f["utilization"] >= 0.999
    # The fluid model's trough: W_min = (D + B)/2, so Q_min = (B - D)/2 = 19.
    assert f["queue_min"] == pytest.approx((180 - BDP) / 2, abs=3)
    assert f["queue_empty_fraction"] == 0


def test_two_flows_fall_into_step(tmp_path):
    rep = experiments.reproduce("appenzeller.fig3_1", "quick", out=tmp_path, store=tmp_path / "store", workers=1)
    f = rep.meta["findings"]
    # after the warm-up both flows cut their windows together (within a round trip),
    # every time, and B = 2T_p C keeps the pair's link busy (Eqs 3.1-3.3)
    assert f["cuts"] >= 10
    assert f["in_phase"] >= 0.9
    assert f["utilization"] >= 0.995


def test_a_header_size_of_zero_counts_the_whole_packet_as_goodput():
    """A paper that counts payload only (seed 000: 1500-byte packets, 5 Mb/s of
    goodput each for 100 flows on 500 Mb/s) sets header_size = "0B": goodput is
    then the bottleneck's throughput of data, not 96% of it."""
    d = SingleFlowParams(142, duration_s=100.0).scenario()
    ratios = {}
    for header in ("0B", "40B"):
        d["tcp"]["header_size"] = header
        s = aqmlab.run(d).summary
        ratios[header] = s["goodput_bps"] / (s["bottleneck_utilization"] * SINGLE_C_PPS * 8000)
    assert ratios["0B"] == pytest.approx(1.0, abs=0.005)
    assert ratios["40B"] == pytest.approx(0.96, abs=0.005)


def _on_off(keep: bool) -> dict:
    """One on-off source, 256-packet bursts 50 ms apart (less than an RTO), on a path
    that drops nothing."""
    burst = {"kind": "tcp", "size": "256pkt", "off_time": "50ms", "keep_connection": keep}
    return {
        "duration": "30s",
        "tcp": {"variant": "reno", "initial_window": 1, "receiver_window": 1000},
        "topology": {"kind": "dumbbell", "senders": 1,
                     "bottleneck": {"rate": "10Mbps", "delay": "50ms",
                                    "qdisc": {"kind": "droptail", "limit": "1000pkt"}},
                     "access": {"rate": "100Mbps", "delay": "0ms"},
                     "access_qdisc": {"kind": "droptail", "limit": "1000pkt"}},
        "flows": [burst],
    }


def test_a_kept_connection_sends_its_later_bursts_without_slow_start():
    """ns-2's reused Agent/TCP (``keep_connection``): idle for less than an RTO, the
    window stays open, so a burst takes one round trip plus its time on the wire, where
    a fresh connection slow-starts through log2(256) = 8 round trips every time."""
    flows = {keep: aqmlab.run(_on_off(keep)).flows.row(0, named=True) for keep in (False, True)}
    rtt, wire = 0.1, 256 * 1000 * 8 / 10e6  # packets of 1000 B on the wire
    assert flows[True]["packets_dropped"] == flows[False]["packets_dropped"] == 0
    fresh, kept = flows[False]["mean_completion_time_s"], flows[True]["mean_completion_time_s"]
    assert fresh > 8 * rtt
    # the first of the kept bursts slow-starts too; the others take about rtt + wire
    n = flows[True]["transfers_completed"]
    assert kept < (fresh + (n - 1) * (rtt + wire) * 1.2) / n
    assert n > flows[False]["transfers_completed"]


def test_keep_connection_needs_an_on_off_source():
    d = _on_off(True)
    del d["flows"][0]["off_time"]
    with pytest.raises(aqmlab.UserError) as e:
        aqmlab.run(d)
    assert e.value.field == "flows[0].keep_connection"
