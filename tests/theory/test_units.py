"""The calculator's quantities (python/aqmlab/theory/_units.py): aqmlab.units reads
them, so `aqmlab size` takes and refuses what a scenario does."""

import pytest

from aqmlab import units
from aqmlab.errors import UserError
from aqmlab.theory import _units as u


@pytest.mark.parametrize("text, bps", [("10Gbps", 10e9), ("2.5Gb/s", 2.5e9), ("155Mbps", 155e6),
                                       ("500 kbps", 500e3), ("1e3bps", 1000.0), ("1Tbps", 1e12)])
def test_rates(text, bps):
    assert u.parse_rate(text) == pytest.approx(bps)
    assert units.parse_rate(text) == u.parse_rate(text)


@pytest.mark.parametrize("text, s", [("250ms", 0.25), ("80us", 80e-6), ("1.5s", 1.5), ("100 ns", 1e-7),
                                     ("2min", 120.0), ("1h", 3600.0)])
def test_times(text, s):
    assert u.parse_time(text) == pytest.approx(s)


def test_packet_sizes():
    assert u.parse_packet_size("1500B") == 1500
    assert u.parse_packet_size("1.5kB") == 1500
    assert u.parse_packet_size("1KiB") == 1024
    assert u.parse_packet_size("557.1B") == pytest.approx(557.1)  # a mean packet


def test_fractions():
    assert u.parse_fraction("99%") == pytest.approx(0.99)
    assert u.parse_fraction("0.999") == pytest.approx(0.999)


def test_count_range():
    assert u.parse_count_range("400..1900") == (400, 1900)
    assert u.parse_count_range("100") == (100, 100)


@pytest.mark.parametrize("fn, text, needle", [
    (u.parse_rate, "-10Gbps", "negative"), (u.parse_rate, "10Gbbs", "expected a rate"),
    (u.parse_rate, "10", "expected a rate"), (u.parse_rate, "fast", "expected a rate"),
    (u.parse_rate, "1.25MB/s", "bits per second"),
    (u.parse_time, "10parsecs", "expected a time"), (u.parse_time, "0ms", "greater than zero"),
    (u.parse_packet_size, "12furlongs", "expected a size"), (u.parse_packet_size, "10Mbit", "in bytes"),
    (u.parse_fraction, "most", "write '99%'"),
    (u.parse_count_range, "0", "at least 1"), (u.parse_count_range, "1900..400", "reversed"),
    (u.parse_count_range, "2.5", "whole number"),
])
def test_errors_name_the_field(fn, text, needle):
    with pytest.raises(UserError) as e:
        fn(text, "--thing")
    assert needle in str(e.value)
    assert e.value.field == "--thing"
    assert str(e.value).startswith("--thing:")
