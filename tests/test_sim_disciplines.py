"""Every discipline's example scenario runs as it is and conserves packets;
and the disciplines that isolate flows do what they promise against an
unresponsive UDP flow, where DropTail and the single-queue AQMs do not."""

from pathlib import Path

import polars as pl
import pytest

import aqmlab

DIR = Path(__file__).resolve().parents[1] / "scenarios" / "disciplines"
SCENARIOS = sorted(DIR.glob("*.toml"))
# Per-flow state or per-flow queues: the 3 Mb/s unresponsive flow is held near
# its fair share of the 10 Mb/s link (13 flows: about 0.8 Mb/s).
ISOLATING = {"sfq", "sfed", "fred", "fq_codel", "cbt", "dcbt", "chips", "drr", "tdrr", "qsdrr", "dtdrr", "dsdrr"}
# One FIFO: the unresponsive flow keeps nearly all it sends.
SINGLE_QUEUE = {"droptail", "red", "red_linux", "codel", "pie", "blue"}


def _unresponsive_share(res) -> float:
    f = res.flows.filter(pl.col("group") == "unresponsive")
    return f["throughput_bps"].sum() / 3e6


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_discipline_scenario_runs_and_conserves(path):
    res = aqmlab.run(path)
    s = res.summary
    assert s["conservation_ok"], s["conservation"]
    assert res.queues.filter(pl.col("link") == "bottleneck")["qdisc"][0] == path.stem
    assert s["bottleneck_utilization"] > 0.8
    share = _unresponsive_share(res)
    if path.stem in ISOLATING:
        assert share < 0.55, f"{path.stem} let the unresponsive flow keep {share:.0%} of its rate"
    if path.stem in SINGLE_QUEUE:
        assert share > 0.85, f"{path.stem} held the unresponsive flow to {share:.0%}"


BAD_PARAMETERS = [
    ('{ kind = "red", limit = "100pkt", min_th = 60, max_th = 20 }', "qdisc.min_th"),
    ('{ kind = "sfq", limit = "100pkt", buckets = 0 }', "qdisc.buckets"),
    ('{ kind = "blue", limit = "100pkt", increment = 1.5 }', "qdisc.increment"),
    ('{ kind = "red", limit = "100pkt", max_p = -0.1 }', "qdisc.max_p"),
    ('{ kind = "drr", limit = "100pkt", queues = 0 }', "qdisc.queues"),
    ('{ kind = "codel", target = "5" }', "qdisc.target"),
    ('{ kind = "fq_codel", colour = "red" }', "qdisc.colour"),
]


@pytest.mark.parametrize("qdisc,field", BAD_PARAMETERS, ids=[f for _, f in BAD_PARAMETERS])
def test_impossible_parameters_are_refused_naming_the_field(tmp_path, qdisc, field):
    import subprocess
    import sys

    text = (DIR / "red.toml").read_text()
    start = text.index("qdisc = {")
    end = text.index("} }", start) + 1
    bad = tmp_path / "bad.toml"
    bad.write_text(text[:start] + "qdisc = " + qdisc + text[end:])
    out = subprocess.run([sys.executable, "-m", "aqmlab", "validate", str(bad)], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert f"topology.bottleneck.{field}" in out.stderr
    assert "Traceback" not in out.stderr
