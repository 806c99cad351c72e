"""The buffer-sizing calculator behind ``aqmlab size``: what an engineer knows in, the
seeds' buffer sizes out, each with the model behind it and its validity limits.

Every number comes from :mod:`aqmlab.theory.sizing` and :mod:`aqmlab.theory.short_flows`
(seed 003, Appenzeller).  Inputs are parsed from unit strings here, so the CLI and Python
callers share the checks; a bad input raises :class:`aqmlab.errors.UserError` naming the
option.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from aqmlab.errors import UserError
from aqmlab.theory import short_flows as sf
from aqmlab.theory import sizing
from aqmlab.theory._units import (parse_count_range, parse_fraction, parse_packet_size,
                                  parse_rate, parse_time)

#: Below this many long flows, flows tend to synchronize and the sqrt(n) rule under-sizes
#: (thesis section 3.2, Fig 3.4: the model holds from about 50 flows).
MIN_DESYNC_FLOWS = 50


@dataclass
class Line:
    key: str
    label: str
    packets: float
    bytes: float
    delay_ms: float
    model: str
    source: str
    notes: list[str] = field(default_factory=list)


@dataclass
class Inputs:
    rate_bps: float
    rtt_s: float
    packet_bytes: float
    bdp_packets: float
    flows: tuple[int, int] | None
    target_utilization: float | None
    short_load: float | None
    short_lengths: dict[int, float] | None
    short_loss: float
    eb_order: str
    smoothed: bool


@dataclass
class Report:
    inputs: Inputs
    lines: list[Line]
    warnings: list[str]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["inputs"]["flows"] = list(self.inputs.flows) if self.inputs.flows else None
        if self.inputs.short_lengths:
            d["inputs"]["short_lengths"] = {str(k): v for k, v in self.inputs.short_lengths.items()}
        for line in d["lines"]:
            for k in ("packets", "bytes", "delay_ms"):
                if isinstance(line[k], float) and math.isinf(line[k]):
                    line[k] = None
        return d


def parse_rtt(text: str) -> float:
    """Mean two-way propagation delay from ``"250ms"``, a uniform range ``"80ms..98ms"``
    (its midpoint) or a list ``"80ms,90ms,98ms"`` (arithmetic mean, digest 003 section 7.1)."""
    s = str(text).strip()
    if ".." in s:
        a, _, b = s.partition("..")
        lo, hi = parse_time(a, "--rtt"), parse_time(b, "--rtt")
        if lo > hi:
            raise UserError(f"range {text!r} is reversed", field="--rtt")
        return (lo + hi) / 2.0
    if "," in s:
        vals = [parse_time(p, "--rtt") for p in s.split(",") if p.strip()]
        return sizing.mean_rtt(vals)
    return parse_time(s, "--rtt")


def parse_lengths(text: str) -> dict[int, float]:
    """Short-flow lengths in packets: ``"14"`` or a mix ``"14:0.7,30:0.3"``."""
    out: dict[int, float] = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        l, _, p = part.partition(":")
        try:
            lv = float(l.removesuffix("pkt").removesuffix("pkts"))
            pv = float(p) if p else 1.0
        except ValueError:
            raise UserError(f"cannot read {part!r}; write a length in packets like '14' or "
                            "a mix like '14:0.7,30:0.3'", field="--short-length") from None
        if lv < 1 or lv != int(lv) or not math.isfinite(lv):
            raise UserError(f"a flow length must be a whole number of packets >= 1, got {l!r}",
                            field="--short-length")
        if pv <= 0 or not math.isfinite(pv):
            raise UserError(f"a probability must be positive, got {p!r}", field="--short-length")
        out[int(lv)] = out.get(int(lv), 0.0) + pv
    if not out:
        raise UserError("no flow length given", field="--short-length")
    return out


def flows_from_counts(total: str, udp: str, web: str) -> tuple[int, int]:
    """Stanford-style bracket (thesis Eqs 6.4-6.5) from total, UDP and web flow counts."""
    n_total = parse_count_range(total, "--flows-total", minimum=1)
    if n_total[0] != n_total[1]:
        raise UserError("give one total count, e.g. 3400", field="--flows-total")
    u = parse_count_range(udp, "--udp-flows", minimum=0)
    w = parse_count_range(web, "--web-flows", minimum=0)
    try:
        b = sizing.flow_count_bracket(n_total[0], u, w)
    except ValueError as e:
        raise UserError(str(e), field="--flows-total") from None
    return b.n_min, b.n_max


def _line(key, label, packets, inp: Inputs, model, source, notes=()) -> Line:
    c_pps = inp.rate_bps / (8.0 * inp.packet_bytes)
    return Line(key, label, packets, packets * inp.packet_bytes, packets / c_pps * 1e3,
                model, source, list(notes))


def size(rate: str, rtt: str, packet: str = "1500B", flows: str | None = None,
         flows_total: str | None = None, udp_flows: str | None = None,
         web_flows: str | None = None, target_util: str | None = "99%",
         short_load: str | None = None, short_length: str | None = None,
         short_loss: str = "1e-3", eb_order: str = "2", smoothed: bool = False) -> Report:
    """Compute every buffer the seeds' models give for a link (``aqmlab size``)."""
    rate_bps = parse_rate(rate, "--rate")
    rtt_s = parse_rtt(rtt)
    pkt = parse_packet_size(packet, "--packet")
    bdp = sizing.bdp_packets(rate_bps, rtt_s, pkt)

    bracket: tuple[int, int] | None = None
    if flows is not None and flows_total is not None:
        raise UserError("give either --flows or --flows-total/--udp-flows/--web-flows",
                        field="--flows")
    if flows is not None:
        bracket = parse_count_range(flows, "--flows", minimum=1)
    elif flows_total is not None:
        bracket = flows_from_counts(flows_total, udp_flows or "0", web_flows or "0")
    elif udp_flows is not None or web_flows is not None:
        raise UserError("--udp-flows/--web-flows need --flows-total", field="--flows-total")

    target = None
    if target_util is not None:
        target = parse_fraction(target_util, "--target-util")
        if not 0.0 < target < 1.0:
            raise UserError(f"must be above 0% and below 100%, got {target_util!r} "
                            "(100% needs an infinite buffer under Eq 3.7)", field="--target-util")

    load = None
    if short_load is not None:
        load = parse_fraction(short_load, "--short-load")
        if not 0.0 < load < 1.0:
            raise UserError(f"the short-flow load must be above 0 and below 1 (100%), "
                            f"got {short_load!r}", field="--short-load")
    lengths = parse_lengths(short_length) if short_length is not None else None
    if lengths is not None and load is None:
        raise UserError("--short-length needs --short-load", field="--short-load")
    if load is not None and lengths is None:
        lengths = {14: 1.0}
    loss = parse_fraction(short_loss, "--short-loss")
    if not 0.0 < loss < 1.0:
        raise UserError(f"must be above 0 and below 1, got {short_loss!r}", field="--short-loss")
    if str(eb_order) not in ("2", "3", "exact"):
        raise UserError(f"must be 2, 3 or exact, got {eb_order!r}", field="--eb-order")

    inp = Inputs(rate_bps, rtt_s, pkt, bdp, bracket, target, load, lengths, loss,
                 str(eb_order), smoothed)
    lines: list[Line] = []
    warnings: list[str] = []

    lines.append(_line(
        "rule_of_thumb", "Rule of thumb (RTT x C)", bdp, inp, "B = RTT x C = 2*T_p*C",
        "Appenzeller sections 2.3-2.4 and 3.1 (Eqs 2.3, 2.4, 3.1-3.3)",
        ["needed by one long flow, or by flows synchronized in phase",
         "adds one RTT of queueing delay per congested hop (section 1.1.2)"]))

    f_long = 1.0 - (load or 0.0)
    if bracket is not None:
        n_lo, n_hi = bracket
        n = n_lo  # the conservative end (thesis section 6.2)
        notes = []
        if n < MIN_DESYNC_FLOWS:
            notes.append(f"fewer than about {MIN_DESYNC_FLOWS} long flows: flows tend to "
                         "synchronize and need up to RTT x C (section 3.1.1, Fig 3.4)")
            warnings.append(f"n = {n} < {MIN_DESYNC_FLOWS}: synchronization likely; the "
                            "sqrt(n) buffers below are too small, use the rule of thumb")
        if n > f_long * bdp:
            notes.append("more flows than packets in flight (mean window < 1): expect "
                         "timeouts; slightly more than BDP/sqrt(n) is needed (section 5.2.3)")
        if n_lo != n_hi:
            notes.append(f"n bracket [{n_lo}, {n_hi}]: sized for n = {n_lo} (section 6.2); "
                         f"n = {n_hi} gives {f_long * bdp / math.sqrt(n_hi):.1f} packets")
        model = "B = RTT x C / sqrt(n)"
        if load:
            model = "B = RTT x (f_long x C) / sqrt(n)"
            notes.append(f"long flows carry f_long = {f_long:.3g} of the link (section 5.4.1)")
        lines.append(_line("sqrt_n", f"RTT x C / sqrt(n), n = {n}", f_long * bdp / math.sqrt(n),
                           inp, model, "Appenzeller section 3.2 (Eqs 3.5-3.6), 5.4.1", notes))
        if target is not None:
            b = sizing.min_buffer_for_utilization(target, f_long * bdp, n)
            tnotes = ["Eq 3.7 is a conservative lower bound on utilization (both Gaussian "
                      "tails counted as loss)",
                      f"ns-2 and lab results recommend 2 x RTT x C / sqrt(n) = "
                      f"{2 * f_long * bdp / math.sqrt(n):.1f} packets in practice (section 5.2.2)"]
            if math.isinf(b):
                tnotes.insert(0, f"Eq 3.7 cannot reach {target:.4%} with n = {n}: use the rule "
                                 "of thumb")
            elif b > f_long * bdp:
                tnotes.insert(0, "exceeds RTT x C: the rule of thumb already gives 100 % "
                                 "(section 2.3)")
            lines.append(_line(
                "target", f"Buffer for {target * 100:.6g}% utilization (Eq 3.7)", b, inp,
                "B = z*RTT*C/(a*sqrt(n) - z), z = erfinv(u), a = 3*sqrt(3)/(2*sqrt(2))",
                "Appenzeller section 3.2, Eq 3.7 inverted", tnotes))

    if load is not None:
        dist = sf.burst_distribution(lengths)
        if smoothed:
            b = sf.md1_buffer_for_loss(loss, load)
            model = "P(Q >= B) = exp(-B*2(1-rho)/rho)  (M/D/1)"
            src = "Appenzeller section 4.1.2 (M/D/1 case), 4.2"
            meanq = sf.mg1_mean_queue(load, 1)
        else:
            b = sf.eb_buffer_for_loss(loss, load, dist, eb_order)
            model = {"2": "P(Q >= B) = exp(-B*2(1-rho)/rho*E[X]/E[X^2])",
                     "3": "3rd-order effective bandwidth (Appendix A.3)",
                     "exact": "Cramer root of E[e^{kX}-1] = k*E[X]/rho (Appendix A.3)"}[str(eb_order)]
            src = "Appenzeller section 4.1.2, Appendix A.3"
            meanq = sf.mg1_mean_queue(load, dist)
        snotes = [f"short-flow load rho = {load:.3g}, loss target P(Q >= B) = {loss:.3g}",
                  f"M/G/1 mean queue E[Q] = {meanq:.2f} packets (section 4.1.1)",
                  "independent of line rate, RTT and number of flows; assumes Poisson "
                  "arrivals of slow-start bursts" +
                  ("" if smoothed else " and access links fast enough to keep bursts whole "
                   "(worst case)")]
        lines.append(_line("short", "Short-flow buffer", b, inp, model, src, snotes))

    # a recommendation
    by = {ln.key: ln for ln in lines}
    long_b = None
    if "target" in by and not math.isinf(by["target"].packets):
        long_b = min(by["target"].packets, f_long * bdp) if f_long * bdp > 0 else by["target"].packets
    elif "sqrt_n" in by:
        long_b = by["sqrt_n"].packets
    sync = bracket is not None and bracket[0] < MIN_DESYNC_FLOWS
    if sync:
        long_b = bdp
    if long_b is None and "short" not in by:
        rec, why = bdp, "no flow count given: the rule of thumb"
    elif long_b is None:
        rec, why = by["short"].packets, "short flows only"
    elif "short" in by:
        rec = max(long_b, by["short"].packets)
        why = ("mix: the larger of the long- and short-flow buffers (long flows dominate, "
               f"section 5.4); upper bound B_long + B_short = {long_b + by['short'].packets:.1f} "
               "packets")
    elif sync:
        rec, why = long_b, "few long flows, likely synchronized: the rule of thumb"
    else:
        rec, why = long_b, ("long flows: the buffer for the target utilization"
                            if "target" in by else "long flows: RTT x C / sqrt(n)")
    # A buffer holds whole packets: the recommendation is the model's figure rounded up.
    rec = rec if math.isinf(rec) else math.ceil(rec - 1e-9)
    lines.append(_line("recommended", "Recommended", rec, inp, why,
                       "Appenzeller chapters 3-5, 7", []))
    return Report(inp, lines, warnings)


def format_report(rep: Report) -> str:
    """Human-readable table of a :class:`Report`."""
    inp = rep.inputs
    out = []
    out.append(f"link {_rate(inp.rate_bps)}, RTT {inp.rtt_s * 1e3:.6g} ms, "
               f"packets {inp.packet_bytes:.6g} B: RTT x C = {inp.bdp_packets:.1f} packets")
    if inp.flows:
        lo, hi = inp.flows
        out.append(f"long-lived flows: {lo}" + (f"..{hi}" if hi != lo else ""))
    out.append("")
    w = max(len(ln.label) for ln in rep.lines)
    out.append(f"{'':{w}}  {'packets':>12} {'bytes':>14} {'delay':>11}")
    for ln in rep.lines:
        if math.isinf(ln.packets):
            nums = f"{'inf':>12} {'inf':>14} {'inf':>11}"
        else:
            digits = 0 if ln.key == "recommended" else 1
            nums = f"{ln.packets:12.{digits}f} {_bytes(ln.bytes):>14} {ln.delay_ms:9.3f}ms"
        out.append(f"{ln.label:{w}}  {nums}")
        out.append(f"{'':{w}}    model: {ln.model}  [{ln.source}]")
        for note in ln.notes:
            out.append(f"{'':{w}}    - {note}")
    for wmsg in rep.warnings:
        out.append(f"warning: {wmsg}")
    return "\n".join(out)


def _rate(r: float) -> str:
    for unit, f in (("Tb/s", 1e12), ("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3)):
        if r >= f:
            return f"{r / f:.6g} {unit}"
    return f"{r:.6g} b/s"


def _bytes(b: float) -> str:
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= f:
            return f"{b / f:.3f} {unit}"
    return f"{b:.0f} B"
