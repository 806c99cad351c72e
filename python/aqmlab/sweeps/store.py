"""The result store: one directory per run, named by a hash of what was run.

    <store>/<hash>/          a finished run (its ``done`` file exists)
        resolved.json, summary.json, flows.parquet, ...   (as ``aqmlab run`` writes)
        scenario.toml        the user's scenario of this grid point, defaults filled in
        row.json             the run's row of the sweep table (no wall-clock values)
        timing.json          wall-clock figures (the only file that differs between reruns)
        error.json           only for a failed run: {"error": message, "type": ...}
        done                 written last: {"status": "ok" | "failed", "sha256": {file: digest}}

``hash`` is the SHA-256 of the resolved scenario as compact JSON with sorted keys (the
value the simulator runs, seed included; its links and flows column-wise since the
contract became so, which changed every hash once) followed by the aqmlab version, which
changes whenever the same scenario's results do, so a store never serves a result of an
older model. An entry is written in a
temporary directory ``<store>/.tmp-...`` with ``done`` last and then renamed into place,
so a directory without ``done`` (a run killed half-way) is never taken for a result: it
is recomputed and replaced. A failed run is recorded (``error.json``) but does not count
as a result: the next sweep tries it again.

The store trusts nothing it has not checked: ``done`` holds the SHA-256 of every other
file of the entry, and an entry is reused only when each file is there with its digest
and its ``row.json`` is the row of this hash (:func:`reusable_row`). A damaged entry (a
file truncated, overwritten or edited by hand, a digest missing) is reported on stderr,
naming it and what is wrong, and computed again; it is never reused, and never stops
the sweep.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

DONE = "done"


def version() -> str:
    from .. import __version__

    return __version__


#: The engines a run may be computed on: the simulator, or the emulator (real
#: Linux TCP through aqmlab's router, aqmlab.emulate), whose runs are stored apart.
ENGINES = ("sim", "emulator")


def run_hash(resolved: dict[str, Any], engine: str = "sim") -> str:
    from ..contract import digest

    return digest(resolved, "\n" + version() + ("" if engine == "sim" else f"\n{engine}"))


def entry_status(path: Path) -> str | None:
    """``"ok"`` or ``"failed"`` for a finished entry, None for none (or a half-written one)."""
    done = path / DONE
    try:
        return json.loads(done.read_text())["status"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_row(path: Path) -> dict[str, Any]:
    return json.loads((path / "row.json").read_text())


def file_digest(path: Path) -> str:
    """SHA-256 of a file, read a megabyte at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _entry_files(entry: Path) -> list[Path]:
    """Every file of an entry but ``done``, in a stable order."""
    return sorted(p for p in entry.rglob("*") if p.is_file() and p.relative_to(entry).as_posix() != DONE)


def digests(entry: Path) -> dict[str, str]:
    """The digest of every file of an entry but ``done``, by its path in the entry."""
    return {p.relative_to(entry).as_posix(): file_digest(p) for p in _entry_files(entry)}


def damage(entry: Path) -> str | None:
    """What is wrong with a finished entry ("flows.parquet: its content is not what was
    written"), or None when every file is as written and its row is this run's."""
    try:
        done = json.loads((entry / DONE).read_text())
        expected = done["sha256"]
    except (OSError, ValueError):
        return f"{DONE}: unreadable"
    except (KeyError, TypeError):
        return f"{DONE}: no checksums (written by an older aqmlab, or edited)"
    if not isinstance(expected, dict) or not expected:
        return f"{DONE}: no checksums"
    present = {p.relative_to(entry).as_posix() for p in _entry_files(entry)}
    for name in sorted(expected):
        if name not in present:
            return f"{name}: missing"
        if file_digest(entry / name) != expected[name]:
            return f"{name}: its content is not what was written (truncated, overwritten or edited)"
    if extra := sorted(present - set(expected)):
        return f"{extra[0]}: not written with the entry"
    try:
        row = read_row(entry)
    except (OSError, ValueError) as e:  # pragma: no cover - its digest matched
        return f"row.json: unreadable ({e})"
    if not isinstance(row, dict) or row.get("hash") != entry.name or row.get("status") != done.get("status"):
        return "row.json: not the row of this entry"
    return None


def warn(message: str) -> None:
    """A warning line on stderr (the store's findings are not errors: it goes on)."""
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()


def reusable_row(entry: Path, report: bool = True) -> dict[str, Any] | None:
    """The row of a finished, intact, successful entry; None when there is none to
    reuse. A damaged one is reported (with ``report``) and will be computed again."""
    if entry_status(entry) != "ok":
        return None  # absent, half-written, or a failed run to try again
    problem = damage(entry)
    if problem is None:
        return read_row(entry)
    if report:
        warn(f"store entry {entry} is damaged ({problem}); computing it again")
    return None


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _publish(tmp: Path, final: Path) -> None:
    """Move a finished temporary entry into place, replacing a half-written one."""
    try:
        os.rename(tmp, final)
        return
    except OSError:
        pass
    if reusable_row(final, report=False) is not None:  # another worker finished the same run first
        shutil.rmtree(tmp, ignore_errors=True)
        return
    stale = final.parent / f".stale-{final.name}-{uuid.uuid4().hex[:8]}"
    try:
        os.rename(final, stale)
    except OSError:
        pass
    shutil.rmtree(stale, ignore_errors=True)
    os.rename(tmp, final)


def summary_row(summary: dict[str, Any]) -> dict[str, Any]:
    """The run's scalar summary figures (the seed is a column of its own)."""
    from ..results import _clean

    return {k: _clean(v) for k, v in sorted(summary.items()) if k != "seed" and (v is None or isinstance(v, (bool, int, float, str)))}


def run_entry(
    resolved: dict[str, Any], store: str, scenario: dict[str, Any] | None = None, force: bool = False, engine: str = "sim"
) -> dict[str, Any]:
    """The worker: run one resolved scenario, write its store entry, return its row.

    Returns ``{"hash", "status", "error", "summary": {...}}``. A run already in the
    store is not run again. Never raises for a failed run: the error is recorded."""
    root = Path(store)
    h = run_hash(resolved, engine)
    final = root / h
    if (row := reusable_row(final, report=False)) is not None:  # the sweep reported damage
        return row
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".tmp-{h[:16]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        row = _compute(resolved, h, tmp, scenario, force, engine)
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): leave no half-written entry
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _publish(tmp, final)
    return row


def _compute(
    resolved: dict[str, Any], h: str, tmp: Path, scenario: dict[str, Any] | None, force: bool, engine: str = "sim"
) -> dict[str, Any]:
    """Run a scenario and write its entry into ``tmp``; its row."""
    from .. import contract
    from ..results import dump_json
    from ..run import run_resolved

    t0 = time.perf_counter()
    try:
        if engine == "emulator":
            from ..emulate import emulate

            if scenario is None:
                raise ValueError("the emulator runs a scenario, not a resolved one")
            res = emulate(scenario)
        else:
            res = run_resolved(resolved, force=force)
        res.timing["total_wall_time_s"] = time.perf_counter() - t0
        res.write(tmp)
        row = {"hash": h, "status": "ok", "error": None, "summary": summary_row(res.summary)}
    except Exception as e:  # noqa: BLE001 - a failed run is data, not a crash of the sweep
        for p in tmp.iterdir():
            if p.is_file():
                p.unlink()
        message = str(e) or type(e).__name__
        _write(tmp / "error.json", dump_json({"error": message, "type": type(e).__name__, "traceback": traceback.format_exc()}))
        contract.write(tmp / "resolved.json", resolved)
        _write(tmp / "timing.json", dump_json({"total_wall_time_s": time.perf_counter() - t0}))
        row = {"hash": h, "status": "failed", "error": message, "summary": {}}
    if scenario is not None:
        from ..tomlout import dumps

        _write(tmp / "scenario.toml", dumps(scenario))
    _write(tmp / "row.json", dump_json(row))
    _write(tmp / DONE, dump_json({"status": row["status"], "sha256": digests(tmp)}))
    return row
