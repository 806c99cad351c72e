"""The kernel as the baseline: the scenario's monitored links (a dumbbell's bottleneck)
queued and shaped by Linux's own ``tc`` qdiscs instead of aqmlab's disciplines
(``aqmlab emulate --baseline kernel``; docs/emulator.md, "The kernel as the baseline").

The router hands such a link's packets to a TUN device in a namespace of their own,
where the kernel forwards them out of a second TUN device whose root qdisc shapes
them (``tbf``, or ``htb`` with one class) over a child qdisc, the kernel's version of
the link's discipline (:mod:`.kernel_qdiscs`: ``pfifo``/``bfifo`` for DropTail,
``red``, ``sfq``, ``fq_codel``, ...); the router reads them back as the kernel
releases them and gives them the link's propagation delay (the kernel's ``netem`` is
not needed). Which qdiscs a kernel offers is probed (:func:`available`), never assumed.
"""

from __future__ import annotations

import json
import math
import subprocess
from typing import Any

from ..errors import UserError
from . import netns

#: The qdiscs asked about: the shapers and FIFOs used here, and the AQMs of the
#: fuller comparison on kernels that have them.
KINDS = ("pfifo", "bfifo", "tbf", "htb", "netem", "red", "sfq", "fq_codel", "codel", "pie", "sfb", "choke", "fq")
#: Parameters without which ``tc`` refuses a kind before asking the kernel.
_PROBE_ARGS = {
    "tbf": "rate 1mbit burst 1600 limit 3000",
    "red": "limit 400000 min 30000 max 90000 avpkt 1000 burst 55 bandwidth 10mbit probability 0.02",
    "choke": "limit 1000 min 100 max 300 avpkt 1000 burst 200 bandwidth 10mbit probability 0.02",
}
SHAPERS = ("tbf", "htb")
#: The shapers' token bucket, in seconds of the link's rate (at least BUCKET_MIN_PACKETS
#: of the MTU): a kernel that dequeues late (its timer, its softirq, or the whole virtual
#: machine held up) banks the tokens of up to this long and catches up, where a bucket of
#: two MTUs lost 2-6% of the rate when this machine was loaded. An idle link releases at
#: most this much at once (a testbed's shaper: seed 003's gateway had 10 ms at 20 Mb/s).
BUCKET_S = 0.010
BUCKET_MIN_PACKETS = 2


def available(kinds: tuple[str, ...] = KINDS) -> dict[str, str | None]:
    """Which of ``kinds`` this kernel's ``tc`` accepts: None for a kind it accepts, the
    kernel's refusal for one it does not ("Specified qdisc kind is unknown"). Tried on
    the loopback device of a namespace made for the purpose (the host's own devices
    are never touched)."""
    out: dict[str, str | None] = {}
    with netns.Namespaces() as spaces:
        ns = spaces.create("probe")
        for kind in kinds:
            args = [kind, *_PROBE_ARGS.get(kind, "").split()]
            done = subprocess.run(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", *args],
                                  capture_output=True, text=True, timeout=10)
            out[kind] = None if done.returncode == 0 else (done.stderr.strip() or f"exit status {done.returncode}")
            subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", "lo", "root"], capture_output=True, timeout=10)
    return out


def require(kinds: dict[str, str]) -> None:
    """Refuse, naming its field (``kinds``: kind -> field), a qdisc this kernel lacks."""
    found = available(tuple(kinds))
    for kind, field in kinds.items():
        if found[kind] is not None:
            raise UserError(
                f"this kernel has no {kind} qdisc (tc: {found[kind]}); the kernel baseline of this discipline "
                f"needs a kernel with CONFIG_NET_SCH_{kind.upper()} (module sch_{kind}; docs/emulator.md, "
                "\"The kernel's qdiscs\")",
                field,
            )


def bucket_bytes(rate_bps: int, mtu: int) -> int:
    """The shaper's bucket: BUCKET_S of the rate, at least BUCKET_MIN_PACKETS MTUs."""
    return max(BUCKET_MIN_PACKETS * mtu, math.ceil(rate_bps * BUCKET_S / 8))


def tc_commands(device: str, rate_bps: int, mtu: int, child: list[str], shaper: str) -> list[list[str]]:
    """``tc`` commands that shape ``device`` to ``rate_bps`` over the queue ``child``
    (handle 10:), with a bucket of :func:`bucket_bytes`."""
    rate, bucket = f"{rate_bps}bit", str(bucket_bytes(rate_bps, mtu))
    if shaper == "tbf":
        return [
            ["qdisc", "add", "dev", device, "root", "handle", "1:", "tbf", "rate", rate, "burst", bucket, "limit", str(mtu)],
            ["qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", *child],
        ]
    return [
        ["qdisc", "add", "dev", device, "root", "handle", "1:", "htb", "default", "1"],
        ["class", "add", "dev", device, "parent", "1:", "classid", "1:1", "htb", "rate", rate, "ceil", rate,
         "burst", bucket, "cburst", bucket],
        ["qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", *child],
    ]


def configure(namespace: str, into: str, out: str, commands: list[list[str]], subnet: str, mtu: int) -> None:
    """Forward from ``into`` to ``out`` in ``namespace``, and give ``out`` its qdiscs."""
    netns.ip("-batch", "-", namespace=namespace, input="\n".join([
        f"link set {into} mtu {mtu} up",
        f"link set {out} mtu {mtu} up",
        f"addr add 10.98.0.1/32 dev {into}",
        f"addr add 10.98.0.2/32 dev {out}",
        f"route add {subnet} dev {out}",
    ]) + "\n")
    for key, value in (("net.ipv4.ip_forward", "1"), ("net.ipv4.conf.all.rp_filter", "0"),
                       (f"net.ipv4.conf.{into}.rp_filter", "0"), ("net.ipv6.conf.all.disable_ipv6", "1")):
        netns.sysctl(namespace, key, value)
    for c in commands:
        done = subprocess.run(["tc", "-n", namespace, *c], capture_output=True, text=True, timeout=10)
        if done.returncode != 0:
            raise UserError(f"the kernel refused `tc {' '.join(c)}`: {done.stderr.strip()}", "--baseline")


def stats(namespace: str, device: str) -> dict[str, Any]:
    """The counters of ``device``'s qdiscs now (one ``tc -s -j`` call; :func:`counters`)."""
    done = subprocess.run(["tc", "-n", namespace, "-s", "-j", "qdisc", "show", "dev", device],
                          capture_output=True, text=True, timeout=10)
    return counters(done.stdout)


def counters(tc_json: str) -> dict[str, Any]:
    """What ``tc -s -j qdisc show`` says of a shaped queue: the queue's (the child at
    handle 10:) drops and backlog, the shaper's (the root's) bytes and packets sent."""
    try:
        qdiscs = json.loads(tc_json or "[]")
    except ValueError:
        return {}
    child = [q for q in qdiscs if q.get("handle") == "10:"]
    root = [q for q in qdiscs if q.get("root")]
    q, r = (child[0] if child else {}), (root[0] if root else {})
    return {
        "kind": "+".join(x.get("kind", "?") for x in (root[:1] + child[:1])),
        "drops": q.get("drops"),
        "backlog_packets": q.get("qlen"),
        "backlog_bytes": q.get("backlog"),
        "sent_bytes": r.get("bytes"),
        "sent_packets": r.get("packets"),
        "overlimits": r.get("overlimits"),
    }
