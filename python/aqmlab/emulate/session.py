"""One emulated run, from namespaces to the router's report.

The order of things: remove what a killed run left; create a namespace for the router
and one per host; start the router in its namespace (it creates one TUN device per
host and prints ``ready``); move each device into its host's namespace and give it
the host's address and a route to every other host through it; start the iperf3
servers, then each client at its flow's start; stop the clients (SIGINT) at their stop
time or the end of the run; stop the router (SIGTERM), which writes its report. On
every way out (an error, Ctrl-C, SIGTERM) the namespaces are removed with whatever
still runs in them; the router's devices die with it.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..errors import UserError
from ..names import NameList
from . import hosts, kernel, kernel_poll, kernel_qdiscs, netns, traffic
from .hosts import SUBNET
from .support import sample_interval_ns

#: Seconds the router may take to create its devices.
READY_TIMEOUT_S = 10.0
#: Seconds the servers get to listen before the run's clock starts.
SERVER_SETUP_S = 0.3
#: Seconds an interrupted client gets to write its report.
CLIENT_GRACE_S = 3.0
#: The router runs the events due within this many nanoseconds of a wake-up in it
#: (docs/emulator.md, "Timing"): a packet may reach its host up to this much early.
BATCH_NS = 20_000
#: The applications' nice value: ahead of the machine's other work (builds, other runs),
#: which would otherwise starve a flow's sender and change the experiment, without a
#: real-time priority that a TCP sender at full speed could hold a core with.
APP_NICE = -10


def spawn(cmd: list[str], **kwargs: Any) -> "subprocess.Popen[Any]":
    """Start a process of the run: it receives SIGKILL when the run's process dies,
    however it dies (``setpriv --pdeathsig``: PR_SET_PDEATHSIG, kept across the execs of
    ``ip netns exec``). Set by setpriv rather than in a ``preexec_fn``, which would make
    Python fork its whole address space for every process (27 ms here, against 4 ms
    for the vfork it uses otherwise): a run of 400 flows starts 800."""
    return subprocess.Popen(["setpriv", "--pdeathsig", "KILL", *cmd], **kwargs)


def binary(name: str, env: str) -> str:
    """One of the emulator's executables: $``env``, the repository's build, or the PATH."""
    repo = Path(__file__).resolve().parents[3]
    for c in (os.environ.get(env), str(repo / "target" / "release" / name), shutil.which(name)):
        if c and os.access(c, os.X_OK):
            return c
    raise UserError(
        f"not built: run `cargo build --release -p aqmlab-router` (or `make build`), or set {env} to its path", name
    )


def router_binary() -> str:
    return binary("aqmlab-router", "AQMLAB_ROUTER")


def udp_binary() -> str:
    return binary("aqmlab-udp", "AQMLAB_UDP")


def check_machine() -> None:
    """Refuse, naming it, what the machine lacks: root, /dev/net/tun, ip, setpriv, iperf3."""
    if os.geteuid() != 0:
        raise UserError("the emulator creates network namespaces: run it as root (or with CAP_NET_ADMIN)", "root")
    if not os.path.exists("/dev/net/tun"):
        raise UserError("the emulator needs TUN devices: load the tun module", "/dev/net/tun")
    for program, package in (("ip", "iproute2"), ("setpriv", "util-linux"), ("iperf3", "iperf3")):
        if shutil.which(program) is None:
            raise UserError(f"not installed: apt-get install {package} (or `make system`)", program)


@contextmanager
def signals_raise() -> Iterator[None]:
    """SIGTERM (and SIGINT, as always) raise in the main thread while a run is on, so
    that its clean-up runs; the previous handlers come back afterwards."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    before = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


class Session:
    """The processes and namespaces of one run (a context manager that removes them)."""

    def __init__(self, scenario: Any, resolved: dict[str, Any], workdir: Path, baseline: str | None = None,
                 shaper: str = "tbf", flow_key: str = "five_tuple") -> None:
        self.scenario, self.resolved, self.workdir = scenario, resolved, workdir
        self.shaper, self.flow_key = shaper, flow_key
        self.host_nodes = hosts.nodes_of(resolved)
        self.addr = hosts.addresses(self.host_nodes)
        self.plans = traffic.plan(scenario, resolved, self.addr, udp_binary())
        self.settings = traffic.host_settings(self.plans, scenario)
        #: The hosts of each namespace (device h<k> carries the hosts of namespace k).
        self.homes = hosts.namespaces(self.host_nodes, [(p.src, p.dst) for p in self.plans], self.settings)
        self.device = {n: f"h{k}" for k, nodes in enumerate(self.homes) for n in nodes}
        #: Per kernel port: the monitored link it carries, and the kernel's queue for it.
        self.kernel_links = self.kernel_queues() if baseline == "kernel" else {}
        self.kernel_ns = ""
        self.kernel_stats: dict[str, dict[str, Any]] = {}
        self.tc_reader: kernel_poll.TcReader | None = None
        self.poller: kernel_poll.Poller | None = None
        self.spaces = netns.Namespaces()
        self.router: subprocess.Popen[str] | None = None
        self.clients: dict[int, subprocess.Popen[bytes]] = {}
        self.servers: dict[int, subprocess.Popen[bytes]] = {}
        self.host_ns: dict[int, str] = {}
        #: Files the processes write to, closed with the session.
        self.files: list[Any] = []
        self.t0 = 0.0
        self.t0_ns = 0
        self.router_ns = ""

    # -- set-up ----------------------------------------------------------------

    def open(self, name: str) -> Any:
        """A file of the run's directory for a process to write to."""
        f = open(self.workdir / name, "wb")
        self.files.append(f)
        return f

    def link_names(self) -> list[str]:
        return list(NameList.from_contract(self.resolved["links"]["names"]))

    def kernel_queues(self) -> dict[int, tuple[int, kernel_qdiscs.KernelQueue]]:
        """For the kernel baseline: port -> (the monitored link, the kernel qdisc of its
        discipline); refused by field where the kernel has no such qdisc."""
        links, names = self.resolved["links"], self.link_names()
        out = {}
        for i in range(len(links["from"])):
            if bool(links["monitor"][i]):
                spec = links["qdiscs"][int(links["qdisc"][i])]
                where = f"topology.{names[i]}.qdisc"
                out[len(out)] = (i, kernel_qdiscs.translate(spec, int(links["rate_bps"][i]), self.mtu(), where))
        if not out:
            raise UserError("the kernel baseline replaces the monitored links' queues; this network has none", "--baseline")
        kernel.require({self.shaper: "--shaper", **{q.kind: f"topology.{names[i]}.qdisc.kind" for i, q in out.values()}})
        return out

    def router_config(self) -> dict[str, Any]:
        r = self.resolved
        links = r["links"]
        names = self.link_names()
        port_of = {link: port for port, (link, _) in self.kernel_links.items()}
        return {
            "seed": int(r["seed"]),
            "sample_interval_ns": sample_interval_ns(r),
            "stop_after_ns": int(r["duration_ns"]) + int(120e9),
            "tag_tos": traffic.TAG_TOS,
            "flow_key": self.flow_key,
            "realtime": True,
            "batch_ns": BATCH_NS,
            "nodes": len(NameList.from_contract(r["nodes"])),
            "hosts": [{"node": n, "device": self.device[n], "addr": self.addr[n]} for n in self.host_nodes],
            "links": [
                {
                    "name": names[i],
                    "from": int(links["from"][i]),
                    "to": int(links["to"][i]),
                    "rate_bps": int(links["rate_bps"][i]),
                    "delay_ns": int(links["delay_ns"][i]),
                    "qdisc": links["qdiscs"][int(links["qdisc"][i])],
                    "monitor": bool(links["monitor"][i]),
                    "loss": float(links["loss"][i]) if "loss" in links else 0.0,
                    **({"kernel": port_of[i]} if i in port_of else {}),
                }
                for i in range(len(links["from"]))
            ],
            "kernel_ports": [{"into": f"ki{p}", "from": f"ko{p}"} for p in sorted(self.kernel_links)],
        }

    def mtu(self) -> int:
        return max(576, max(p.packet_size for p in self.plans))

    def start_router(self) -> None:
        config = self.router_config()
        (self.workdir / "router.json").write_text(json.dumps(config, indent=1))
        self.router_ns = self.spaces.create("router")
        for k, nodes in enumerate(self.homes):
            ns = self.spaces.create(f"h{k}")
            self.host_ns.update((n, ns) for n in nodes)
        cmd = self.spaces.exec(self.router_ns, [router_binary(), str(self.workdir / "router.json"), str(self.workdir / "report.json")])
        self.router = spawn(cmd, stdout=subprocess.PIPE, stderr=self.open("router.err"), text=True)
        ready, _, _ = select.select([self.router.stdout], [], [], READY_TIMEOUT_S)
        line = self.router.stdout.readline() if ready else ""  # type: ignore[union-attr]
        if line.strip() != "ready":
            self.router.wait(timeout=5)
            err = (self.workdir / "router.err").read_text().strip()
            raise UserError(f"the router did not start: {err or 'no message'}", "aqmlab-router")
        for k, nodes in enumerate(self.homes):
            self.attach_hosts(f"h{k}", nodes, self.mtu())
        if self.kernel_links:
            self.attach_kernel()

    def attach_kernel(self) -> None:
        """Move the kernel ports' devices into a namespace of their own, forwarding
        through the kernel's qdiscs."""
        self.kernel_ns = self.spaces.create("kernel")
        rates = self.resolved["links"]["rate_bps"]
        for port, (link, queue) in self.kernel_links.items():
            into, out = f"ki{port}", f"ko{port}"
            for device in (into, out):
                netns.ip("link", "set", device, "netns", self.kernel_ns, namespace=self.router_ns)
            commands = kernel.tc_commands(out, int(rates[link]), self.mtu(), queue.args, self.shaper)
            kernel.configure(self.kernel_ns, into, out, commands, str(SUBNET), self.mtu())
        self.tc_reader = kernel_poll.TcReader(self.kernel_ns, spawn)
        self.tc_reader.read("ko0")  # its first answer is slow (milliseconds): not in the run

    def start_kernel_poller(self) -> None:
        """Read the kernel queues' counters every sample interval from the run's start
        (at the end of the warm-up and of the run only, without one)."""
        if self.tc_reader is None:
            return
        names = self.link_names()
        r = self.resolved
        interval = sample_interval_ns(r) or int(r["warmup_ns"]) or int(r["duration_ns"])
        devices = {names[link]: f"ko{port}" for port, (link, _) in self.kernel_links.items()}
        self.poller = kernel_poll.Poller(self.tc_reader, devices, interval, self.t0_ns)
        self.poller.start()

    def read_kernel_stats(self) -> None:
        """The kernel queues' counters when the run is over, and their readings during it."""
        names = self.link_names()
        for port, (link, _) in self.kernel_links.items():
            self.kernel_stats[names[link]] = {
                "at_end": kernel.stats(self.kernel_ns, f"ko{port}"),
                "readings": [r.as_dict() for r in self.poller.readings[names[link]]] if self.poller else [],
            }
        (self.workdir / "kernel.json").write_text(json.dumps(self.kernel_stats, indent=1))

    def attach_hosts(self, device: str, nodes: list[int], mtu: int) -> None:
        """Move ``device`` into the namespace of ``nodes`` and give it their
        addresses, the route through the router with their route options (the same
        for all of them: :mod:`.hosts`), and their kernel's settings."""
        ns, first = self.host_ns[nodes[0]], nodes[0]
        netns.ip("link", "set", device, "netns", ns, namespace=self.router_ns)
        options = self.settings.get(first, {}).get("route", {})
        route = ["route", "add", str(SUBNET), "dev", device]
        for key, value in options.items():
            route += [key, value]
        batch = [
            *(f"addr add {self.addr[n]}/32 dev {device}" for n in nodes),
            f"link set {device} mtu {mtu} up",
            " ".join(route),
        ]
        netns.ip("-batch", "-", namespace=ns, input="\n".join(batch) + "\n")
        sysctls = {"net.ipv6.conf.all.disable_ipv6": "1"}
        if first in self.settings:
            sysctls["net.ipv4.tcp_ecn"] = "1" if self.settings[first]["ecn"] else "0"
        for key, value in sysctls.items():
            netns.sysctl(ns, key, value)

    # -- traffic ---------------------------------------------------------------

    def start_servers(self) -> None:
        for p in self.plans:
            out = self.open(f"server{p.index}.json")
            self.servers[p.index] = spawn(self.app(p.dst, p.server), stdout=out, stderr=subprocess.STDOUT)
        time.sleep(SERVER_SETUP_S)

    def app(self, node: int, args: list[str]) -> list[str]:
        """The command line of an application on host ``node``."""
        return self.spaces.exec(self.host_ns[node], ["nice", "-n", str(APP_NICE), *args])

    def run_traffic(self) -> None:
        """Start and stop the clients on the run's clock, until the end of the run."""
        duration = int(self.resolved["duration_ns"])
        events: list[tuple[int, int, str]] = []
        for p in self.plans:
            events.append((p.start_ns, p.index, "start"))
            if p.stop_ns is not None and p.stop_ns < duration:
                events.append((int(p.stop_ns), p.index, "stop"))
        events.sort()
        self.t0_ns = time.monotonic_ns()
        self.t0 = self.t0_ns / 1e9
        self.start_kernel_poller()
        for at, index, what in events:
            self.sleep_until(at)
            if what == "start":
                p = self.plans[index]
                out, err = self.open(f"client{index}.json"), self.open(f"client{index}.err")
                self.clients[index] = spawn(self.app(p.src, p.client), stdout=out, stderr=err)
            else:
                self.interrupt(self.clients.get(index))
        self.sleep_until(duration)
        if self.poller is not None:
            self.poller.stop()
        # The clients stop first, while the network still carries their last words
        # to the servers; the router's window figures end at its last sample in the run.
        for c in self.clients.values():
            self.interrupt(c)
        deadline = time.monotonic() + CLIENT_GRACE_S
        for c in self.clients.values():
            try:
                c.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                c.kill()
        self.read_kernel_stats()
        self.stop_router()

    def sleep_until(self, at_ns: int) -> None:
        delay = self.t0 + at_ns / 1e9 - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    @staticmethod
    def interrupt(process: subprocess.Popen[bytes] | None) -> None:
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)

    def stop_router(self) -> None:
        if self.router is None or self.router.poll() is not None:
            return
        self.router.send_signal(signal.SIGTERM)
        try:
            self.router.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.router.kill()
            self.router.wait()

    def report(self) -> dict[str, Any]:
        path = self.workdir / "report.json"
        if not path.exists():
            err = (self.workdir / "router.err").read_text().strip()
            raise RuntimeError(f"the router wrote no report ({err or 'no message'})")
        return json.loads(path.read_text())

    def client_reports(self) -> dict[int, dict[str, Any]]:
        out = {}
        for p in self.plans:
            f = self.workdir / f"client{p.index}.json"
            out[p.index] = traffic.client_report(f.read_text()) if f.exists() else {}
        return out

    # -- clean-up --------------------------------------------------------------

    def close(self) -> None:
        if self.poller is not None:
            self.poller.stop(last_reading=False)
        if self.tc_reader is not None:
            self.tc_reader.close()
        for process in [*self.clients.values(), *self.servers.values()]:
            if process.poll() is None:
                process.kill()
            process.wait()
        if self.router is not None:
            self.stop_router()
            if self.router.stdout is not None:
                self.router.stdout.close()
        self.spaces.close()
        for f in self.files:
            f.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def workdir(out: Path | None) -> Path:
    """Where the router's config and report and the applications' outputs go: the
    results directory's ``emulator/`` (kept, for inspection), or a temporary one."""
    if out is None:
        return Path(tempfile.mkdtemp(prefix="aqmlab-emulate-"))
    d = Path(out) / "emulator"
    d.mkdir(parents=True, exist_ok=True)
    return d
