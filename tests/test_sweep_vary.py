"""--vary parsing and the grid: lists, ranges, log ranges, products, and the
mistakes that must become exit status 2 naming the --vary argument."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aqmlab import contract
from aqmlab.errors import UserError
from aqmlab.sweeps import plan
from aqmlab.sweeps.vary import grid, parse_path, parse_values, parse_vary

ROOT = Path(__file__).resolve().parents[1]
DUMBBELL = ROOT / "scenarios" / "dumbbell.toml"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("50pkt,100pkt,200pkt", ["50pkt", "100pkt", "200pkt"]),
        ("reno,newreno", ["reno", "newreno"]),
        ("1,2,5", [1, 2, 5]),
        ("0.5,2", [0.5, 2.0]),
        ("true,false", [True, False]),
        (" 10Mbps , 20Mbps ", ["10Mbps", "20Mbps"]),
        ("10pkt:50pkt:10pkt", ["10pkt", "20pkt", "30pkt", "40pkt", "50pkt"]),
        ("10pkt:55pkt:10pkt", ["10pkt", "20pkt", "30pkt", "40pkt", "50pkt"]),
        ("1:5:1", [1, 2, 3, 4, 5]),
        ("0.1:0.5:0.1", [0.1, 0.2, 0.3, 0.4, 0.5]),
        ("1ms:2ms:0.5ms", ["1ms", "1.5ms", "2ms"]),
        ("5s:5s:1s", ["5s"]),
        ("log:10pkt:1000pkt:5", ["10pkt", "32pkt", "100pkt", "316pkt", "1000pkt"]),
        ("log:1:100:3", [1, 10, 100]),
        ("log:1pkt:4pkt:10", ["1pkt", "2pkt", "3pkt", "4pkt"]),  # duplicates after rounding dropped
        ("log:1Mbps:100Mbps:3", ["1Mbps", "10Mbps", "100Mbps"]),
        ("log:1ms:2ms:3", ["1ms", "1.41421ms", "2ms"]),
    ],
)
def test_values(text, expected):
    assert parse_values("f", text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no values"),
        ("1,,2", "empty value"),
        ("1:2", "START:STOP:STEP"),
        ("1:2:3:4", "START:STOP:STEP"),
        ("10pkt:100ms:10pkt", "same unit"),
        ("10:100pkt:10pkt", "need the unit"),
        ("10pkt:100pkt:0pkt", "greater than zero"),
        ("100pkt:10pkt:10pkt", "stop must not be less"),
        ("a:b:c", "expected a number"),
        ("1:1000000000:1", "at most"),
        ("log:10pkt:1000pkt", "log:START:STOP:COUNT"),
        ("log:10pkt:1000ms:5", "same unit"),
        ("log:0pkt:10pkt:5", "greater than zero"),
        ("log:1pkt:10pkt:1", "count must be in"),
        ("log:1pkt:10pkt:x", "count must be an integer"),
    ],
)
def test_malformed_values(text, message):
    with pytest.raises(UserError) as e:
        parse_values("topology.bottleneck.qdisc.limit", text)
    assert message in str(e.value)
    assert f"--vary topology.bottleneck.qdisc.limit={text}" in str(e.value)


def test_paths():
    assert parse_path("flows[0].count", "x") == ["flows", 0, "count"]
    assert parse_path("topology.bottleneck.qdisc.limit", "x") == ["topology", "bottleneck", "qdisc", "limit"]
    assert parse_path("a[1][2].b", "x") == ["a", 1, 2, "b"]
    for bad in ("", "a..b", "flows[x].count", "a.", "1a", "a[0"):
        with pytest.raises(UserError):
            parse_path(bad, "x")
    with pytest.raises(UserError, match="FIELD=VALUES"):
        parse_vary("duration")


def test_grid_is_the_product_first_vary_outermost():
    g = grid([("a", [1, 2]), ("b", ["x", "y", "z"])])
    assert g == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}, {"a": 2, "b": "z"}]


def test_plan_sets_fields_and_seeds():
    fields, tasks = plan(
        DUMBBELL,
        {"topology.bottleneck.qdisc.limit": "20pkt:40pkt:20pkt", "flows[0].count": [2, 3], "tcp.initial_ssthresh": [16]},
        seeds=2,
    )
    assert fields == ["topology.bottleneck.qdisc.limit", "flows[0].count", "tcp.initial_ssthresh"]
    assert [(t.point, t.seed) for t in tasks] == [(p, s) for p in range(4) for s in (1, 2)]
    t = tasks[-1]  # point 3: 40pkt, 3 flows, seed 2
    assert t.scenario["topology"]["bottleneck"]["qdisc"]["limit"] == "40pkt"
    assert t.scenario["flows"][0]["count"] == 3
    assert t.scenario["tcp"]["initial_ssthresh"] == 16
    assert t.resolved["seed"] == 2
    assert contract.flow_count(t.resolved) == 3
    assert len({t.hash for t in tasks}) == len(tasks)  # every run distinct


def test_plan_refuses_before_anything_runs():
    with pytest.raises(UserError) as e:
        plan(DUMBBELL, {"tcp.variant": ["reno", "vegas"]})
    assert "--vary tcp.variant=reno,vegas" in str(e.value) and "tcp.variant=vegas" in str(e.value)
    with pytest.raises(UserError, match="--seeds"):
        plan(DUMBBELL, {}, seeds=0)


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env


CLI_MISTAKES = [
    (["--vary", "duration"], "--vary duration: expected FIELD=VALUES"),
    (["--vary", "topology.bottleneck.qdisc.limit=10pkt:100pkt"], "--vary topology.bottleneck.qdisc.limit=10pkt:100pkt: a range"),
    (["--vary", "topology.bottleneck.qdisc.limit=log:10pkt:1000pkt:zz"], "--vary topology.bottleneck.qdisc.limit=log:10pkt:1000pkt:zz"),
    (["--vary", "topology.bottlenek.rate=1Mbps"], "--vary topology.bottlenek.rate=1Mbps: unknown field topology.bottlenek"),
    (["--vary", "tcp.varient=reno"], "--vary tcp.varient=reno"),
    (["--vary", "flows[4].count=1,2"], "--vary flows[4].count=1,2: unknown field flows[4]"),
    (["--vary", "topology.bottleneck.qdisc.limit=-5pkt,5pkt"], "--vary topology.bottleneck.qdisc.limit=-5pkt,5pkt"),
    (["--vary", "tcp.variant=reno", "--seeds", "0"], "--seeds"),
    (["--vary", "seed=1,2"], "--vary seed: the seed is not varied with --vary"),
    # of several --vary, the one whose value the scenario refuses is named, as written
    (["--vary", "tcp.variant=reno,newreno", "--vary", "warmup=1s,80s"], "--vary warmup=1s,80s: grid point tcp.variant=reno, warmup=80s: warmup: must be less than duration"),
    (
        ["--vary", "topology.bottleneck.rate=1Mbps,-2Mbps", "--vary", "topology.bottleneck.qdisc.limit=log:1pkt:100pkt:3"],
        "--vary topology.bottleneck.rate=1Mbps,-2Mbps: grid point topology.bottleneck.rate=-2Mbps, topology.bottleneck.qdisc.limit=1pkt",
    ),
    (["--vary", "tcp.variant=reno", "--cluster", "udp://x"], "--cluster"),
]


def test_cli_mistakes_exit_2_naming_the_argument(tmp_path):
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "aqmlab", "sweep", str(DUMBBELL), *args, "--store", str(tmp_path / "store"), "--out", str(tmp_path / "out"), "-q"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for args, _ in CLI_MISTAKES
    ]
    for p, (args, expected) in zip(procs, CLI_MISTAKES):
        out, err = p.communicate(timeout=60)
        assert p.returncode == 2, (args, out, err)
        assert expected in err, (args, err)
        assert "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing ran
