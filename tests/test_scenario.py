"""The scenario schema and its resolution into the Rust contract (no simulator needed)."""

import copy
import json
import tomllib
from pathlib import Path

import pytest

from aqmlab.contract import as_rows as rows
from aqmlab.errors import UserError
from aqmlab.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))

DROPTAIL = {"kind": "droptail", "limit": "100pkt"}


def dumbbell(**over):
    d = {
        "duration": "10s",
        "topology": {
            "kind": "dumbbell",
            "senders": 4,
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "qdisc": dict(DROPTAIL)},
            "access": {"rate": "100Mbps", "delay": {"dist": "uniform", "low": "1ms", "high": "9ms"}},
        },
        "flows": [{"kind": "tcp", "count": 4, "start": {"dist": "uniform", "low": "0s", "high": "1s"}}],
    }
    d.update(over)
    return d


def links_by_name(r):
    return {link["name"]: link for link in r["links"]}


# -- the examples -------------------------------------------------------------


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_example_validates_and_round_trips_through_toml(path):
    s = Scenario.load(path)
    assert s.name == tomllib.loads(path.read_text()).get("name", path.stem)
    text = s.to_toml()
    again = Scenario.model_validate(tomllib.loads(text))
    assert again.to_dict() == s.to_dict()
    assert again.resolved_json() == s.resolved_json()


def test_the_required_examples_exist():
    names = {p.stem for p in SCENARIOS}
    assert {
        "dumbbell", "single-flow-bdp", "single-flow-underbuffered", "single-flow-overbuffered",
        "dumbbell-50-reno", "multi-rtt", "parking-lot", "graph", "short-flows", "udp-mix",
        "bench-dumbbell-1000",
    } <= names


def test_single_flow_examples_match_seed_003():
    for name, b in (("bdp", 142), ("underbuffered", 100), ("overbuffered", 180)):
        r = rows(Scenario.load(ROOT / f"scenarios/single-flow-{name}.toml").resolve())
        links = links_by_name(r)
        assert links["bottleneck"]["rate_bps"] == 8_000_000
        assert links["bottleneck"]["qdisc"]["limit"] == {"packets": b}
        (f,) = r["flows"]
        rtt = sum(r["links"][i]["delay_ns"] for i in f["route"]["path"] + f["route"]["reverse_path"])
        assert rtt == 142_000_000
        assert r["tcp_profiles"][f["profile"]]["packet_size"] == 1000
        assert links["access_s0"]["rate_bps"] >= 100 * links["bottleneck"]["rate_bps"]


def test_dumbbell_50_reno_is_written_out_explicitly():
    r = rows(Scenario.load(ROOT / "scenarios/dumbbell-50-reno.toml").resolve())
    links = links_by_name(r)
    assert [links[f"access_s{i}"]["delay_ns"] for i in range(50)] == [(i + 1) * 1_000_000 for i in range(50)]
    assert [f["start_ns"] for f in r["flows"]] == [50_000_000 * i for i in range(50)]
    assert links["bottleneck"]["qdisc"] == {"kind": "droptail", "limit": {"packets": 100}}
    assert links["access_d7"]["delay_ns"] == 1_000_000 and links["access_d7"]["rate_bps"] == 100_000_000


def test_bench_uses_evenly_spaced_delays_and_starts():
    r = rows(Scenario.load(ROOT / "scenarios/bench-dumbbell-1000.toml").resolve())
    links = links_by_name(r)
    for i in (0, 1, 500, 999):
        assert links[f"access_s{i}"]["delay_ns"] == round(1e6 + 49e6 * i / 999)
        assert r["flows"][i]["start_ns"] == 2_000_000 * i
    assert len(r["flows"]) == 1000 and links["bottleneck"]["qdisc"]["limit"] == {"packets": 290}


# -- determinism and random streams --------------------------------------------


def test_same_seed_same_resolution_other_seed_other_draws():
    a = Scenario.model_validate(dumbbell()).resolved_json()
    b = Scenario.model_validate(dumbbell()).resolved_json()
    assert a == b
    c = rows(json.loads(Scenario.model_validate(dumbbell(seed=2)).resolved_json()))
    a = rows(json.loads(a))
    assert [link["delay_ns"] for link in a["links"]] != [link["delay_ns"] for link in c["links"]]
    assert [f["start_ns"] for f in a["flows"]] != [f["start_ns"] for f in c["flows"]]


def test_adding_a_flow_group_does_not_change_the_other_draws():
    d = dumbbell()
    d["flows"][0]["group"] = "main"
    before = rows(Scenario.model_validate(d).resolve())
    d2 = copy.deepcopy(d)
    d2["flows"].insert(0, {"kind": "tcp", "group": "extra", "count": 3, "start": {"dist": "exponential", "mean": "1s"}})
    after = rows(Scenario.model_validate(d2).resolve())
    starts = lambda r: [f["start_ns"] for f in r["flows"] if f["group"] == "main"]  # noqa: E731
    assert starts(before) == starts(after)
    assert before["links"] == after["links"]


def test_draws_stay_within_their_distribution():
    d = dumbbell()
    d["topology"]["senders"] = 200
    d["flows"][0]["count"] = 200
    d["flows"][0]["start"] = {"dist": "normal", "mean": "1s", "std": "2s"}
    r = rows(Scenario.model_validate(d).resolve())
    delays = [links_by_name(r)[f"access_s{i}"]["delay_ns"] for i in range(200)]
    assert min(delays) >= 1_000_000 and max(delays) <= 9_000_000
    assert len(set(delays)) > 150
    starts = [f["start_ns"] for f in r["flows"]]
    assert min(starts) >= 0  # truncated at 0
    assert sum(s > 1e9 for s in starts) > 60


# -- topologies ----------------------------------------------------------------


def test_dumbbell_naming_and_routes():
    r = rows(Scenario.model_validate(dumbbell()).resolve())
    names = [n["name"] for n in r["nodes"]]
    assert names == ["s0", "s1", "s2", "s3", "r1", "r2", "d0", "d1", "d2", "d3"]
    links = links_by_name(r)
    assert links["bottleneck"]["monitor"] and not links["bottleneck_rev"]["monitor"]
    assert links["bottleneck_rev"]["qdisc"]["limit"] == {"packets": 100000}
    idx = {link["name"]: i for i, link in enumerate(r["links"])}
    f = r["flows"][2]
    assert f["route"]["path"] == [idx["access_s2"], idx["bottleneck"], idx["access_d2"]]
    assert f["route"]["reverse_path"] == [idx["access_d2_rev"], idx["bottleneck_rev"], idx["access_s2_rev"]]
    # receivers default to the fastest sender link
    assert links["access_d0"]["rate_bps"] == 100_000_000 and links["access_d0"]["delay_ns"] == 0


def test_flows_cycle_over_groups_and_lists_of_nodes():
    d = dumbbell()
    d["topology"]["receivers"] = 2
    d["flows"] = [
        {"kind": "tcp", "count": 6},
        {"kind": "udp", "src": ["s1", "s3"], "dst": "d0", "rate": "1Mbps", "count": 2},
    ]
    r = rows(Scenario.model_validate(d).resolve())
    name = lambda i: r["nodes"][i]["name"]  # noqa: E731
    pairs = [(name(f["route"]["src"]), name(f["route"]["dst"])) for f in r["flows"]]
    assert pairs[:6] == [("s0", "d0"), ("s1", "d1"), ("s2", "d0"), ("s3", "d1"), ("s0", "d0"), ("s1", "d1")]
    assert pairs[6:] == [("s1", "d0"), ("s3", "d0")]
    assert r["flows"][6]["route"]["reverse_path"] == []


def test_multi_rtt_computes_access_delays_from_the_group_rtt():
    r = rows(Scenario.load(ROOT / "scenarios/multi-rtt.toml").resolve())
    rtts = {}
    for f in r["flows"]:
        rt = f["route"]
        rtts.setdefault(f["group"], set()).add(sum(r["links"][i]["delay_ns"] for i in rt["path"] + rt["reverse_path"]))
    assert rtts == {"rtt40": {40_000_000}, "rtt200": {200_000_000}}


def test_multi_rtt_refuses_an_impossible_rtt():
    s = Scenario.load(ROOT / "scenarios/multi-rtt.toml").to_dict()
    s["topology"]["groups"][1]["rtt"] = "1ms"
    with pytest.raises(UserError) as e:
        Scenario.model_validate(s)
    assert e.value.field == "topology.groups[1].rtt"


def test_parking_lot_through_flows_cross_every_hop_and_cross_flows_one():
    r = rows(Scenario.load(ROOT / "scenarios/parking-lot.toml").resolve())
    hops = {i for i, link in enumerate(r["links"]) if link["name"].startswith("hop") and "rev" not in link["name"]}
    for f in r["flows"]:
        on = [i for i in f["route"]["path"] if i in hops]
        if f["group"] == "through":
            assert len(on) == 3
        else:
            assert len(on) == 1
    cross_hops = [r["links"][[i for i in f["route"]["path"] if i in hops][0]]["name"] for f in r["flows"] if f["group"] == "cross"]
    assert cross_hops[:6] == ["hop0", "hop1", "hop2", "hop0", "hop1", "hop2"]
    assert sorted(r["links"][i]["name"] for i in hops) == ["hop0", "hop1", "hop2"]
    assert all(r["links"][i]["monitor"] for i in hops)


def graph(**flow):
    return {
        "duration": "5s",
        "topology": {
            "kind": "graph",
            "nodes": ["a", {"name": "b"}, "x", "y", "z"],
            "links": [
                {"from": "a", "to": "x", "rate": "10Mbps", "delay": "5ms"},
                {"from": "x", "to": "b", "rate": "10Mbps", "delay": "5ms"},
                {"from": "a", "to": "y", "rate": "10Mbps", "delay": "5ms"},
                {"from": "y", "to": "b", "rate": "10Mbps", "delay": "5ms"},
                {"from": "a", "to": "b", "rate": "10Mbps", "delay": "11ms", "name": "direct"},
                {"from": "z", "to": "a", "rate": "1Mbps", "delay": "1ms", "duplex": False},
            ],
        },
        "flows": [{"kind": "tcp", "src": "a", "dst": "b", **flow}],
    }


def test_graph_shortest_path_breaks_ties_by_hops_then_names():
    r = rows(Scenario.model_validate(graph()).resolve())
    f = r["flows"][0]["route"]
    assert [r["links"][i]["name"] for i in f["path"]] == ["a->x", "x->b"]
    assert [r["links"][i]["name"] for i in f["reverse_path"]] == ["b->x", "x->a"]
    d = graph()
    d["topology"]["links"][4]["delay"] = "10ms"  # now equal delay, fewer hops
    r = rows(Scenario.model_validate(d).resolve())
    assert [r["links"][i]["name"] for i in r["flows"][0]["route"]["path"]] == ["direct"]
    assert [r["links"][i]["name"] for i in r["flows"][0]["route"]["reverse_path"]] == ["direct_rev"]


def test_graph_explicit_path():
    r = rows(Scenario.model_validate(graph(path=["a", "y", "b"])).resolve())
    f = r["flows"][0]["route"]
    assert [r["links"][i]["name"] for i in f["path"]] == ["a->y", "y->b"]
    assert [r["links"][i]["name"] for i in f["reverse_path"]] == ["b->y", "y->a"]
    with pytest.raises(UserError) as e:
        Scenario.model_validate(graph(path=["a", "z", "b"]))
    assert e.value.field == "flows[0].path[1]"


def test_graph_unreachable_destination_names_the_flow():
    with pytest.raises(UserError) as e:
        Scenario.model_validate(graph(src="a", dst="z"))
    assert e.value.field == "flows[0]" and "no route from a to z" in str(e.value)


# -- flows -----------------------------------------------------------------------


def test_tcp_overrides_become_deduplicated_profiles():
    d = dumbbell()
    d["tcp"] = {"variant": "newreno", "min_rto": "1s"}
    d["flows"] = [
        {"kind": "tcp", "group": "a"},
        {"kind": "tcp", "group": "b", "tcp": {"variant": "tahoe", "receiver_window": 20}},
        {"kind": "tcp", "group": "c", "tcp": {"variant": "tahoe", "receiver_window": "20pkt"}},
        {"kind": "tcp", "group": "d", "tcp": {"variant": "newreno"}},
    ]
    r = rows(Scenario.model_validate(d).resolve())
    assert [f["profile"] for f in r["flows"]] == [0, 1, 1, 0]
    p0, p1 = r["tcp_profiles"]
    assert p0["variant"] == "newreno" and p0["min_rto_ns"] == 1_000_000_000 and p0["receiver_window"] == 10000
    assert p0["initial_ssthresh"] == 10000  # defaults to the receiver window
    assert p1["variant"] == "tahoe" and p1["receiver_window"] == 20 and p1["min_rto_ns"] == 1_000_000_000


def test_cubic_parameters_resolve_for_cubic_alone_and_only_those_set():
    d = dumbbell()
    d["tcp"] = {"variant": "cubic", "cubic": {"beta": 0.5}}
    d["flows"] = [
        {"kind": "tcp", "group": "a"},
        {"kind": "tcp", "group": "b", "tcp": {"cubic": {"hystart": True}}},
        {"kind": "tcp", "group": "c", "tcp": {"variant": "sack"}},
    ]
    r = rows(Scenario.model_validate(d).resolve())
    profile = [r["tcp_profiles"][f["profile"]] for f in r["flows"]]
    assert profile[0]["variant"] == "cubic" and profile[0]["cubic"] == {"beta": 0.5}
    assert profile[1]["cubic"] == {"beta": 0.5, "hystart": True}, "a flow's cubic table overrides field by field"
    assert profile[2]["variant"] == "sack" and "cubic" not in profile[2]
    d["tcp"] = {"variant": "cubic"}
    d["flows"] = [{"kind": "tcp"}]
    (p,) = rows(Scenario.model_validate(d).resolve())["tcp_profiles"]
    assert "cubic" not in p, "the defaults are Rust's"
    d["tcp"]["cubic"] = {"recovery": "tahoe"}
    assert _error(d).field == "tcp.cubic.recovery"


def test_a_tcp_flow_stops_after_its_starts():
    d = dumbbell()
    r = rows(Scenario.model_validate(d).resolve())
    assert "stop_ns" not in r["flows"][0], "a flow that writes to the end resolves as before"
    d["flows"][0]["stop"] = "5s"
    r = rows(Scenario.model_validate(d).resolve())
    assert all(f["stop_ns"] == 5_000_000_000 for f in r["flows"])
    d["flows"][0]["stop"] = "0.5s"  # the starts are spread over the first second
    e = _error(d)
    assert e.field == "flows[0].stop" and "later than the start" in str(e)


def test_sizes_in_packets_count_payload():
    d = dumbbell()
    d["tcp"] = {"packet_size": "1500B", "header_size": "52B"}
    d["flows"] = [
        {"kind": "tcp", "group": "a", "size": "30pkt", "off_time": {"dist": "exponential", "mean": "2s"}},
        {"kind": "tcp", "group": "b", "size": "64KiB"},
        {"kind": "tcp", "group": "c"},
    ]
    r = rows(Scenario.model_validate(d).resolve())
    assert [f["size_bytes"] for f in r["flows"]] == [30 * 1448, 65536, None]
    assert r["flows"][0]["off_time"] == {"dist": "exponential", "mean": 2e9}
    assert r["flows"][1]["off_time"] is None


def test_arrivals_from_load_use_the_slowest_link_and_bytes_on_the_wire():
    r = rows(Scenario.load(ROOT / "scenarios/short-flows.toml").resolve())
    (a,) = r["arrivals"]
    assert a["size_bytes"] == {"dist": "pareto", "mean": 30 * 960.0, "shape": 1.2}
    # 0.8 * 20 Mb/s over 30 packets of 1000 B on the wire
    assert a["rate_per_s"] == pytest.approx(0.8 * 20e6 / (30 * 1000 * 8))
    assert len(a["routes"]) == 20
    d = Scenario.load(ROOT / "scenarios/short-flows.toml").to_dict()
    d["flows"][0].pop("load")
    d["flows"][0]["rate"] = "50/s"
    assert rows(Scenario.model_validate(d).resolve())["arrivals"][0]["rate_per_s"] == 50.0


def test_udp_sources():
    r = rows(Scenario.load(ROOT / "scenarios/udp-mix.toml").resolve())
    udp = [f for f in r["flows"] if f["kind"] == "udp"]
    assert udp[0]["source"] == {"model": "cbr", "rate_bps": 2_000_000, "jitter": 0.5}
    assert udp[0]["tagged"] is True and udp[0]["stop_ns"] is None
    assert udp[1]["source"]["model"] == "on_off"
    assert udp[1]["source"]["on"] == {"dist": "exponential", "mean": 1e9}
    assert udp[1]["packet_size"] == 500 and udp[1]["stop_ns"] == 55_000_000_000
    assert [f["start_ns"] for f in udp[1:]] == [5_000_000_000, 5_500_000_000]


def test_defaults_are_filled_in_when_written_back():
    s = Scenario.model_validate(dumbbell())
    d = s.to_dict()
    assert d["seed"] == 1 and d["warmup"] == "0s" and d["sample_interval"] == "100ms"
    assert d["tcp"]["receiver_window"] == 10000 and d["tcp"]["min_rto"] == "200ms"
    assert d["topology"]["access_qdisc"] == {"kind": "droptail", "limit": "50pkt"}
    assert d["topology"]["delivery_qdisc"] == {"kind": "droptail", "limit": "100000pkt"}
    assert d["flows"][0]["size"] == "inf"


NS2_QUEUE = {"kind": "droptail", "limit": {"packets": 50}}
LARGE_QUEUE = {"kind": "droptail", "limit": {"packets": 100_000}}


@pytest.mark.parametrize("name", ["dumbbell", "multi-rtt", "parking-lot"])
def test_hosts_own_queues_default_to_ns2s_and_queues_into_hosts_to_large(name):
    """docs/user-guide.md, "Default queues": a window outgrowing its path waits at
    most 50 packets in its sender's queue, and nothing a bottleneck let through is
    dropped on its way into a host."""
    d = Scenario.load(ROOT / f"scenarios/{name}.toml").to_dict()
    for field in ("access_qdisc", "delivery_qdisc"):
        d["topology"].pop(field, None)
    links = links_by_name(rows(Scenario.model_validate(d).resolve()))
    sender, receiver = ("access_src0", "access_dst0") if name == "parking-lot" else ("access_s0", "access_d0")
    assert links[sender]["qdisc"] == links[f"{receiver}_rev"]["qdisc"] == NS2_QUEUE
    assert links[receiver]["qdisc"] == links[f"{sender}_rev"]["qdisc"] == LARGE_QUEUE
    reverse = "hop0_rev" if name == "parking-lot" else "bottleneck_rev"
    assert links[reverse]["qdisc"] == LARGE_QUEUE
    d["topology"]["access_qdisc"] = {"kind": "red", "limit": "30pkt"}
    links = links_by_name(rows(Scenario.model_validate(d).resolve()))
    assert links[sender]["qdisc"]["kind"] == links[f"{receiver}_rev"]["qdisc"]["kind"] == "red"
    assert links[receiver]["qdisc"] == LARGE_QUEUE


def test_a_graph_link_defaults_to_ns2s_queue():
    r = rows(Scenario.load(ROOT / "scenarios/graph.toml").resolve())
    links = links_by_name(r)
    assert links["a->r1"]["qdisc"] == links["r1->a"]["qdisc"] == NS2_QUEUE


def test_a_header_size_of_zero_makes_the_packet_all_payload():
    d = dumbbell()
    d["tcp"] = {"packet_size": "1500B", "header_size": "0B"}
    d["flows"][0]["size"] = "30pkt"
    r = rows(Scenario.model_validate(d).resolve())
    assert r["tcp_profiles"][0]["header_size"] == 0
    assert r["flows"][0]["size_bytes"] == 30 * 1500
    d["tcp"]["header_size"] = "-1B"
    assert _error(d).field == "tcp.header_size"


def test_with_seed():
    s = Scenario.model_validate(dumbbell())
    assert rows(s.with_seed(7).resolve())["seed"] == 7
    assert rows(s.resolve())["seed"] == 1


# -- errors (in-process; the CLI's exit status is tested in test_cli.py) ------------


def _error(d):
    with pytest.raises(UserError) as e:
        Scenario.model_validate(d)
    return e.value


def test_errors_name_the_field():
    d = dumbbell()
    d["topology"]["bottleneck"]["rate"] = "10MB"
    e = _error(d)
    assert str(e) == 'topology.bottleneck.rate: expected a rate such as "10Mbps" (rates are in bits per second: bps, Mbps, Mb/s, ...), got "10MB"'
    d = dumbbell()
    d["topology"]["bottleneck"]["qdisc"] = {"kind": "codle"}
    e = _error(d)
    assert e.field == "topology.bottleneck.qdisc.kind" and '"droptail"' in str(e)
    d = dumbbell()
    d["topology"]["bottleneck"]["buffer"] = 3
    assert "known fields: rate, delay, qdisc" in str(_error(d))
    d = dumbbell()
    d["flows"][0]["start"] = ["1s", "2s"]
    assert _error(d).field == "flows[0].start"
    d = dumbbell(warmup="10s")
    assert _error(d).field == "warmup"
    d = dumbbell()
    d["flows"].append({"kind": "udp", "rate": "1Mbps", "model": "poisson", "jitter": 0.1})
    assert _error(d).field == "flows[1].jitter"
    d = dumbbell()
    d["flows"].append({"kind": "tcp", "group": "tcp0"})
    assert _error(d).field == "flows[1].group"


def test_several_errors_are_reported_together():
    d = dumbbell(duration="-1s", seed=-3)
    e = _error(d)
    assert "2 problems" in str(e) and "duration" in str(e) and "seed" in str(e)


def test_load_reports_missing_files_and_bad_toml(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        Scenario.load(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("duration = \n")
    with pytest.raises(UserError, match="invalid TOML"):
        Scenario.load(bad)


def test_name_defaults_to_the_file_stem(tmp_path):
    p = tmp_path / "my-run.toml"
    text = (ROOT / "scenarios/dumbbell.toml").read_text().replace('name = "dumbbell"\n', "")
    p.write_text(text)
    assert Scenario.load(p).name == "my-run"
