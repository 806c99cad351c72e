"""SFED's token buckets: the Markov chain of the appendix of seed 002 (Kamra et al.,
"SFED: a rate control based active queue management discipline"), Fig. 16, the
no-overflow bound (Eq 4) and its buffer range (Eq 5); digest 002 section 4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph
from scipy.sparse import linalg as splinalg

#: Drop-profile parameters used in all of the paper's simulations (digest 002 section 1.2).
LAMBDA1, LAMBDA2, MAX_P = 0.5, 0.25, 0.02


def drop_profile(x: float | np.ndarray, height: float, lambda1: float = LAMBDA1,
                 lambda2: float = LAMBDA2, max_p: float = MAX_P):
    """SFED's gentle-RED-like drop probability of an arriving packet whose bucket holds x of
    ``height`` = L_N tokens (paper section IV, the f_p profile of Fig. 3; digest 002 section 1.2):
    0 above lambda1*L, linear to max_p at lambda2*L, linear to 1 at 0, and 1 at x <= 0."""
    r = np.asarray(x, dtype=float) / height
    p = np.where(r >= lambda1, 0.0,
                 np.where(r >= lambda2, max_p * (lambda1 - r) / (lambda1 - lambda2),
                          max_p + (1.0 - max_p) * (lambda2 - r) / lambda2))
    p = np.where(r <= 0.0, 1.0, p)
    return float(p) if np.ndim(p) == 0 else p


def cbr_equilibrium_height(cbr_rate: float, fair_rate: float, height: float,
                           lambda1: float = LAMBDA1, lambda2: float = LAMBDA2,
                           max_p: float = MAX_P) -> float:
    """Height h at which a CBR flow faster than its token rate settles: ``f_p(h) = 1 -
    fair/rate`` (paper appendix, "oscillates about a certain height h_lambda"; digest 002
    section 4: 1.4 Mb/s against 0.77 Mb/s gives f_p = 0.45, h ~ 0.14 L).  Returns the full
    height when the flow is within its share (its bucket stays full)."""
    target = 1.0 - fair_rate / cbr_rate
    if target <= 0:
        return height
    if target <= max_p:
        r = lambda1 - target / max_p * (lambda1 - lambda2)
    else:
        r = lambda2 - (target - max_p) / (1.0 - max_p) * lambda2
    return r * height


@dataclass(frozen=True)
class ChainResult:
    height: int
    overflow: float           # m_i = sum_w pi(L_N, w)
    states: int               # states in the recurrent class
    stationary: dict          # (x, w) -> probability, only when asked for


def _fp_table(height: int, ell_fraction: float, lambda2: float | None, max_p: float) -> np.ndarray:
    lam2 = ell_fraction / 2.0 if lambda2 is None else lambda2
    x = np.arange(height + 1, dtype=float)
    return drop_profile(x, float(height), ell_fraction, lam2, max_p)


def transitions(height: int, tokens_per_rtt: int, ell_fraction: float = 2 / 3,
                lambda2: float | None = None, max_p: float = MAX_P):
    """Transition list of the SFED bucket chain (paper appendix, Eqs 2 and 3).

    State (X, W): bucket occupancy 0..L_N and window 0..L_N+1 just before a burst.
    ``p(x, w, d)``, the probability of d drops in a burst of w packets at occupancy x, follows
    Eq 2: ``p(x,w,d) = f_p(x) p(x,w-1,d-1) + (1-f_p(x)) p(x-1,w-1,d)``.  Then (Eq 3, with the
    typo W_n -> W_{n+1} fixed) ``X' = min(max(X - W + d, 0) + RC/N, L_N)``, ``W' = W+1`` if d = 0
    else ``floor(W/2)``.  Defaults follow Fig. 16: l = 2/3 L_N; lambda2 (unstated) = l/2 and
    max_p = 0.02 as digest 002 section 7.19 recommends.

    Returns (src, dst, prob) arrays over state index ``x*(L+2) + w``."""
    if height < 1 or tokens_per_rtt < 1:
        raise ValueError("height and tokens per RTT must be >= 1")
    L = int(height)
    nw = L + 2
    f = _fp_table(L, ell_fraction, lambda2, max_p)
    xs = np.arange(L + 1)
    P = np.zeros((L + 1, 1))
    P[:, 0] = 1.0  # w = 0: no packets, no drops
    src, dst, prob = [], [], []
    for w in range(0, L + 2):
        if w > 0:
            new = np.zeros((L + 1, w + 1))
            new[:, 1:] += f[:, None] * P[:, :w]             # drop: x unchanged
            new[1:, :w] += (1.0 - f[1:, None]) * P[:-1, :w]  # accept: x -> x - 1
            P = new
        d = np.arange(w + 1)
        xnext = np.minimum(np.maximum(xs[:, None] - w + d[None, :], 0) + tokens_per_rtt, L)
        wnext = np.where(d == 0, min(w + 1, L + 1), w // 2)[None, :].repeat(L + 1, 0)
        mask = P > 1e-300
        s = (xs[:, None] * nw + w).repeat(w + 1, 1)
        src.append(s[mask])
        dst.append((xnext * nw + wnext)[mask])
        prob.append(P[mask])
    return np.concatenate(src), np.concatenate(dst), np.concatenate(prob)


def overflow_probability(height: int, tokens_per_rtt: int = 10, ell_fraction: float = 2 / 3,
                         lambda2: float | None = None, max_p: float = MAX_P,
                         keep_stationary: bool = False) -> ChainResult:
    """``m_i = sum_w pi(L_N, w)``: the stationary probability that a burst finds the bucket
    full, an upper bound on the fraction of the flow's tokens that overflow, p_i (paper
    appendix, the bound p_i <= m_i; Fig. 16 plots it against L_N for RC/N = 10, l = 2/3 L_N).

    Solved exactly on the recurrent class reached from (L_N, 1): the chain is restricted to
    that closed class (found as the strongly connected component with no exit), and
    ``pi (P - I) = 0, sum pi = 1`` is solved directly.  When no state with X = L_N is in the
    class the result is exactly 0 (L_N above the bound of Eq 4)."""
    L = int(height)
    nw = L + 2
    n = (L + 1) * nw
    src, dst, prob = transitions(L, tokens_per_rtt, ell_fraction, lambda2, max_p)
    A = sparse.csr_matrix((prob, (src, dst)), shape=(n, n))
    A.sum_duplicates()
    # states reachable from the start (L, 1)
    start = L * nw + 1
    order = csgraph.breadth_first_order(A, start, directed=True, return_predecessors=False)
    sub = A[order][:, order]
    ncomp, labels = csgraph.connected_components(sub, directed=True, connection="strong")
    # a closed class: no edge leaving it
    coo = sub.tocoo()
    leaving = np.zeros(ncomp, bool)
    leaving[labels[coo.row][labels[coo.row] != labels[coo.col]]] = True
    closed = np.flatnonzero(~leaving)
    if len(closed) != 1:  # pragma: no cover - not seen for the paper's parameters
        raise RuntimeError(f"chain has {len(closed)} closed classes")
    members = np.flatnonzero(labels == closed[0])
    states = order[members]
    Pc = sub[members][:, members].tocsc()
    m = len(states)
    M = (Pc.T - sparse.identity(m, format="csc")).tolil()
    M[0, :] = np.ones(m)
    rhs = np.zeros(m)
    rhs[0] = 1.0
    pi = splinalg.spsolve(M.tocsc(), rhs)
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    xs = states // nw
    overflow = float(pi[xs == L].sum()) if np.any(xs == L) else 0.0
    stat = {}
    if keep_stationary:
        stat = {(int(s // nw), int(s % nw)): float(p) for s, p in zip(states, pi)}
    return ChainResult(L, overflow, m, stat)


def simulate_chain(height: int, tokens_per_rtt: int = 10, bursts_n: int = 200_000,
                   ell_fraction: float = 2 / 3, lambda2: float | None = None,
                   max_p: float = MAX_P, seed: int = 1, warmup_bursts: int = 0) -> float:
    """Monte Carlo of the same bucket: packet by packet, each arriving packet of a window burst
    is dropped with probability f_p(x) at the current occupancy x, else takes a token; then
    RC/N tokens arrive (capped at L_N) and the window grows by one or halves (NewReno: once per
    window with drops).  Returns the fraction of bursts that find the bucket full, counted
    after ``warmup_bursts`` (the start, full bucket and window 1, is not in the stationary
    regime); an independent check of :func:`overflow_probability`."""
    rng = np.random.default_rng(seed)
    L = int(height)
    f = _fp_table(L, ell_fraction, lambda2, max_p)
    x, w = L, 1
    full = 0
    u = rng.random(bursts_n * 4)
    ui = 0
    for n in range(warmup_bursts + bursts_n):
        if x == L and n >= warmup_bursts:
            full += 1
        drops = 0
        xx = x
        for _p in range(w):
            if ui >= len(u):
                u = rng.random(bursts_n * 4)
                ui = 0
            if u[ui] < f[xx]:
                drops += 1
            else:
                xx -= 1
            ui += 1
        x = min(max(xx, 0) + tokens_per_rtt, L)
        w = min(w + 1, L + 1) if drops == 0 else w // 2
    return full / bursts_n


def no_overflow_height(tokens_per_rtt: float, ell: float) -> float:
    """Smallest bucket with no overflow, from Eq 4: ``L_N >= (RC/N)^2/2 + 3(RC/N)/2 + l``."""
    a = tokens_per_rtt
    return 0.5 * a * a + 1.5 * a + ell


def no_overflow_height_fraction(tokens_per_rtt: float, ell_fraction: float) -> float:
    """Eq 4 solved for L_N when ``l = ell_fraction * L_N``:
    ``L_N >= ((RC/N)^2/2 + 3(RC/N)/2) / (1 - ell_fraction)`` (digest 002 section 4: 195 for
    RC/N = 10, l = 2/3 L_N)."""
    a = tokens_per_rtt
    return (0.5 * a * a + 1.5 * a) / (1.0 - ell_fraction)


def fair_share_buffer_range(r0: float, mu: float, c: float, n: float, kappa: float):
    """Range of buffers B satisfying Eq 5,
    ``((R0 + mu*B)C/N)^2/2 + 3((R0 + mu*B)C/N)/2 <= kappa*B``: a quadratic in B.  Returns
    (B_low, B_high) or None when no B qualifies (paper appendix: Eq 5 fails for large B)."""
    g = c / n
    # (g^2 mu^2 / 2) B^2 + (g^2 r0 mu + 1.5 g mu - kappa) B + (g^2 r0^2 / 2 + 1.5 g r0) <= 0
    qa = 0.5 * g * g * mu * mu
    qb = g * g * r0 * mu + 1.5 * g * mu - kappa
    qc = 0.5 * g * g * r0 * r0 + 1.5 * g * r0
    if qa == 0:
        if qb >= 0:
            return None
        return (qc / -qb, math.inf)
    disc = qb * qb - 4 * qa * qc
    if disc < 0:
        return None
    root = math.sqrt(disc)
    lo, hi = (-qb - root) / (2 * qa), (-qb + root) / (2 * qa)
    if hi < 0:
        return None
    return (max(lo, 0.0), hi)
