"""Short TCP flows (still in slow start) and the router buffer: seed 003 chapter 4 and
Appendix A.3 (digest 003 sections 2.9-2.10).

Bursts of a flow are jobs of an M/G/1 queue whose service time is the burst size in
packets (the link serves one packet per unit time).  Loads ``rho`` are offered load / C.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize


def bursts(length: int) -> list[int]:
    """Slow-start bursts of a flow of ``length`` packets (thesis section 4.1.2, Fig 4.1; the
    remainder rule of digest 003 section 7.6): 2, 4, 8, ... while the cumulative sum stays
    <= length, then the remainder if positive.  l = 16 -> [2, 4, 8, 2] (the thesis prints
    {2,4,8,4}, which sums to 18)."""
    if length < 1 or int(length) != length:
        raise ValueError("flow length must be a positive whole number of packets")
    out: list[int] = []
    b, total = 2, 0
    while total + b <= length:
        out.append(b)
        total += b
        b *= 2
    if length - total > 0:
        out.append(length - total)
    return out


@dataclass(frozen=True)
class BurstDistribution:
    """A burst-size distribution: sizes and probabilities."""

    sizes: np.ndarray
    probs: np.ndarray

    def moment(self, k: int) -> float:
        return float(np.sum(self.probs * self.sizes.astype(float) ** k))

    @property
    def mean(self) -> float:
        return self.moment(1)


def burst_distribution(lengths: dict[int, float] | int) -> BurstDistribution:
    """Burst-size distribution of a flow-length mix (thesis section 4.1.2: each burst of a flow
    equally likely).  For a mix ``{l: p(l)}`` the bursts are pooled weighted by bursts per
    flow, ``P(X=x) = sum_l p(l)*count_l(x) / sum_l p(l)*nbursts(l)`` (digest 003 section 7.8)."""
    if isinstance(lengths, (int, np.integer)):
        lengths = {int(lengths): 1.0}
    weights: dict[int, float] = {}
    total_p = sum(lengths.values())
    if total_p <= 0:
        raise ValueError("flow-length probabilities must sum to a positive number")
    for l, p in lengths.items():
        bl = bursts(l)
        for x in bl:
            weights[x] = weights.get(x, 0.0) + p / total_p
    sizes = np.array(sorted(weights), dtype=int)
    probs = np.array([weights[s] for s in sizes], dtype=float)
    return BurstDistribution(sizes, probs / probs.sum())


def _dist(x) -> BurstDistribution:
    return x if isinstance(x, BurstDistribution) else burst_distribution(x)


def _check_rho(rho: float) -> None:
    if not 0.0 < rho < 1.0:
        raise ValueError("load rho must be in (0, 1)")


def mg1_mean_jobs_printed(rho: float, dist) -> float:
    """The thesis's printed "E[N] = rho/(2(1-rho)) * E[X^2]" (thesis section 4.1.1), kept only to
    document it: it lacks the 1/E[X] factor (digest 003 section 7.7).  Do not use."""
    d = _dist(dist)
    return rho / (2 * (1 - rho)) * d.moment(2)


def mg1_mean_workload(rho: float, dist) -> float:
    """Pollaczek-Khinchine mean workload in packets, ``rho*E[X^2]/(2(1-rho)E[X])``
    (the M/G/1 mean behind thesis section 4.1.1; digest 003 section 7.7)."""
    _check_rho(rho)
    d = _dist(dist)
    return rho * d.moment(2) / (2.0 * (1.0 - rho) * d.mean)


def mg1_mean_queue(rho: float, dist) -> float:
    """Thesis model of the mean queue in packets (section 4.1.1):
    ``E[Q] = rho/(2(1-rho)) * E[X^2]/E[X] - rho*E[X]/2``: the M/G/1 mean less half an average
    burst while busy, because bursts leave packet by packet."""
    d = _dist(dist)
    return mg1_mean_workload(rho, d) - rho * d.mean / 2.0


def mxd1_mean_waiting_exact(rho: float, dist) -> float:
    """Exact time-average number of packets *waiting* (excluding the one in transmission) for
    Poisson bursts served one packet at a time (M^X/D/1): ``E[V] - rho/2`` with E[V] the
    P-K workload.  [derived] Differs from :func:`mg1_mean_queue` by ``rho*(E[X]-1)/2``; equal
    for X = 1 (M/D/1)."""
    return mg1_mean_workload(rho, dist) - rho / 2.0


# --- Effective bandwidth (thesis section 4.1.2, Appendix A.3) ------------------------------

def eb_kappa(rho: float, dist, order: str | int = 2) -> float:
    """Decay rate kappa of ``P(Q >= b) ~ e^{-kappa*b}`` (thesis Appendix A.3, Eqs A.4-A.7).

    * order 2: ``kappa = 2(1-rho)E[X] / (rho*E[X^2])`` (section 4.1.2, the thesis's choice);
    * order 3: positive root of ``kappa^2 + kappa*3E[X^2]/E[X^3] - 6(1-rho)E[X]/(rho*E[X^3]) = 0``;
    * ``"exact"``: the Cramer root of ``E[e^{kappa X} - 1] = kappa*E[X]/rho`` (Eq A.5)."""
    _check_rho(rho)
    d = _dist(dist)
    m1, m2, m3 = d.moment(1), d.moment(2), d.moment(3)
    order = str(order)
    if order == "2":
        return 2.0 * (1.0 - rho) * m1 / (rho * m2)
    if order == "3":
        a = 3.0 * m2 / (2.0 * m3)
        return -a + math.sqrt(a * a + 6.0 * (1.0 - rho) * m1 / (rho * m3))
    if order == "exact":
        def g(k):
            return float(np.sum(d.probs * np.expm1(k * d.sizes))) - k * m1 / rho
        hi = 2.0 * (1.0 - rho) * m1 / (rho * m2)  # 2nd order over-estimates the root
        while g(hi) < 0:  # pragma: no cover - safety
            hi *= 2.0
        return optimize.brentq(g, hi * 1e-9, hi, xtol=1e-15, rtol=1e-13)
    raise ValueError("order must be 2, 3 or 'exact'")


def eb_prefactor(rho: float, dist, order: str | int = 2) -> float:
    """Prefactor of the Cramer estimate ``(C - alpha(0))/(kappa*alpha'(kappa))`` (thesis Eq A.6),
    with the effective bandwidth alpha of the given order.  Exactly 1 at order 2."""
    d = _dist(dist)
    k = eb_kappa(rho, d, order)
    m1, m2, m3 = d.moment(1), d.moment(2), d.moment(3)
    order = str(order)
    if order == "2":
        return 1.0
    if order == "3":
        return (1.0 - rho) / rho * m1 / (k / 2.0 * m2 + k * k / 3.0 * m3)
    nu = rho / m1  # bursts per packet time
    return (1.0 - rho) / (nu * float(np.sum(d.probs * d.sizes * np.exp(k * d.sizes))) - 1.0)


def eb_tail(b: float | np.ndarray, rho: float, dist, order: str | int = 2):
    """``P(Q >= b) ~ prefactor * exp(-kappa*b)`` (thesis section 4.1.2 and Eq A.6).  At order 2,
    ``exp(-b * 2(1-rho)/rho * E[X]/E[X^2])``."""
    d = _dist(dist)
    return eb_prefactor(rho, d, order) * np.exp(-eb_kappa(rho, d, order) * np.asarray(b, float))


def eb_buffer_for_loss(loss: float, rho: float, dist, order: str | int = 2) -> float:
    """Buffer with ``P(Q >= B) = loss`` under :func:`eb_tail` (thesis section 4.1.2: choose B so
    that overflow is rare).  Depends only on load and burst sizes."""
    if not 0.0 < loss < 1.0:
        raise ValueError("loss must be in (0, 1)")
    d = _dist(dist)
    return max(0.0, math.log(eb_prefactor(rho, d, order) / loss) / eb_kappa(rho, d, order))


def md1_tail(b: float | np.ndarray, rho: float):
    """M/D/1 tail for fully smoothed traffic (X = 1): ``P(Q >= b) = exp(-b*2(1-rho)/rho)``
    (thesis section 4.1.2, "highly aggregated traffic from slow access links"; section 4.2)."""
    _check_rho(rho)
    return np.exp(-np.asarray(b, float) * 2.0 * (1.0 - rho) / rho)


def md1_buffer_for_loss(loss: float, rho: float) -> float:
    """Buffer for ``P(Q >= B) = loss`` in the M/D/1 case (thesis section 4.1.2)."""
    return eb_buffer_for_loss(loss, rho, 1, 2)


# --- Monte Carlo check ----------------------------------------------------------------------

@dataclass(frozen=True)
class QueueSample:
    mean_waiting: float          # time-average packets waiting (not in transmission)
    mean_workload: float         # time-average unfinished work, packets
    workload_tail: np.ndarray    # P(V >= b) for the requested b, seen by Poisson arrivals


def simulate_mxd1(rho: float, dist, bursts_n: int = 400_000, tail_at=(), seed: int = 1) -> QueueSample:
    """Monte Carlo of Poisson bursts at a link serving one packet per unit time (the model of
    thesis section 4.1.2).  Lindley's recursion, vectorized as ``W_n = S_n - min(0, min S_k)``;
    time averages integrate the piecewise-linear workload between arrivals exactly.  The tail
    is of the workload seen by arrivals (by PASTA, the time-stationary workload)."""
    _check_rho(rho)
    d = _dist(dist)
    rng = np.random.default_rng(seed)
    nu = rho / d.mean
    x = rng.choice(d.sizes, size=bursts_n, p=d.probs).astype(float)
    tau = rng.exponential(1.0 / nu, size=bursts_n)
    # workload just before arrival n: Lindley with W_0 = 0
    steps = x[:-1] - tau[1:]
    s = np.concatenate(([0.0], np.cumsum(steps)))
    w_before = s - np.minimum.accumulate(np.minimum(s, 0.0))
    v0 = w_before + x                              # just after arrival n
    v0, dur = v0[:-1], tau[1:]
    v1 = np.maximum(v0 - dur, 0.0)
    # integral of V over each gap: V falls at slope 1 from v0 to v1
    int_v = (v0 * v0 - v1 * v1) / 2.0

    def g(v):  # integral_0^v (ceil(u) - 1)^+ du
        k = np.floor(v)
        f = v - k
        return k * (k - 1.0) / 2.0 + f * k

    int_wait = g(v0) - g(v1)
    total = dur.sum()
    tail = np.array([np.mean(w_before >= b) for b in tail_at])
    return QueueSample(float(int_wait.sum() / total), float(int_v.sum() / total), tail)
