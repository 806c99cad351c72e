"""Fixtures shared by the test modules."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A result store for one module's reproductions: their quick runs are shared."""
    return tmp_path_factory.mktemp("store")
