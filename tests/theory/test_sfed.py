"""Seed 002 (SFED), the appendix's bucket Markov chain and Fig. 16 (digest 002 section 4)."""

import pytest

from aqmlab.theory import sfed

FIG16 = [  # digest 002 section 4 reference values (RC/N = 10, l = 2/3 L_N, lambda2 = 1/3,
    # max_p = 0.02, the digest's recommended choices for the unstated parameters)
    (15, 0.71), (20, 0.40), (30, 0.21), (40, 0.14), (50, 0.068), (60, 0.047), (80, 0.011),
    (100, 2.8e-3), (120, 3.4e-4), (150, 7.1e-6), (180, 4.0e-8), (194, 2.9e-10),
]


@pytest.mark.parametrize("height, printed", FIG16)
def test_fig16_table(height, printed):
    got = sfed.overflow_probability(height, 10, 2 / 3).overflow
    # printed to two significant figures; 0.215 is printed 0.21
    assert got == pytest.approx(printed, rel=0.03)


@pytest.mark.parametrize("height", [195, 200, 240])
def test_fig16_exact_zero_from_195(height):
    # "exactly 0 for L_N >= 195": no state with X = L_N in the recurrent class
    assert sfed.overflow_probability(height, 10, 2 / 3).overflow == 0.0


def test_eq4_threshold_195():
    # Eq 4: 1/2 100 + 15 + (2/3) 195 = 195
    assert sfed.no_overflow_height(10, 2 / 3 * 195) == pytest.approx(195)
    assert sfed.no_overflow_height_fraction(10, 2 / 3) == pytest.approx(195)


def test_fig16_roughly_exponential_decrease():
    ms = [sfed.overflow_probability(h, 10).overflow for h in (40, 80, 120, 160)]
    assert all(a > b for a, b in zip(ms, ms[1:]))
    ratios = [ms[i] / ms[i + 1] for i in range(3)]
    assert all(r > 5 for r in ratios)


def test_max_p_does_not_move_the_zero():
    # digest 002: with max_p = 0.1, m_i is larger but also exactly 0 from 195
    for h in (60, 120):
        assert sfed.overflow_probability(h, 10, max_p=0.1).overflow > \
            sfed.overflow_probability(h, 10, max_p=0.02).overflow
    assert sfed.overflow_probability(195, 10, max_p=0.1).overflow == 0.0
    assert sfed.overflow_probability(194, 10, max_p=0.1).overflow > 0.0


def test_stationary_sums_to_one():
    r = sfed.overflow_probability(40, 10, keep_stationary=True)
    assert sum(r.stationary.values()) == pytest.approx(1.0)
    assert r.overflow == pytest.approx(sum(p for (x, _), p in r.stationary.items() if x == 40))


@pytest.mark.parametrize("height, bursts", [(30, 60_000), (60, 200_000)])
def test_chain_monte_carlo(height, bursts):
    exact = sfed.overflow_probability(height, 10).overflow
    mc = sfed.simulate_chain(height, 10, bursts_n=bursts, seed=height)
    assert mc == pytest.approx(exact, rel=0.12)


def test_drop_profile_break_points():
    # paper section IV profile: 0 above L/2, max_p at L/4, 1 at 0, continuous
    L = 100.0
    assert sfed.drop_profile(60, L) == 0.0
    assert sfed.drop_profile(50, L) == 0.0
    assert sfed.drop_profile(25, L) == pytest.approx(0.02)
    assert sfed.drop_profile(0, L) == 1.0
    assert sfed.drop_profile(-1, L) == 1.0
    assert sfed.drop_profile(37.5, L) == pytest.approx(0.01)
    assert sfed.drop_profile(12.5, L) == pytest.approx(0.02 + 0.98 / 2)


def test_cbr_equilibrium():
    # digest 002 section 4 [D]: 1.4 Mb/s CBR against a 0.77 Mb/s share: f_p = 0.45, h ~ 0.14 L
    h = sfed.cbr_equilibrium_height(1.4, 0.77, 1.0)
    assert sfed.drop_profile(h, 1.0) == pytest.approx(0.45)
    assert h == pytest.approx(0.14, abs=0.005)
    # below its share the bucket stays full
    assert sfed.cbr_equilibrium_height(0.5, 0.77, 1.0) == 1.0


def test_eq5_range():
    # Eq 5 with mu = 0 is Eq 4 scaled: B >= (a^2/2 + 3a/2)/kappa with a = R0 C/N
    lo, hi = sfed.fair_share_buffer_range(0.1, 0.0, 1000.0, 10.0, 0.5)
    assert lo == pytest.approx((0.5 * 100 + 15) / 0.5) and hi == float("inf")
    # with queueing delay the range is finite ("(5) does not hold for large B")
    lo, hi = sfed.fair_share_buffer_range(0.1, 1e-4, 1000.0, 10.0, 0.5)
    assert lo < hi < float("inf")
    for b in (lo * 1.01, (lo + hi) / 2, hi * 0.99):
        a = (0.1 + 1e-4 * b) * 100
        assert 0.5 * a * a + 1.5 * a <= 0.5 * b + 1e-9
    # too little kappa: no buffer works
    assert sfed.fair_share_buffer_range(0.1, 1e-3, 1000.0, 10.0, 0.01) is None


def test_chain_monte_carlo_after_a_warmup_never_overflows_from_195():
    # the start (a full bucket, window 1) overflows until the window has grown; after it, a
    # bucket of 195 tokens never fills again (Eq 4), one of 150 does, rarely
    assert sfed.simulate_chain(195, 10, bursts_n=2_000, seed=1) > 0
    assert sfed.simulate_chain(195, 10, bursts_n=20_000, seed=1, warmup_bursts=2_000) == 0.0
