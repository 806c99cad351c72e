"""Seed 001 (MQFQ), section III: interference probabilities, with Monte Carlo checks."""

import math

import pytest

from aqmlab.theory import mqfq as m

TABLE = {  # digest 001 section 3 [derived from the report's formulas]: k -> (SFQ, comp, part)
    2: (0.5, 0.625, 0.875), 4: (0.25, 0.203125, 0.671875), 8: (0.125, 0.056641, 0.412109),
    16: (0.0625, 0.014893, 0.227295), 23: (0.043478, 0.007315, 0.162817),
    32: (0.03125, 0.003815, 0.119232), 64: (0.015625, 0.000965, 0.061047),
    128: (0.0078125, 0.000243, 0.030885), 256: (0.003906, 0.000061, 0.015534),
}


@pytest.mark.parametrize("k", sorted(TABLE))
def test_interference_table(k):
    sfq, comp, part = TABLE[k]
    assert m.p_sfq(k) == pytest.approx(sfq, abs=5e-7)
    assert m.p_mqfq_complete(k) == pytest.approx(comp, abs=5e-7)
    assert m.p_mqfq_partial(k) == pytest.approx(part, abs=5e-7)


def test_k16_headline():
    # digest 001: at k = 16, P_comp ~ P_SFQ/4.2 and P_part ~ 3.6 P_SFQ; 4/k^2 - 3/k^3
    assert m.p_sfq(16) / m.p_mqfq_complete(16) == pytest.approx(4.2, abs=0.05)
    assert m.p_mqfq_partial(16) / m.p_sfq(16) == pytest.approx(3.6, abs=0.05)
    assert m.p_mqfq_complete(16) == pytest.approx(4 / 16**2 - 3 / 16**3)
    assert m.p_mqfq_partial(16) == pytest.approx(4 / 16 - 6 / 16**2 + 3 / 16**3)


def test_complete_below_sfq_iff_k_above_3():
    assert m.p_mqfq_complete(3) == pytest.approx(m.p_sfq(3))
    for k in range(4, 300):
        assert m.p_mqfq_complete(k) < m.p_sfq(k)
    assert m.p_mqfq_complete(2) > m.p_sfq(2)


def test_orders_of_growth():
    # report: P_SFQ and P_part are O(1/k), P_comp is O(1/k^2)
    k = 10_000
    assert k * m.p_mqfq_partial(k) == pytest.approx(4, rel=1e-3)
    assert k * k * m.p_mqfq_complete(k) == pytest.approx(4, rel=1e-3)


def test_general_d_reduces_to_report():
    for k in (2, 5, 16, 32, 100):
        assert m.p_complete(1, k) == pytest.approx(1 / k)
        assert m.p_partial(1, k) == pytest.approx(1 / k)
        assert m.p_complete(2, k) == pytest.approx(m.p_mqfq_complete(k))
        assert m.p_partial(2, k) == pytest.approx(m.p_mqfq_partial(k))


K32 = {  # digest 001 section 3 [derived], k = 32: d -> (P_comp, P_part, E distinct)
    1: (0.03125, 0.03125, 1), 2: (0.003815, 0.1192, 1.97), 3: (0.000771, 0.2483, 2.91),
    4: (0.000214, 0.3975, 3.82), 5: (0.000075, 0.5462, 4.70), 6: (0.000032, 0.6785, 5.55),
}


@pytest.mark.parametrize("d", sorted(K32))
def test_k32_general_d(d):
    comp, part, distinct = K32[d]
    assert m.p_complete(d, 32) == pytest.approx(comp, abs=5e-7)  # printed to 6 decimals
    assert m.p_partial(d, 32) == pytest.approx(part, abs=5e-5)
    assert m.expected_distinct_queues(d, 32) == pytest.approx(distinct, abs=0.005)
    # max capture d C/k at 5 Mb/s: 156.25 kb/s per queue
    assert m.capture_bound(d, 32, 5000.0) == pytest.approx(156.25 * d)


def test_k16_d3_and_expected_counts():
    # digest 001 k = 16 table: d = 3 -> 0.00575 / 0.4390; 49 P_comp = 0.73 and 49 P_part = 11.1
    assert m.p_complete(3, 16) == pytest.approx(0.00575, abs=5e-6)
    assert m.p_partial(3, 16) == pytest.approx(0.4390, abs=5e-5)
    assert 49 * m.p_mqfq_complete(16) == pytest.approx(0.73, abs=0.005)
    assert 49 * m.p_mqfq_partial(16) == pytest.approx(11.1, abs=0.05)


def test_capture_bound_report_numbers():
    # report section V-B: "a queue's throughput is 1/k ... 312.5 kbps"; MQFQ "two queues"
    assert m.capture_bound(1, 16, 5000.0) == pytest.approx(312.5)
    assert m.capture_bound(2, 16, 5000.0) == pytest.approx(625.0)


@pytest.mark.parametrize("d, printed", [(1, 0.276), (2, 0.230), (3, 0.250), (4, 0.296)])
def test_five_misbehaving_flows(d, printed):
    # digest 001 section 3: k = 16, m = 5 misbehaving flows cover all of a flow's queues
    assert m.p_complete(d, 16, m=5) == pytest.approx(printed, abs=5e-4)


def test_five_misbehavers_touch_more_queues():
    # 16(1 - (15/16)^10) ~ 7.6 distinct queues under MQFQ2 against ~4.4 under SFQ (x1.7)
    mq, sq = m.expected_distinct_queues(10, 16), m.expected_distinct_queues(5, 16)
    assert mq == pytest.approx(7.6, abs=0.05)
    assert sq == pytest.approx(4.4, abs=0.05)
    assert mq / sq == pytest.approx(1.7, abs=0.05)


def test_private_queues():
    # digest 001 section 3: 49 TCP + 1 CBR on 16 queues -> ~2.1 TCP flows alone in a queue
    assert m.expected_private_flows(50, 16, counted=49) == pytest.approx(2.1, abs=0.05)


# --- Monte Carlo checks ---------------------------------------------------------------------------

def _tol(p, n):
    return 4.5 * math.sqrt(p * (1 - p) / n) + 1e-9


@pytest.mark.parametrize("d, k, mm", [(1, 16, 1), (2, 16, 1), (3, 16, 1), (2, 32, 1), (2, 16, 5),
                                      (4, 32, 1)])
def test_monte_carlo_matches_closed_forms(d, k, mm):
    n = 200_000
    comp, part = m.monte_carlo_interference(d, k, mm, trials=n, seed=d * 100 + k + mm)
    pc, pp = m.p_complete(d, k, mm), m.p_partial(d, k, mm)
    assert comp == pytest.approx(pc, abs=_tol(pc, n))
    assert part == pytest.approx(pp, abs=_tol(pp, n))


def test_monte_carlo_k16_reported_run():
    # digest 001: "Monte Carlo with 2.10^5 pairs at k = 16 gives 0.0144 and 0.2274"; another
    # seed gives another sample, so we check that both the digest's run and ours sit within
    # sampling error of the closed forms
    n = 200_000
    comp, part = m.monte_carlo_interference(2, 16, 1, trials=n, seed=2024)
    for got, printed, exact in ((comp, 0.0144, m.p_mqfq_complete(16)),
                                (part, 0.2274, m.p_mqfq_partial(16))):
        assert abs(printed - exact) < _tol(exact, n)
        assert abs(got - exact) < _tol(exact, n)


@pytest.mark.parametrize("d,k,bad", [(1, 16, 1), (2, 16, 1), (2, 32, 1), (3, 32, 1), (6, 32, 1), (2, 16, 5)])
def test_overlap_classes_partition_the_flows_and_match_monte_carlo(d, k, bad):
    c = m.overlap_classes(d, k, bad)
    assert sum(c.values()) == pytest.approx(1.0, abs=1e-12)
    comp, part = m.monte_carlo_interference(d, k, bad, trials=100_000, seed=7)
    assert c["shared"] == pytest.approx(comp, abs=0.004)
    assert c["none"] == pytest.approx(1 - part, abs=0.005)
    if d == 1:
        assert c["one_shared"] == pytest.approx(0.0, abs=1e-12)


def test_overlap_classes_at_k16_are_the_reports_formulas():
    c = m.overlap_classes(2, 16)
    assert c["shared"] == pytest.approx(4 / 16**2 - 3 / 16**3)
    assert c["shared"] + c["one_shared"] == pytest.approx(4 / 16 - 6 / 16**2 + 3 / 16**3)
    assert c["none"] == pytest.approx(1 - 0.227295, abs=1e-6)


def test_overlap_class_of_a_flow():
    bad = {3, 7}
    assert m.overlap_class([3, 7], bad) == "shared"
    assert m.overlap_class([3, 3], bad) == "shared"
    assert m.overlap_class([3, 9], bad) == "one_shared"
    assert m.overlap_class([1, 9], bad) == "none"
    assert m.overlap_class([7], bad) == "shared"


def test_max_min_rates_sfq_divides_each_queue():
    # d = 1: a flow gets its queue's capacity over the flows in it
    got = m.max_min_rates([[0], [0], [0], [1], [2]], k=4, capacity=3.0)
    assert got == pytest.approx([1.0, 1.0, 1.0, 3.0, 3.0], abs=1e-4)


def test_max_min_rates_spread_over_queues():
    # B can use both queues: the three share two queues' capacity equally
    assert m.max_min_rates([[0], [0, 1], [1]], k=2) == pytest.approx([2 / 3] * 3, abs=1e-4)
    # A and B fill queue 0 at 1/2; C, which also reaches queue 1, keeps rising to 1
    assert m.max_min_rates([[0], [0], [0, 1]], k=2) == pytest.approx([0.5, 0.5, 1.0], abs=1e-4)


def test_max_min_rates_random_draws_are_feasible_and_max_min():
    import random

    rng = random.Random(3)
    for d in (1, 2, 3):
        queues = [sorted({rng.randrange(8) for _ in range(d)}) for _ in range(12)]
        rates = m.max_min_rates(queues, k=8)
        assert sum(rates) <= 8 + 1e-9
        units = [round(r * (1 << 16)) for r in rates]
        # the queues carry the allocation, and no flow can take more on its own: every flow
        # is held by saturated queues (up to the rounding of the common levels, < n units)
        net = m._Network(queues, 8, 1 << 16)
        assert net.carries(units)
        for i in range(len(queues)):
            more = [u + len(queues) * (j == i) for j, u in enumerate(units)]
            assert not net.carries(more)
        if d == 1:  # SFQ: the lowest rate is the most crowded queue's share
            per_queue = {q: sum(1 for qs in queues if qs == [q]) for q in range(8)}
            assert min(rates) == pytest.approx(1 / max(per_queue.values()), abs=1e-4)


def test_max_min_rates_refuses_bad_queues():
    with pytest.raises(ValueError, match="queue"):
        m.max_min_rates([[0], [5]], k=4)
    with pytest.raises(ValueError, match="queue"):
        m.max_min_rates([[]], k=4)
