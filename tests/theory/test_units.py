"""The calculator's unit parser (python/aqmlab/theory/_units.py)."""

import pytest

from aqmlab.errors import UserError
from aqmlab.theory import _units as u


@pytest.mark.parametrize("text, bps", [("10Gbps", 10e9), ("2.5Gb/s", 2.5e9), ("155Mbps", 155e6),
                                       ("19.375MB/s", 155e6), ("500 kbps", 500e3),
                                       ("1e3bps", 1000.0), ("1Tbps", 1e12)])
def test_rates(text, bps):
    assert u.parse_rate(text) == pytest.approx(bps)


@pytest.mark.parametrize("text, s", [("250ms", 0.25), ("80us", 80e-6), ("1.5s", 1.5), ("100 ns", 1e-7)])
def test_times(text, s):
    assert u.parse_time(text) == pytest.approx(s)


def test_sizes():
    assert u.parse_size("1500B").bytes == 1500
    assert u.parse_size("1000pkt").packets == 1000
    assert u.parse_size("64KiB").bytes == 65536
    assert u.parse_size("10Mbit").bytes == pytest.approx(1.25e6)
    assert u.parse_size("1000pkt").to_bytes(1500) == 1.5e6


def test_fractions():
    assert u.parse_fraction("99%") == pytest.approx(0.99)
    assert u.parse_fraction("0.999") == pytest.approx(0.999)


def test_count_range():
    assert u.parse_count_range("400..1900") == (400, 1900)
    assert u.parse_count_range("100") == (100, 100)


@pytest.mark.parametrize("fn, text, needle", [
    (u.parse_rate, "-10Gbps", "positive"), (u.parse_rate, "10Gbbs", "unknown rate unit"),
    (u.parse_rate, "10", "no unit"), (u.parse_rate, "fast", "cannot read"),
    (u.parse_time, "10parsecs", "unknown time unit"), (u.parse_time, "0ms", "positive"),
    (u.parse_size, "12furlongs", "unknown size unit"),
    (u.parse_count_range, "0", "at least 1"), (u.parse_count_range, "1900..400", "reversed"),
    (u.parse_count_range, "2.5", "whole number"),
])
def test_errors_name_the_field(fn, text, needle):
    with pytest.raises(UserError) as e:
        fn(text, "--thing")
    assert needle in str(e.value)
    assert e.value.field == "--thing"
    assert str(e.value).startswith("--thing:")
