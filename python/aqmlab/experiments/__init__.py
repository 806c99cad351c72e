"""Paper experiments: a seed's figure as a command.

    aqmlab reproduce --list
    aqmlab reproduce appenzeller.fig5_1 [--fidelity quick|paper]

    from aqmlab import experiments
    rep = experiments.reproduce("appenzeller.fig5_1", fidelity="quick")
    rep.table, rep.comparisons

One module per seed; each experiment has an id (``module.figure``), its source, the
runs that measure it, an analysis to a table, the paper's values with tolerances, a
plot, and two fidelities: ``quick`` (under a minute; the tests run it) and ``paper`` (the
published parameters). See :mod:`.core`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from .core import Comparison, Experiment, Reference, Reproduction
from .core import reproduce as _reproduce

__all__ = ["Comparison", "Experiment", "Reference", "Reproduction", "all_experiments", "get", "reproduce"]


def all_experiments() -> list[Experiment]:
    """Every experiment, in the order of the seeds."""
    from . import appenzeller, conway, georg, kamra, kantawala

    return [*kantawala.EXPERIMENTS, *georg.EXPERIMENTS, *kamra.EXPERIMENTS, *appenzeller.EXPERIMENTS, *conway.EXPERIMENTS]


def get(experiment_id: str) -> Experiment:
    known = {e.id: e for e in all_experiments()}
    if experiment_id not in known:
        raise UserError(f"unknown experiment {experiment_id!r}; known: {', '.join(known)}", "ID")
    return known[experiment_id]


def reproduce(experiment_id: str, fidelity: str = "quick", out: str | Path = Path("results") / "reproduce", **kw: Any) -> Reproduction:
    """Run one experiment (``executor``, ``workers``, ``store``, ``progress``, ``force``
    as for :func:`aqmlab.sweep`) and write it to ``<out>/<fidelity>/<id>/``."""
    exp = get(experiment_id)
    if fidelity not in exp.fidelities:
        raise UserError(f"expected one of {', '.join(exp.fidelities)}, got {fidelity!r}", "--fidelity")
    return _reproduce(exp, fidelity, out, **kw)
