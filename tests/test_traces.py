"""Traces ([trace] in a scenario): the packet trace against the flows' losses, the pcap
capture read back by tshark against the simulator's own window and counters, byte-
identical files, and the refusals of bad requests (exit status 2 is in test_cli.py).

tshark comes from Debian's package, installed by ``make setup``.
"""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import aqmlab
from aqmlab.errors import UserError
from aqmlab.results import Results

#: Bytes a data packet carries in the capture: 1000 on the wire less 40 of headers.
SEGMENT = 960


def single_flow(trace: dict) -> dict:
    """One Reno flow through an 8 Mb/s bottleneck with a 40-packet buffer (under a
    bandwidth-delay product: a clean sawtooth, a loss a cycle), its window traced
    every 10 ms, 20 s with the first 2 s (slow start) left out."""
    return {
        "name": "single",
        "duration": "20s",
        "warmup": "2s",
        "sample_interval": "10ms",
        "topology": {
            "kind": "dumbbell",
            "senders": 1,
            "bottleneck": {"rate": "8Mbps", "delay": "30ms", "qdisc": {"kind": "droptail", "limit": "40pkt"}},
            "access": {"rate": "1Gbps", "delay": "1ms"},
        },
        "flows": [{"kind": "tcp", "trace_cwnd": True}],
        "trace": trace,
    }


def tshark(path: Path, *args: str) -> str:
    exe = shutil.which("tshark")
    assert exe, "tshark is installed by `make setup` (Debian's package)"
    return subprocess.run([exe, "-r", str(path), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """The single flow with its sender's access link captured both ways."""
    res = aqmlab.run(single_flow({"pcap": {"links": ["access_s0", "access_s0_rev"]}}))
    out = res.write(tmp_path_factory.mktemp("single"))
    return res, out / "trace.pcap"


def bytes_in_flight(pcap: Path) -> tuple[np.ndarray, np.ndarray]:
    """tshark's bytes in flight at each data segment: times and packets."""
    text = tshark(pcap, "-Y", "tcp.len > 0", "-T", "fields", "-e", "frame.time_epoch",
                  "-e", "tcp.analysis.bytes_in_flight")
    rows = [line.split("\t") for line in text.splitlines()]
    return np.array([float(t) for t, _ in rows]), np.array([float(b) for _, b in rows]) / SEGMENT


def recoveries(t: np.ndarray, w: np.ndarray) -> list[tuple[float, float]]:
    """Fast recoveries in the window trace: from the cut (a sample more than a quarter
    below the one before: ssthresh + 3 packets) to the deflation at their end (the
    next such cut, to ssthresh)."""
    cuts = [t[i] for i in range(1, len(w)) if w[i] < 0.75 * w[i - 1]]
    assert len(cuts) % 2 == 0, f"each recovery begins and ends with a cut: {cuts}"
    return list(zip(cuts[::2], cuts[1::2]))


def test_the_capture_shows_the_sawtooth_of_the_window(captured):
    """The sender sends whenever an ACK opens its window, so the bytes in flight after
    each segment are its window: tshark sees them short by the ACKs on their way from
    the captured link to the sender (1 ms at 1 ms a packet: 0 to 2). The window's
    samples (10 ms apart) are compared with the last segment at or before each, and
    the sawtooth's peaks (the window before each loss) and troughs (after each
    recovery) with tshark's, in time (within an RTT) and size (within 2 packets)."""
    res, pcap = captured
    cwnd = res.metric("cwnd", "0").filter(pl.col("time_s") >= res.summary["warmup_s"])
    t, window = cwnd["time_s"].to_numpy(), np.floor(cwnd["value"].to_numpy())
    sent, flight = bytes_in_flight(pcap)
    last = np.searchsorted(sent, t, side="right") - 1
    short = window - flight[last]
    # Outside fast recovery (where dupACKs come in and nothing goes out until the
    # inflated window passes what is in flight), sample by sample.
    cycles = recoveries(t, window)
    assert len(cycles) >= 3
    outside = np.ones(len(t), dtype=bool)
    for a, b in cycles:
        outside &= ~((t >= a) & (t < b))
    assert outside.mean() > 0.9
    assert np.all((short[outside] >= 0) & (short[outside] <= 2)), np.unique(short[outside])
    # Peaks and troughs.
    rtt = res.flows["base_rtt_s"][0] + 40 * 8000 / 8e6  # with a full buffer
    ramps = [(b, a) for (_, b), (a, _) in zip(cycles, cycles[1:])]
    assert len(ramps) >= 2
    for start, end in ramps:  # congestion avoidance from one recovery to the next
        mine = (t >= start) & (t < end)
        theirs = (sent >= start) & (sent < end)
        for pick in (np.argmax, np.argmin):
            i, j = pick(window[mine]), pick(flight[theirs])
            assert abs(window[mine][i] - flight[theirs][j]) <= 2
            assert abs(t[mine][i] - sent[theirs][j]) <= rtt


def test_tshark_counts_what_the_links_sent(captured):
    """``tshark -z io,stat,1``: every second's frames and bytes, in all the packets and
    bytes the two links sent (their own counters), bytes as on the wire."""
    res, pcap = captured
    text = tshark(pcap, "-q", "-z", "io,stat,1")
    rows = [line.split("|") for line in text.splitlines() if "<>" in line]
    frames = [int(r[2]) for r in rows]
    octets = [int(r[3]) for r in rows]
    assert len(rows) == 20
    links = res.queues.filter(pl.col("link").is_in(["access_s0", "access_s0_rev"]))
    assert sum(frames) == links["departures"].sum()
    assert sum(octets) == links["departure_bytes"].sum()


def test_trace_drops_add_up_to_each_flows_losses():
    """Four flows over a small buffer, their drops traced: each flow's drops in the trace
    are its packets_dropped."""
    scenario = {
        "duration": "10s",
        "topology": {
            "kind": "dumbbell",
            "senders": 4,
            "bottleneck": {"rate": "10Mbps", "delay": "10ms", "qdisc": {"kind": "droptail", "limit": "20pkt"}},
            "access": {"rate": "100Mbps", "delay": ["1ms", "3ms", "5ms", "7ms"]},
        },
        "flows": [{"kind": "tcp", "count": 4}],
        "trace": {"packets": {"events": ["drop"]}},
    }
    res = aqmlab.run(scenario)
    drops = res.trace.group_by("flow").len()
    by_flow = dict(zip(drops["flow"].to_list(), drops["len"].to_list()))
    dropped = res.flows["packets_dropped"].to_list()
    assert sum(dropped) > 50
    assert [by_flow.get(f, 0) for f in range(4)] == dropped
    assert sum(dropped) == res.summary["packets_dropped"]
    assert set(res.trace["reason"]) == {"overflow"}
    assert set(res.trace["link"]) == {"bottleneck"}


def test_same_scenario_same_files(tmp_path):
    trace = {
        "packets": {"links": ["bottleneck"], "events": ["drop", "dequeue"]},
        "pcap": {"links": ["access_s0", "access_s0_rev"]},
        "flow_series": "250ms",
        "flow_stats": True,
    }
    files = []
    for run in ("a", "b"):
        out = aqmlab.run(single_flow(trace)).write(tmp_path / run)
        files.append({p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != "timing.json"})
    assert files[0] == files[1]
    assert {"trace.parquet", "trace.pcap"} <= set(files[0])
    back = Results.read(tmp_path / "a")
    assert back.pcap == files[0]["trace.pcap"]
    assert back.trace is not None and set(back.trace["event"]) == {"drop", "dequeue"}


def test_flow_figures_land_in_their_tables():
    res = aqmlab.run(single_flow({"flow_series": "1s", "flow_stats": True}))
    series = res.metric("throughput_bps", "0")
    assert series["time_s"].to_list() == [float(s) for s in range(1, 21)]
    # The series adds up to the bytes delivered, and over the window (from 2 s) to
    # the flow's throughput.
    assert series["value"].sum() / 8 == pytest.approx(res.flows["unique_bytes_delivered"][0], rel=1e-12)
    assert series["value"][2:].mean() == pytest.approx(res.flows["throughput_bps"][0], rel=1e-12)
    flows = res.flows
    base = flows["base_rtt_s"][0] / 2
    assert base < flows["delay_min_s"][0] < flows["delay_mean_s"][0] < flows["delay_max_s"][0]
    assert flows["jitter_s"][0] > 0
    assert flows["packets_reordered"][0] == 0
    without = aqmlab.run(single_flow({}))
    assert without.flows["jitter_s"].null_count() == 1
    assert without.flows.drop("delay_min_s", "delay_mean_s", "delay_max_s", "jitter_s",
                              "packets_reordered").equals(flows.drop("delay_min_s", "delay_mean_s", "delay_max_s",
                                                                     "jitter_s", "packets_reordered"))


def test_a_fifo_path_reorders_nothing_though_timer_and_ack_share_an_instant():
    """Seed 001's B4 under SFB (one FIFO): ACKs arrive on the bottleneck's 1.6 ms
    grid and retransmission timers fall due on it, so a flow sends new data and then,
    in the same nanosecond, its timer's retransmission (seed 8's flow 6: 3336, then
    3314). Ordered by sequence number within the instant, the retransmission would
    count as reordered."""
    from aqmlab.experiments import georg

    timeouts = 0
    for seed in (3, 7, 8, 10):
        s = georg.scenario("b4", georg.qdisc("sfb", 100, 16), georg.TCP_CASES["B4"], georg.Setup(100.0, 10.0, 1), seed)
        flows = aqmlab.run(s).flows
        timeouts += flows["timeouts"].sum()
        assert flows["packets_reordered"].sum() == 0, seed
    assert timeouts > 100  # the runs do exercise the timer


def test_flow_queues_list_the_queues_each_flow_hashes_to(tmp_path):
    def hashed(qdisc: dict, seed: int = 1) -> aqmlab.Results:
        s = single_flow({"flow_queues": "bottleneck"})
        s["topology"]["bottleneck"]["qdisc"] = qdisc
        s["topology"]["senders"] = 20
        s["flows"] = [{"kind": "udp", "count": 20, "rate": "100kbps"}]
        s["duration"], s["seed"] = "3s", seed
        return aqmlab.run(s)

    mqfq = hashed({"kind": "mqfq", "limit": "100pkt", "queues": 16, "hashes": 3})
    queues = mqfq.flows["queues"].to_list()
    assert all(len(q) == 3 and all(0 <= x < 16 for x in q) for q in queues)
    assert len({tuple(q) for q in queues}) > 15  # the flows' hashes differ
    # the hash family is the run's: another seed, other queues; the same seed, the same
    assert hashed({"kind": "mqfq", "limit": "100pkt", "queues": 16, "hashes": 3}, 2).flows["queues"].to_list() != queues
    assert hashed({"kind": "mqfq", "limit": "100pkt", "queues": 16, "hashes": 3}).flows["queues"].to_list() == queues
    sfq = hashed({"kind": "sfq", "limit": "100pkt", "buckets": 8}).flows["queues"].to_list()
    assert all(len(q) == 1 and 0 <= q[0] < 8 for q in sfq)
    sfb = hashed({"kind": "sfb", "limit": "100pkt", "levels": 2, "bins": 23}).flows["queues"].to_list()
    assert all(len(q) == 2 and 0 <= q[0] < 23 <= q[1] < 46 for q in sfb)  # level x bins + bin
    assert hashed({"kind": "droptail", "limit": "100pkt"}).flows["queues"].to_list() == [[]] * 20
    # written and read back as a list column; null where not asked for
    mqfq.write(tmp_path / "r")
    assert Results.read(tmp_path / "r").flows["queues"].to_list() == queues
    assert aqmlab.run(single_flow({})).flows["queues"].null_count() == 1


@pytest.mark.parametrize("trace,field,words", [
    ({"flow_queues": "nowhere"}, "trace.flow_queues", 'no link named "nowhere"'),
    ({"pcap": {"links": ["access_s0", "nowhere"]}}, "trace.pcap.links[1]", 'no link named "nowhere"'),
    ({"packets": {"flows": [1]}}, "trace.packets.flows[0]", "no flow 1: the scenario has 1 flows"),
    ({"packets": {"events": ["drop", "arrive"]}}, "trace.packets.events[1]", "enqueue"),
    ({"packets": {"links": []}}, "trace.packets.links", "at least 1"),
    ({"packets": {"links": ["bottleneck"], "events": ["deliver"]}}, "trace.packets.links[0]",
     'no packet of any flow arrives over link "bottleneck"'),
    ({"flow_series": "0s"}, "trace.flow_series", ""),
])
def test_bad_requests_name_the_field(trace, field, words):
    with pytest.raises(UserError) as e:
        aqmlab.run(single_flow(trace))
    assert f"{field}:" in str(e.value) and words in str(e.value), str(e.value)


def test_a_filter_that_matches_nothing_is_refused():
    two = single_flow({"packets": {"links": ["access_s1"], "flows": [0]}})
    two["topology"]["senders"] = 2
    two["flows"][0]["count"] = 2
    with pytest.raises(UserError, match=r"trace.packets.links\[0\]: no packet of trace.packets.flows crosses"):
        aqmlab.run(two)
    two["trace"] = {"pcap": {"links": ["access_s1", "bottleneck"], "flows": [1, 0]}}
    aqmlab.run(two)  # each flow crosses a link named, each link is crossed
    two["trace"] = {"pcap": {"links": ["access_s1"], "flows": [1, 0]}}
    with pytest.raises(UserError, match=r"trace.pcap.flows\[1\]: no packet of flow 0 crosses"):
        aqmlab.run(two)



def test_a_trace_of_one_link_is_sized_by_that_link():
    """The memory estimate of a packet trace counts the packets of the traced links,
    at most what each can send at its rate in the smallest packets, not those of every
    link. 100 flows each held to 10 Mb/s by its own access link cross a 100 Mb/s
    bottleneck: tracing the bottleneck alone is bounded by its rate, and the run's
    trace stays within that bound."""
    from aqmlab import limits

    def scenario(trace: dict) -> dict:
        return {
            "duration": "5s",
            "topology": {"kind": "dumbbell", "senders": 100,
                         "bottleneck": {"rate": "100Mbps", "delay": "10ms", "qdisc": {"kind": "droptail", "limit": "100pkt"}},
                         "access": {"rate": "10Mbps", "delay": "1ms"}},
            "flows": [{"kind": "tcp", "count": 100}],
            "trace": trace,
        }

    def trace_bytes(trace: dict) -> float:
        return limits.estimate(aqmlab.Scenario.coerce(scenario(trace)).resolve()).memory_parts["packet trace"]

    one = trace_bytes({"packets": {"links": ["bottleneck"]}})
    # four events (every kind) a packet, at 100 Mb/s in 40-byte ACKs for 5 s
    assert one == pytest.approx(limits.TRACE_EVENT_BYTES * 4 * 100e6 * 5 / (8 * 40))
    assert trace_bytes({"packets": {}}) > 2 * one
    res = aqmlab.run(scenario({"packets": {"links": ["bottleneck"]}}))
    assert 0 < len(res.trace) * limits.TRACE_EVENT_BYTES <= one
