"""The result store: one directory per run, named by a hash of what was run.

    <store>/<hash>/          a finished run (its ``done`` file exists)
        resolved.json, summary.json, flows.parquet, ...   (as ``aqmlab run`` writes)
        scenario.toml        the user's scenario of this grid point, defaults filled in
        row.json             the run's row of the sweep table (no wall-clock values)
        timing.json          wall-clock figures (the only file that differs between reruns)
        error.json           only for a failed run: {"error": message, "type": ...}
        done                 written last: {"status": "ok" | "failed"}

``hash`` is the SHA-256 of the resolved scenario as compact JSON with sorted keys (the
value the simulator runs, seed included; its links and flows column-wise since the
contract became so, which changed every hash once) followed by the aqmlab version, which
changes whenever the same scenario's results do, so a store never serves a result of an
older model. An entry is written in a
temporary directory ``<store>/.tmp-...`` with ``done`` last and then renamed into place,
so a directory without ``done`` (a run killed half-way) is never taken for a result: it
is recomputed and replaced. A failed run is recorded (``error.json``) but does not count
as a result: the next sweep tries it again.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

DONE = "done"


def version() -> str:
    from .. import __version__

    return __version__


def run_hash(resolved: dict[str, Any]) -> str:
    from ..contract import digest

    return digest(resolved, "\n" + version())


def entry_status(path: Path) -> str | None:
    """``"ok"`` or ``"failed"`` for a finished entry, None for none (or a half-written one)."""
    done = path / DONE
    try:
        return json.loads(done.read_text())["status"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_row(path: Path) -> dict[str, Any]:
    return json.loads((path / "row.json").read_text())


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
    if entry_status(final) == "ok":  # another worker finished the same run first
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


def run_entry(resolved: dict[str, Any], store: str, scenario: dict[str, Any] | None = None) -> dict[str, Any]:
    """The worker: run one resolved scenario, write its store entry, return its row.

    Returns ``{"hash", "status", "error", "summary": {...}}``. A run already in the
    store is not run again. Never raises for a failed run: the error is recorded."""
    from .. import contract
    from ..results import dump_json
    from ..run import run_resolved

    root = Path(store)
    h = run_hash(resolved)
    final = root / h
    if entry_status(final) == "ok":
        return read_row(final)
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".tmp-{h[:16]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    t0 = time.perf_counter()
    try:
        res = run_resolved(resolved)
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
    _write(tmp / DONE, dump_json({"status": row["status"]}))
    _publish(tmp, final)
    return row
