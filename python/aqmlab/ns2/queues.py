"""aqmlab's disciplines as ns-2 2.35 queues: the queue class and the Tcl lines that
configure it, parameter by parameter.

Each mapping is exact where ns-2 has the same mechanism (docs/validation.md, "ns-2",
lists the quirks that stay). A discipline ns-2 lacks, or a parameter it cannot express,
is refused with a message naming the field: the translator never guesses.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import UserError

#: One queue: (ns-2 class, lines of Tcl with ``$q`` the queue object).
Ns2Queue = tuple[str, list[str]]


def _packets(spec: dict[str, Any], where: str, why: str) -> int:
    limit = spec["limit"]
    if "packets" not in limit:
        raise UserError(f"ns-2 cannot express a limit in bytes here ({why})", f"{where}.limit")
    return int(limit["packets"])


def droptail(spec: dict[str, Any], where: str) -> Ns2Queue:
    """``Queue/DropTail`` (queue/drop-tail.cc) drops when ``length() + 1 >= limit_``,
    so N waiting packets need ``limit_`` N+1; in bytes it drops when ``bytes + size >=
    limit_ x mean_pktsize_``, so a byte limit B is ``limit_`` B+1 of 1-byte units."""
    limit = spec["limit"]
    if "packets" in limit:
        return "DropTail", [f"$q set limit_ {int(limit['packets']) + 1}"]
    return "DropTail", [
        "$q set queue_in_bytes_ true",
        "$q set mean_pktsize_ 1",
        f"$q set limit_ {int(limit['bytes']) + 1}",
    ]


def red(spec: dict[str, Any], where: str) -> Ns2Queue:
    """``Queue/RED`` (queue/red.cc) with the count ``wait`` asks for (FJ93's is
    ``wait_ false``; ns-2's default, ``wait_ true``, is ``wait = true``), the drop
    probability of ``linterm_`` = 1/max_p, and marks at any probability
    (``use_mark_p_ false``). It drops the arrival when ``qlen >= limit_`` before it
    joins, so ``limit_`` counts waiting packets as ours does."""
    byte_mode = spec["mode"] == "bytes"
    if spec["max_p"] <= 0:
        raise UserError("ns-2's RED takes 1/max_p (linterm_): max_p must be above 0", f"{where}.max_p")
    lines = [
        f"$q set q_weight_ {spec['w_q']!r}",
        f"$q set linterm_ {1.0 / spec['max_p']!r}",
        f"$q set gentle_ {_bool(spec['gentle'])}",
        f"$q set setbit_ {_bool(spec['ecn'])}",
        f"$q set wait_ {_bool(spec['wait'])}",
        "$q set use_mark_p_ false",
        "$q set drop_tail_ true",
        "$q set adaptive_ 0",
    ]
    if byte_mode:
        # ns-2 keeps thresholds in mean-sized packets and scales p_b by size/mean_pktsize_;
        # ours scales by size/max_packet_size: the same only when the two sizes are equal.
        if spec["mean_packet_size"] != spec["max_packet_size"]:
            raise UserError(
                "ns-2's byte-mode RED scales by mean_pktsize_: give max_packet_size equal to mean_packet_size",
                f"{where}.max_packet_size",
            )
        mean = spec["mean_packet_size"]
        limit = spec["limit"]
        if "bytes" not in limit or limit["bytes"] % mean:
            raise UserError(f"ns-2's byte-mode RED needs a byte limit in whole {mean}-byte packets", f"{where}.limit")
        lines += [
            "$q set bytes_ true",
            "$q set queue_in_bytes_ true",
            f"$q set mean_pktsize_ {mean}",
            f"$q set thresh_ {spec['min_th'] / mean!r}",
            f"$q set maxthresh_ {spec['max_th'] / mean!r}",
            f"$q set limit_ {limit['bytes'] // mean}",
        ]
    else:
        lines += [
            "$q set bytes_ false",
            "$q set queue_in_bytes_ false",
            f"$q set mean_pktsize_ {spec['mean_packet_size']}",
            f"$q set thresh_ {spec['min_th']!r}",
            f"$q set maxthresh_ {spec['max_th']!r}",
            f"$q set limit_ {_packets(spec, where, 'a RED in packets')}",
        ]
    return "RED", lines


def sfq(spec: dict[str, Any], where: str) -> Ns2Queue:
    """``Queue/SFQ`` (queue/sfq.cc): ``maxqueue_`` packets shared by ``buckets_`` queues
    with ns-2's admission test. ns-2 hashes the source and destination addresses."""
    if spec["admission"] != "ns2":
        raise UserError('ns-2\'s SFQ has its own admission test: give admission = "ns2"', f"{where}.admission")
    limit = _packets(spec, where, "ns-2's SFQ counts packets")
    return "SFQ", [f"$q set maxqueue_ {limit}", f"$q set buckets_ {spec['buckets']}", f"$q set limit_ {limit + 1}"]


def drr(spec: dict[str, Any], where: str) -> Ns2Queue:
    """``Queue/DRR`` (queue/drr.cc): a buffer of ``blimit_`` bytes; when it overflows,
    the head of the longest queue (in bytes) is pushed out. ns-2 gives each source host
    a queue (hash of its address into ``buckets_``)."""
    limit = spec["limit"]
    if "bytes" not in limit:
        raise UserError("ns-2's DRR counts its buffer in bytes (blimit_): give the limit in bytes", f"{where}.limit")
    if spec["drop_from"] != "front":
        raise UserError('ns-2\'s DRR pushes out the head of the longest queue: give drop_from = "front"', f"{where}.drop_from")
    if spec.get("mapping") not in (None, "per_flow"):
        raise UserError("ns-2's DRR has one queue per source host; no other mapping", f"{where}.mapping")
    buckets = spec.get("queues") or 1024
    return "DRR", [
        f"$q set blimit_ {int(limit['bytes'])}",
        f"$q set quantum_ {int(spec['quantum'])}",
        f"$q set buckets_ {int(buckets)}",
        "$q set mask_ 0",
    ]


def _bool(value: bool) -> str:
    return "true" if value else "false"


#: Every discipline ns-2 has, by aqmlab kind.
MAPPINGS: dict[str, Callable[[dict[str, Any], str], Ns2Queue]] = {
    "droptail": droptail,
    "red": red,
    "sfq": sfq,
    "drr": drr,
}


def ns2_queue(spec: dict[str, Any], where: str) -> Ns2Queue:
    """The ns-2 queue for a discipline spec with every default filled in
    (:func:`aqmlab.qdiscs.in_core`)."""
    kind = spec["kind"]
    if kind not in MAPPINGS:
        raise UserError(
            f"ns-2 has no {kind!r}; the translator knows {', '.join(sorted(MAPPINGS))}", f"{where}.kind"
        )
    return MAPPINGS[kind](spec, where)
