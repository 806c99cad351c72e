"""The throughput of one long-lived TCP flow whose packets are lost at random with
probability ``p`` and that meets no congestion (its window never fills the path): the
square-root law of Mathis et al. and the model of Padhye et al. that adds timeouts.

* M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of the TCP
  congestion avoidance algorithm", ACM CCR 27(3), 1997, Eq (3):
  ``BW = MSS / RTT * C / sqrt(p)``, with ``C = sqrt(3 / (2 b))`` for a window that
  grows by one packet every ``b`` rounds (``b = 1``: every packet acknowledged, 1.22;
  ``b = 2``: delayed ACKs, 0.87) and losses evenly spaced (section 2.1).
* J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP throughput: a simple model
  and its empirical validation", ACM SIGCOMM 1998, Eq (30) (the "full model" of
  section 2.3, timeouts included, in packets a second).

Rates are in packets a second unless the name says bits.
"""

from __future__ import annotations

import math


def mathis_constant(acked_per_ack: int = 1) -> float:
    """``C = sqrt(3 / (2 b))`` of Mathis et al. (1997) Eq (3), ``b`` packets acknowledged
    by each ACK (1 without delayed ACKs, 2 with)."""
    return math.sqrt(3.0 / (2.0 * acked_per_ack))


def mathis_rate(p: float, rtt_s: float, acked_per_ack: int = 1) -> float:
    """Packets a second by the square-root law, ``C / (RTT sqrt(p))`` (Mathis et al.
    1997, Eq (3), divided by MSS): congestion avoidance alone, every loss recovered by
    a fast retransmit."""
    _check(p, rtt_s)
    return mathis_constant(acked_per_ack) / (rtt_s * math.sqrt(p))


def padhye_rate(p: float, rtt_s: float, rto_s: float, max_window: float = math.inf, acked_per_ack: int = 1) -> float:
    """Packets a second by Padhye et al. (1998) Eq (30): triple-duplicate losses and
    timeouts (first timeout ``rto_s``, doubling up to 64 times it), the window capped at
    the receiver's ``max_window`` packets."""
    _check(p, rtt_s)
    b = acked_per_ack
    # E[W_u] of Eq (13): the unconstrained window at a loss.
    w = (2 + b) / (3 * b) + math.sqrt(8 * (1 - p) / (3 * b * p) + ((2 + b) / (3 * b)) ** 2)
    # f(p) of Eq (29): the mean length of a sequence of timeouts, in units of T0.
    f = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    limited = w >= max_window
    w = min(w, max_window)
    q = _q_hat(p, w)
    packets = (1 - p) / p + w + q / (1 - p)
    rounds = b / 8 * w + (1 - p) / (p * w) + 2 if limited else b / 2 * w + 1
    return packets / (rtt_s * rounds + q * f * rto_s / (1 - p))


def _q_hat(p: float, w: float) -> float:
    """``Q^(w)`` of Eq (24): the probability that a loss in a window of ``w`` is
    detected by a timeout."""
    return min(1.0, (1 - (1 - p) ** 3) * (1 + (1 - p) ** 3 * (1 - (1 - p) ** (w - 3))) / (1 - (1 - p) ** w))


def _check(p: float, rtt_s: float) -> None:
    if not 0 < p < 1:
        raise ValueError("p must be in (0, 1)")
    if rtt_s <= 0:
        raise ValueError("the RTT must be positive")
