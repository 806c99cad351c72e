"""Seed 000: A. Kantawala and J. S. Turner, *Improving the Performance of Internet Data
Transport* (WUCSE-2005-11); digest 000 section 4.

One module per chapter of the report (``chapter2`` ... ``chapter7``); :mod:`.common`
holds what they share (digest 4.0): the topologies, the policies with the report's
parameters, TCP, the hosts' queues, the readers of a run and the fair-share statistics.
"""

from __future__ import annotations

from . import chapter2, chapter3, chapter4, chapter5, chapter6, chapter7

#: Every experiment of the seed, in chapter order.
EXPERIMENTS = [*chapter2.EXPERIMENTS, *chapter3.EXPERIMENTS, *chapter4.EXPERIMENTS, *chapter5.EXPERIMENTS,
               *chapter6.EXPERIMENTS, *chapter7.EXPERIMENTS]
