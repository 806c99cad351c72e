"""Fixtures shared by the test modules."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A result store for one module's reproductions: their quick runs are shared."""
    return tmp_path_factory.mktemp("store")


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
