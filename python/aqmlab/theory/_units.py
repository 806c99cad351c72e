"""Unit strings for the buffer-sizing calculator.

Values are written with their unit, as everywhere in aqmlab (DESIGN.md,
"Interfaces"): ``"10Gbps"``, ``"2.5Gb/s"``, ``"155Mbps"``, ``"250ms"``,
``"1500B"``, ``"1000pkt"``, ``"99%"``.  Decimal (SI) prefixes throughout:
1 Mbps = 10**6 bit/s, 1 kB = 1000 B; binary sizes are spelt ``KiB``, ``MiB``.

A small private parser; ``aqmlab.units`` is the shared one and the two may be
merged later.  Every failure raises :class:`aqmlab.errors.UserError` naming
the field.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from aqmlab.errors import UserError

_NUM = r"([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
_RE = re.compile(r"^\s*" + _NUM + r"\s*([A-Za-zµ%/]*)\s*$")

_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

# rate units -> bit/s
_RATE: dict[str, float] = {}
for _p, _f in _SI.items():
    for _u in ("bps", "b/s", "bit/s", "bits/s"):
        _RATE[_p + _u] = _f
    for _u in ("Bps", "B/s", "byte/s", "bytes/s"):
        _RATE[_p + _u] = 8.0 * _f

_TIME = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0,
         "min": 60.0}

_BYTES = {"B": 1.0, "byte": 1.0, "bytes": 1.0, "kB": 1e3, "KB": 1e3, "MB": 1e6,
          "GB": 1e9, "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3,
          "b": 1 / 8, "bit": 1 / 8, "bits": 1 / 8, "kb": 1e3 / 8, "kbit": 1e3 / 8,
          "Kb": 1e3 / 8, "Mb": 1e6 / 8, "Mbit": 1e6 / 8, "Gb": 1e9 / 8,
          "Gbit": 1e9 / 8}

_PKTS = {"pkt", "pkts", "packet", "packets", "p"}


def _split(text: str | float | int, field: str) -> tuple[float, str]:
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text), ""
    m = _RE.match(str(text))
    if not m:
        raise UserError(f"cannot read {text!r} as a number with a unit", field=field)
    value = float(m.group(1))
    if not math.isfinite(value):
        raise UserError(f"{text!r} is not a finite number", field=field)
    return value, m.group(2)


def _positive(value: float, text, field: str, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        what = "zero or more" if allow_zero else "positive"
        raise UserError(f"must be {what}, got {text!r}", field=field)


def parse_rate(text: str | float, field: str = "rate") -> float:
    """A link rate such as ``"10Gbps"``, ``"2.5Gb/s"`` or ``"19.375MB/s"``,
    in bit/s.  A bare number is refused: its unit would be a guess."""
    value, unit = _split(text, field)
    if unit == "":
        raise UserError(f"{text!r} has no unit; write e.g. '10Gbps' or '155Mb/s'",
                        field=field)
    if unit not in _RATE:
        raise UserError(f"unknown rate unit {unit!r} in {text!r} "
                        "(use bps, kbps, Mbps, Gbps, Tbps, b/s forms, or B/s forms)",
                        field=field)
    _positive(value, text, field)
    return value * _RATE[unit]


def parse_time(text: str | float, field: str = "rtt", allow_zero: bool = False) -> float:
    """A duration such as ``"250ms"``, ``"80us"`` or ``"1.5s"``, in seconds."""
    value, unit = _split(text, field)
    if unit == "":
        raise UserError(f"{text!r} has no unit; write e.g. '100ms'", field=field)
    if unit not in _TIME:
        raise UserError(f"unknown time unit {unit!r} in {text!r} (use ns, us, ms, s)",
                        field=field)
    _positive(value, text, field, allow_zero)
    return value * _TIME[unit]


@dataclass(frozen=True)
class Size:
    """An amount of data: either bytes or packets (exactly one is set)."""

    bytes: float | None = None
    packets: float | None = None

    def to_packets(self, packet_bytes: float) -> float:
        return self.packets if self.packets is not None else self.bytes / packet_bytes

    def to_bytes(self, packet_bytes: float) -> float:
        return self.bytes if self.bytes is not None else self.packets * packet_bytes


def parse_size(text: str | float, field: str = "size", allow_zero: bool = False) -> Size:
    """An amount of data: ``"1500B"``, ``"64KiB"``, ``"10Mbit"`` or ``"1000pkt"``."""
    value, unit = _split(text, field)
    if unit == "":
        raise UserError(f"{text!r} has no unit; write e.g. '1500B' or '100pkt'",
                        field=field)
    _positive(value, text, field, allow_zero)
    if unit in _PKTS:
        return Size(packets=value)
    if unit in _BYTES:
        return Size(bytes=value * _BYTES[unit])
    raise UserError(f"unknown size unit {unit!r} in {text!r} "
                    "(use B, kB, MB, KiB, MiB, b, kb, Mb, Gbit or pkt)", field=field)


def parse_packet_size(text: str | float, field: str = "packet") -> float:
    """Packet size on the wire (headers included), in bytes."""
    size = parse_size(text, field)
    if size.bytes is None:
        raise UserError("a packet size must be in bytes, e.g. '1500B'", field=field)
    if size.bytes < 1:
        raise UserError(f"a packet must be at least 1 byte, got {text!r}", field=field)
    return size.bytes


def parse_fraction(text: str | float, field: str = "target") -> float:
    """A fraction written ``"99%"``, ``"99.9 %"`` or ``"0.99"``; returns 0..1 (not checked)."""
    value, unit = _split(text, field)
    if unit == "%":
        return value / 100.0
    if unit != "":
        raise UserError(f"unknown unit {unit!r} in {text!r} (write '99%' or '0.99')",
                        field=field)
    return value


def parse_count_range(text: str | int, field: str = "flows", minimum: int = 1) -> tuple[int, int]:
    """A count ``"400"`` or a bracket ``"400..1900"``; returns (low, high), both >= minimum."""
    s = str(text).strip()
    parts = s.split("..") if ".." in s else [s, s]
    if len(parts) != 2:
        raise UserError(f"cannot read {text!r}; write a count '400' or a range '400..1900'",
                        field=field)
    out = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise UserError(f"cannot read {p!r} as a number of flows", field=field) from None
        if not math.isfinite(v) or v != int(v):
            raise UserError(f"a number of flows must be a whole number, got {p!r}", field=field)
        if v < minimum:
            raise UserError(f"the number of flows must be at least {minimum}, got {p!r}",
                            field=field)
        out.append(int(v))
    lo, hi = out
    if lo > hi:
        raise UserError(f"range {text!r} is reversed", field=field)
    return lo, hi
