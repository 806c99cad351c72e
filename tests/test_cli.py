"""The command line: `python -m aqmlab validate` on good and malformed scenarios.

Each malformed scenario must give exit status 2, a message on stderr that names
the field, and no traceback. The subprocesses run concurrently to keep this fast.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BASE = (ROOT / "scenarios" / "dumbbell.toml").read_text()

# (id, change to the dumbbell example, text the error must contain)
MALFORMED = [
    ("unknown-field", lambda t: t.replace("seed = 1", "seed = 1\ncolour = \"red\""), "colour: unknown field"),
    ("negative-rate", lambda t: t.replace('rate = "10Mbps"', 'rate = "-10Mbps"'), "topology.bottleneck.rate"),
    ("zero-duration", lambda t: t.replace('duration = "60s"', 'duration = "0s"'), "duration: "),
    ("warmup-after-end", lambda t: t.replace('warmup = "10s"', 'warmup = "60s"'), "warmup: must be less than duration"),
    ("unknown-discipline", lambda t: t.replace('kind = "droptail"', 'kind = "droptial"'), "topology.bottleneck.qdisc.kind"),
    ("wrong-unit", lambda t: t.replace('delay = "20ms"', 'delay = "20"'), "topology.bottleneck.delay"),
    ("unknown-node", lambda t: t.replace('src = "senders"', 'src = "s99"'), "flows[0].src"),
    ("bad-distribution", lambda t: t.replace('dist = "uniform", low = "1ms"', 'dist = "weibull", low = "1ms"'), "topology.access.delay.dist"),
    ("missing-required", lambda t: t.replace('duration = "60s"\n', ""), "duration: required field missing"),
    ("list-length", lambda t: t.replace('start = { dist = "uniform", low = "0s", high = "1s" }', 'start = ["0s", "1s"]'), "flows[0].start"),
    ("negative-buffer", lambda t: t.replace('limit = "60pkt"', 'limit = "-60pkt"'), "topology.bottleneck.qdisc.limit"),
    ("bad-variant", lambda t: t.replace('variant = "reno"', 'variant = "vegas"'), "tcp.variant"),
    ("bad-cubic-beta", lambda t: t.replace('variant = "reno"', 'variant = "cubic"\ncubic = { beta = 1.5 }'), "tcp.cubic.beta"),
    ("stop-before-start", lambda t: t.replace("trace_cwnd = true", 'trace_cwnd = true\nstop = "0.5s"'), "flows[0].stop: must be later than the start"),
    ("count-zero", lambda t: t.replace("count = 10", "count = 0"), "flows[0].count"),
    ("bad-toml", lambda t: t + "\n[[flows]\n", "invalid TOML"),
    ("trace-unknown-link", lambda t: t + '\n[trace]\npcap = { links = ["access_s0", "nowhere"] }\n',
     'trace.pcap.links[1]: no link named "nowhere"'),
    ("trace-flow-past-last", lambda t: t + "\n[trace]\npackets = { flows = [10] }\n",
     "trace.packets.flows[0]: no flow 10"),
    ("trace-unknown-event", lambda t: t + '\n[trace]\npackets = { events = ["drop", "arrive"] }\n',
     "trace.packets.events[1]"),
    ("trace-matches-nothing", lambda t: t + '\n[trace]\npackets = { links = ["access_s1"], flows = [0] }\n',
     'trace.packets.links[0]: no packet of trace.packets.flows crosses link "access_s1"'),
    (
        "unreachable",
        lambda t: """duration = "5s"
[topology]
kind = "graph"
nodes = ["a", "b", "c"]
links = [{ from = "a", to = "b", rate = "1Mbps", delay = "1ms" }, { from = "c", to = "b", rate = "1Mbps", delay = "1ms", duplex = false }]
[[flows]]
kind = "tcp"
src = "a"
dst = "c"
""",
        "flows[0]: no route from a to c",
    ),
]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    procs = {}
    for name, change, _ in MALFORMED:
        p = d / f"{name}.toml"
        text = change(BASE)
        assert text != BASE, f"{name}: the change did not apply"
        p.write_text(text)
        procs[name] = subprocess.Popen(
            [sys.executable, "-m", "aqmlab", "validate", str(p)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=d,
        )
    good = subprocess.Popen(
        [sys.executable, "-m", "aqmlab", "validate", str(ROOT / "scenarios" / "dumbbell.toml")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )
    out = {name: (p.wait(60), *p.communicate()) for name, p in procs.items()}
    out["<good>"] = (good.wait(60), *good.communicate())
    return out


@pytest.mark.parametrize("name,expected", [(m[0], m[2]) for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_scenario_exits_2_naming_the_field(outcomes, name, expected):
    code, out, err = outcomes[name]
    assert code == 2, (out, err)
    assert "Traceback" not in err and "Traceback" not in out
    assert err.startswith("error: ")
    assert expected in err, err
    assert len(err.strip().splitlines()) <= 3, err


def test_validate_describes_a_good_scenario(outcomes):
    code, out, err = outcomes["<good>"]
    assert code == 0, err
    assert "scenario dumbbell" in out and "monitored bottleneck" in out and "10 tcp flows" in out
    assert out.strip().endswith("ok")


def test_usage_errors_exit_2_too():
    p = subprocess.run([sys.executable, "-m", "aqmlab", "validate"], capture_output=True, text=True, env=_env())
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_help_lists_the_commands():
    p = subprocess.run([sys.executable, "-m", "aqmlab", "--help"], capture_output=True, text=True, env=_env())
    assert p.returncode == 0
    for cmd in ("run", "validate"):
        assert cmd in p.stdout


def test_run_takes_an_engine_and_refuses_an_unknown_one(tmp_path):
    """`aqmlab run --engine reference` writes what the fast engine writes; an
    unknown engine exits 2 naming the option."""
    short = BASE.replace('duration = "60s"', 'duration = "12s"')
    scenario = tmp_path / "short.toml"
    scenario.write_text(short)
    outs = {}
    for engine in ("fast", "reference"):
        outs[engine] = tmp_path / engine
        p = subprocess.run(
            [sys.executable, "-m", "aqmlab", "run", str(scenario), "-q", "--engine", engine, "--out", str(outs[engine])],
            capture_output=True, text=True, env=_env(),
        )
        assert p.returncode == 0, p.stderr
    for f in ("summary.json", "flows.parquet", "queues.parquet", "timeseries.parquet"):
        assert (outs["fast"] / f).read_bytes() == (outs["reference"] / f).read_bytes(), f
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "run", str(scenario), "-q", "--engine", "quick"],
        capture_output=True, text=True, env=_env(), cwd=tmp_path,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("error: engine: ") and '"quick" is not an engine' in p.stderr, p.stderr
