"""The calculator's quantities, read by :mod:`aqmlab.units`, the parser of every
quantity in scenarios and on the command line, so that ``aqmlab size`` takes what a
scenario takes and refuses what it refuses; here they become the floats the models
compute with (bit/s, seconds, bytes). Beside them, what only the calculator reads:
fractions (``"99%"``) and counts of flows (``"400..1900"``).

Every failure raises :class:`aqmlab.errors.UserError` naming the field.
"""

from __future__ import annotations

import math

from aqmlab import units
from aqmlab.errors import UserError


def parse_rate(text: str | float, field: str = "rate") -> float:
    """A link rate such as ``"10Gbps"`` or ``"2.5Gb/s"``, in bit/s."""
    return float(units.parse_rate(text, field))


def parse_time(text: str | float, field: str = "rtt") -> float:
    """A duration such as ``"250ms"``, ``"80us"`` or ``"1.5s"`` (more than 0), in seconds."""
    return units.parse_time(text, field, allow_zero=False) / 1e9


def parse_packet_size(text: str | float, field: str = "packet") -> float:
    """Packet size on the wire (headers included), in bytes; a mean may be fractional."""
    return units.parse_bytes(text, field, whole=False)


def parse_fraction(text: str | float, field: str = "target") -> float:
    """A fraction written ``"99%"``, ``"99.9 %"`` or ``"0.99"``; returns 0..1 (not checked)."""
    s = str(text).strip()
    percent = s.endswith("%")
    try:
        value = float(s.removesuffix("%"))
    except ValueError:
        raise UserError(f"cannot read {text!r}; write '99%' or '0.99'", field=field) from None
    if not math.isfinite(value):
        raise UserError(f"{text!r} is not a finite number", field=field)
    return value / 100.0 if percent else value


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
