"""Seed 003 (Appenzeller) chapter 4 and Appendix A.3: short flows."""

import math

import pytest

from aqmlab.theory import short_flows as sf


@pytest.mark.parametrize("l, printed", [
    (1, [1]), (2, [2]), (3, [2, 1]), (6, [2, 4]), (14, [2, 4, 8]),
    # thesis section 4.1.2 prints l = 16 -> {2,4,8,4}, which sums to 18; the bursts of a
    # 16-packet flow are {2,4,8,2} (digest 003 section 7.6). We test the recomputed list.
    (16, [2, 4, 8, 2]),
    (30, [2, 4, 8, 16]), (62, [2, 4, 8, 16, 32]), (100, [2, 4, 8, 16, 32, 38]),
])
def test_bursts(l, printed):
    assert sf.bursts(l) == printed
    assert sum(sf.bursts(l)) == l


def test_thesis_l16_list_is_a_typo():
    assert sum([2, 4, 8, 4]) != 16


MEANQ = {  # digest 003 section 2.9 [derived]: l -> (E[X], E[X^2], E[Q] at rho = 0.8)
    1: (1, 1, 1.60), 2: (2, 4, 3.20), 6: (3, 10, 5.47), 14: (4.667, 28, 10.13),
    16: (4.0, 22, 9.40), 30: (7.5, 85, 19.67), 62: (12.4, 272.8, 39.04), 100: (16.667, 468, 49.49),
}


@pytest.mark.parametrize("l", sorted(MEANQ))
def test_mg1_mean_queue_table(l):
    ex, ex2, eq = MEANQ[l]
    d = sf.burst_distribution(l)
    assert d.mean == pytest.approx(ex, abs=5e-4)
    assert d.moment(2) == pytest.approx(ex2, abs=5e-4)
    assert sf.mg1_mean_queue(0.8, l) == pytest.approx(eq, abs=0.005)


def test_l14_queue_above_l16():
    # thesis section 4.1.1: l = 14 (largest burst 8 w.p. 1/3) gives a larger mean queue than
    # l = 16 (8 w.p. 1/4); the curve of Fig 4.2 is not monotone
    assert sf.mg1_mean_queue(0.8, 14) > sf.mg1_mean_queue(0.8, 16)


def test_mean_queue_independent_of_bandwidth():
    # thesis section 4.1.1 / R10: E[Q] depends on rho and the bursts only: the function has no
    # rate argument, and scaling flow arrivals with C at fixed rho leaves rho unchanged.
    assert sf.mg1_mean_queue(0.8, 14) == sf.mg1_mean_queue(0.8 * 200 / 200, 14)


def test_printed_en_formula_lacks_factor():
    # thesis prints E[N] = rho/(2(1-rho)) E[X^2]; with the 1/E[X] factor it is the P-K workload
    # (digest 003 section 7.7)
    d = sf.burst_distribution(14)
    assert sf.mg1_mean_jobs_printed(0.8, d) / d.mean == pytest.approx(sf.mg1_mean_workload(0.8, d))


EB = [  # digest 003 section 2.9 [derived] test vectors:
    # l, rho, kappa2, B2, kappa3, prefactor3, B3, kappa_ex, prefactor_ex, B_ex
    (2, 0.85, 0.17647, 39.1, 0.15951, 0.912, 42.7, 0.15834, 0.900, 43.0),
    (14, 0.85, 0.05882, 117.4, 0.05245, 0.902, 129.7, 0.05192, 0.885, 130.7),
    (30, 0.85, 0.03114, 221.8, 0.02764, 0.899, 246.1, None, None, None),
    (62, 0.85, 0.01604, 430.6, 0.01420, 0.897, 478.9, 0.01403, 0.878, 482.9),
    (14, 0.80, 0.08333, 82.9, 0.07149, 0.876, 94.8, 0.07022, 0.848, 96.0),
]


@pytest.mark.parametrize("row", EB, ids=[f"l{r[0]}-rho{r[1]}" for r in EB])
def test_effective_bandwidth_vectors(row):
    l, rho, k2, b2, k3, p3, b3, kx, px, bx = row
    assert sf.eb_kappa(rho, l, 2) == pytest.approx(k2, abs=5e-6)
    assert sf.eb_prefactor(rho, l, 2) == 1.0
    assert sf.eb_buffer_for_loss(1e-3, rho, l, 2) == pytest.approx(b2, abs=0.05)
    assert sf.eb_kappa(rho, l, 3) == pytest.approx(k3, abs=5e-6)
    assert sf.eb_prefactor(rho, l, 3) == pytest.approx(p3, abs=5e-4)
    assert sf.eb_buffer_for_loss(1e-3, rho, l, 3) == pytest.approx(b3, abs=0.05)
    if kx is not None:
        assert sf.eb_kappa(rho, l, "exact") == pytest.approx(kx, abs=5e-6)
        assert sf.eb_prefactor(rho, l, "exact") == pytest.approx(px, abs=5e-4)
        assert sf.eb_buffer_for_loss(1e-3, rho, l, "exact") == pytest.approx(bx, abs=0.05)


def test_third_order_about_ten_percent_larger():
    # digest 003 section 7.9: the 3rd order gives about 10 % larger buffers
    for l, rho in ((2, 0.85), (14, 0.85), (62, 0.85)):
        r = sf.eb_buffer_for_loss(1e-3, rho, l, 3) / sf.eb_buffer_for_loss(1e-3, rho, l, 2)
        assert 1.05 < r < 1.15


def test_second_order_kappa_is_thesis_formula():
    # thesis section 4.1.2: P(Q >= b) = exp(-b 2(1-rho)/rho E[X]/E[X^2])
    d = sf.burst_distribution(30)
    assert sf.eb_tail(50, 0.85, d, 2) == pytest.approx(
        math.exp(-50 * 2 * 0.15 / 0.85 * d.mean / d.moment(2)))


MD1 = {0.5: (2.0, 3.5, 6.9, 0.25), 0.8: (0.5, 13.8, 27.6, 1.6), 0.9: (0.222, 31.1, 62.2, 4.05),
       0.95: (0.105, 65.6, 131.2, 9.0)}  # digest 003 section 2.9 [derived] M/D/1 numbers


@pytest.mark.parametrize("rho", sorted(MD1))
def test_md1_numbers(rho):
    k, b3, b6, eq = MD1[rho]
    assert sf.eb_kappa(rho, 1, 2) == pytest.approx(k, abs=5e-4)
    assert sf.md1_buffer_for_loss(1e-3, rho) == pytest.approx(b3, abs=0.05)
    assert sf.md1_buffer_for_loss(1e-6, rho) == pytest.approx(b6, abs=0.05)
    # E[Q] printed to the shown digits (9.025 -> 9.0)
    assert sf.mg1_mean_queue(rho, 1) == pytest.approx(eq, abs=0.03)
    assert sf.md1_tail(10, rho) == pytest.approx(math.exp(-10 * 2 * (1 - rho) / rho))


def test_few_tens_of_packets_suffice_md1():
    # thesis section 4.2.1: "Even for high loads a few ten packets are sufficient"
    assert sf.md1_buffer_for_loss(1e-3, 0.9) < 40


def test_mixture_of_lengths():
    # digest 003 section 7.8: bursts pooled weighted by bursts per flow
    d = sf.burst_distribution({2: 0.5, 14: 0.5})
    # bursts: 0.5 x {2} and 0.5 x {2, 4, 8}: weights 2: 0.5 + 0.5, 4: 0.5, 8: 0.5 over 2
    assert dict(zip(d.sizes.tolist(), d.probs.tolist())) == pytest.approx({2: 0.5, 4: 0.25, 8: 0.25})


# --- Monte Carlo checks --------------------------------------------------------------------------

def test_monte_carlo_md1_matches_thesis_mean_queue():
    # with X = 1 the thesis's E[Q] is exactly the M/D/1 mean number waiting
    q = sf.simulate_mxd1(0.8, 1, bursts_n=600_000, seed=11)
    assert q.mean_waiting == pytest.approx(sf.mg1_mean_queue(0.8, 1), rel=0.04)
    assert q.mean_workload == pytest.approx(sf.mg1_mean_workload(0.8, 1), rel=0.04)


@pytest.mark.parametrize("l", [14, 62])
def test_monte_carlo_batches_against_exact_and_thesis(l):
    q = sf.simulate_mxd1(0.8, l, bursts_n=600_000, seed=5)
    exact = sf.mxd1_mean_waiting_exact(0.8, l)
    assert q.mean_waiting == pytest.approx(exact, rel=0.05)
    # the thesis model sits below the exact M^X/D/1 value by rho (E[X] - 1)/2, the price of
    # its "half a job" correction; the Monte Carlo shows the same gap
    d = sf.burst_distribution(l)
    gap = 0.8 * (d.mean - 1) / 2
    assert exact - sf.mg1_mean_queue(0.8, l) == pytest.approx(gap)
    assert q.mean_waiting - sf.mg1_mean_queue(0.8, l) == pytest.approx(gap, rel=0.25)


def test_monte_carlo_tail_against_cramer():
    # the exact-root estimate (Eq A.6) is the true asymptotic tail; 3rd order is closer to it
    # than the thesis's 2nd order
    rho, l, b = 0.8, 14, 50
    q = sf.simulate_mxd1(rho, l, bursts_n=1_000_000, tail_at=(b,), seed=9)
    mc = q.workload_tail[0]
    ex, t3, t2 = (float(sf.eb_tail(b, rho, l, o)) for o in ("exact", 3, 2))
    assert mc == pytest.approx(ex, rel=0.12)
    assert abs(t3 - mc) < abs(t2 - mc)


def test_bad_load():
    with pytest.raises(ValueError):
        sf.mg1_mean_queue(1.0, 14)
    with pytest.raises(ValueError):
        sf.bursts(0)
