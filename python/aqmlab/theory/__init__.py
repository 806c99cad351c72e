"""The seeds' analytical models, one module per topic, and the buffer-sizing calculator.

* :mod:`aqmlab.theory.sizing`      seed 003, long-lived flows: rule of thumb, sawtooth,
  the sqrt(n) rule and Eq 3.7, mixes, RTT and flow-completion arguments, flow brackets;
* :mod:`aqmlab.theory.short_flows` seed 003, short flows: slow-start bursts, M/G/1 mean
  queue, effective-bandwidth tails, M/D/1;
* :mod:`aqmlab.theory.kantawala`   seed 000: tail-drop cycle (Eqs 2.1-2.12), QSDRR, DTDRR,
  hashing imbalance, Bloom-filter memory, fair-queueing examples;
* :mod:`aqmlab.theory.mqfq`        seed 001: SFQ/MQFQ interference probabilities;
* :mod:`aqmlab.theory.sfed`        seed 002: SFED bucket Markov chain (Fig. 16), Eqs 4-5;
* :mod:`aqmlab.theory.tcp_loss`    one TCP flow under random loss: Mathis et al.'s
  square-root law, Padhye et al.'s model with timeouts;
* :mod:`aqmlab.theory.calculator`  the calculator behind ``aqmlab size``;
* :mod:`aqmlab.theory.cli`         ``size_app``, the ``aqmlab size`` command group.

Nothing here needs the compiled simulator.
"""

import importlib
from typing import Any

__all__ = ["kantawala", "mqfq", "sfed", "short_flows", "sizing", "tcp_loss"]


def __getattr__(name: str) -> Any:
    # Imported on first use (PEP 562): scipy alone takes most of a second, which
    # `aqmlab --help` and `aqmlab size --help` need not pay.
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
