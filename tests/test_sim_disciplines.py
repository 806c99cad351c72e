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


# (the bottleneck's qdisc, the field the error names, words the error says)
BAD_PARAMETERS = [
    ('{ kind = "red", limit = "100pkt", min_th = 60, max_th = 20 }', "qdisc.min_th", "must be below max_th"),
    ('{ kind = "sfq", limit = "100pkt", buckets = 0 }', "qdisc.buckets", "at least 1"),
    ('{ kind = "blue", limit = "100pkt", increment = 1.5 }', "qdisc.increment", "not a probability"),
    ('{ kind = "red", limit = "100pkt", max_p = -0.1 }', "qdisc.max_p", "not a probability"),
    ('{ kind = "red", max_p = nan }', "qdisc.max_p", "finite number"),
    ('{ kind = "drr", limit = "100pkt", queues = 0 }', "qdisc.queues", "at least 1"),
    ('{ kind = "codel", target = "5" }', "qdisc.target", "a time"),
    ('{ kind = "codel", target = 5 }', "qdisc.target", 'write a time with its unit, e.g. "5ms"'),
    ('{ kind = "fq_codel", quantum = 1514 }', "qdisc.quantum", 'write a size with its unit, e.g. "1514B"'),
    ('{ kind = "fq_codel", colour = "red" }', "qdisc.colour", "unknown parameter"),
    ('{ kind = "fq_codel", flows = 2.5 }', "qdisc.flows", "expected a whole number"),
    ('{ kind = "red", mode = "bits" }', "qdisc.mode", 'write "packets" or "bytes"'),
    ('{ kind = "red", link_rate_bps = 10000000 }', "qdisc.link_rate_bps", "write `link_rate` with its unit"),
    ('{ kind = "droptail" }', "qdisc.limit", "required"),
    (
        '{ kind = "qsdrr", limit = "100pkt", queues = 4, mapping = "bloom", bloom = { bitz = 3 } }',
        "qdisc.bloom.bitz",
        "unknown parameter",
    ),
]


@pytest.mark.parametrize("qdisc,field,words", BAD_PARAMETERS, ids=[f for _, f, _ in BAD_PARAMETERS])
def test_impossible_parameters_are_refused_naming_the_field(tmp_path, qdisc, field, words):
    import subprocess
    import sys

    text = (DIR / "red.toml").read_text()
    start = text.index("qdisc = {")
    end = text.index("} }", start) + 1
    bad = tmp_path / "bad.toml"
    bad.write_text(text[:start] + "qdisc = " + qdisc + text[end:])
    out = subprocess.run([sys.executable, "-m", "aqmlab", "validate", str(bad)], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert f"topology.bottleneck.{field}: " in out.stderr
    assert words in out.stderr
    assert "Traceback" not in out.stderr
