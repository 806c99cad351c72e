"""Fixtures shared by the test modules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from aqmlab import experiments
from aqmlab.scenario import Scenario

# What a reproduction writes into its directory.
REPRODUCTION_FILES = ("experiment.json", "table.parquet", "comparison.json", "figure.png", "scenario.toml")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A result store for one module's reproductions: their quick runs are shared."""
    return tmp_path_factory.mktemp("store")


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    """Where one module's reproductions write their directories."""
    return tmp_path_factory.mktemp("reproduce")


@pytest.fixture(scope="module")
def reproduce_quick(out: Path, store: Path) -> Callable[..., experiments.Reproduction]:
    """Reproduce an experiment at quick fidelity into `out`, its runs in the module's
    store: ``rep = reproduce_quick("georg.fig1")`` (``workers=1`` to run one at a time).
    Checks that every file of the reproduction was written and that its example
    scenario loads; the findings are ``rep.meta["findings"]``."""

    def reproduce(exp_id: str, workers: int = 2) -> experiments.Reproduction:
        rep = experiments.reproduce(exp_id, "quick", out=out, store=store, workers=workers)
        for name in REPRODUCTION_FILES:
            assert (rep.directory / name).stat().st_size > 0, name
        Scenario.load(rep.directory / "scenario.toml")  # the example runs as it is
        return rep

    return reproduce


@pytest.fixture
def emulator_machine() -> None:
    """Skip, saying what is missing, where the emulator cannot run: root,
    /dev/net/tun, ip, iperf3 and the router built (docs/emulator.md)."""
    from aqmlab.emulate.session import check_machine, router_binary
    from aqmlab.errors import UserError

    try:
        check_machine()
        router_binary()
    except UserError as e:
        pytest.skip(str(e))
