"""Quantities with units, as scenario files write them.

Every rate, time and size in a scenario carries its unit in the value:

=========  =====================================================  ================
quantity   accepted units                                          converted to
=========  =====================================================  ================
rate       ``bps kbps Mbps Gbps Tbps``, ``b/s kb/s Mb/s Gb/s``,     bits per second
           ``bit/s kbit/s Mbit/s Gbit/s`` (prefixes are decimal;
           case of the prefix is ignored: ``10mbps`` = ``10Mbps``)
time       ``ns us µs ms s min h``                                 nanoseconds
size       ``B``; ``kB KB MB GB`` (powers of 1000);                bytes
           ``KiB MiB GiB`` (powers of 1024)
packets    ``pkt pkts packets``                                    packets
frequency  ``/s /ms /min`` (e.g. ``"50/s"``)                        per second
=========  =====================================================  ================

A space between number and unit is allowed (``"10 Mbps"``). Bits are not bytes:
``"10MB"`` is not a rate and ``"1000b"`` is not a size. The only bare number
accepted where a unit is expected is ``0`` for a time or a size.

Each parser raises :class:`~aqmlab.errors.UserError` naming ``field``.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from .errors import UserError

_NUMBER = re.compile(
    r"^\s*(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>.*?)\s*$"
)

_RATE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_RATE_UNIT = re.compile(r"^(?P<prefix>[kKmMgGtT]?)(?:bps|b/s|bit/s|bits/s)$")

_TIME_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}

_SIZE_UNITS = {
    "B": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}

_PACKET_UNITS = ("pkt", "pkts", "packet", "packets")

_FREQ_UNITS = {"/s": 1, "/ms": 1000, "/min": Decimal(1) / 60}


def _show(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def _split(value: object, what: str, example: str, field: str | None) -> tuple[Decimal, str]:
    """Split ``"10 Mbps"`` into (Decimal(10), "Mbps")."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UserError(f'expected {what} such as "{example}", got {_show(value)}', field)
    if not isinstance(value, str):
        if value == 0:
            return Decimal(0), ""
        raise UserError(
            f'expected {what} such as "{example}" (a number needs a unit), got {_show(value)}',
            field,
        )
    m = _NUMBER.match(value)
    if not m:
        raise UserError(f'expected {what} such as "{example}", got {_show(value)}', field)
    try:
        num = Decimal(m["num"])
    except InvalidOperation:  # pragma: no cover - the regex admits only valid numbers
        raise UserError(f'expected {what} such as "{example}", got {_show(value)}', field)
    if num.adjusted() > 30:  # beyond any quantity the core holds, whatever its unit
        raise UserError(f"{what} is too large, got {_show(value)}", field)
    return num, m["unit"]


#: The largest quantity in its smallest unit (ns, bit/s, bytes): the core's integers.
MAX_VALUE = 2**63 - 1


def _bounded(num: Decimal, value: object, what: str, field: str | None) -> Decimal:
    """``num`` (a quantity in its smallest unit), refused when the core cannot hold it."""
    if num > MAX_VALUE:
        raise UserError(f"{what} is too large (at most 2^63 in its smallest unit), got {_show(value)}", field)
    return num


def _to_int(num: Decimal) -> int:
    return int(num.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _check_sign(num: Decimal, value: object, what: str, field: str | None, allow_zero: bool):
    if num < 0:
        raise UserError(f"{what} must not be negative, got {_show(value)}", field)
    if num == 0 and not allow_zero:
        raise UserError(f"{what} must be greater than zero, got {_show(value)}", field)


def parse_rate(value: object, field: str | None = None, allow_zero: bool = False) -> int:
    """A rate in bits per second: ``"10Mbps"`` -> 10_000_000."""
    num, unit = _split(value, "a rate", "10Mbps", field)
    m = _RATE_UNIT.match(unit)
    if not m or (num == 0 and unit == ""):
        hint = " (rates are in bits per second: bps, Mbps, Mb/s, ...)" if "B" in unit else ""
        raise UserError(f'expected a rate such as "10Mbps"{hint}, got {_show(value)}', field)
    _check_sign(num, value, "a rate", field, allow_zero)
    bps = _to_int(_bounded(num * _RATE_PREFIX[m["prefix"].lower()], value, "a rate", field))
    if bps == 0 and not allow_zero:
        raise UserError(f"a rate must be at least 1 bit per second, got {_show(value)}", field)
    return bps


def parse_time(value: object, field: str | None = None, allow_zero: bool = True) -> int:
    """A time in integer nanoseconds: ``"1.5s"`` -> 1_500_000_000. Bare ``0`` is allowed."""
    num, unit = _split(value, "a time", "20ms", field)
    if unit == "" and num == 0 and not isinstance(value, str):
        mult = 1
    elif unit in _TIME_UNITS:
        mult = _TIME_UNITS[unit]
    else:
        raise UserError(f'expected a time such as "20ms", got {_show(value)}', field)
    _check_sign(num, value, "a time", field, allow_zero)
    ns = _to_int(_bounded(num * mult, value, "a time", field))
    if ns == 0 and not allow_zero:
        raise UserError(f"a time must be at least 1ns, got {_show(value)}", field)
    return ns


def parse_bytes(value: object, field: str | None = None, allow_zero: bool = False, whole: bool = True) -> Any:
    """A size in bytes: ``"1.5kB"`` -> 1500, ``"64KiB"`` -> 65536. Bare ``0`` is allowed
    when ``allow_zero``; a fraction of a byte (a mean, ``"557.1B"``) unless ``whole``,
    which returns a float."""
    num, unit = _split(value, "a size", "1000B", field)
    if unit == "" and num == 0 and not isinstance(value, str):
        mult = 1
    elif unit in _SIZE_UNITS:
        mult = _SIZE_UNITS[unit]
    else:
        hint = " (sizes are in bytes: B, kB, MB, KiB, ...)" if unit.endswith("b") or "bit" in unit else ""
        raise UserError(f'expected a size such as "1000B"{hint}, got {_show(value)}', field)
    _check_sign(num, value, "a size", field, allow_zero)
    exact = _bounded(num * mult, value, "a size", field)
    if not whole:
        return float(exact)
    if exact != exact.to_integral_value():
        raise UserError(f"a size must be a whole number of bytes, got {_show(value)}", field)
    return int(exact)


def parse_packets(value: object, field: str | None = None, allow_zero: bool = False) -> int:
    """A whole number of packets: ``"100pkt"`` -> 100."""
    num, unit = _split(value, "a packet count", "100pkt", field)
    if unit not in _PACKET_UNITS:
        raise UserError(f'expected a packet count such as "100pkt", got {_show(value)}', field)
    _check_sign(num, value, "a packet count", field, allow_zero)
    _bounded(num, value, "a packet count", field)
    if num != num.to_integral_value():
        raise UserError(f"a packet count must be a whole number, got {_show(value)}", field)
    return int(num)


def is_packets(value: object) -> bool:
    """Whether ``value`` is written in packets (``"30pkt"``)."""
    if not isinstance(value, str):
        return False
    m = _NUMBER.match(value)
    return bool(m) and m["unit"] in _PACKET_UNITS


def parse_buffer(value: object, field: str | None = None) -> dict[str, int]:
    """A buffer limit, in packets or bytes, as the Rust ``Limit``:
    ``"100pkt"`` -> ``{"packets": 100}``, ``"150kB"`` -> ``{"bytes": 150000}``.
    A limit must be at least one packet (or one byte)."""
    if is_packets(value):
        return {"packets": parse_packets(value, field)}
    try:
        return {"bytes": parse_bytes(value, field)}
    except UserError as e:
        text = str(e)
        if "must" in text:
            raise
        raise UserError(
            f'expected a buffer size such as "100pkt" or "150kB", got {_show(value)}', field
        ) from None


def parse_payload(value: object, payload_per_packet: int, field: str | None = None) -> int:
    """A transfer size in payload bytes: bytes (``"100kB"``) or packets (``"30pkt"`` =
    30 full payloads of ``payload_per_packet`` bytes)."""
    if is_packets(value):
        return parse_packets(value, field) * payload_per_packet
    try:
        return parse_bytes(value, field)
    except UserError as e:
        if "must" in str(e):
            raise
        raise UserError(
            f'expected a size such as "100kB" or "30pkt", got {_show(value)}', field
        ) from None


def payload_amount(value: object, payload_per_packet: int, field: str | None = None) -> float:
    """Like :func:`parse_payload` but fractional packets/bytes are allowed (distribution
    means such as ``"1.5kB"`` or ``"12.5pkt"``). Returns bytes as a float."""
    num, unit = _split(value, "a size", "30pkt", field)
    if unit in _PACKET_UNITS:
        mult = payload_per_packet
    elif unit in _SIZE_UNITS:
        mult = _SIZE_UNITS[unit]
    else:
        raise UserError(f'expected a size such as "100kB" or "30pkt", got {_show(value)}', field)
    _check_sign(num, value, "a size", field, allow_zero=False)
    return float(_bounded(num * mult, value, "a size", field))


def parse_frequency(value: object, field: str | None = None) -> float:
    """Events per second: ``"50/s"`` -> 50.0, ``"3/ms"`` -> 3000.0."""
    num, unit = _split(value, "a frequency", "50/s", field)
    if unit not in _FREQ_UNITS:
        raise UserError(f'expected a frequency such as "50/s", got {_show(value)}', field)
    _check_sign(num, value, "a frequency", field, allow_zero=False)
    return float(_bounded(num * _FREQ_UNITS[unit], value, "a frequency", field))


def format_rate(bps: float) -> str:
    """Human-readable rate: 10_000_000 -> "10Mbps"."""
    for unit, mult in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= mult:
            return f"{bps / mult:.4g}{unit}"
    return f"{bps:.4g}bps"


def format_time(ns: float) -> str:
    """Human-readable time: 20_000_000 -> "20ms"."""
    if ns == 0:
        return "0s"
    for unit, mult in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= mult:
            return f"{ns / mult:.4g}{unit}"
    return f"{ns:.4g}ns"
