"""A resolved aqmlab scenario as an ns-2 2.35 Tcl script.

The script builds the same network from the contract (:mod:`aqmlab.contract`): one
``simplex-link`` per link with its rate, delay and discipline (:mod:`.queues`), and
every route pinned by ns-2's manual routing, so that each packet crosses the links
aqmlab's own run routes it over. Flows are written out one by one with the start
times, sizes and endpoints of aqmlab's run, arrivals included (from the flow table of
that run), never drawn again.

TCP maps to ns-2's one-way agents (``tcp/tcp.cc``, ``tcp-reno.cc``,
``tcp-newreno.cc``, ``tcp-sack1.cc``) and ``TCPSink`` (with ``DelAck``); each profile
field to the agent variable with the same meaning (:data:`PROFILE_VARS`). What ns-2
cannot express raises :class:`~aqmlab.errors.UserError` (exit status 2), naming the
field.

The script writes ``ns2.out``: a snapshot of every flow's and every monitored
queue's counters at the end of the warm-up and of the run, the queue length at each
sample time, and the completion time of each finite transfer (read by :mod:`.run`).
With ``packets=True`` it also traces the monitored links (``ns2.tr``) and every
flow's congestion window (``cwnd.tr``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ..errors import UserError
from ..names import NameList
from .queues import ns2_queue

#: ns-2 agent classes: (sender, sink, delayed-ACK sink) by aqmlab variant.
AGENTS: dict[str, tuple[str, str, str]] = {
    "tahoe": ("Agent/TCP", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "reno": ("Agent/TCP/Reno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "newreno": ("Agent/TCP/Newreno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "sack": ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1", "Agent/TCPSink/Sack1/DelAck"),
}


@dataclass(frozen=True)
class Flow:
    """One flow as the script creates it."""

    id: int
    kind: str  # "tcp" or "udp"
    group: dict[str, Any]
    src: int
    dst: int
    start_s: float
    size_bytes: int | None


def _seconds(ns: int | float) -> str:
    return repr(float(ns) / 1e9)


def sender_vars(p: dict[str, Any], where: str) -> list[str]:
    """The agent variables of one TCP profile (tcl/lib/ns-default.tcl names them)."""
    if p["variant"] not in AGENTS:
        raise UserError(f"ns-2 has no TCP {p['variant']!r}; it has {', '.join(AGENTS)}", f"{where}.variant")
    if p.get("timeout_cwnd", "restart") != "restart":
        # Seed 000's "dup. only" Reno was a change to ns-2's tcp.cc, not an option of it.
        raise UserError("ns-2's TCP restarts from one packet after a timeout; it has no 'half'", f"{where}.timeout_cwnd")
    lines = [
        # Whole packets, headers included: ns-2 adds tcpip_base_hdr_size_ to every
        # packet but sequence number 0 (tcp.cc, output()), so it is left out.
        f"packetSize_ {p['packet_size']}",
        "useHeaders_ false",
        # With a SYN, delay_growth_ makes it one packet alone and opens windowInit_ on its
        # ACK, as aqmlab's handshake does (tcp.cc, set_initial_window()); without one,
        # ns-2's default would hold the window at windowInit_ until the first ACK
        # (tcp.cc, recv_newack_helper()), so it is off.
        f"delay_growth_ {'true' if p['syn'] else 'false'}",
        f"window_ {p['receiver_window']}",
        f"windowInit_ {p['initial_window']}",
        f"numdupacks_ {p['dupack_threshold']}",
        f"minrto_ {_seconds(p['min_rto_ns'])}",
        f"maxrto_ {_seconds(p['max_rto_ns'])}",
        f"rtxcur_init_ {_seconds(p['initial_rto_ns'])}",
        f"tcpTick_ {_seconds(p['clock_granularity_ns'])}",
        # ns-2 has one RTT estimator, tcp.cc's, which aqmlab's rtt_estimator "ns2" follows.
        f"syn_ {'true' if p['syn'] else 'false'}",
        f"ecn_ {1 if p['ecn'] else 0}",
        # No Limited Transmit (RFC 3042), which aqmlab's TCP does not have.
        "singledup_ 0",
        "maxcwnd_ 0",
        "maxburst_ 0",
        # RFC 6582's Impatient timer, which aqmlab's NewReno follows (tcp-newreno.cc).
        *(["newreno_changes1_ 1"] if p["variant"] == "newreno" else []),
        # Classic Reno and Tahoe: a fast retransmit at every third duplicate ACK;
        # ns-2's bugFix_ refuses one until recover_ is acknowledged (tcp-reno.cc).
        *(["bugFix_ false"] if p["variant"] in ("reno", "tahoe") else []),
    ]
    if p["initial_ssthresh"] != p["receiver_window"]:
        # ns-2 starts ssthresh_ at window_ (tcp.cc, reset()); max_ssthresh_ caps it.
        if p["initial_ssthresh"] > p["receiver_window"]:
            raise UserError("ns-2 starts ssthresh at window_: it cannot exceed receiver_window", f"{where}.initial_ssthresh")
        lines.append(f"max_ssthresh_ {p['initial_ssthresh']}")
    return lines


def _profile_proc(i: int, p: dict[str, Any]) -> list[str]:
    where = f"tcp_profiles[{i}]"
    if p.get("cubic") is not None or p["variant"] == "cubic":
        raise UserError("ns-2 2.35 (Debian) has no CUBIC", f"{where}.variant")
    sender, sink, delack = AGENTS.get(p["variant"], ("", "", ""))
    lines = [f"proc tcp_profile{i} {{}} {{"]
    lines.append(f"    set tcp [new {sender}]")
    lines += [f"    $tcp set {v}" for v in sender_vars(p, where)]
    lines.append(f"    set sink [new {delack if p['delayed_ack'] else sink}]")
    lines.append(f"    $sink set packetSize_ {p['ack_size']}")
    if p["delayed_ack"]:
        lines.append(f"    $sink set interval_ {_seconds(p['delayed_ack_timeout_ns'])}")
    lines += ["    return [list $tcp $sink]", "}"]
    return lines


def _links(resolved: dict[str, Any], lag_s: float) -> Iterator[str]:
    from ..qdiscs import in_core

    links = resolved["links"]
    specs = [in_core(q, f"links.qdiscs[{i}]") for i, q in enumerate(links["qdiscs"])]
    queues = [ns2_queue(spec, f"links.qdiscs[{i}]") for i, spec in enumerate(specs)]
    seen: dict[tuple[int, int], int] = {}
    for li in range(len(links["from"])):
        a, b = int(links["from"][li]), int(links["to"][li])
        if (a, b) in seen:
            raise UserError(f"ns-2 has one link per pair of nodes; links {seen[(a, b)]} and {li} join the same two", "links")
        seen[(a, b)] = li
        cls, config = queues[int(links["qdisc"][li])]
        rate, delay = int(links["rate_bps"][li]), int(links["delay_ns"][li])
        yield f"$ns simplex-link $n({a}) $n({b}) {rate} {float(delay) / 1e9 + lag_s!r} {cls}"
        yield f"set q [[$ns link $n({a}) $n({b})] queue]"
        yield from config
        if "loss" in links and links["loss"][li] > 0:
            yield f"wire_loss {li} {a} {b} {float(links['loss'][li])!r}"


def _routes(resolved: dict[str, Any], flows: list[Flow], paths: list[tuple[np.ndarray, np.ndarray]]) -> Iterator[str]:
    """Manual routes (tcl/lib/ns-rtmodule.tcl): at each node, the next link to each
    destination, as aqmlab's route has it. ns-2 routes by destination, so two flows
    that reach one destination from one node by different links cannot be expressed."""
    frm, to = resolved["links"]["from"], resolved["links"]["to"]
    nexthop: dict[tuple[int, int], int] = {}
    for f, (path, back) in zip(flows, paths):
        for links, dst in ((path, f.dst), (back, f.src)):
            for li in links:
                key = (int(frm[li]), dst)
                if nexthop.setdefault(key, int(li)) != int(li):
                    raise UserError(
                        f"flow {f.id}: ns-2 routes by destination, and node {key[0]} reaches node {dst} "
                        f"by links {nexthop[key]} and {li}",
                        "flows",
                    )
    for (node, dst), li in sorted(nexthop.items()):
        yield f"route {node} {dst} {int(to[li])}"


def _flow_table(resolved: dict[str, Any], arrival_flows: Any) -> tuple[list[Flow], list[tuple[np.ndarray, np.ndarray]]]:
    """The flows of the contract, then the arrivals of aqmlab's run (``arrival_flows``,
    its flow table's rows past the contract's flows), with their paths."""
    fl = resolved["flows"]
    groups = fl["groups"]
    po, pl = fl["path"]["offsets"], fl["path"]["links"]
    ro, rl = fl["reverse_path"]["offsets"], fl["reverse_path"]["links"]
    flows, paths = [], []
    for i in range(len(fl["src"])):
        g = groups[int(fl["group"][i])]
        flows.append(Flow(i, g["kind"], g, int(fl["src"][i]), int(fl["dst"][i]), int(fl["start_ns"][i]) / 1e9, g.get("size_bytes")))
        paths.append((pl[po[i]:po[i + 1]], rl[ro[i]:ro[i + 1]]))
    if resolved["arrivals"]:
        if arrival_flows is None:
            raise UserError("flow arrivals need aqmlab's run first (their flows are written out from it)", "arrivals")
        by_group = {a["group"]: a for a in resolved["arrivals"]}
        names = NameList.from_contract(resolved["nodes"])
        index = {names[i]: i for i in range(len(names))}
        for row in arrival_flows.iter_rows(named=True):
            a = by_group[row["group"]]
            src, dst = index[row["src"]], index[row["dst"]]
            route = next(r for r in a["routes"] if r["src"] == src and r["dst"] == dst)
            group = {"kind": "tcp", "profile": a["profile"], "size_bytes": row["size_bytes"]}
            flows.append(Flow(int(row["flow_id"]), "tcp", group, src, dst, row["start_s"], row["size_bytes"]))
            paths.append((np.asarray(route["path"]), np.asarray(route["reverse_path"])))
    return flows, paths


def _udp_source(g: dict[str, Any], where: str) -> list[str]:
    """An ns-2 traffic generator for a UDP source (tools/cbr_traffic.cc, expoo.cc)."""
    s, size = g["source"], g["packet_size"]
    if s["model"] == "cbr":
        if s["jitter"] not in (0.0, 0.5):
            raise UserError("ns-2's CBR jitters each gap by +-50% (random_ 1) or not at all: give jitter 0 or 0.5", f"{where}.jitter")
        return ["Application/Traffic/CBR", f"rate_ {s['rate_bps']}", f"packetSize_ {size}", f"random_ {int(s['jitter'] > 0)}"]
    if s["model"] == "poisson":
        # One packet a burst at a rate so high that its own gap is nothing: the gaps
        # are ns-2's exponential idle times alone, a Poisson process.
        mean = size * 8 / s["rate_bps"]
        return ["Application/Traffic/Exponential", "rate_ 1e15", f"packetSize_ {size}", "burst_time_ 0", f"idle_time_ {mean!r}"]
    on, off = s["on"], s["off"]
    if on["dist"] != "exponential" or off["dist"] != "exponential":
        raise UserError("ns-2's on/off source has exponential periods only", f"{where}.on")
    return [
        "Application/Traffic/Exponential", f"rate_ {s['rate_bps']}", f"packetSize_ {size}",
        f"burst_time_ {_seconds(on['mean'])}", f"idle_time_ {_seconds(off['mean'])}",
    ]


def _flow_lines(f: Flow) -> list[str]:
    g, t = f.group, repr(f.start_s)
    if f.kind == "tcp":
        lines = [f"tcpflow {f.id} {g['profile']} {f.src} {f.dst}"]
        if f.size_bytes is None:
            lines.append(f"$ns at {t} \"$ftp({f.id}) start\"")
        else:
            lines.append(f"$ns at {t} \"$ftp({f.id}) send {int(f.size_bytes)}\"")
    else:
        cls, *vars_ = _udp_source(g, f"flows[{f.id}].source")
        lines = [f"udpflow {f.id} {f.src} {f.dst} {cls}"] + [f"$app({f.id}) set {v}" for v in vars_]
        lines.append(f"$ns at {t} \"$app({f.id}) start\"")
    if g.get("stop_ns") is not None:
        lines.append(f"$ns at {_seconds(g['stop_ns'])} \"{'$ftp' if f.kind == 'tcp' else '$app'}({f.id}) stop\"")
    if f.kind == "tcp" and g.get("off_time") is not None:
        lines.append(_on_off(f))
    return lines


def _on_off(f: Flow) -> str:
    """An on-off TCP source: its next transfer an idle time after each, exponential
    (ns-2's RandomVariable/Exponential) or fixed."""
    off, where = f.group["off_time"], f"flows[{f.id}]"
    if off["dist"] == "exponential":
        idle = f"Exponential avg_ {_seconds(off['mean'])}"
    elif off["dist"] == "fixed":
        idle = f"Constant val_ {_seconds(off['value'])}"
    else:
        raise UserError("ns-2's on-off TCP source here idles an exponential or fixed time", f"{where}.off_time")
    kept = int(bool(f.group.get("keep_connection")))
    return f"onoff {f.id} {int(f.size_bytes)} {kept} {idle}"


#: Helpers of every script: routes, flows, snapshots and samples.
PRELUDE = r"""
proc route {node dst via} {
    global ns n
    [$n($node) get-module "Manual"] add-route [$n($dst) set address_] [[$ns link $n($node) $n($via)] head]
}
proc tcpflow {i profile src dst} {
    global ns n tcp ftp sink before
    lassign [tcp_profile$profile] tcp($i) sink($i)
    $tcp($i) set fid_ $i
    $ns attach-agent $n($src) $tcp($i)
    $ns attach-agent $n($dst) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [$tcp($i) attach-app FTP]
    set before($i) {0 0 0 0 0}
    $tcp($i) proc done {} "global ns out; puts \$out \"done $i \[\$ns now\]\""
}
# Flow i's counters: ack_ (packets acknowledged, less one), ndatapack_, nrexmitpack_,
# nrexmit_, ncwndcuts1_, with those of the transfers its agent was reset after.
# ncwndcuts1_ leaves out the cuts with nothing in flight (a timer that fires after the
# last ACK, an idle restart), which ncwndcuts_ counts.
proc counters {i} {
    global tcp before
    set sum {}
    foreach was $before($i) name {ack_ ndatapack_ nrexmitpack_ nrexmit_ ncwndcuts1_} {
        lappend sum [expr {$was + [$tcp($i) set $name]}]
    }
    return $sum
}
# An on-off source (seed 000's): after each transfer of `bytes` it idles a time drawn
# from RandomVariable/`kind` (its `var` set to `value` s); then a fresh connection sends
# the next (both agents reset, their counters kept in `before`), or, `kept`, the same
# connection sends more (`advanceby`, which lets `done` come again; an idle time past
# the RTO has closed the window to one packet).
proc onoff {i bytes kept kind var value} {
    global tcp idle_time
    set idle_time($i) [new RandomVariable/$kind]
    $idle_time($i) set $var $value
    set next [expr {$kept ? "onoff_more" : "onoff_fresh"}]
    $tcp($i) proc done {} "onoff_done $i $bytes $next"
}
proc onoff_done {i bytes next} {
    global ns out idle_time
    puts $out "done $i [$ns now]"
    $ns at [expr {[$ns now] + [$idle_time($i) value]}] "$next $i $bytes"
}
proc onoff_fresh {i bytes} {
    global tcp sink ftp before
    set now [counters $i]
    set before($i) [lreplace $now 0 0 [expr {[lindex $now 0] + 1}]]
    $tcp($i) reset
    $sink($i) reset
    $ftp($i) send $bytes
}
proc onoff_more {i bytes} {
    global tcp
    $tcp($i) advanceby [expr {($bytes + [$tcp($i) set packetSize_] - 1) / [$tcp($i) set packetSize_]}]
}
proc udpflow {i src dst cls} {
    global ns n app udp
    set udp($i) [new Agent/UDP]
    $udp($i) set fid_ $i
    set sink [new Agent/Null]
    $ns attach-agent $n($src) $udp($i)
    $ns attach-agent $n($dst) $sink
    $ns connect $udp($i) $sink
    set app($i) [new $cls]
    $app($i) attach-agent $udp($i)
}
# A link's random loss: ns-2's uniform ErrorModel in packets after the link's delay
# (link-lossmodel: the packet is sent whole and lost where it arrives, as in aqmlab),
# dropping into a LossMonitor of its own that counts what the wire lost.
proc wire_loss {l a b p} {
    global ns n lost
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $p
    $em ranvar [new RandomVariable/Uniform]
    set lost($l) [new Agent/LossMonitor]
    $ns link-lossmodel $em $n($a) $n($b)
    $em drop-target $lost($l)
}
proc snapshot {tag} {
    global ns out tcp qmon lost
    foreach i [lsort -integer [array names tcp]] {
        puts $out "tcp $tag $i [counters $i] [$tcp($i) set cwnd_]"
    }
    foreach l [lsort -integer [array names qmon]] {
        set m $qmon($l)
        puts $out "queue $tag $l [$m set parrivals_] [$m set pdepartures_] [$m set pdrops_] [$m set barrivals_] [$m set bdepartures_]"
    }
    foreach l [lsort -integer [array names lost]] {
        puts $out "lost $tag $l [$lost($l) set npkts_]"
    }
}
proc sample {interval end} {
    global ns out qmon
    set now [$ns now]
    foreach l [lsort -integer [array names qmon]] {
        puts $out "sample $l $now [$qmon($l) set pkts_] [$qmon($l) set size_]"
    }
    if {$now + $interval <= $end + 1e-12} { $ns at [expr {$now + $interval}] "sample $interval $end" }
}
proc count_bytes {interval} {
    global ns out qmon
    foreach l [lsort -integer [array names qmon]] {
        puts $out "bytes $l [$ns now] [$qmon($l) set bdepartures_]"
    }
    $ns at [expr {[$ns now] + $interval}] "count_bytes $interval"
}
"""


def to_tcl(resolved: dict[str, Any], arrival_flows: Any = None, packets: bool = False, lag_s: float = 0.0) -> str:
    """The Tcl script of ``resolved``; ``arrival_flows``: aqmlab's flow table of the
    arrivals' flows (needed only when the scenario has arrivals)."""
    names = NameList.from_contract(resolved["nodes"])
    flows, paths = _flow_table(resolved, arrival_flows)
    links = resolved["links"]
    duration, warmup = resolved["duration_ns"], resolved["warmup_ns"]
    out = [
        "# ns-2 2.35 script written by aqmlab (python/aqmlab/ns2/translate.py).",
        "set ns [new Simulator]",
        "$ns rtproto Manual",
        f"$defaultRNG seed {int(resolved['seed']) % 2**31 + 1}",
        "set out [open ns2.out w]",
        PRELUDE,
    ]
    for i, p in enumerate(resolved["tcp_profiles"]):
        out += _profile_proc(i, p)
    out.append(f"for {{set i 0}} {{$i < {len(names)}}} {{incr i}} {{ set n($i) [$ns node] }}")
    out += list(_links(resolved, lag_s))
    out += list(_routes(resolved, flows, paths))
    for li in np.flatnonzero(links["monitor"]):
        a, b = int(links["from"][li]), int(links["to"][li])
        out.append(f"set qmon({li}) [$ns monitor-queue $n({a}) $n({b}) \"\"]")
        if packets:
            out += [f"set trace({li}) [open ns2_{li}.tr w]", f"$ns trace-queue $n({a}) $n({b}) $trace({li})"]
    for f in flows:
        out += _flow_lines(f)
    if packets:
        out += ["set cw [open cwnd.tr w]", "foreach i [array names tcp] { $tcp($i) attach $cw; $tcp($i) trace cwnd_ }"]
    interval = resolved["sample_interval_ns"]
    # ns-2 counts bytes in a C int: read often enough to see every wrap.
    fastest = int(links["rate_bps"][links["monitor"]].max()) if links["monitor"].any() else 1
    counting = min(1.0, 2**30 * 8 / fastest)
    out += [
        f"$ns at 0.0 \"count_bytes {counting!r}\"",
        f"$ns at {_seconds(warmup)} \"snapshot warmup\"",
        # A sample interval of 0 samples nothing (as in aqmlab); rescheduling at +0 would never end.
        *([f"$ns at 0.0 \"sample {_seconds(interval)} {_seconds(duration)}\""] if interval > 0 else []),
        f"$ns at {_seconds(duration)} \"snapshot end; close $out; exit 0\"",
        "$ns run",
    ]
    return "\n".join(out) + "\n"
