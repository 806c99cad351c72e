"""Local worker processes that live no longer than the sweep that started them.

The sweep's process pool forks its workers from a forkserver, and the forkserver
lives as long as any of its clients: the sweep and the workers (each holds the
write end of the pipe the forkserver watches). A worker therefore watches the
sweep's process itself: a thread waits on a pidfd of it (pidfd_open(2); where there
is none, it polls) and sends the worker SIGTERM when the sweep is gone, by whatever
means (SIGKILL included). With the workers gone, the forkserver and the resource
tracker, whose pipes they held, exit too: nothing runs on for a dead sweep.

A worker's SIGTERM, from its watch or from :func:`terminate` when the sweep is
interrupted, stops its run within a second (the core handles Python's signals every
quarter second of a run, ``crates/py/src/lib.rs``); the run's half-written entry is
removed (:func:`aqmlab.sweeps.store.run_entry`) and the worker exits.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from typing import Any, Callable

#: Seconds between two looks at the sweep where no pidfd can be had.
POLL_S = 0.2

_running = False  # whether this worker is inside a task (then SIGTERM unwinds it)


class Stopped(BaseException):
    """Raised in a worker's run by SIGTERM: its sweep is gone or gave up."""


def _on_sigterm(signum: int, frame: Any) -> None:
    if _running:
        raise Stopped()  # unwinds the run, which removes its temporary entry
    os._exit(128 + signum)


def _wait_for_exit(pid: int) -> None:
    """Return when process ``pid`` has ended."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd (old kernel, not Linux): poll
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            except PermissionError:
                pass
            time.sleep(POLL_S)
    select.select([fd], [], [])  # readable once the process has ended


def _watch(sweep: int) -> None:
    _wait_for_exit(sweep)
    os.kill(os.getpid(), signal.SIGTERM)


def init(sweep: int) -> None:
    """The pool's initializer, in each worker: end with the sweep (process ``sweep``)."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the sweep's to handle
    threading.Thread(target=_watch, args=(sweep,), name="aqmlab-watch-sweep", daemon=True).start()


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
