"""Random loss on a link (docs/simulator.md, "Random loss"): a UDP flow loses its
share within binomial bounds; one Reno flow that meets no congestion gets the
throughput of Padhye et al.'s model; each lossy link draws from a stream of its own;
losses are counted, traced with their own reason, and refused when impossible.
(The engines' agreement on lossy scenarios is in test_engines.py, on the shipped
scenarios/lossy-links.toml, and crates/sim/tests/differential.rs.)"""

from __future__ import annotations

import math

import pytest

import aqmlab
from aqmlab.errors import UserError
from aqmlab.theory import tcp_loss


def dumbbell(loss: float, flows: list[dict], seed: int = 3, duration: str = "60s", **bottleneck) -> dict:
    """One sender, one receiver, a 10 Mb/s bottleneck that loses ``loss`` of what it
    carries and whose buffer never fills."""
    return {
        "name": "loss", "seed": seed, "duration": duration, "warmup": "10s", "sample_interval": "0s",
        "tcp": {"variant": "reno", "packet_size": "1000B"},
        "topology": {
            "kind": "dumbbell", "senders": 1,
            "bottleneck": {"rate": "10Mbps", "delay": "40ms", "qdisc": {"kind": "droptail", "limit": "1000pkt"},
                           "loss": loss, **bottleneck},
            "access": {"rate": "100Mbps", "delay": "10ms"},
        },
        "flows": flows,
    }


UDP = [{"kind": "udp", "rate": "2Mbps", "packet_size": "500B"}]


def row(res, link: str) -> dict:
    return res.queues.filter(res.queues["link"] == link).row(0, named=True)


@pytest.mark.parametrize("p", [0.01, 0.1, 0.5])
def test_a_udp_flow_loses_p_of_its_packets_within_binomial_bounds(p):
    res = aqmlab.run(dumbbell(p, UDP))
    b = row(res, "bottleneck")
    # Each packet that reached the far end of the bottleneck was a trial: lost there,
    # or passed on to the receiver's link.
    trials = b["lost"] + row(res, "access_d0")["arrivals"]
    assert trials > 20_000
    sd = math.sqrt(trials * p * (1 - p))
    assert abs(b["lost"] - trials * p) < 4 * sd, (b["lost"], trials * p, sd)
    assert b["drops"] == 0  # no queue drop: the loss is the wire's alone
    # Counted everywhere a drop is: the flow, the summary, end to end.
    assert res.flows["packets_dropped"][0] == b["lost"] == res.summary["packets_lost"]
    assert res.summary["packets_dropped"] == b["lost"]
    assert res.summary["conservation"] == "ok"
    assert 0 < b["window_lost"] < b["lost"]


def test_loss_zero_is_no_loss_and_leaves_the_resolved_scenario_as_it_was():
    lossless = aqmlab.Scenario.coerce(dumbbell(0.0, UDP)).resolve()
    assert "loss" not in lossless["links"]
    res = aqmlab.run(dumbbell(0.0, UDP))
    assert res.queues["lost"].sum() == 0 and res.summary["packets_lost"] == 0


def test_the_draws_are_the_links_own():
    """A link's losses depend on the seed and on that link alone: adding loss to
    another link leaves them as they were, and another seed changes them."""
    def hop_losses(losses: tuple[float, float], seed: int = 5) -> list[int]:
        s = {
            "name": "two-hops", "seed": seed, "duration": "20s",
            "topology": {
                "kind": "parking_lot", "hops": 2, "cross": 0,
                "hop": [{"rate": "10Mbps", "delay": "5ms", "qdisc": {"kind": "droptail", "limit": "1000pkt"}, "loss": q}
                        for q in losses],
                "access": {"rate": "100Mbps"},
            },
            "flows": [{"kind": "udp", "src": "through", "dst": "through_dst", "rate": "2Mbps", "jitter": 0.5}],
        }
        res = aqmlab.run(s)
        return [row(res, f"hop{i}")["lost"] for i in range(2)]

    first_alone = hop_losses((0.05, 0.0))
    both = hop_losses((0.05, 0.2))
    assert first_alone[0] == both[0] > 0
    assert both[1] > 0
    assert hop_losses((0.05, 0.2), seed=6)[0] != both[0]


def test_one_reno_flow_without_congestion_gets_padhye_s_throughput():
    """One long Reno flow over a lossy 10 Mb/s bottleneck whose buffer never fills:
    every loss is the wire's, and the flow's rate is that of Padhye et al.'s model
    (SIGCOMM 1998, Eq 30; timeouts included) for the data packets' loss probability,
    the propagation RTT and its timeout.

    The tolerance, 15% below to 5% above, follows the model's one assumption that
    classic Reno under independent losses does not meet: it counts the losses of one
    round as one loss event (section 2.1), one halving, where Reno halves once for each
    loss it retransmits fast, or times out. So the flow falls below the model, the more
    so the more often two losses share a window: 6-7% at p = 0.005, 10-12% at 0.01,
    15-16% at 0.02 (two seeds each). Mathis's square-root law, which leaves out the
    timeouts too, is above both."""
    p, rtt_s = 0.01, 0.1
    res = aqmlab.run(dumbbell(p, [{"kind": "tcp"}], duration="600s"))
    f = res.flows.row(0, named=True)
    assert row(res, "bottleneck")["drops"] == 0, "no congestion"
    assert f["base_rtt_s"] == pytest.approx(rtt_s)
    packets_per_s = f["throughput_bps"] / (960 * 8)  # 1000-byte packets, 40 bytes of headers
    # The first timeout: the RTO of RFC 6298 bounded below by min_rto (200 ms), whose
    # estimate with an RTT of 100 ms and little variation sits at that bound.
    model = tcp_loss.padhye_rate(p, rtt_s, rto_s=0.2)
    assert 0.85 * model <= packets_per_s <= 1.05 * model, (packets_per_s, model)
    assert f["timeouts"] > 0, "classic Reno times out on some losses"
    assert packets_per_s < tcp_loss.mathis_rate(p, rtt_s)


@pytest.mark.parametrize("bad,message", [
    (1.0, "less than 1"), (-0.1, "greater than or equal to 0"), ("often", "valid number"), (float("nan"), "less than 1"),
])
def test_an_impossible_loss_is_refused_by_name(bad, message):
    with pytest.raises(UserError) as e:
        aqmlab.Scenario.coerce(dumbbell(bad, UDP)).resolve()
    assert str(e.value).startswith("topology.bottleneck.loss: ") and message in str(e.value)


def test_a_simplex_link_has_no_reverse_loss():
    s = {
        "name": "simplex", "duration": "1s",
        "topology": {"kind": "graph", "nodes": ["a", "b"],
                     "links": [{"from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms", "duplex": False,
                                "reverse_loss": 0.1}]},
        "flows": [{"kind": "udp", "src": "a", "dst": "b", "rate": "100kbps"}],
    }
    with pytest.raises(UserError, match=r"topology.links\[0\].reverse_loss"):
        aqmlab.Scenario.coerce(s).resolve()


def test_the_trace_shows_each_loss_with_its_own_reason():
    s = dumbbell(0.05, UDP, duration="20s")
    s["trace"] = {"packets": {"links": ["bottleneck"], "events": ["drop"]}}
    res = aqmlab.run(s)
    reasons = res.trace["reason"].to_list()
    assert reasons and set(reasons) == {"lost"}
    assert len(reasons) == row(res, "bottleneck")["lost"]


def test_the_core_refuses_an_impossible_loss_in_a_resolved_scenario(tmp_path):
    """A resolved.json edited by hand: the core checks the column itself and names the
    element (exit status 2 from the CLI)."""
    import json
    import subprocess
    import sys

    res = aqmlab.run({**dumbbell(0.01, UDP, duration="2s"), "warmup": "1s"})
    res.write(tmp_path / "a")
    r = json.loads((tmp_path / "a" / "resolved.json").read_text())
    for bad, message in ((1, "links.loss[0]: a probability in [0, 1), got 1"), ([0.01], "links.loss: has 1 values")):
        r["links"]["loss"] = [bad] + r["links"]["loss"][1:] if not isinstance(bad, list) else bad
        (tmp_path / "bad.json").write_text(json.dumps(r))
        done = subprocess.run([sys.executable, "-m", "aqmlab", "run", str(tmp_path / "bad.json"), "-q", "--out",
                               str(tmp_path / "b")], capture_output=True, text=True)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
