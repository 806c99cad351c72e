"""The kernel's queues over time: the kernel baseline's qdisc counters, read every
sample interval while the run goes (docs/emulator.md, "The kernel as the baseline").

The router sees a kernel-queued link only from outside (what it handed to the kernel,
what came back), so the kernel's own counters are read instead: the shaper's bytes
sent, the queue's backlog and drops. One ``tc -s -j -batch -`` process, started in the
kernel's namespace for the run, answers each ``qdisc show`` on its own line (tens of
microseconds; a ``tc`` started per reading takes milliseconds, tens of them on a busy
machine). Each reading is stamped with the middle of its request and answer, within
half their distance (``spread_ns``). Utilization over a window is the bytes the shaper
sent between two readings over the time between them, so a reading taken late is late
in both its bytes and its time.
"""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

from . import kernel


@dataclass(frozen=True)
class Reading:
    """A kernel queue's counters at one instant (CLOCK_MONOTONIC ns)."""

    time_ns: int
    #: Half the time between request and answer: the counters were read within this of ``time_ns``.
    spread_ns: int
    backlog_packets: int
    backlog_bytes: int
    drops: int
    sent_bytes: int
    sent_packets: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class TcReader:
    """A ``tc -batch`` process in ``namespace`` that reads qdisc counters on request."""

    def __init__(self, namespace: str, spawn: Callable[..., "subprocess.Popen[str]"] = subprocess.Popen) -> None:
        self.process = spawn(["tc", "-n", namespace, "-s", "-j", "-batch", "-"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def read(self, device: str) -> Reading | None:
        """``device``'s counters now (None if ``tc`` said nothing usable)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        before = time.monotonic_ns()
        try:
            self.process.stdin.write(f"qdisc show dev {device}\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except (BrokenPipeError, ValueError):
            return None
        after = time.monotonic_ns()
        tc = kernel.counters(line)
        if tc.get("sent_bytes") is None or tc.get("drops") is None:
            return None
        return Reading(
            time_ns=(before + after) // 2, spread_ns=(after - before) // 2,
            backlog_packets=int(tc["backlog_packets"]), backlog_bytes=int(tc["backlog_bytes"]),
            drops=int(tc["drops"]), sent_bytes=int(tc["sent_bytes"]), sent_packets=int(tc["sent_packets"]),
        )

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for f in (self.process.stdin, self.process.stdout):
            if f is not None:
                f.close()


class Poller:
    """Reads the qdiscs of ``devices`` (link name -> device) through ``reader`` at
    ``start_ns + k * interval_ns`` (monotonic) for k = 0, 1, ... until stopped; a read
    that falls behind skips to the next instant due, never bunches up."""

    def __init__(self, reader: TcReader, devices: dict[str, str], interval_ns: int, start_ns: int) -> None:
        self.reader, self.devices = reader, devices
        self.interval_ns, self.start_ns = max(1, interval_ns), start_ns
        self.readings: dict[str, list[Reading]] = {link: [] for link in devices}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kernel-queue-poller", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, last_reading: bool = True) -> None:
        """Stop, taking one last reading now unless one was taken within half an
        interval (or the run is being torn down)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        latest = max((r[-1].time_ns for r in self.readings.values() if r), default=0)
        if last_reading and time.monotonic_ns() - latest > self.interval_ns // 2:
            self._read_all()
        self.reader.close()

    def _read_all(self) -> None:
        for link, device in self.devices.items():
            r = self.reader.read(device)
            if r is not None:
                self.readings[link].append(r)

    def _run(self) -> None:
        k = 0
        while True:
            due = self.start_ns + k * self.interval_ns
            if self._stop.wait(max(0.0, (due - time.monotonic_ns()) / 1e9)):
                return
            self._read_all()
            behind = (time.monotonic_ns() - self.start_ns) // self.interval_ns
            k = max(k + 1, behind + 1)
