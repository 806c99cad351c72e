"""Units in scenario values: parsing, conversion, and the errors they raise."""

import pytest

from aqmlab import units
from aqmlab.errors import UserError


@pytest.mark.parametrize(
    "text,bps",
    [
        ("10Mbps", 10_000_000),
        ("1Gbps", 1_000_000_000),
        ("2.5Gb/s", 2_500_000_000),
        ("100kbps", 100_000),
        ("155Mbit/s", 155_000_000),
        ("10 Mbps", 10_000_000),
        ("64bps", 64),
        ("1.5Tbps", 1_500_000_000_000),
        ("10mbps", 10_000_000),
        ("1e3kbps", 1_000_000),
    ],
)
def test_rates(text, bps):
    assert units.parse_rate(text) == bps


@pytest.mark.parametrize(
    "text,ns",
    [
        ("20ms", 20_000_000),
        ("1.5s", 1_500_000_000),
        ("100us", 100_000),
        ("100µs", 100_000),
        ("250ns", 250),
        ("2min", 120_000_000_000),
        ("0s", 0),
        (0, 0),
        ("0.1s", 100_000_000),
        ("1.998s", 1_998_000_000),
    ],
)
def test_times(text, ns):
    assert units.parse_time(text) == ns
    assert isinstance(units.parse_time(text), int)


@pytest.mark.parametrize(
    "text,n",
    [("1000B", 1000), ("1.5kB", 1500), ("64KiB", 65536), ("2MB", 2_000_000), ("1GiB", 2**30), ("40 B", 40)],
)
def test_bytes(text, n):
    assert units.parse_bytes(text) == n


def test_packets_and_buffers():
    assert units.parse_packets("100pkt") == 100
    assert units.parse_buffer("100pkt") == {"packets": 100}
    assert units.parse_buffer("150kB") == {"bytes": 150_000}
    assert units.parse_buffer("2 packets") == {"packets": 2}


def test_payload_sizes():
    assert units.parse_payload("30pkt", 960) == 28_800
    assert units.parse_payload("100kB", 960) == 100_000
    assert units.payload_amount("12.5pkt", 1000) == 12_500.0


def test_frequency():
    assert units.parse_frequency("50/s") == 50.0
    assert units.parse_frequency("3/ms") == 3000.0
    assert units.parse_frequency("120/min") == pytest.approx(2.0)


@pytest.mark.parametrize(
    "parser,value,words",
    [
        (units.parse_rate, "10MB", ["rate", '"10MB"']),
        (units.parse_rate, "10", ["rate"]),
        (units.parse_rate, 10, ["needs a unit"]),
        (units.parse_rate, "-10Mbps", ["negative"]),
        (units.parse_rate, "0Mbps", ["greater than zero"]),
        (units.parse_rate, "fast", ["rate"]),
        (units.parse_rate, True, ["rate"]),
        (units.parse_time, "20", ["time"]),
        (units.parse_time, 20, ["needs a unit"]),
        (units.parse_time, "20m", ["time"]),
        (units.parse_time, "-1s", ["negative"]),
        (units.parse_bytes, "1000b", ["bytes"]),
        (units.parse_bytes, "1.5B", ["whole number"]),
        (units.parse_bytes, "0B", ["greater than zero"]),
        (units.parse_packets, "1.5pkt", ["whole number"]),
        (units.parse_packets, "100", ["packet"]),
        (units.parse_buffer, "-5pkt", ["negative"]),
        (units.parse_buffer, "0pkt", ["greater than zero"]),
        (units.parse_buffer, "100", ["buffer"]),
        (units.parse_frequency, "50", ["frequency"]),
        (units.parse_payload, "1kb", ["size"]),
    ],
)
def test_errors_name_the_field(parser, value, words):
    args = (value, 1000, "x.y") if parser is units.parse_payload else (value, "x.y")
    with pytest.raises(UserError) as e:
        parser(*args)
    assert e.value.field == "x.y"
    assert str(e.value).startswith("x.y: ")
    for w in words:
        assert w in str(e.value)


def test_format():
    assert units.format_rate(10_000_000) == "10Mbps"
    assert units.format_time(20_000_000) == "20ms"
    assert units.format_time(0) == "0s"
