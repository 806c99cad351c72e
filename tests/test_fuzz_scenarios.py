"""A fuzzer of our own over the scenario schema (hypothesis).

It writes scenario files, most of them structurally valid (every topology kind,
every flow kind, traces, TCP settings, small and short enough to run) and then
spoils many of them: a value replaced by a hostile one (huge, negative, zero, of the
wrong type or unit, nested deep), a required field dropped, an unknown one added,
the text truncated or sprinkled with bytes. Each file goes through what a user's
file goes through:

* ``Scenario.load`` either accepts it or raises :class:`~aqmlab.errors.UserError`;
  any other exception is a crash;
* an accepted scenario is estimated (``aqmlab.limits``), and run when the estimate
  is small; the run must not raise at all (a refusal by the core is a mistake that
  validation let through) and must not take more events than its estimate.

``make test`` runs a bounded number of examples (derandomized: the same examples
every time). The release check runs many more with fresh randomness:

    AQMLAB_FUZZ_EXAMPLES=10000 AQMLAB_FUZZ_RANDOM=1 python -m pytest -q tests/test_fuzz_scenarios.py

(docs/user-guide.md, "Limits", says how long that takes).
"""

import copy
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import aqmlab  # noqa: E402
from aqmlab import limits  # noqa: E402
from aqmlab.errors import UserError  # noqa: E402

EXAMPLES = int(os.environ.get("AQMLAB_FUZZ_EXAMPLES", "120"))
RANDOM = os.environ.get("AQMLAB_FUZZ_RANDOM", "") not in ("", "0")
#: Accepted scenarios estimated above this many events are not run (the fuzzer
#: looks for crashes, not for long runs).
RUN_EVENTS = 3_000_000

# ---------------------------------------------------------------------------
# values

TIMES = ["1ns", "1us", "500us", "1ms", "5ms", "20ms", "100ms", "0.5s", "1s", "1.5 s", "0s"]
SHORT = ["50ms", "200ms", "500ms", "1s", "2s"]
RATES = ["100kbps", "1Mbps", "10Mbps", "100Mbps", "1Gbps", "2.5 Mbps", "64kbit/s"]
SIZES = ["40B", "100B", "576B", "1000B", "1500B", "1kB"]
BUFFERS = ["1pkt", "5pkt", "20pkt", "100pkt", "3kB", "150kB"]
PAYLOADS = ["1B", "1kB", "10pkt", "30kB", "inf"]
QDISCS = ["droptail", "red", "ared", "red_linux", "fred", "codel", "fq_codel", "sfq", "mqfq", "sfed", "drr", "wdrr",
          "tdrr", "qsdrr", "dtdrr", "dsdrr", "pie", "choke", "sfb", "blue", "cbt", "dcbt", "chips", "scfq", "wf2q_plus"]

HOSTILE: list[Any] = [
    0, -1, 1, 2**31, 2**32, 2**63, 2**64, 10**30, 1e12, 1e8, 1.5, -0.0, math.inf, -math.inf, math.nan,
    True, False, "", " ", "0", "10", "-5ms", "1e30s", "1e999999999ms", "1e-30s", "nan s", "inf", "-inf",
    "10MB", "10Mbps", "1000b", "30pkt", "1e12pkt", "0pkt", "1e15bps", "1ns", "1000000000s", "\u00e9\u00e8", "\x00",
    "a" * 200, "x.y", "s0", "r1", "senders", "receivers", [], [1], ["a"], [[[]]], {}, {"dist": "uniform"},
    {"dist": "pareto", "mean": "1kB", "shape": 1.0}, {"kind": "droptail"}, {"kind": "nope"},
    {"dist": "exponential", "mean": "0s"}, {"a": {"b": {"c": {"d": {}}}}},
]


#: Hostile values for a leaf of the same type: a quantity's text, a count.
HOSTILE_TEXT = ["1e30s", "1e999999999ms", "1e30Mbps", "1e19bps", "1e30B", "1e30pkt", "9999999999999999999pkt",
                "1e30/s", "-1ms", "-0s", "0ns", "1e-30s", "1e-30pkt", "nan ms", "inf s", "10 MB", "1000b", "1 0ms",
                "1e15bps", "1ns", "1000000000s", "0bps", "0B", "0pkt", "0/s", "1e-9/s"]
HOSTILE_NUMBER = [0, -1, 2**31, 2**32, 2**32 - 1, 2**63, 2**64, 1e12, 1e8, 1e300, 1.5, -0.5, math.nan, math.inf]


def _deep(n: int) -> Any:
    v: Any = []
    for _ in range(n):
        v = [v]
    return v


HOSTILE.append(_deep(40))

# ---------------------------------------------------------------------------
# structurally valid scenarios


#: Values a discipline's parameter may be given, by its unit in the core's catalogue.
BY_UNIT: dict[str, list[Any]] = {
    "time": TIMES + ["5ms", "100ms"],
    "bytes": SIZES + ["0B"],
    "packets": [1, 10, 100, "10pkt", "1000pkt"],
    "buffer": BUFFERS,
    "rate": RATES,
    "number": [0, 1, 2, 3, 5, 10, 64, 0.001, 0.1, 0.5, 0.9, 1.0, 1.5, -1, 1e12, 2**40, math.nan, math.inf],
    "flag": [True, False],
    "choice": ["", "none", "bloom", "hash", "head", "tail", "dequeue", "ns2", "linux", "exact"],
    "table": [{}, {"period": "10ms"}, {"bits": 8, "hashes": 1}],
    "tables": [[], [{"weight": 2}], [{"flow": 0, "weight": 3}]],
}


def _catalogue() -> dict[str, Any]:
    from aqmlab.qdiscs import catalogue

    return catalogue()


@st.composite
def qdisc(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(QDISCS))
    q: dict[str, Any] = {"kind": kind, "limit": draw(st.sampled_from(BUFFERS))}
    if kind == "fq_codel":
        q["limit"] = draw(st.sampled_from(["10pkt", "100pkt", "1000pkt"]))
    if kind in ("drr", "qsdrr"):
        q["queues"] = draw(st.integers(1, 8))
    params = _catalogue()[kind].parameters
    for _ in range(draw(st.integers(0, 2))):
        p = params[draw(st.sampled_from(sorted(params)))]
        q[p.key] = draw(st.sampled_from(BY_UNIT.get(p.unit, HOSTILE)))
    return q


def varying(values: list[str], n: int) -> Any:
    return st.one_of(
        st.sampled_from(values),
        st.lists(st.sampled_from(values), min_size=n, max_size=n),
        st.builds(lambda a, b: {"dist": "uniform", "low": min(a, b, key=_order), "high": max(a, b, key=_order)},
                  st.sampled_from(values), st.sampled_from(values)),
        st.builds(lambda a: {"dist": "exponential", "mean": a}, st.sampled_from([v for v in values if v != "0s"])),
    )


def _order(text: str) -> float:
    from aqmlab import units

    try:
        return units.parse_time(text)
    except UserError:
        return units.parse_rate(text)


@st.composite
def topology(draw: Any) -> tuple[dict[str, Any], list[tuple[Any, Any]]]:
    """A topology and (src, dst) pairs that its flows may use."""
    kind = draw(st.sampled_from(["dumbbell", "multi_rtt", "parking_lot", "graph"]))
    link = lambda: {"rate": draw(st.sampled_from(RATES)), "delay": draw(st.sampled_from(TIMES)), "qdisc": draw(qdisc()),  # noqa: E731
                    **({"loss": draw(st.sampled_from([0.001, 0.05, 0.5]))} if draw(st.integers(0, 3)) == 0 else {})}
    if kind == "dumbbell":
        n = draw(st.integers(1, 6))
        t = {"kind": kind, "senders": n, "bottleneck": link(),
             "access": {"rate": draw(varying(RATES, n)), "delay": draw(varying(TIMES, n))}}
        return t, [(None, None), ("senders", "receivers"), ("s0", "d0")]
    if kind == "multi_rtt":
        groups = [{"senders": draw(st.integers(1, 3)), "rtt": draw(st.sampled_from(["10ms", "50ms", "100ms"]))}
                  for _ in range(draw(st.integers(1, 3)))]
        t = {"kind": kind, "groups": groups, "bottleneck": link(), "access": {"rate": draw(st.sampled_from(RATES))}}
        return t, [(None, None), ("g0", "g0_receivers")]
    if kind == "parking_lot":
        hops = draw(st.integers(1, 3))
        t = {"kind": kind, "hops": hops, "hop": link(), "through": draw(st.integers(1, 2)), "cross": draw(st.integers(0, 2)),
             "access": {"rate": draw(st.sampled_from(RATES)), "delay": draw(st.sampled_from(TIMES))}}
        return t, [("through", "through_dst"), ("src0", "dst0")]
    links = [{"from": "a", "to": "b", **link()}, {"from": "b", "to": "c", **link(), "monitor": True}]
    if draw(st.booleans()):
        links.append({"from": "a", "to": "c", **link()})
    t = {"kind": kind, "nodes": ["a", "b", "c"], "links": links, "groups": {"left": ["a"], "right": ["c"]}}
    return t, [("a", "c"), ("left", "right"), ("c", "a")]


@st.composite
def flow(draw: Any, ends: list[tuple[Any, Any]], short: str) -> dict[str, Any]:
    kind = draw(st.sampled_from(["tcp", "tcp", "udp", "tcp_arrivals"]))
    src, dst = draw(st.sampled_from(ends))
    f: dict[str, Any] = {"kind": kind}
    if src is not None:
        f["src"], f["dst"] = src, dst
    if kind == "tcp":
        n = draw(st.integers(1, 4))
        f |= {"count": n, "size": draw(st.sampled_from(PAYLOADS)), "start": draw(varying(["0s", "1ms", "10ms", "50ms"], n))}
        if draw(st.booleans()):
            f["tcp"] = {"variant": draw(st.sampled_from(["reno", "tahoe", "newreno", "sack", "cubic"])),
                        "delayed_ack": draw(st.booleans()), "syn": draw(st.booleans())}
        if draw(st.integers(0, 4)) == 0:
            f["off_time"] = draw(st.sampled_from(["100ms", {"dist": "exponential", "mean": "200ms"}]))
        f["trace_cwnd"] = draw(st.booleans())
    elif kind == "udp":
        model = draw(st.sampled_from(["cbr", "poisson", "onoff"]))
        f |= {"count": draw(st.integers(1, 3)), "rate": draw(st.sampled_from(RATES[:4])), "model": model,
              "packet_size": draw(st.sampled_from(SIZES[1:]))}
        if model == "onoff":
            f |= {"on": draw(st.sampled_from(["10ms", "100ms"])), "off": {"dist": "exponential", "mean": "50ms"}}
        if model == "cbr":
            f["jitter"] = draw(st.sampled_from([0.0, 0.1, 0.5]))
    else:
        f |= {"size": draw(st.sampled_from(["1kB", "10pkt", {"dist": "pareto", "mean": "10pkt", "shape": 1.5},
                                            {"dist": "exponential", "mean": "5kB"}]))}
        f |= {"rate": draw(st.sampled_from(["1/s", "20/s", "100/s"]))} if draw(st.booleans()) else {"load": draw(st.sampled_from([0.1, 0.5, 0.9]))}
    return f


@st.composite
def scenario(draw: Any) -> dict[str, Any]:
    topo, ends = draw(topology())
    duration = draw(st.sampled_from(SHORT))
    s: dict[str, Any] = {
        "name": "fuzz",
        "seed": draw(st.integers(0, 2**64 - 1)),
        "duration": duration,
        "sample_interval": draw(st.sampled_from(["0s", "10ms", "50ms", duration])),
        "topology": topo,
        "flows": [draw(flow(ends, duration)) for _ in range(draw(st.integers(1, 3)))],
    }
    if draw(st.booleans()):
        s["tcp"] = {"packet_size": draw(st.sampled_from(SIZES[2:])), "min_rto": draw(st.sampled_from(["10ms", "200ms", "1s"])),
                    "initial_window": draw(st.integers(1, 10))}
    if draw(st.integers(0, 3)) == 0:
        s["trace"] = draw(st.sampled_from([{"flow_stats": True}, {"flow_series": "100ms"}, {"packets": {"events": ["drop"]}}]))
    if draw(st.integers(0, 3)) == 0:
        s["ties"] = "numbered"
    return s


# ---------------------------------------------------------------------------
# spoiling


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, prefix + (i,))
    return out


def _at(value: Any, path: tuple) -> Any:
    for p in path:
        value = value[p]
    return value


@st.composite
def spoiled(draw: Any) -> dict[str, Any]:
    """A valid scenario with up to three mutations, chosen uniformly (hypothesis's own
    choices favour the first of a list: here every field and value is as likely)."""
    s = draw(scenario())
    rnd = draw(st.randoms(use_true_random=False))
    for _ in range(rnd.choice([0, 1, 1, 2, 3])):
        path = rnd.choice([p for p in _paths(s) if p])
        parent, key = _at(s, path[:-1]), path[-1]
        action = rnd.choice(["replace", "replace", "replace", "drop", "add"])
        if action == "replace":
            old = parent[key]
            pool = HOSTILE
            if isinstance(old, str) and rnd.random() < 0.5:
                pool = HOSTILE_TEXT
            elif isinstance(old, (int, float)) and not isinstance(old, bool) and rnd.random() < 0.5:
                pool = HOSTILE_NUMBER
            parent[key] = copy.deepcopy(rnd.choice(pool))
        elif action == "drop" and isinstance(parent, dict):
            del parent[key]
        elif action == "add" and isinstance(parent, dict):
            parent[rnd.choice(["colour", "limit", "rate", "kind", "count", "target", "max_p"])] = copy.deepcopy(rnd.choice(HOSTILE))
    return s


# ---------------------------------------------------------------------------
# TOML text of any value (inline tables), hostile text included


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def toml_text(s: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(str(k))} = {toml_value(v)}\n" for k, v in s.items())


@st.composite
def scenario_file(draw: Any) -> bytes:
    text = toml_text(draw(spoiled())).encode()
    how = draw(st.sampled_from(["as is"] * 8 + ["truncate", "bytes"]))
    if how == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif how == "bytes":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.binary(min_size=1, max_size=8)) + text[at:]
    return text


# ---------------------------------------------------------------------------
# the property


def check_file(path: Path, engine: str) -> str:
    """What became of one scenario file: "refused", "accepted" or "ran"; raises on a
    crash (any exception but a UserError from validation, or a run past its estimate)."""
    try:
        s = aqmlab.Scenario.load(path)
    except UserError as e:
        assert str(e).strip(), "an empty message"
        return "refused"
    est = limits.estimate(s.resolve())
    if est.events > RUN_EVENTS:
        return "accepted"
    res = aqmlab.run(s, engine=engine)
    events = res.timing["events"]
    assert events <= est.events, f"{events} events, estimated at most {est.events:.0f}: {est.event_parts}"
    return "ran"


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not RANDOM,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(data=scenario_file(), engine=st.sampled_from(["fast", "reference"]))
def test_no_scenario_file_crashes_aqmlab(tmp_path_factory, data, engine):
    path = tmp_path_factory.mktemp("fuzz") / "scenario.toml"
    path.write_bytes(data)
    try:
        event(check_file(path, engine))
    except Exception:
        print(data.decode("utf-8", "replace"))
        raise


@settings(max_examples=max(EXAMPLES // 4, 10), deadline=None, derandomize=not RANDOM, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=scenario())
def test_valid_scenarios_are_accepted_and_run_within_their_estimate(tmp_path_factory, data):
    """Unspoiled scenarios are mostly accepted: the generator does reach the runs."""
    path = tmp_path_factory.mktemp("fuzz") / "scenario.toml"
    path.write_text(toml_text(data))
    event(check_file(path, "fast"))
