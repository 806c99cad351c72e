"""What the flow table's throughput and the summary's fairness figures count,
checked against the packets the simulator says it delivered."""

import tomllib

import numpy as np
import pytest

import aqmlab

SCENARIO = """
name = "mix"
duration = "6s"
warmup = "1s"
[topology]
kind = "dumbbell"
senders = 3
bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { kind = "droptail", limit = "50pkt" } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
kind = "tcp"
group = "tcp"
count = 2
[[flows]]
kind = "udp"
group = "cbr"
rate = "2Mbps"
packet_size = "500B"
header_size = "%s"
"""


def run(header: str) -> aqmlab.Results:
    return aqmlab.run(aqmlab.Scenario.model_validate(tomllib.loads(SCENARIO % header)))


def jain(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def test_udp_throughput_counts_payload_as_tcp_does():
    wire, payload = run("0B"), run("28B")
    w = wire.flows.filter(kind="udp")["throughput_bps"][0]
    p = payload.flows.filter(kind="udp")["throughput_bps"][0]
    # The same packets arrive either way; each carries 472 of its 500 bytes.
    assert p == pytest.approx(w * 472 / 500, rel=1e-12)
    # A CBR flow below its share loses nothing: its payload rate in the window.
    assert p == pytest.approx(2e6 * 472 / 500, rel=0.01)
    tcp = payload.flows.filter(kind="tcp")
    assert (tcp["throughput_bps"] * 5 / 8 <= tcp["unique_bytes_delivered"]).all()


def test_jain_index_over_every_flow_and_each_group():
    res = run("28B")
    s, flows = res.summary, res.flows
    assert s["jain_index"] == pytest.approx(jain(flows["throughput_bps"]))
    tcp = flows.filter(group="tcp")["throughput_bps"]
    assert s["jain_index.tcp"] == pytest.approx(jain(tcp))
    assert s["jain_index_long_lived_tcp"] == s["jain_index.tcp"]
    assert s["jain_index.cbr"] == 1.0
    # The CBR flow takes a fifth of the link, the TCP flows twice as much each.
    assert s["jain_index"] < s["jain_index.tcp"]
    assert s["goodput_bps"] == pytest.approx(flows["throughput_bps"].sum())


def test_a_model_without_headers_counts_whole_packets():
    scenario = tomllib.loads(SCENARIO % "0B")
    scenario["tcp"] = {"header_size": "0B"}
    res = aqmlab.run(aqmlab.Scenario.model_validate(scenario))
    tcp = res.flows.filter(kind="tcp")
    # Long-lived flows deliver whole packets: every byte of a 1000-byte packet is payload.
    assert (tcp["unique_bytes_delivered"] % 1000 == 0).all()
    assert res.summary["bottleneck_utilization"] > 0.9


def test_header_as_large_as_the_packet_is_refused():
    with pytest.raises(aqmlab.UserError, match="header_size"):
        run("500B")
