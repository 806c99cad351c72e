"""Network namespaces for one emulated run, and their removal on every exit path.

Every name a run creates starts with ``aqe<pid>x<n>-`` (the process that made it, a
counter), so that a run killed with SIGKILL leaves names the next run recognizes as
stale (their process is gone) and removes (:func:`remove_stale`). The host's own
namespace is never configured: devices are created in the run's router namespace and
moved from there into the hosts' namespaces.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import time
from typing import Iterable

#: Prefix of every namespace the emulator creates.
PREFIX = "aqe"
_NAME = re.compile(rf"^{PREFIX}(\d+)x(\d+)-")
_counter = itertools.count()


def ip(*args: str, namespace: str | None = None, check: bool = True, input: str | None = None) -> str:
    """Run ``ip`` (in ``namespace`` with ``-n``); its output, or RuntimeError with its message."""
    cmd = ["ip", *(["-n", namespace] if namespace else []), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()}")
    return done.stdout


def sysctl(namespace: str, key: str, value: str) -> None:
    """Set ``key`` (dotted, as sysctl names it) to ``value`` in ``namespace`` only."""
    path = "/proc/sys/" + key.replace(".", "/")
    subprocess.run(["ip", "netns", "exec", namespace, "sh", "-c", f"echo {value} > {path}"], check=True, timeout=10)


def listed() -> list[str]:
    """The namespaces on this machine (``ip netns list``)."""
    return [line.split()[0] for line in ip("netns", "list").splitlines() if line.strip()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale() -> list[str]:
    """Remove the namespaces of emulator runs whose process is gone (a run killed by
    SIGKILL); returns their names."""
    stale = [n for n in listed() if (m := _NAME.match(n)) and not _alive(int(m.group(1)))]
    for name in stale:
        delete(name)
    return stale


def pids_in(namespace: str) -> list[int]:
    out = ip("netns", "pids", namespace, check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def delete(namespace: str) -> None:
    """Kill what still runs in ``namespace``, then remove it (its devices go with it)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = pids_in(namespace)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 1.0
        while pids and time.monotonic() < deadline and pids_in(namespace):
            time.sleep(0.02)
    ip("netns", "delete", namespace, check=False)


class Namespaces:
    """The namespaces of one run: ``create`` names and makes one, ``close`` removes
    them all (also what is still running in them). Use as a context manager."""

    def __init__(self) -> None:
        self.prefix = f"{PREFIX}{os.getpid()}x{next(_counter)}-"
        self.names: list[str] = []

    def create(self, role: str) -> str:
        name = self.prefix + role
        ip("netns", "add", name)
        self.names.append(name)
        ip("link", "set", "lo", "up", namespace=name)
        return name

    def exec(self, namespace: str, args: Iterable[str]) -> list[str]:
        """The command line running ``args`` in ``namespace``."""
        return ["ip", "netns", "exec", namespace, *args]

    def close(self) -> None:
        for name in reversed(self.names):
            delete(name)
        self.names.clear()

    def __enter__(self) -> "Namespaces":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
