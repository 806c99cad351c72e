"""The TCP profile's ``rtt_estimator``: RFC 6298's (the default) or ns-2's
(crates/sim/src/tcp/rto.rs). The default resolves as profiles did before the
field, so that their hashes and results stay; ns-2's changes the run."""

import aqmlab
from aqmlab.contract import as_rows as rows
from aqmlab.scenario import Scenario


def lossy_dumbbell(**tcp):
    """Four Reno flows through a buffer of 8 packets: losses and timeouts."""
    return {
        "duration": "20s",
        "tcp": tcp,
        "topology": {
            "kind": "dumbbell",
            "senders": 4,
            "bottleneck": {"rate": "2Mbps", "delay": "20ms", "qdisc": {"kind": "droptail", "limit": "8pkt"}},
            "access": {"rate": "100Mbps", "delay": ["1ms", "3ms", "5ms", "7ms"]},
        },
        "flows": [{"kind": "tcp", "count": 4, "start": "0s"}],
    }


def test_the_default_estimator_is_left_out_of_the_resolved_profile():
    default = rows(Scenario.model_validate(lossy_dumbbell()).resolve())["tcp_profiles"]
    spelled_out = rows(Scenario.model_validate(lossy_dumbbell(rtt_estimator="rfc6298")).resolve())["tcp_profiles"]
    assert "rtt_estimator" not in default[0]
    assert spelled_out == default
    ns2 = rows(Scenario.model_validate(lossy_dumbbell(rtt_estimator="ns2")).resolve())["tcp_profiles"]
    assert ns2[0]["rtt_estimator"] == "ns2"


def test_a_flow_may_take_ns2_estimator_alone():
    d = lossy_dumbbell()
    d["flows"] = [
        {"kind": "tcp", "group": "a"},
        {"kind": "tcp", "group": "b", "tcp": {"rtt_estimator": "ns2"}},
    ]
    r = rows(Scenario.model_validate(d).resolve())
    profiles = [r["tcp_profiles"][f["profile"]] for f in r["flows"]]
    assert "rtt_estimator" not in profiles[0] and profiles[1]["rtt_estimator"] == "ns2"


def test_ns2_estimator_runs_and_changes_the_run():
    default = aqmlab.run(lossy_dumbbell()).flows
    ns2 = aqmlab.run(lossy_dumbbell(rtt_estimator="ns2")).flows
    assert ns2["timeouts"].sum() > 0 and default["timeouts"].sum() > 0
    assert ns2["unique_bytes_delivered"].min() > 0
    columns = ["packets_sent", "timeouts", "retransmissions"]
    assert ns2.select(columns).rows() != default.select(columns).rows()
