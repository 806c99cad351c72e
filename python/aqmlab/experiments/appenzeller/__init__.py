"""Seed 003: G. Appenzeller, *Sizing Router Buffers* (thesis, Stanford 2005); digest 003.

One module per chapter of the thesis (``chapter2`` ... ``chapter6``); :mod:`.common`
holds what they share: the ns-2 script's long-flow and short-flow setups (digest 003
section 3), the search for a minimum buffer and the readers of a run;
:mod:`.acceptance` the acceptance references R1-R22 (digest 003 section 6).
"""

from __future__ import annotations

from . import chapter2, chapter3, chapter4, chapter5, chapter6
from .acceptance import ACCEPTANCE

__all__ = ["ACCEPTANCE", "EXPERIMENTS"]

#: Every experiment of the seed, in chapter order.
EXPERIMENTS = [*chapter2.EXPERIMENTS, *chapter3.EXPERIMENTS, *chapter4.EXPERIMENTS, *chapter5.EXPERIMENTS,
               *chapter6.EXPERIMENTS]
