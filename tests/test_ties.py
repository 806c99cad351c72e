"""The scenario's order of ties within a kind (`ties`; docs/simulator.md, "The order
of events at one nanosecond"): "numbered" changes a run whose packets meet at the
bottleneck at one nanosecond, both engines still agree under it, and the default
stays out of the resolved scenario, so that its hash is unchanged."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

import aqmlab
from aqmlab import contract
from aqmlab.run import run_resolved

ROOT = Path(__file__).resolve().parents[1]
#: Arrivals at the bottleneck on an 80 µs grid: three drops in four at a tie.
TIED = ROOT / "scenarios" / "dumbbell-50-reno.toml"


def tied(**fields: Any) -> aqmlab.Scenario:
    """The tied dumbbell, shortened to 20 s (the window from 10 s), with ``fields``."""
    d = tomllib.loads(TIED.read_text())
    return aqmlab.Scenario.coerce({**d, "duration": "20s", "warmup": "10s", **fields})


def test_the_default_order_stays_out_of_the_resolved_scenario() -> None:
    default, hashed, numbered = tied().resolve(), tied(ties="hashed").resolve(), tied(ties="numbered").resolve()
    assert "ties" not in default
    assert contract.digest(hashed) == contract.digest(default)
    assert numbered["ties"] == "numbered"


def test_numbered_ties_change_a_tied_run_and_both_engines_agree(tmp_path: Path) -> None:
    hashed = aqmlab.run(tied())
    numbered = {engine: aqmlab.run(tied(ties="numbered"), engine=engine) for engine in ("fast", "reference")}
    delivered = [r.flows["unique_bytes_delivered"].to_list() for r in (hashed, numbered["fast"])]
    assert delivered[0] != delivered[1]
    # The shorter-delay (lower-numbered) flows win the ties: the share grows less fair.
    assert numbered["fast"].summary["jain_index"] < hashed.summary["jain_index"] - 0.1
    written = {engine: r.write(tmp_path / engine) for engine, r in numbered.items()}
    for f in ("summary.json", "flows.parquet", "queues.parquet", "timeseries.parquet"):
        assert (written["fast"] / f).read_bytes() == (written["reference"] / f).read_bytes(), f


def test_an_unknown_order_is_refused_by_the_schema_and_the_core() -> None:
    with pytest.raises(aqmlab.UserError, match="ties"):
        tied(ties="random")
    resolved = {**tied().resolve(), "ties": "random"}
    with pytest.raises(aqmlab.UserError, match='ties: must be "hashed" or "numbered", not "random"'):
        run_resolved(resolved)
