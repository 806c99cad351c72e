"""Seed 003's single-flow experiments (digest 003, E2.2, E2.4, E2.5; thesis
Figs 2.2-2.5): one long-lived Reno flow, C = 1000 packets/s, 2Tp = 142 ms.

The expected values come from the fluid model in ``aqmlab.theory.sizing``
(thesis Appendix A.2 and the digest's derived single-flow utilization),
computed here, never typed in.
"""

from pathlib import Path

import polars as pl
import pytest

import aqmlab
from aqmlab.theory.sizing import sawtooth_period_general, single_flow_utilization

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
C = 1000.0  # packets/s: 8 Mb/s of 1000-byte packets
TWO_TP = 0.142
BDP = C * TWO_TP


def _run(name: str):
    res = aqmlab.run(SCENARIOS / name)
    assert res.summary["conservation_ok"], res.summary["conservation"]
    warmup = res.summary["warmup_s"]
    ts = res.timeseries.filter(pl.col("time_s") >= warmup)
    queue = ts.filter((pl.col("metric") == "queue_packets") & (pl.col("entity") == "bottleneck"))
    cwnd = res.timeseries.filter(pl.col("metric") == "cwnd")
    return res, queue, cwnd


def _loss_events(cwnd: pl.DataFrame, after: float) -> list[float]:
    """Times at which the window was cut (a fast retransmit halves it; the
    deflation at the end of recovery, within one RTT, is the same event)."""
    t = cwnd["time_s"].to_list()
    w = cwnd["value"].to_list()
    events: list[float] = []
    for i in range(1, len(w)):
        if w[i] < 0.75 * w[i - 1] and (not events or t[i] - events[-1] > 2.0):
            events.append(t[i])
    return [e for e in events if e >= after]


def _periods(cwnd: pl.DataFrame, after: float) -> list[float]:
    ev = _loss_events(cwnd, after)
    return [b - a for a, b in zip(ev, ev[1:])]


def test_buffer_equal_to_bdp_keeps_the_link_busy_and_the_queue_just_empties():
    res, queue, cwnd = _run("single-flow-bdp.toml")
    assert res.summary["bottleneck_utilization"] >= 0.995
    # After each halving the queue drains to (almost exactly) zero, and is
    # empty only for an instant: the buffer is just large enough.
    events = _loss_events(cwnd, res.summary["warmup_s"])
    assert len(events) >= 3
    q = queue["value"].to_list()
    t = queue["time_s"].to_list()
    for a, b in zip(events, events[1:]):
        in_period = [v for ti, v in zip(t, q) if a < ti < b]
        assert min(in_period) <= 1, f"queue did not drain between {a:.1f} and {b:.1f} s"
    empty_share = sum(v == 0 for v in q) / len(q)
    assert empty_share < 0.02, f"queue empty {empty_share:.1%} of the time"


def test_underbuffered_utilization_matches_the_fluid_model():
    res, queue, _ = _run("single-flow-underbuffered.toml")
    model = single_flow_utilization(100, BDP)
    measured = res.summary["bottleneck_utilization"]
    assert measured < 1.0
    assert abs(measured - model) <= 0.01, f"measured {measured:.4f}, fluid model {model:.4f}"
    # And the queue does sit empty for a while in each period (Fig 2.4).
    assert (queue["value"] == 0).sum() > 0


def test_overbuffered_queue_never_empties():
    res, queue, _ = _run("single-flow-overbuffered.toml")
    assert res.summary["bottleneck_utilization"] >= 0.999
    # The fluid model's minimum: W_min = (D + B)/2, so Q_min = (B - D)/2 = 19.
    q_min_model = (180 - BDP) / 2
    assert queue["value"].min() >= 0.5 * q_min_model


@pytest.mark.parametrize(
    "scenario,buffer",
    [("single-flow-underbuffered.toml", 100), ("single-flow-bdp.toml", 142), ("single-flow-overbuffered.toml", 180)],
)
def test_sawtooth_period_within_ten_percent_of_the_fluid_model(scenario, buffer):
    res, _, cwnd = _run(scenario)
    periods = _periods(cwnd, res.summary["warmup_s"])
    assert len(periods) >= 2
    measured = sum(periods) / len(periods)
    model = sawtooth_period_general(buffer, C, TWO_TP)
    assert abs(measured - model) / model <= 0.10, f"period {measured:.2f} s, model {model:.2f} s"


def test_a_header_size_of_zero_counts_the_whole_packet_as_goodput():
    """A paper that counts payload only (seed 000: 1500-byte packets, 5 Mb/s of
    goodput each for 100 flows on 500 Mb/s) sets header_size = "0B": goodput is
    then the bottleneck's throughput of data, not 96% of it."""
    d = aqmlab.Scenario.load(SCENARIOS / "single-flow-bdp.toml").to_dict()
    ratios = {}
    for header in ("0B", "40B"):
        d["tcp"]["header_size"] = header
        s = aqmlab.run(aqmlab.Scenario.coerce(d)).summary
        ratios[header] = s["goodput_bps"] / (s["bottleneck_utilization"] * C * 8000)
    assert ratios["0B"] == pytest.approx(1.0, abs=0.005)
    assert ratios["40B"] == pytest.approx(0.96, abs=0.005)
