"""Long-lived TCP flows and the router buffer: seed 003 (Appenzeller, "Sizing
Router Buffers", Stanford PhD thesis, 2005), digest 003 section 2.

Unless a docstring says otherwise, quantities are in packets and packets/s, as
in the thesis (section 1 of the digest): ``bdp`` is the two-way propagation
delay times the bottleneck rate, ``2*T_p*C``, in packets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

#: 3*sqrt(3)/(2*sqrt(2)) ~ 1.837117, the constant of Eq 3.7.
EQ37_CONSTANT = 3.0 * math.sqrt(3.0) / (2.0 * math.sqrt(2.0))


# ---------------------------------------------------------------------------
# Basic relations and the rule of thumb
# ---------------------------------------------------------------------------

def bdp_packets(rate_bps: float, rtt_s: float, packet_bytes: float) -> float:
    """Delay-bandwidth product ``2*T_p*C`` in packets (thesis section 2, digest 003 section 1).

    ``rtt_s`` is the two-way *propagation* delay (thesis section 7.1 of the digest:
    RTT in the rule of thumb means 2*T_p, without queueing)."""
    return rate_bps * rtt_s / (8.0 * packet_bytes)


def rtt_with_queue(two_tp: float, queue: float, c: float) -> float:
    """``RTT = 2*T_p + Q/C`` (thesis Eq 2.1)."""
    return two_tp + queue / c


def sending_rate(window: float, two_tp: float, queue: float, c: float) -> float:
    """``R = W / (2*T_p + Q/C)`` (thesis Eq 2.1)."""
    return window / rtt_with_queue(two_tp, queue, c)


def rule_of_thumb(rate_bps: float, rtt_s: float) -> float:
    """Rule-of-thumb buffer ``B = RTT * C`` in bits (thesis section 2.3-2.4, Eq 2.4; section 3.1
    for synchronized flows).  E.g. 10 Gb/s * 250 ms = 2.5 Gbit (thesis section 1.1.1)."""
    return rate_bps * rtt_s


def md_generalized_buffer(bdp: float, md_parameter: float) -> float:
    """Buffer for full utilization when TCP decreases ``W -> W*(1 - 1/n)``:
    ``B = 2*T_p*C / (n - 1)`` (thesis section 2.3).  Reno has n = 2, giving the rule of thumb.
    ``md_parameter`` is the thesis's n (not a flow count); it must exceed 1."""
    if md_parameter <= 1:
        raise ValueError("the multiplicative-decrease parameter n must be > 1")
    return bdp / (md_parameter - 1.0)


def md_beta_buffer(bdp: float, beta: float) -> float:
    """Same as :func:`md_generalized_buffer` with decrease factor beta (``W -> beta*W``):
    ``B = (1 - beta)/beta * 2*T_p*C`` (digest 003 section 2.3, derived from thesis section 2.3)."""
    if not 0 < beta < 1:
        raise ValueError("beta must be in (0, 1)")
    return (1.0 - beta) / beta * bdp


def sqrt_n_buffer(bdp: float, n: float) -> float:
    """The new rule ``B = 2*T_p*C / sqrt(n)`` for n desynchronized long flows
    (thesis section 3.2, Eqs 3.5-3.6)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    return bdp / math.sqrt(n)


def queueing_delay(buffer_packets: float, c_pps: float) -> float:
    """``T_Q = B/C``: a full buffer's queueing delay (thesis section 1.1.2).  With the rule of
    thumb this is one extra RTT per congested hop."""
    return buffer_packets / c_pps


# ---------------------------------------------------------------------------
# The single-flow fluid sawtooth (thesis Appendix A.2, sections 2.1-2.2)
# ---------------------------------------------------------------------------

def sawtooth_window(t: float | np.ndarray, c: float, two_tp: float) -> float | np.ndarray:
    """``W(t) = sqrt(2*C*t + (2*T_p*C)^2)`` (thesis Eq A.2, with the W(0)^2 typo fixed,
    digest 003 section 7.24).  t is time since the queue was last empty."""
    return np.sqrt(2.0 * c * np.asarray(t, dtype=float) + (two_tp * c) ** 2)


def sawtooth_queue(t: float | np.ndarray, c: float, two_tp: float) -> float | np.ndarray:
    """``Q(t) = sqrt(2*C*t + (2*T_p*C)^2) - 2*T_p*C`` (thesis Eq A.3)."""
    return sawtooth_window(t, c, two_tp) - two_tp * c


def sawtooth_period(buffer_packets: float, c: float, two_tp: float) -> float:
    """Time for Q to climb from 0 to B: ``T = B^2/(2C) + 2*T_p*B`` (thesis Appendix A.2);
    with ``B = 2*T_p*C`` it is ``1.5*B^2/C`` (30.2 s for Fig 2.2's B = 142, C = 1000)."""
    return buffer_packets**2 / (2.0 * c) + two_tp * buffer_packets


def sawtooth_period_general(buffer_packets: float, c: float, two_tp: float) -> float:
    """Full period of the single-flow sawtooth for any B (digest 003 section 2.2, derived
    from thesis Eq A.1): the window grows by one packet per RTT from
    ``W_min = (D + B)/2`` to ``W_max = D + B`` (D = 2*T_p*C).  Below D the RTT is 2*T_p
    (empty queue), above it dW/dt = C/W."""
    d = two_tp * c
    w_max = d + buffer_packets
    w_min = w_max / 2.0
    t = 0.0
    if w_min < d:  # phase with an empty queue: W grows by 1 per 2*T_p
        t += two_tp * (d - w_min)
        lo = d
    else:
        lo = w_min
    t += (w_max**2 - lo**2) / (2.0 * c)
    return t


def single_flow_empty_share(buffer_packets: float, c: float, two_tp: float) -> float:
    """The share of a single flow's sawtooth period with an empty queue (digest 003 section
    2.2, phase 1): the window climbs from ``W_min = (D + B)/2`` to D one packet per 2*T_p;
    0 when ``B >= D`` (D = 2*T_p*C)."""
    d = two_tp * c
    w_min = (d + buffer_packets) / 2.0
    if w_min >= d:
        return 0.0
    return two_tp * (d - w_min) / sawtooth_period_general(buffer_packets, c, two_tp)


def single_flow_utilization(buffer_packets: float, bdp: float) -> float:
    """Utilization of one long Reno flow through a drop-tail buffer B (digest 003 section 2.2,
    derived from the fluid model of thesis Appendix A.2 plus the empty-queue phase of
    Fig 2.4).  With b = B/BDP < 1:

    ``U(b) = [(1 - ((1+b)/2)^2)/2 + b^2/2 + b] / [(1-b)/2 + b^2/2 + b]``, and U = 1 for b >= 1.
    U(0) = 75 %."""
    b = buffer_packets / bdp
    if b >= 1.0:
        return 1.0
    num = (1.0 - ((1.0 + b) / 2.0) ** 2) / 2.0 + b * b / 2.0 + b
    den = (1.0 - b) / 2.0 + b * b / 2.0 + b
    return num / den


def single_flow_utilization_numeric(buffer_packets: float, bdp: float, c: float = 1000.0,
                                    steps: int = 200_000) -> float:
    """Numerical check of :func:`single_flow_utilization`: integrate the fluid window
    ``dW/dt = 1/RTT(W)`` over one cycle, with ``RTT = max(2*T_p, W/C)`` and rate
    ``min(W/2T_p, C)``, and return sent/(C * period).  Independent of the closed form."""
    two_tp = bdp / c
    w_min = (bdp + buffer_packets) / 2.0
    w_max = bdp + buffer_packets
    w = np.linspace(w_min, w_max, steps + 1)
    wm = 0.5 * (w[1:] + w[:-1])
    dw = np.diff(w)
    rtt = np.maximum(two_tp, wm / c)
    dt = dw * rtt                   # dW/dt = 1/RTT
    rate = wm / rtt                 # = min(W/2T_p, C)
    return float(np.sum(rate * dt) / (c * np.sum(dt)))


# ---------------------------------------------------------------------------
# Desynchronized flows: the Gaussian model and Eq 3.7
# ---------------------------------------------------------------------------

def per_flow_window_std(mean_window: float) -> float:
    """Std of a sawtooth window uniform on [2/3 W, 4/3 W]: ``W/(3*sqrt(3))`` (thesis section 3.2)."""
    return mean_window / (3.0 * math.sqrt(3.0))


def queue_std_bound(buffer_packets: float, bdp: float, n: float) -> float:
    """``sigma_Q <= (2*T_p*C + B)/(3*sqrt(3)*sqrt(n))`` (thesis section 3.2, before Eq 3.7)."""
    return (bdp + buffer_packets) / (3.0 * math.sqrt(3.0) * math.sqrt(n))


def util_lower_bound(buffer_packets: float | np.ndarray, bdp: float, n: float) -> float | np.ndarray:
    """Thesis Eq 3.7, verbatim:
    ``Util >= erf( 3*sqrt(3)/(2*sqrt(2)) * B*sqrt(n) / (2*T_p*C + B) )``.

    Conservative: it is the probability that a Gaussian queue centred at B/2 with the
    std bound of :func:`queue_std_bound` stays in [0, B] (digest 003 section 2.8, 7.3)."""
    b = np.asarray(buffer_packets, dtype=float)
    out = special.erf(EQ37_CONSTANT * b * math.sqrt(n) / (bdp + b))
    return float(out) if np.ndim(out) == 0 else out


def util_lower_bound_gaussian(buffer_packets: float, bdp: float, n: float) -> float:
    """Eq 3.7 recomputed from its Gaussian reading (digest 003 section 2.8, [derived]):
    ``P(|Z| <= B/(2*sigma_Q))`` with sigma_Q from :func:`queue_std_bound`.  Equal to
    :func:`util_lower_bound`; used as an independent check."""
    from scipy import stats
    s = queue_std_bound(buffer_packets, bdp, n)
    h = buffer_packets / 2.0
    return float(stats.norm.cdf(h / s) - stats.norm.cdf(-h / s))


def min_buffer_for_utilization(target: float, bdp: float, n: float) -> float:
    """Inverse of Eq 3.7 (digest 003 section 2.8, [derived]): with ``z = erfinv(u)`` and
    ``a = 3*sqrt(3)/(2*sqrt(2))``, ``B_min = z * 2*T_p*C / (a*sqrt(n) - z)``.

    Returns ``math.inf`` when ``a*sqrt(n) <= z``: Eq 3.7 then never reaches the target
    (few flows: use the rule of thumb)."""
    if not 0.0 < target < 1.0:
        raise ValueError("target utilization must be in (0, 1)")
    z = float(special.erfinv(target))
    den = EQ37_CONSTANT * math.sqrt(n) - z
    if den <= 0:
        return math.inf
    return z * bdp / den


def _window_sums(n: int, bdp: float, buffer_packets: float, samples: int, seed: int) -> np.ndarray:
    """``samples`` draws of the sum of n independent sawtooth windows, each uniform on
    [2/3, 4/3] of ``(BDP + B)/n`` (thesis section 3.2), drawn a chunk of windows at a time
    to bound the memory."""
    rng = np.random.default_rng(seed)
    w_bar = (bdp + buffer_packets) / n
    tot = np.zeros(samples)
    chunk = max(1, 2_000_000 // samples)
    left = n
    while left > 0:
        k = min(chunk, left)
        tot += rng.uniform(2 / 3 * w_bar, 4 / 3 * w_bar, size=(samples, k)).sum(axis=1)
        left -= k
    return tot


def window_sum_monte_carlo(n: int, bdp: float, buffer_packets: float, samples: int = 20000,
                           seed: int = 1) -> tuple[float, float]:
    """Monte Carlo check of the CLT step of thesis section 3.2 (Eqs 3.5-3.6): n independent
    sawtooth windows, each uniform on [2/3, 4/3] of ``(BDP + B)/n`` (the section's upper
    bound on the mean window), with independent phases.  Returns the mean and std of the
    window sum; the model says std = ``(BDP+B)/(3*sqrt(3)*sqrt(n))``."""
    tot = _window_sums(n, bdp, buffer_packets, samples, seed)
    return float(tot.mean()), float(tot.std())


def eq37_monte_carlo(buffer_packets: float, bdp: float, n: int, samples: int = 20000,
                     seed: int = 1) -> float:
    """Monte Carlo of the reading of Eq 3.7 (digest 003 section 2.8, [derived]): sum n
    independent sawtooth windows (uniform on [2/3, 4/3] of ``(BDP + B)/n``), centre the
    resulting queue at B/2, and return the fraction of samples with the queue inside [0, B].
    Checks the CLT step; by construction it should approach :func:`util_lower_bound`."""
    tot = _window_sums(n, bdp, buffer_packets, samples, seed)
    q = tot - tot.mean() + buffer_packets / 2.0
    return float(np.mean((q >= 0) & (q <= buffer_packets)))


# ---------------------------------------------------------------------------
# Mixes, flow completion times, flow-count brackets (thesis sections 5.4, 6.2)
# ---------------------------------------------------------------------------

def mix_buffer(bdp: float, long_fraction: float, n_long: float) -> float:
    """Mix of long and short flows: apply the long-flow rule to the share of the link the
    long flows carry, ``B ~ 2*T_p*(f_long*C)/sqrt(n_long)`` (thesis section 5.4.1, Fig 5.6:
    f_long = 0.8).  The upper bound is ``B_long + B_short`` (same section)."""
    if not 0.0 < long_fraction <= 1.0:
        raise ValueError("long_fraction must be in (0, 1]")
    return long_fraction * bdp / math.sqrt(n_long)


def rtt_large_buffer(two_tp: float) -> float:
    """RTT through a congested router with ``B = 2*T_p*C`` (nearly full): ``4*T_p``
    (thesis section 5.4.2)."""
    return 2.0 * two_tp


def rtt_small_buffer(two_tp: float, n: float) -> float:
    """RTT with ``B = 2*T_p*C/sqrt(n)``: ``2*T_p*(1 + 1/sqrt(n))`` (thesis section 5.4.2)."""
    return two_tp * (1.0 + 1.0 / math.sqrt(n))


def rtt_ratio(n: float) -> float:
    """Small-buffer over large-buffer RTT, ``(1 + 1/sqrt(n))/2`` (thesis section 5.4.2;
    digest 003 R22: 0.55 at n = 100)."""
    return rtt_small_buffer(1.0, n) / rtt_large_buffer(1.0)


def afct_break_even_retransmits(rtts_without_loss: int, n: float) -> float:
    """Flow-completion-time argument (thesis section 5.4.2): a flow that needs k RTTs without
    loss, each retransmission costing one RTT.  With the small-buffer RTT it may suffer
    ``k*(RTT_large/RTT_small - 1)`` retransmissions and still finish no later than with
    the large buffer and no loss.  For k = 4 and large n this tends to 4."""
    return rtts_without_loss * (1.0 / rtt_ratio(n) - 1.0)


def afct_break_even_loss_rate(flow_packets: int, rtts_without_loss: int, n: float) -> float:
    """Loss rate at which the retransmissions of :func:`afct_break_even_retransmits` occur in
    a flow of ``flow_packets`` packets (thesis section 5.4.2: 4 in 14 packets, "more than
    20 %"; with the 4x loss increase of small buffers, below 5 % with full buffers is safe)."""
    k = afct_break_even_retransmits(rtts_without_loss, n)
    return k / (flow_packets + k)


@dataclass(frozen=True)
class FlowBracket:
    """Bracket on the number of long-lived flows (thesis section 6.2, Eqs 6.4-6.5)."""

    n_min: int
    n_max: int


def flow_count_bracket(n_total: int, udp: tuple[int, int], web: tuple[int, int]) -> FlowBracket:
    """Stanford-style bracket from flow counts (thesis section 6.2, Eqs 6.4-6.5):
    ``n_min = n_total - n_udp,max - n_web,max`` and ``n_max = n_total - n_udp,min - n_web,min``.
    E.g. 3400 total, UDP 1000..2000, web 500..1000 gives [400, 1900]."""
    n_min = n_total - udp[1] - web[1]
    n_max = n_total - udp[0] - web[0]
    if n_max < 1:
        raise ValueError("the flow counts leave no long-lived flows")
    return FlowBracket(max(n_min, 1), n_max)


def mean_rtt(rtts: list[float] | np.ndarray, throughputs: list[float] | None = None) -> float:
    """Average two-way propagation delay for the rule (digest 003 section 7.1): the arithmetic
    mean, or, given per-flow throughputs, the throughput-weighted mean ``sum(x_i*rtt_i)/sum(x_i)``
    (thesis section 3.1: the relevant mean is skewed toward short-RTT flows)."""
    r = np.asarray(rtts, dtype=float)
    if throughputs is None:
        return float(r.mean())
    x = np.asarray(throughputs, dtype=float)
    return float((x * r).sum() / x.sum())


def eq61_bdp_packets(rate_bps: float, rtt_s: float, mean_packet_bytes: float) -> int:
    """Stanford BDP in packets as the thesis writes it: ``2T*C`` divided by the mean packet
    size, truncated (thesis Eq 6.1: 20 Mb/s * 250 ms = 5 Mbit = 1121 packets of 557.1 B)."""
    return int(math.floor(bdp_packets(rate_bps, rtt_s, mean_packet_bytes)))


def token_bucket_packets(depth_s: float, rate_bps: float, mean_packet_bytes: float) -> int:
    """A shaper's token bucket counted as buffer (thesis Eq 6.8: 10 ms * 20 Mb/s = 25 kB =
    45 packets of 557 B; rounded to the nearest packet)."""
    return int(round(depth_s * rate_bps / 8.0 / mean_packet_bytes))


# ---------------------------------------------------------------------------
# Memory technology arithmetic (thesis section 1.1.1)
# ---------------------------------------------------------------------------

def devices_needed(buffer_bits: float, device_bits: float) -> int:
    """Memory devices needed to hold a buffer (thesis section 1.1.1: 10 Gbit in 32 Mbit SRAMs
    is more than 300 chips; in 1 Gbit DRAMs, ten)."""
    return int(math.ceil(buffer_bits / device_bits - 1e-12))


def memory_power_w(buffer_bits: float, mw_per_mbit: float) -> float:
    """Power of a buffer memory (thesis section 1.1.1: SRAM 250 mW/Mbit -> 2.5 kW for 10 Gbit;
    DRAM 4 mW/Mbit -> 40 W)."""
    return buffer_bits / 1e6 * mw_per_mbit / 1e3


def packet_time(packet_bytes: float, rate_bps: float) -> float:
    """Transmission time of one packet (thesis section 1.1.1: a 40 B packet every 8 ns at 40 Gb/s)."""
    return packet_bytes * 8.0 / rate_bps


def ram_device_bits(buffer_packets: float, packet_bytes: float) -> int:
    """Smallest power-of-two RAM (bits, 2**k) holding the buffer (thesis Fig 6.1 "RAM" column,
    e.g. 64 packets of 1500 B -> 1 Mbit, 37 -> 512 kbit; digest 003 section 5.1)."""
    bits = buffer_packets * packet_bytes * 8.0
    return 1 << max(0, math.ceil(math.log2(bits)))
