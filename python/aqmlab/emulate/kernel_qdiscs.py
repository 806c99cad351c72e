"""Our disciplines as Linux qdiscs, for the kernel baseline (``aqmlab emulate
--baseline kernel``; docs/emulator.md, "The kernel's qdiscs").

:func:`translate` turns a discipline's resolved spec into the ``tc`` arguments of the
kernel's nearest qdisc, with its parameters translated; what the kernel fixes or does
its own way is listed with it (``untranslated``, kept in the run's summary), never
dropped silently. A parameter set to a value the kernel cannot take is refused by
field. Disciplines the kernel has no qdisc for are refused by name.

The kernel's parameters, by ``tc`` man page and source: tc-red(8) and iproute2
``tc/q_red.c`` (thresholds in bytes, the EWMA weight as a power of two chosen from
``burst``), tc-choke(8) (thresholds in packets), tc-sfq(8), tc-fq_codel(8), tc-codel(8),
tc-pie(8) (alpha and beta in sixteenths), tc-sfb(8) and ``net/sched/sch_sfb.c`` (8
levels of 16 bins, fixed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import UserError


@dataclass
class KernelQueue:
    """A Linux qdisc standing for one of our disciplines."""

    #: ``tc qdisc add ... <args>``: the kind, then its parameters.
    args: list[str]
    #: What the kernel does its own way: "parameter: why".
    untranslated: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.args[0]


def translate(spec: dict[str, Any], rate_bps: int, mtu: int, where: str) -> KernelQueue:
    """The kernel qdisc of discipline ``spec`` on a link of ``rate_bps`` whose largest
    packet is ``mtu`` bytes; ``where`` names the spec in errors (``topology.bottleneck.qdisc``)."""
    kind = spec.get("kind")
    make = _MAPPINGS.get(kind)
    if make is None:
        raise UserError(
            f"Linux has no qdisc for {kind} (the kernel baseline maps {', '.join(sorted(_MAPPINGS))}; "
            'docs/emulator.md, "The kernel\'s qdiscs")',
            f"{where}.kind",
        )
    return make(spec, _Link(rate_bps, mtu, where))


@dataclass(frozen=True)
class _Link:
    rate_bps: int
    mtu: int
    where: str

    def refuse(self, name: str, why: str) -> UserError:
        return UserError(f"the kernel's qdisc cannot take this value ({why})", f"{self.where}.{name}")


def _usec(ns: int) -> str:
    return f"{int(ns) // 1000}us"


def _limit_packets(spec: dict[str, Any], link: _Link, kernel: str) -> int:
    limit = spec["limit"]
    if isinstance(limit, dict) and "packets" not in limit:
        raise link.refuse("limit", f"Linux's {kernel} counts its limit in packets")
    return int(limit["packets"] if isinstance(limit, dict) else limit)


def _limit_bytes(spec: dict[str, Any], link: _Link) -> int:
    """A limit in bytes: packets count as packets of the MTU."""
    limit = spec["limit"]
    if isinstance(limit, dict):
        return int(limit["bytes"]) if "bytes" in limit else int(limit["packets"]) * link.mtu
    return int(limit)


def ewma_log(qmin_bytes: float, burst: int, avpkt: int) -> int | None:
    """iproute2's ``tc_red_eval_ewma``: the Wlog (w_q = 2^-Wlog) tc picks for ``burst``."""
    a = burst + 1 - qmin_bytes / avpkt
    if a < 1.0:
        return None
    w = 0.5
    for wlog in range(1, 32):
        if a <= (1 - (1 - w) ** burst) / w:
            return wlog
        w /= 2
    return None


def burst_for(w_q: float, qmin_bytes: float, avpkt: int) -> tuple[int, float]:
    """The smallest ``burst`` for which tc picks the power of two nearest ``w_q`` (in
    log scale), and that weight."""
    want = min(31, max(1, round(-math.log2(w_q))))
    burst = max(1, math.ceil(qmin_bytes / avpkt))
    while burst < 1 << 20:
        got = ewma_log(qmin_bytes, burst, avpkt)
        if got is not None and got >= want:
            return burst, 2.0 ** -got
        burst += 1
    raise ValueError(f"no burst gives w_q {w_q}")


def _red_weight(spec: dict[str, Any], qmin_bytes: float, avpkt: int, untranslated: list[str]) -> int:
    burst, w = burst_for(float(spec["w_q"]), qmin_bytes, avpkt)
    if w != spec["w_q"]:
        untranslated.append(f"w_q: {spec['w_q']:g} is 2^-{round(-math.log2(w))} = {w:g} (Linux's weights are powers of two)")
    return burst


def _red(spec: dict[str, Any], link: _Link) -> KernelQueue:
    """Our RED (FJ93): thresholds in bytes (packets of the MTU in packet mode)."""
    if spec.get("gentle"):
        raise link.refuse("gentle", "Linux's RED has no gentle mode: above max it drops every packet")
    if spec.get("wait"):
        raise link.refuse("wait", "Linux's RED spaces its drops by FJ93's count; it has no ns-2 wait_")
    per_packet = 1 if spec.get("mode") == "bytes" else link.mtu
    qmin, qmax = float(spec["min_th"]) * per_packet, float(spec["max_th"]) * per_packet
    untranslated = [
        "mean_packet_size: Linux's avpkt is the MTU here (the idle decay's packet)",
        "variant: Linux's RED spaces its drops by a uniform count, as FJ93's; ns-2's quirks are not in it",
    ]
    if spec.get("mode") == "bytes":
        untranslated.append("mode: Linux's probability is not scaled by packet size (byte mode's p_b)")
    burst = _red_weight(spec, qmin, link.mtu, untranslated)
    args = ["red", "limit", str(_limit_bytes(spec, link)), "min", str(round(qmin)), "max", str(round(qmax)),
            "avpkt", str(link.mtu), "burst", str(burst), "probability", f"{spec['max_p']:g}",
            "bandwidth", f"{link.rate_bps}bit"]
    return KernelQueue(args + (["ecn"] if spec.get("ecn") else []), untranslated)


def _red_linux(spec: dict[str, Any], link: _Link) -> KernelQueue:
    """Seed 004's RED is Linux's: every parameter is tc's own."""
    args = ["red", "limit", str(int(spec["limit"])), "min", str(int(spec["min_th"])), "max", str(int(spec["max_th"])),
            "avpkt", str(int(spec["avpkt"])), "burst", str(int(spec["burst"])), "probability", f"{spec['max_p']:g}",
            "bandwidth", f"{link.rate_bps}bit"]
    return KernelQueue(args + (["ecn"] if spec.get("ecn") else []))


def _choke(spec: dict[str, Any], link: _Link) -> KernelQueue:
    """CHOKe: Linux's thresholds are in packets, as ours."""
    avpkt = int(spec["mean_packet_size"])
    untranslated: list[str] = []
    burst = _red_weight(spec, float(spec["min_th"]) * avpkt, avpkt, untranslated)
    args = ["choke", "limit", str(_limit_packets(spec, link, "choke")), "min", str(round(spec["min_th"])),
            "max", str(round(spec["max_th"])), "avpkt", str(avpkt), "burst", str(burst),
            "probability", f"{spec['max_p']:g}", "bandwidth", f"{link.rate_bps}bit"]
    return KernelQueue(args + (["ecn"] if spec.get("ecn") else []), untranslated)


#: Linux's SFQ: at most this many flows, this many packets per flow (SFQ_MAX_FLOWS, SFQ_MAX_DEPTH).
SFQ_MAX_FLOWS, SFQ_MAX_DEPTH = 65408, 127


def _sfq(spec: dict[str, Any], link: _Link) -> KernelQueue:
    """SFQ: ``buckets`` hash buckets (a power of two in Linux), each holding up to the
    whole buffer, served one MTU per visit, never perturbed."""
    buckets = int(spec["buckets"])
    if buckets & (buckets - 1) or buckets > 65536:
        raise link.refuse("buckets", "Linux's SFQ divisor is a power of two up to 65536")
    limit = _limit_packets(spec, link, "sfq")
    args = ["sfq", "limit", str(limit), "divisor", str(buckets), "flows", str(min(buckets, SFQ_MAX_FLOWS)),
            "depth", str(min(limit, SFQ_MAX_DEPTH)), "quantum", str(link.mtu), "perturb", "0"]
    return KernelQueue(args, [
        "admission: Linux drops from the tail of the longest queue when the buffer is full (not ns-2's rule)",
        "hash: Linux's jhash of the flow's addresses and ports with a random key",
        f"limit: a Linux SFQ queue holds at most {SFQ_MAX_DEPTH} packets",
        "round robin: by bytes, one MTU (quantum) per visit, where ns-2 serves one packet",
    ])


def _fq_codel(spec: dict[str, Any], link: _Link) -> KernelQueue:
    """FQ-CoDel is modelled on Linux's: every parameter but the MTU is tc's."""
    args = ["fq_codel", "limit", str(int(spec["limit"])), "flows", str(int(spec["flows"])),
            "quantum", str(int(spec["quantum"])), "target", _usec(spec["target"]), "interval", _usec(spec["interval"]),
            "memory_limit", str(int(spec["memory_limit"])), "drop_batch", str(int(spec["drop_batch_size"])),
            "ecn" if spec.get("ecn") else "noecn"]
    return KernelQueue(args, ["mtu: Linux takes the device's MTU (here the scenario's largest packet)"])


def _codel(spec: dict[str, Any], link: _Link) -> KernelQueue:
    args = ["codel", "limit", str(_limit_packets(spec, link, "codel")), "target", _usec(spec["target"]),
            "interval", _usec(spec["interval"]), "ecn" if spec.get("ecn") else "noecn"]
    return KernelQueue(args, ["mtu: Linux learns the largest packet it has seen"])


#: PIE's parameters that Linux fixes, at Linux's values (net/sched/sch_pie.c).
_PIE_FIXED = {"max_burst": 150_000_000, "mark_ecn_threshold": 0.1, "dq_threshold": 16384}


def _pie(spec: dict[str, Any], link: _Link) -> KernelQueue:
    """PIE: alpha and beta in sixteenths (integers up to 32); the burst allowance, the
    ECN threshold and the dequeue-rate threshold fixed at the RFC's values."""
    for name, value in _PIE_FIXED.items():
        if spec.get(name) != value:
            raise link.refuse(name, f"Linux's PIE fixes it at {value:g}")
    scaled = {}
    for name in ("alpha", "beta"):
        v = float(spec[name]) * 16
        if v != round(v) or not 0 <= v <= 32:
            raise link.refuse(name, "Linux's PIE takes it in sixteenths, up to 2")
        scaled[name] = str(round(v))
    args = ["pie", "limit", str(_limit_packets(spec, link, "pie")), "target", _usec(spec["target"]),
            "tupdate", _usec(spec["t_update"]), "alpha", scaled["alpha"], "beta", scaled["beta"],
            "ecn" if spec.get("ecn") else "noecn"]
    if spec.get("estimator") == "dequeue_rate":
        args.append("dq_rate_estimator")
    return KernelQueue(args, [
        "mean_packet_size, link_rate_bps: Linux's PIE has neither (its first rate estimate waits for the queue)",
    ])


#: Linux's SFB hashes into 8 levels of 16 bins (SFB_LEVELS, SFB_NUMBUCKETS).
SFB_LEVELS, SFB_BINS = 8, 16
#: Ms of a rehash interval that no run reaches (our 0: never rehash).
_NEVER_MS = 86_400_000


def _sfb(spec: dict[str, Any], link: _Link) -> KernelQueue:
    """SFB: a bin counts as full (Linux's ``target``) at our ``bin_size``; Linux's
    levels and bins are fixed."""
    limit = _limit_packets(spec, link, "sfb")
    bin_size = spec.get("bin_size") or math.ceil(limit / int(spec["bins"]))
    rehash = int(spec["rehash_interval"]) // 1_000_000 or _NEVER_MS
    args = ["sfb", "limit", str(limit), "max", str(limit), "target", str(int(bin_size)),
            "increment", f"{spec['increment']:g}", "decrement", f"{spec['decrement']:g}",
            "penalty_rate", str(int(spec["penalty_rate"])), "penalty_burst", str(int(spec["penalty_burst"])),
            "rehash", str(rehash), "db", str(int(spec["warmup_time"]) // 1_000_000)]
    return KernelQueue(args, [
        f"levels, bins: Linux's are {SFB_LEVELS} levels of {SFB_BINS} bins",
        "freeze_time: Linux updates a bin's probability on every packet that finds it full or empty",
        "ecn: Linux's SFB marks every ECN-capable packet it would drop",
    ])


def _droptail(spec: dict[str, Any], link: _Link) -> KernelQueue:
    limit = spec["limit"]
    if "packets" in limit:
        return KernelQueue(["pfifo", "limit", str(int(limit["packets"]))])
    return KernelQueue(["bfifo", "limit", str(int(limit["bytes"]))])


_MAPPINGS: dict[str, Callable[[dict[str, Any], _Link], KernelQueue]] = {
    "droptail": _droptail,
    "red": _red,
    "red_linux": _red_linux,
    "choke": _choke,
    "sfq": _sfq,
    "fq_codel": _fq_codel,
    "codel": _codel,
    "pie": _pie,
    "sfb": _sfb,
}

