"""The fast engine against the reference, on every shipped scenario.

The reference engine runs every link and host on its own events; the fast one
skips what its accelerations can (docs/simulator.md). Their result files must be
the same to the byte: summary.json, every Parquet table, the trace and the capture.
Only timing.json differs (wall time, and the events each took). Each scenario is
shortened to keep the suite quick; the window still opens within the run, and
samples are still taken.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import aqmlab
from aqmlab import units

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.toml"))

#: Simulated seconds each scenario is cut to (the default: 15 s), the largest
#: networks shortest: long enough that every flow has started and the queues
#: have filled and dropped.
CUT_S = {
    "bench-backbone-50k": 2.5,
    "bench-backbone-10k": 3.0,
    "bench-dumbbell-1000": 6.0,
    "bench-dumbbell-1000-qsdrr": 6.0,
    "bench-short-flows": 5.0,
    "multi-rtt": 8.0,
    "parking-lot": 5.0,
}

RESULT_FILES = (
    "summary.json",
    "flows.parquet",
    "queues.parquet",
    "timeseries.parquet",
    "histograms.parquet",
    "trace.parquet",
    "trace.pcap",
)


def shortened(path: Path) -> aqmlab.Scenario:
    s = aqmlab.Scenario.load(path)
    cut_ns = int(CUT_S.get(path.stem, 15.0) * 1e9)
    d = s.to_dict()
    duration = min(units.parse_time(d["duration"], "duration"), cut_ns)
    warmup = min(units.parse_time(d.get("warmup", "0s"), "warmup"), duration // 2)
    d["duration"] = f"{duration}ns"
    d["warmup"] = f"{warmup}ns"
    if "sample_interval" in d:
        sample = units.parse_time(d["sample_interval"], "sample_interval")
        d["sample_interval"] = f"{min(sample, duration // 20)}ns"
    return aqmlab.Scenario.coerce(d)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.relative_to(ROOT / "scenarios").as_posix() for p in SCENARIOS])
def test_fast_and_reference_engines_write_the_same_files(path: Path, tmp_path: Path) -> None:
    scenario = shortened(path)
    fast = aqmlab.run(scenario, engine="fast").write(tmp_path / "fast")
    reference = aqmlab.run(scenario, engine="reference").write(tmp_path / "reference")
    written = [f for f in RESULT_FILES if (reference / f).exists()]
    assert len(written) >= 5
    for f in written:
        assert (fast / f).read_bytes() == (reference / f).read_bytes(), f
    # The fast engine did skip events (or the comparison proves little).
    if path.stem.startswith("bench-") or path.stem in ("dumbbell", "dumbbell-50-reno"):
        timing = [aqmlab.results.Results.read(d).timing for d in (fast, reference)]
        assert timing[0]["events"] < timing[1]["events"]


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(aqmlab.UserError, match="engine"):
        aqmlab.run(ROOT / "scenarios" / "dumbbell.toml", engine="quick")
