"""Every example scenario runs, conserves packets at every queue and end to
end, and is exactly repeatable: the same seed gives byte-identical result
files, another seed different ones."""

import filecmp
from pathlib import Path

import pytest

import aqmlab

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "scenarios").glob("*.toml"))
# The benchmark scenario is exercised by `make bench`, not the test suite.
EXAMPLES = [p for p in SCENARIOS if not p.name.startswith("bench-")]
RESULT_FILES = ["summary.json", "flows.parquet", "queues.parquet", "timeseries.parquet", "resolved.json"]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_conserves_packets(path):
    res = aqmlab.run(path)
    s = res.summary
    assert s["conservation_ok"], s["conservation"]
    assert s["packets_injected"] > 0
    queues = res.queues
    # Each queue: arrivals = departures + drops + backlog.
    lhs = queues["arrivals"]
    rhs = queues["departures"] + queues["drops"] + queues["backlog_packets"]
    assert (lhs == rhs).all()
    # Drops by reason add up to the drops.
    reasons = sum(queues[c] for c in queues.columns if c.startswith("drops_"))
    assert (reasons == queues["drops"]).all()
    # End to end: sent = received + dropped + still in the network.
    in_network = s["packets_injected"] - s["packets_received"] - s["packets_dropped"]
    assert 0 <= in_network <= s["peak_packets_in_flight"]
    # Dropped by a queue, or lost on a link's wire after it.
    assert s["packets_dropped"] == queues["drops"].sum() + queues["lost"].sum()
    assert s["packets_lost"] == queues["lost"].sum()


def _files(tmp_path, name, seed):
    scenario = aqmlab.Scenario.load(Path(__file__).resolve().parents[1] / "scenarios" / name).with_seed(seed)
    out = tmp_path / f"{name}-{seed}-{len(list(tmp_path.iterdir()))}"
    aqmlab.run(scenario).write(out)
    return out


@pytest.mark.parametrize("name", ["dumbbell.toml", "short-flows.toml", "udp-mix.toml"])
def test_same_seed_gives_identical_files_and_another_seed_different_ones(tmp_path, name):
    a = _files(tmp_path, name, 7)
    b = _files(tmp_path, name, 7)
    c = _files(tmp_path, name, 8)
    match, mismatch, errors = filecmp.cmpfiles(a, b, RESULT_FILES, shallow=False)
    assert sorted(match) == sorted(RESULT_FILES), (mismatch, errors)
    _, differ, _ = filecmp.cmpfiles(a, c, ["summary.json", "flows.parquet", "timeseries.parquet"], shallow=False)
    assert len(differ) == 3, "a different seed should change the results"
