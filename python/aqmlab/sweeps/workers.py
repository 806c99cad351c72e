"""Local worker processes that live no longer than the sweep that started them.

The sweep's process pool forks its workers from a forkserver, which exits when the
sweep's process does (it reads from a pipe that the sweep holds open). Each worker
asks the kernel for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``, prctl(2)),
so a SIGKILL of ``aqmlab sweep`` takes down the forkserver, then the workers, then
the resource tracker (whose pipe they held): nothing runs on for a dead parent.

A worker's SIGTERM, from the kernel or from :func:`terminate` when the sweep is
interrupted, stops its run within a second (the core handles Python's signals every
quarter second of a run, ``crates/py/src/lib.rs``); the run's half-written entry is
removed (:func:`aqmlab.sweeps.store.run_entry`) and the worker exits.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, Callable

#: prctl(2)'s option: the signal this process gets when its parent dies.
PR_SET_PDEATHSIG = 1

_running = False  # whether this worker is inside a task (then SIGTERM unwinds it)


class Stopped(BaseException):
    """Raised in a worker's run by SIGTERM: its parent is gone or gave up."""


def _on_sigterm(signum: int, frame: Any) -> None:
    if _running:
        raise Stopped()  # unwinds the run, which removes its temporary entry
    os._exit(128 + signum)


def init() -> None:
    """The pool's initializer, in each worker: die with the parent."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the sweep's to handle
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if parent == 1 or os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(128 + signal.SIGTERM)


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """Run a task in a worker; a SIGTERM during it ends the worker."""
    global _running
    _running = True
    try:
        return fn(*args)
    except Stopped:
        os._exit(128 + signal.SIGTERM)
    finally:
        _running = False


def terminate(pool: Any) -> None:
    """Stop a ``ProcessPoolExecutor``'s workers now (SIGTERM: each removes its
    half-written entry) and wait for them, without waiting for their runs."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
            p.join()
