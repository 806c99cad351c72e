"""Seed 004 on the emulator (docs/emulator.md, "Seed 004 on the emulator"): conway's
scenarios within the emulator's limits, and a two-flow run whose orderings the emulator
must show with the kernel's own TCP. The run takes about 85 s of real time; it needs
root, /dev/net/tun, iperf3 and the router built, and is skipped, saying which is
missing, without them."""

from __future__ import annotations

import pytest

from aqmlab.emulate import support
from aqmlab.errors import UserError
from aqmlab.experiments import conway
from aqmlab.scenario import Scenario


def _emulated_points():
    for e in (conway.TwoFlow(), conway.ThreeFlow(), conway.Jitter()):
        for p in e.fidelities.values():
            yield from (s for runs in e.points(p, "emulator").values() for s in runs)


def test_conways_scenarios_are_within_the_emulators_limits():
    for s in _emulated_points():
        support.check(Scenario.model_validate(s))  # raises, naming the field, if not


def test_the_emulator_refuses_packet_traces_and_a_second_sampling_interval():
    s = conway.scenario("e1", "cbt", conway._two_flow(), 40.0, 1, engine="emulator")
    for field, trace, sample in (("trace.packets", {"packets": {"events": ["deliver"]}}, "0s"),
                                 ("trace.flow_series", {"flow_series": "1s"}, "100ms")):
        with pytest.raises(UserError) as e:
            support.check(Scenario.model_validate({**s, "trace": trace, "sample_interval": sample}))
        assert e.value.exit_code == 2 and field in str(e.value), str(e.value)
    # the same interval twice is one interval
    support.check(Scenario.model_validate({**s, "trace": {"flow_series": "1s"}, "sample_interval": "1s"}))


def test_on_both_engines_a_datagram_takes_its_ethernet_frames_time():
    """The emulator's IP packets at its scaled rate: a lone UDP flow's payload ceiling
    (1145 KiB/s, digest 6) and its offered load are the simulator's."""
    flows = conway._two_flow()
    sim, emu = (conway.scenario("e1", "droptail", flows, 40.0, 1, engine=x) for x in ("sim", "emulator"))

    def ceiling_and_load(s):
        rate = float(s["topology"]["bottleneck"]["rate"].removesuffix("bps"))
        udp = s["flows"][1]
        size, header = (int(udp[k].removesuffix("B")) for k in ("packet_size", "header_size"))
        offered = float(udp["rate"].removesuffix("bps"))
        return rate * (size - header) / size, offered / rate

    (c_sim, l_sim), (c_emu, l_emu) = ceiling_and_load(sim), ceiling_and_load(emu)
    assert c_emu == pytest.approx(c_sim, rel=1e-6) and l_emu == pytest.approx(l_sim, rel=1e-6)
    assert emu["flows"][1]["header_size"] == "28B" and "delayed_ack" not in emu["tcp"]


def test_two_flow_on_the_emulator_fifo_starves_tcp_and_cbt_protects_it(emulator_machine, tmp_path):
    """Table 5.1's orderings with Linux's TCP: the 10 Mb/s UDP flow takes a FIFO's link
    from TCP; CBT keeps TCP a share and is fairer (one seed, FIFO and CBT: two 40-s runs)."""
    from aqmlab.sweeps import Runner

    e, p = conway.TwoFlow(), conway.ThroughputParams(seeds=1, disciplines=("droptail", "cbt"))
    with Runner(store=tmp_path / "store", engine="emulator") as runner:
        f = e.findings(e.measure(runner, p), p)
    assert f["droptail_tcp_share"] < 0.1, f
    assert 0.3 < f["cbt_tcp_share"] < 0.8, f
    assert f["cbt_jain"] > f["droptail_jain"] + 0.2, f
    # alone, each flow fills the link: UDP its payload ceiling (the simulator's 1145 KiB/s,
    # digest 6), TCP most of its own (its packets carry 52 bytes of headers)
    ip = conway.IP_PACKETS
    ceiling = {kind: ip.link_bps / 8 / conway.KIB * conway.PAYLOAD / size
               for kind, size in (("udp", ip.udp_packet), ("tcp", ip.tcp_packet))}
    assert f["droptail_udp_alone"] == pytest.approx(ceiling["udp"], rel=0.03), f
    assert f["droptail_tcp_alone"] > 0.9 * ceiling["tcp"], f
