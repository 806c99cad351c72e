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
