"""Interference between flows under SFQ and MQFQ: seed 001 (Georg, Jechlitschek and
Gorinsky, "Improving Individual Flow Performance with Multiple Queue Fair Queuing",
WUCSE-2007-30), section III and Fig. 1; digest 001 section 3.

Hashes are ideal: each of a flow's d hashes is uniform on the k queues, independent,
and may collide (the report's analysis includes that case).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np


def p_sfq(k: int) -> float:
    """SFQ: flow y interferes with flow x when they hash to the same queue, ``1/k``
    (report section III)."""
    _check_k(k)
    return 1.0 / k


def p_mqfq_complete(k: int) -> float:
    """MQFQ (d = 2), complete interference, all of y's queues shared with x:
    ``(1/k^2)(2 - 1/k) + (2/k^2)(1 - 1/k) = 4/k^2 - 3/k^3`` (report section III)."""
    _check_k(k)
    return (1.0 / k**2) * (2.0 - 1.0 / k) + (2.0 / k**2) * (1.0 - 1.0 / k)


def p_mqfq_partial(k: int) -> float:
    """MQFQ (d = 2), partial interference, at least one of y's queues shared with x:
    ``(1/k^2)(2 - 1/k) + (4/k)(1 - 1/k)^2 = 4/k - 6/k^2 + 3/k^3`` (report section III)."""
    _check_k(k)
    return (1.0 / k**2) * (2.0 - 1.0 / k) + (4.0 / k) * (1.0 - 1.0 / k) ** 2


def _check_k(k: int) -> None:
    if k < 1 or int(k) != k:
        raise ValueError("k (number of queues) must be a positive integer")


@lru_cache(maxsize=None)
def _stirling2(n: int, s: int) -> int:
    if n == s:
        return 1
    if s == 0 or s > n:
        return 0
    return s * _stirling2(n - 1, s) + _stirling2(n - 1, s - 1)


def distinct_queue_pmf(draws: int, k: int) -> np.ndarray:
    """``P(|S| = s)`` for the set S of distinct queues hit by ``draws`` uniform hashes on k
    queues: ``S2(draws, s) * k! / ((k-s)! * k^draws)`` (digest 001 section 3, [derived])."""
    _check_k(k)
    out = np.zeros(min(draws, k) + 1)
    for s in range(1, min(draws, k) + 1):
        out[s] = _stirling2(draws, s) * math.perm(k, s) / k**draws
    return out


def p_complete(d: int, k: int, m: int = 1) -> float:
    """Probability that all of a flow's d queues lie in the union of the queues of m other
    flows with d hashes each (complete interference), ``sum_s P(|U|=s)(s/k)^d`` with U the
    union of m*d draws (digest 001 section 3, [derived] generalisation; equals the report's
    1/k at d = 1 and 4/k^2 - 3/k^3 at d = 2, m = 1)."""
    pmf = distinct_queue_pmf(m * d, k)
    s = np.arange(len(pmf))
    return float(np.sum(pmf * (s / k) ** d))


def p_partial(d: int, k: int, m: int = 1) -> float:
    """Probability that at least one of a flow's d queues is shared with m other flows
    (partial interference), ``1 - sum_s P(|U|=s)(1 - s/k)^d`` (digest 001 section 3,
    [derived]).  At d = 2, m = 1 it is the report's 4/k - 6/k^2 + 3/k^3."""
    pmf = distinct_queue_pmf(m * d, k)
    s = np.arange(len(pmf))
    return float(1.0 - np.sum(pmf * (1.0 - s / k) ** d))


def expected_distinct_queues(d: int, k: int) -> float:
    """``E|S| = k(1 - (1 - 1/k)^d)``: queues a flow with d hashes can occupy (digest 001
    section 3)."""
    return k * (1.0 - (1.0 - 1.0 / k) ** d)


def capture_bound(d: int, k: int, capacity: float) -> float:
    """Most a misbehaving flow can take when all queues are backlogged: ``d*C/k`` (report
    sections III and V-B: 312.5 kb/s for one SFQ queue of a 5 Mb/s link with k = 16; an MQFQ
    flow uses up to two queues, 625 kb/s)."""
    _check_k(k)
    return d * capacity / k


def expected_private_flows(n: int, k: int, counted: int | None = None) -> float:
    """Expected number of flows alone in their queue when n flows hash onto k queues (SFQ),
    ``n(1 - 1/k)^(n-1)``; with ``counted`` < n, only that many of the flows are counted
    (e.g. the 49 TCP flows beside one CBR flow: ``49(1 - 1/k)^49`` ~ 2.1 for k = 16).
    Digest 001 section 3, [derived]; report Fig. 8: "approximately two or three flows also
    dominate a queue"."""
    _check_k(k)
    c = n if counted is None else counted
    return c * (1.0 - 1.0 / k) ** (n - 1)


def monte_carlo_interference(d: int, k: int, m: int = 1, trials: int = 200_000,
                             seed: int = 1) -> tuple[float, float]:
    """Monte Carlo estimate of (complete, partial) interference: draw a target flow's d
    hashes and m other flows' d hashes each, uniformly and independently on k queues.
    "Complete" means every queue of the target is among the others' queues; "partial" means
    at least one is.  For d = 1 both are SFQ's collision probability."""
    rng = np.random.default_rng(seed)
    target = rng.integers(0, k, size=(trials, d))
    others = rng.integers(0, k, size=(trials, m * d))
    hit = (target[:, :, None] == others[:, None, :]).any(axis=2)  # trials x d
    return float(hit.all(axis=1).mean()), float(hit.any(axis=1).mean())


def overlap_classes(d: int, k: int, m: int = 1) -> dict[str, float]:
    """The three interference classes of Fig. 1 for a flow beside m misbehaving flows
    (d hashes each, k queues), as fractions of flows: ``"shared"``, every one of its queues
    is shared with them (complete interference, :func:`p_complete`); ``"one_shared"``,
    some but not all are (partial interference less complete); ``"none"``, none is
    (``1 - `` :func:`p_partial`). Under SFQ (d = 1) the middle class is empty. They sum to 1.
    """
    comp, part = p_complete(d, k, m), p_partial(d, k, m)
    return {"shared": comp, "one_shared": part - comp, "none": 1.0 - part}


def overlap_class(queues: list[int] | tuple[int, ...], misbehaving: set[int]) -> str:
    """Which class of :func:`overlap_classes` a flow with these queues (its d hashes, as
    ``queues`` in flows.parquet with ``[trace] flow_queues``) is in, given the queues of
    the misbehaving flows."""
    hit = [q in misbehaving for q in queues]
    if all(hit):
        return "shared"
    return "one_shared" if any(hit) else "none"


def max_min_rates(queues: list[list[int]], k: int, capacity: float = 1.0,
                  resolution: int = 1 << 16) -> list[float]:
    """Max-min fair rates of flows that may each spread over their queues (the queues it
    hashes to, as ``queues`` in flows.parquet), every one of the k queues serving
    ``capacity``: the fluid allocation that MQFQ's choice of the shorter queue aims at
    (report section III; d = 1 is SFQ, where a flow gets ``capacity`` over the flows in its
    queue). The highest minimum any allocation can give, and so on up the ranks.

    Progressive filling: the unfrozen flows rise together to the highest level the queues
    can carry (a maximum flow: source to flows, flows to their queues, queues to the sink);
    one unit above it, the flows on the source side of the minimum cut, whose queues that
    level overloads, are frozen; repeat. Exact in units of ``capacity / resolution``."""
    _check_k(k)
    n = len(queues)
    if n == 0:
        return []
    if any(not qs or min(qs) < 0 or max(qs) >= k for qs in queues):
        raise ValueError("every flow needs at least one queue, each in [0, k)")
    if resolution * max(k, n) >= 2**31:
        raise ValueError("resolution x queues too large for the maximum-flow solver")
    net = _Network(queues, k, resolution)
    rates = [0] * n
    free = set(range(n))
    while free:
        frozen = sum(r for i, r in enumerate(rates) if i not in free)
        lo = max(rates[i] for i in free)  # carried
        hi = (resolution * k - frozen) // len(free) + 1  # more than the queues hold
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if net.carries([mid if i in free else r for i, r in enumerate(rates)]):
                lo = mid
            else:
                hi = mid
        for i in free:
            rates[i] = lo
        reached = net.source_side([lo + 1 if i in free else r for i, r in enumerate(rates)])
        stuck = {i for i in free if reached[1 + i]}
        if not stuck:  # cannot happen: the overloaded side holds a flow that was still rising
            raise RuntimeError("max_min_rates: no bottleneck found")
        free -= stuck
    return [r * capacity / resolution for r in rates]


class _Network:
    """The flow network of :func:`max_min_rates`: source 0, flows 1..n, queues n+1..n+k,
    sink n+k+1; a flow's demand on its source edge, a flow takes at most all the queues
    (``capacity`` x k) from each of its queues, each queue carries ``capacity``."""

    def __init__(self, queues: list[list[int]], k: int, capacity: int) -> None:
        from scipy.sparse import csr_matrix

        n = len(queues)
        self.n, self.source, self.sink = n, 0, n + k + 1
        edges = [(0, 1 + i, 0) for i in range(n)]
        edges += [(1 + i, 1 + n + q, capacity * k) for i, qs in enumerate(queues) for q in set(qs)]
        edges += [(1 + n + q, self.sink, capacity) for q in range(k)]
        rows, cols, caps = zip(*edges)
        size = self.sink + 1
        self.graph = csr_matrix((np.array(caps, dtype=np.int32), (rows, cols)), shape=(size, size))
        self.graph.sort_indices()  # the source's row: the flows' demands, in flow order

    def _max_flow(self, demands: list[int]) -> Any:
        from scipy.sparse.csgraph import maximum_flow

        self.graph.data[: self.n] = demands
        return maximum_flow(self.graph, self.source, self.sink)

    def carries(self, demands: list[int]) -> bool:
        return self._max_flow(demands).flow_value >= sum(demands)

    def source_side(self, demands: list[int]) -> np.ndarray:
        """Which nodes the source reaches in the residual network of a maximum flow."""
        from scipy.sparse.csgraph import breadth_first_order

        residual = (self.graph - self._max_flow(demands).flow).tocsr()  # reverse edges: their flow
        residual.data[residual.data < 0] = 0
        residual.eliminate_zeros()
        reached = np.zeros(self.graph.shape[0], dtype=bool)
        reached[breadth_first_order(residual, self.source, return_predecessors=False)] = True
        return reached
