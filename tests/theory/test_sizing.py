"""Seed 003 (Appenzeller), long-lived flows: every printed number of the models.

Only the published (or digest-tabulated) number is typed in; the value is computed.
"Digest" means /work/shared/reference/003-buffer-sizing.md; "thesis" the seed."""

import math

import pytest

from aqmlab.theory import sizing as s

SQ = math.sqrt


# --- R1: single flow, Fig 2.2-2.5 and Appendix A.2 ----------------------------------------

def test_r1_sawtooth_period_fig_2_2():
    # thesis Fig 2.2 / digest R1: B = BDP = 142 packets, C = 1000 pkt/s -> period 30.2 s
    assert s.sawtooth_period(142, 1000, 0.142) == pytest.approx(30.2, abs=0.05)
    # the A.2 shortcut T = 1.5 B^2 / C for B = 2 T_p C
    assert s.sawtooth_period(142, 1000, 0.142) == pytest.approx(1.5 * 142**2 / 1000)
    assert s.sawtooth_period_general(142, 1000, 0.142) == pytest.approx(30.2, abs=0.05)


def test_sawtooth_periods_under_and_over_buffered():
    # digest 003 section 2.2 [derived]: 22.2 s (B = 100), 38.9 s (B = 180), Q_min = 19
    assert s.sawtooth_period_general(100, 1000, 0.142) == pytest.approx(22.2, abs=0.05)
    assert s.sawtooth_period_general(180, 1000, 0.142) == pytest.approx(38.9, abs=0.05)
    assert (142 + 180) / 2 - 142 == 19


def test_fig_2_3_full_buffer_rtt():
    # digest 003 section 2.2: the 35.44 - 35.15 = 0.29 s pause ~ full-buffer RTT 0.284 s
    assert s.rtt_with_queue(0.142, 142, 1000) == pytest.approx(0.284)
    assert s.rtt_with_queue(0.142, 142, 1000) == pytest.approx(35.44 - 35.15, abs=0.01)


def test_sawtooth_queue_grows_as_square_root():
    # thesis Eq A.3: Q(0) = 0 and Q reaches B = 2T_pC after the period
    assert s.sawtooth_queue(0.0, 1000, 0.142) == pytest.approx(0.0)
    assert s.sawtooth_queue(s.sawtooth_period(142, 1000, 0.142), 1000, 0.142) == pytest.approx(142)
    # concave: the first half of the period gains more than half the queue
    half = s.sawtooth_queue(30.246 / 2, 1000, 0.142)
    assert half > 71


@pytest.mark.parametrize("b, printed", [
    (0.0, 75.0), (0.1, 81.8), (0.25, 89.3), (0.5, 96.4), (100 / 142, 99.0), (0.9, 99.9),
])
def test_single_flow_utilization(b, printed):
    # digest 003 section 2.2 [derived] U(b) values, one decimal
    assert 100 * s.single_flow_utilization(b * 142, 142) == pytest.approx(printed, abs=0.05)


@pytest.mark.parametrize("b", [0.0, 0.1, 0.3, 0.6, 0.95, 1.0, 1.3])
def test_single_flow_utilization_numeric_check(b):
    # closed form against an independent integration of the fluid window dW/dt = 1/RTT
    assert s.single_flow_utilization(b * 142, 142) == pytest.approx(
        s.single_flow_utilization_numeric(b * 142, 142), abs=1e-6)


def test_single_flow_empty_share():
    # B = 100 < D = 142: W climbs from 121 to 142 with an empty queue, 21 RTTs of 142 ms,
    # of a 22.18 s period; no empty phase from B = D on.
    assert s.single_flow_empty_share(100, 1000, 0.142) == pytest.approx(21 * 0.142 / 22.18, rel=1e-3)
    assert s.single_flow_empty_share(142, 1000, 0.142) == 0.0
    assert s.single_flow_empty_share(180, 1000, 0.142) == 0.0
    # the utilization lost is the link idle in that phase: under the share itself
    assert 1 - s.single_flow_utilization(100, 142) < s.single_flow_empty_share(100, 1000, 0.142)


# --- Rule of thumb and its generalisation (section 2.3) -------------------------------------

def test_md_generalized():
    # thesis section 2.3: Reno (n = 2) gives B = 2T_pC; B = 2T_pC/(n-1)
    assert s.md_generalized_buffer(1000, 2) == pytest.approx(1000)
    assert s.md_generalized_buffer(1000, 8) == pytest.approx(1000 / 7)
    # beta form (digest [derived]): W -> beta W with beta = 1 - 1/n is the same rule
    for n in (2, 3, 8):
        assert s.md_beta_buffer(1000, 1 - 1 / n) == pytest.approx(s.md_generalized_buffer(1000, n))


def test_rate_balance_eq_2_3_gives_rule_of_thumb():
    # thesis Eq 2.3: W_max/RTT_max = W_min/RTT_min with Q = B before, 0 after, W_min = W_max/2
    bdp, c = 500.0, 1000.0
    b = s.rule_of_thumb(c, bdp / c)  # in packets when "rate" is pkt/s
    w_max = bdp + b
    assert s.sending_rate(w_max, bdp / c, b, c) == pytest.approx(s.sending_rate(w_max / 2, bdp / c, 0, c))


# --- R21: motivation numbers (thesis Abstract, section 1.1) ---------------------------------

def test_r21_rule_of_thumb_examples():
    # "250ms x 10Gb/s = 2.5Gbits"
    assert s.rule_of_thumb(10e9, 0.250) == pytest.approx(2.5e9)
    # 40 Gb/s line card, 250 ms -> "10Gbits (1.25Gbytes)"
    assert s.rule_of_thumb(40e9, 0.250) == pytest.approx(10e9)
    assert s.rule_of_thumb(40e9, 0.250) / 8 == pytest.approx(1.25e9)


def test_r21_abstract_10gbps_50000_flows_about_10_mbit():
    # Abstract: "a 10Gb/s link carrying 50,000 flows requires only 10Mbits of buffering".
    # Computed: 250 ms x 10 Gb/s / sqrt(50000) = 11.18 Mbit; "about 10" is the thesis's rounding.
    bits = s.sqrt_n_buffer(s.rule_of_thumb(10e9, 0.250), 50_000)
    assert bits == pytest.approx(11.18e6, rel=1e-3)
    assert bits == pytest.approx(10e6, rel=0.15)


def test_r21_abstract_2_5gbps_10000_flows_99_percent_less():
    # Abstract: a 2.5Gb/s link with 10,000 flows "could reduce its buffers by 99%"
    bdp = s.rule_of_thumb(2.5e9, 0.250)
    assert 1 - s.sqrt_n_buffer(bdp, 10_000) / bdp == pytest.approx(0.99)


def test_r21_memory_technology():
    buf = s.rule_of_thumb(40e9, 0.250)  # 10 Gbit
    # "more than 300 chips and consume 2.5kW" (32 Mbit SRAM, 250 mW/Mbit)
    assert s.devices_needed(buf, 32e6) > 300
    assert s.memory_power_w(buf, 250) == pytest.approx(2500)
    # "ten devices consuming only 40W" (1 Gbit DRAM, 4 mW/Mbit)
    assert s.devices_needed(buf, 1e9) == 10
    assert s.memory_power_w(buf, 4) == pytest.approx(40)
    # "a minimum length (40byte) packet can arrive and depart every 8ns" at 40 Gb/s
    assert s.packet_time(40, 40e9) == pytest.approx(8e-9)
    # 512 Mbit of SRAM suffices at 5 % of the BDP; 256 Mbit of eDRAM at 2 %
    assert 0.05 * buf <= 512e6 and 0.02 * buf <= 256e6


# --- R3/R4: the Gaussian model and Eq 3.7 ---------------------------------------------------

def test_eq37_constant():
    assert s.EQ37_CONSTANT == pytest.approx(1.837117, abs=1e-6)


def test_r4_n10000_table():
    n = 10_000
    u = lambda k: 100 * s.util_lower_bound(k / SQ(n), 1.0, n)  # noqa: E731
    # thesis section 3.2: "Util >= 98.99 %" at 1 x BDP/sqrt(n)
    assert u(1) == pytest.approx(98.99, abs=0.005)
    # thesis prints 99.99988 % at 1.5 x; Eq 3.7 gives 99.98767 % (digest 003 section 7.4:
    # a typo in the thesis). We test the recomputed value and that the printed one is not it.
    assert u(1.5) == pytest.approx(99.98767, abs=5e-6)
    assert u(1.5) != pytest.approx(99.99988, abs=1e-4)
    # thesis: "Util >= 99.99997 %" at 2 x. Eq 3.7 gives 99.9999650 %, which rounds to
    # 99.99996 at five decimals; the printed value is one unit higher in the last digit
    # (rounding 99.999965 twice). Tolerance: one unit of the last printed digit.
    assert u(2) == pytest.approx(99.99997, abs=1e-5)
    assert u(2) == pytest.approx(99.999965, abs=5e-7)


K_TABLE = {  # digest 003 section 2.8 [derived]: Eq 3.7 at B = k BDP/sqrt(n), percent
    50: (77.50, 97.716, 99.870, 99.9949),
    100: (78.40, 98.182, 99.930, 99.9985),
    200: (79.04, 98.475, 99.957, 99.9995),
    400: (79.50, 98.665, 99.971, 99.9998),
    1000: (79.90, 98.821, 99.980, 99.9999),
    10000: (80.38, 98.990, 99.988, 99.99997),
}


@pytest.mark.parametrize("n", sorted(K_TABLE))
def test_eq37_k_table(n):
    for k, printed in zip((0.5, 1, 1.5, 2), K_TABLE[n]):
        decimals = len(str(printed).split(".")[1])
        got = 100 * s.util_lower_bound(k / SQ(n), 1.0, n)
        # half a unit of the last printed digit; n = 10000, k = 2 is printed 99.99997 for
        # 99.9999650 (see test_r4_n10000_table), so one unit there
        tol = (1.0 if (n, k) == (10000, 2) else 0.5) * 10**-decimals
        assert got == pytest.approx(printed, abs=tol), (n, k)
    # k = 3: "~100 %"
    assert 100 * s.util_lower_bound(3 / SQ(n), 1.0, n) > 99.9999


def test_eq37_only_depends_on_k_and_n():
    # digest 003 section 2.8: Util >= erf(1.8371 k/(1 + k/sqrt(n))), whatever the BDP
    for bdp in (100.0, 1291.0, 1e6):
        assert s.util_lower_bound(bdp / 20, bdp, 400) == pytest.approx(
            math.erf(s.EQ37_CONSTANT * 1 / (1 + 1 / 20)))


INV_TABLE = {  # digest 003 section 2.8 [derived]: B_min as a multiple of BDP/sqrt(n)
    50: (0.844, 1.025, 1.153, 1.275, 1.543, 1.900),
    100: (0.816, 0.983, 1.101, 1.211, 1.450, 1.761),
    400: (0.784, 0.937, 1.043, 1.142, 1.352, 1.619),
    10000: (0.760, 0.904, 1.001, 1.092, 1.283, 1.520),
}


@pytest.mark.parametrize("n", sorted(INV_TABLE))
def test_eq37_inverse_table(n):
    for u, printed in zip((0.95, 0.98, 0.99, 0.995, 0.999, 0.9999), INV_TABLE[n]):
        got = s.min_buffer_for_utilization(u, 1.0, n) * SQ(n)
        assert got == pytest.approx(printed, abs=0.0005), (n, u)


@pytest.mark.parametrize("u, z", [(0.95, 1.3859), (0.98, 1.6450), (0.99, 1.8214),
                                  (0.995, 1.9849), (0.999, 2.3268), (0.9999, 2.7511),
                                  (0.999999, 3.4589)])
def test_erfinv_values(u, z):
    from scipy.special import erfinv
    assert erfinv(u) == pytest.approx(z, abs=5e-5)


def test_inverse_round_trip():
    for n in (50, 137, 5000):
        for u in (0.9, 0.99, 0.9999):
            b = s.min_buffer_for_utilization(u, 777.0, n)
            assert s.util_lower_bound(b, 777.0, n) == pytest.approx(u, abs=1e-12)


def test_inverse_unreachable_for_one_flow():
    # a*sqrt(1) = 1.837 < erfinv(0.999) = 2.33: Eq 3.7 never reaches 99.9 % with one flow
    assert math.isinf(s.min_buffer_for_utilization(0.999, 100.0, 1))


def test_eq37_is_the_gaussian_reading():
    for b, n in ((10.0, 100), (32.5, 400), (100.0, 50)):
        assert s.util_lower_bound(b, 325.0, n) == pytest.approx(
            s.util_lower_bound_gaussian(b, 325.0, n), abs=1e-12)


def test_window_sum_clt_monte_carlo():
    # thesis section 3.2: sigma of the window sum = (BDP + B)/(3 sqrt(3) sqrt(n))
    mean, std = s.window_sum_monte_carlo(100, 1000.0, 100.0, samples=20000, seed=7)
    assert mean == pytest.approx(1100.0, rel=2e-3)
    assert std == pytest.approx(s.queue_std_bound(100.0, 1000.0, 100), rel=0.03)


@pytest.mark.parametrize("n, k", [(100, 1.0), (400, 0.5), (50, 1.5)])
def test_eq37_monte_carlo(n, k):
    bdp = 1000.0
    b = k * bdp / SQ(n)
    assert s.eq37_monte_carlo(b, bdp, n, samples=20000, seed=3) == pytest.approx(
        s.util_lower_bound(b, bdp, n), abs=0.006)


# --- Figures 5.2, 5.6, 5.10 model lines -------------------------------------------------------

def test_fig_5_2_bottom_model_points():
    # digest E5.2b [derived]: 99.9 % at 20 Mb/s, BDP 325: 47.1 packets (n = 100), 22.0 (n = 400)
    assert s.min_buffer_for_utilization(0.999, 325, 100) == pytest.approx(47.1, abs=0.05)
    assert s.min_buffer_for_utilization(0.999, 325, 400) == pytest.approx(22.0, abs=0.05)


def test_r8_ratio_998_vs_98_at_400():
    # digest R8: B(99.9 %)/B(98 %) at n = 400 = 1.352/0.937 = 1.44 < 2
    r = s.min_buffer_for_utilization(0.999, 1, 400) / s.min_buffer_for_utilization(0.98, 1, 400)
    assert r == pytest.approx(1.44, abs=0.005)
    assert r < 2


def test_fig_5_6_mix_model_line():
    # thesis section 5.4.1 model 0.8 x 4230/sqrt(n): 338, 239, 169 at n = 100, 200, 400
    for n, printed in ((100, 338), (200, 239), (400, 169)):
        assert s.mix_buffer(4230, 0.8, n) == pytest.approx(printed, abs=0.5)


def test_fig_5_10_small_buffer():
    # thesis section 5.5: n = 100 and 1650 packets -> 165 packets, 1/10 of the BDP buffer
    assert s.sqrt_n_buffer(1650, 100) == pytest.approx(165)


# --- R22: queueing delay, RTT ratio, AFCT argument --------------------------------------------

def test_r22_rule_of_thumb_delay_is_one_rtt():
    # thesis section 1.1.2: with B = RTT x C, T_Q = B/C = RTT
    c = 19375.0
    assert s.queueing_delay(s.bdp_packets(155e6, 0.085, 1000), c) == pytest.approx(0.085, rel=1e-3)


def test_r22_rtt_ratio():
    # thesis section 5.4.2: RTT_max = 4 T_p, RTT_min = 2 T_p (1 + 1/sqrt(n)); digest R22: 0.55
    assert s.rtt_large_buffer(0.1) == pytest.approx(0.2)
    assert s.rtt_small_buffer(0.1, 100) == pytest.approx(0.11)
    assert s.rtt_ratio(100) == pytest.approx(0.55)
    assert s.rtt_ratio(1e12) == pytest.approx(0.5, abs=1e-5)  # "close to only half"


def test_afct_argument():
    # thesis section 5.4.2: a 14-packet flow needs 4 RTTs; with half the RTT it can suffer up
    # to four retransmits, "a loss rate of more than 20%", and "quadruple the loss rate" -> 5 %
    k = s.afct_break_even_retransmits(4, 1e12)
    assert k == pytest.approx(4, abs=1e-4)
    assert s.afct_break_even_loss_rate(14, 4, 1e12) > 0.20
    assert 0.20 / 4 == pytest.approx(0.05)
    # with a finite n the break-even is lower (RTT ratio above one half)
    assert s.afct_break_even_retransmits(4, 100) < 4


# --- Stanford experiment (section 6.2) --------------------------------------------------------

def test_stanford_eq_6_1_bdp():
    # "20Mb/s x 250ms = 5Mbit = 1121Pkts x 557.1Bytes" (Eq 6.1)
    assert s.rule_of_thumb(20e6, 0.25) == pytest.approx(5e6)
    assert s.eq61_bdp_packets(20e6, 0.25, 557.1) == 1121


def test_stanford_flow_bracket_and_buffers():
    # Eqs 6.4-6.5: 3400 - 2000 - 1000 = 400, 3400 - 1000 - 500 = 1900
    b = s.flow_count_bracket(3400, (1000, 2000), (500, 1000))
    assert (b.n_min, b.n_max) == (400, 1900)
    # Eqs 6.6-6.7: 1121/sqrt(1900) = 26 and 1121/sqrt(400) = 56 packets
    assert round(s.sqrt_n_buffer(1121, b.n_max)) == 26
    assert round(s.sqrt_n_buffer(1121, b.n_min)) == 56
    # "average window size of only 2.5 packets" (1100/400 = 2.75, 1100/1900 = 0.58; the
    # thesis quotes one rounded figure for the bracket)
    assert 1100 / b.n_min == pytest.approx(2.5, abs=0.3)


def test_stanford_eq_6_8_token_bucket():
    # "10ms x 20Mb/s = 25kB = 45pkts x 557Bytes" (Eq 6.8)
    assert 0.01 * 20e6 / 8 == pytest.approx(25e3)
    assert s.token_bucket_packets(0.01, 20e6, 557) == 45


@pytest.mark.parametrize("buffer, printed", [(500, 100.0), (40 + 45, 99.9), (20 + 45, 99.5),
                                             (1 + 45, 95.9)])
def test_stanford_model_column(buffer, printed):
    # thesis Fig 6.9 "Utilization (model)": Eq 3.7 with 2TC = 1121, n = 400 (digest 003
    # section 5.2). The thesis truncates to one decimal: 99.975 -> 99.9, 99.56 -> 99.5,
    # 95.95 -> 95.9; 500 packets -> 100 %.
    u = 100 * s.util_lower_bound(buffer, 1121, 400)
    assert math.floor(u * 10 + 1e-9) / 10 == pytest.approx(printed)


def test_stanford_multiples_column():
    # Fig 6.9 last column: 1.5x, 1.2x, 0.8x of 1121/sqrt(400) = 56 packets
    unit = s.sqrt_n_buffer(1121, 400)
    for buffer, printed in ((85, 1.5), (65, 1.2), (46, 0.8)):
        assert buffer / unit == pytest.approx(printed, abs=0.05)


# --- GSR experiment (section 6.1, Fig 6.1) -----------------------------------------------------

GSR_PACKETS = {100: (64, 129, 258, 387), 200: (46, 91, 182, 273), 300: (37, 74, 148, 222),
               400: (32, 64, 128, 192)}
GSR_MODEL = {100: (96.9, 99.9, 100, 100), 200: (98.8, 99.9, 100, 100),
             300: (99.5, 100, 100, 100), 400: (99.7, 100, 100, 100)}


@pytest.mark.parametrize("n", sorted(GSR_PACKETS))
def test_gsr_packets_column(n):
    # Fig 6.1 "Pkts": k x floor(1291/sqrt(n)), rounded half to even (64.5 -> 64, 45.5 -> 46).
    # A reconstruction of the table's arithmetic, not stated in the thesis.
    base = math.floor(1291 / SQ(n))
    assert tuple(round(k * base) for k in (0.5, 1, 2, 3)) == GSR_PACKETS[n]


def test_gsr_ram_column():
    # Fig 6.1 "RAM": packets x 1500 B rounded up to a power of two (digest 003 section 5.1)
    printed = {64: 2**20, 129: 2**21, 258: 2**22, 387: 2**23, 46: 2**20, 91: 2**21,
               182: 2**22, 273: 2**22, 37: 2**19, 74: 2**20, 148: 2**21, 222: 2**22,
               32: 2**19, 128: 2**21, 192: 2**22}
    for pk, bits in printed.items():
        assert s.ram_device_bits(pk, 1500) == bits, pk


@pytest.mark.parametrize("n", sorted(GSR_MODEL))
def test_gsr_model_column_not_reproducible(n):
    # The Fig 6.1 "Model" column is NOT reproduced by Eq 3.7 with BDP 1291 and the listed
    # packets (digest 003 section 7.5): n = 100, 0.5x gives 78.0 %, printed 96.9 %.
    # Adding the 43-packet hidden FIFO of the line card (section 6.1.3) brings every entry
    # within 1.7 points of the table; the thesis's exact inputs are unknown. We test that.
    for pk, printed in zip(GSR_PACKETS[n], GSR_MODEL[n]):
        with_fifo = 100 * s.util_lower_bound(pk + 43, 1291, n)
        assert with_fifo == pytest.approx(printed, abs=1.7), (n, pk)
    raw = 100 * s.util_lower_bound(GSR_PACKETS[n][0], 1291, n)
    assert GSR_MODEL[n][0] - raw > 15  # without the FIFO the 0.5x entries are far off


# --- RTT averaging ---------------------------------------------------------------------------

def test_mean_rtt():
    assert s.mean_rtt([0.08, 0.1]) == pytest.approx(0.09)
    # throughput-weighted mean skews toward short RTTs (thesis section 3.1 footnote)
    assert s.mean_rtt([0.08, 0.1], [2.0, 1.0]) < 0.09


def test_script_defaults_bdp():
    # digest 003 section 3.3 [derived]: C = 155 Mb/s / 8000 bit = 19,375 pkt/s;
    # the script's 1650 packets corresponds to 85 ms
    assert s.bdp_packets(155e6, 0.085, 1000) == pytest.approx(1647, abs=1)
    assert s.bdp_packets(155e6, 1.0, 1000) == pytest.approx(19375)
