"""Loss recovery over a whole run: a window that loses many packets at once
must not hold its flow back for the rest of the run.

scenarios/dumbbell.toml with NewReno and a 1000-packet buffer overflows in
slow start, and some flows lose a large part of one window. NewReno resends
one hole a round trip; with the timer reset at every partial ACK such a
flow spent the whole minute in one recovery (1.1-1.9 MB of 10-12 MB sent
delivered in order, no timeout). RFC 6582 resets it at the first partial
ACK only, so the flow times out and slow-starts instead
(crates/sim/src/tcp/recovery/newreno.rs)."""

import pytest

import aqmlab

FAIR_BPS = 10e6 / 10


@pytest.mark.parametrize("buffer", ["300pkt", "1000pkt"])
def test_no_newreno_flow_stays_in_one_recovery(buffer):
    s = aqmlab.Scenario.load("scenarios/dumbbell.toml").to_dict()
    s["tcp"]["variant"] = "newreno"
    s["topology"]["bottleneck"]["qdisc"]["limit"] = buffer
    flows = aqmlab.run(s).flows
    in_order = flows["unique_bytes_delivered"] / flows["bytes_sent"]
    assert in_order.min() > 0.5, f"a flow delivered in order {in_order.min():.0%} of what it sent"
    assert flows["throughput_bps"].min() > 0.1 * FAIR_BPS, flows["throughput_bps"].to_list()
