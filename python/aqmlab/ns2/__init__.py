"""ns-2 2.35, the simulator of four of the five seeds, as aqmlab's peer: a translator
from a resolved scenario to a Tcl script (:mod:`.translate`, with the disciplines in
:mod:`.queues`) and a runner that reads ns-2's counters back (:mod:`.run`).
``aqmlab crosscheck ns2`` puts the two side by side (:mod:`aqmlab.crosscheck`)."""

from .run import Ns2Results, run_ns2
from .translate import to_tcl

__all__ = ["Ns2Results", "run_ns2", "to_tcl"]
