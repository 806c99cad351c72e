"""The results of one run: data frames, and the files they are written to.

A results directory holds::

    scenario.toml        the user's scenario with every default filled in
    resolved.json        the value the simulator ran (the Rust contract; its links and
                         flows column-wise, see aqmlab.contract)
    summary.json         run-level figures (sorted keys; no wall-clock values)
    timing.json          wall-clock figures (the only file that differs between reruns)
    flows.parquet        one row per flow
    queues.parquet       one row per link queue
    timeseries.parquet   long format: time_s, metric, entity, value
    histograms.parquet   queueing-delay histograms
    trace.parquet        the packet trace, if the scenario asks for one ([trace] packets)
    trace.pcap           the capture, if the scenario asks for one ([trace] pcap)

Same scenario and seed give byte-identical files, except ``timing.json``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from . import contract

#: Parquet settings: fixed, so files are reproducible byte for byte.
PARQUET_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 3, "statistics": True}

_TABLES = ("flows", "queues", "timeseries", "histograms")


def is_timing(key: str) -> bool:
    """Whether a summary key is a wall-clock or machine figure (kept out of summary.json)."""
    return any(word in key for word in ("wall", "memory", "rss", "elapsed")) or key == "events"


def _clean(value: Any) -> Any:
    """JSON-safe, stable values: non-finite floats become null; numpy scalars Python."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def dump_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, two-space indent, shortest round-trip floats."""
    return json.dumps(_clean(value), sort_keys=True, indent=2, allow_nan=False) + "\n"


# How numpy reads each numeric column of the core. Counts are read as int64
# (they are far below 2**63), the type the result files have always held.
_NUMPY = {"f64": np.float64, "u64": np.int64, "i64": np.int64, "bool": np.bool_}
_POLARS = {"f64": pl.Float64, "u64": pl.Int64, "i64": pl.Int64, "bool": pl.Boolean, "str": pl.String, "cat": pl.String}


def _strings(offsets: bytes, text: bytes) -> Any:
    """Strings as the core hands them over (Arrow's layout: UTF-8 bytes end to end and
    i64 offsets) as an Arrow array, with no Python object per string."""
    import pyarrow as pa

    return pa.LargeStringArray.from_buffers(len(offsets) // 8 - 1, pa.py_buffer(offsets), pa.py_buffer(text))


def _column(name: str, column: tuple[Any, ...]) -> pl.Series:
    """One column as the core hands it over: numbers as bytes in native order
    (8 bytes a value, read by numpy without a copy, where a Python list holds
    a 32-byte object each), text as UTF-8 bytes and offsets, categories as
    their values and a code per row. Every column has its kind's type, also
    when it holds no value at all (no rows, or every value missing), so that
    a table's schema does not depend on the run. numpy and Arrow do the
    indexing: polars' own gather and scatter start its thread pool, 8 MB the
    first time."""
    kind, payload, *rest = column
    if kind == "opt_list_u32":  # Arrow's list layout: offsets into the values, a validity mask
        import pyarrow as pa

        offsets, values = (pa.py_buffer(b) for b in payload)
        rows = len(offsets) // 8 - 1
        valid = pa.py_buffer(np.packbits(np.frombuffer(rest[0], dtype=np.bool_), bitorder="little").tobytes())
        flat = pa.Array.from_buffers(pa.uint32(), len(values) // 4, [None, values])
        lists = pa.Array.from_buffers(pa.large_list(pa.uint32()), rows, [valid, offsets], children=[flat])
        return pl.Series(name, pl.from_arrow(lists), dtype=pl.List(pl.UInt32))
    if kind in ("str", "cat"):
        strings = _strings(*payload)
        if kind == "cat":
            strings = strings.take(np.frombuffer(rest[0], dtype=np.uint32))
        return pl.Series(name, pl.from_arrow(strings), dtype=pl.String)
    else:
        values = np.frombuffer(payload, dtype=_NUMPY[kind.removeprefix("opt_")])
        if kind.startswith("opt_"):  # missing values masked in Arrow: no Python object a row
            import pyarrow as pa

            values = pl.from_arrow(pa.array(values, mask=~np.frombuffer(rest[0], dtype=np.bool_)))
    return pl.Series(name, values, dtype=_POLARS[kind.removeprefix("opt_")])


def _frame(columns: Any) -> pl.DataFrame:
    if columns is None:
        return pl.DataFrame()
    if isinstance(columns, pl.DataFrame):
        return columns
    # Each column taken out of the hand-over as it is converted, so that its bytes
    # are freed then: a million flows' tables are not held twice.
    return pl.DataFrame([_column(name, columns.pop(name)) for name in list(columns)])


class Results:
    """One run's results.

    Attributes: ``summary`` (dict), ``timing`` (dict of wall-clock figures),
    ``flows``, ``queues``, ``timeseries``, ``histograms`` (polars DataFrames),
    ``trace`` (a polars DataFrame, or None without a packet trace), ``pcap`` (the
    capture's bytes, or None without one), ``scenario`` (the resolved contract dict, its
    columns numpy arrays) and ``source`` (the :class:`~aqmlab.scenario.Scenario`, when
    known).
    """

    def __init__(
        self,
        raw: dict[str, Any],
        scenario: dict[str, Any],
        source: Any = None,
        timing: dict[str, Any] | None = None,
    ) -> None:
        summary = dict(raw.get("summary") or {})
        self.timing: dict[str, Any] = {k: summary.pop(k) for k in sorted(summary) if is_timing(k)}
        self.timing.update(timing or {})
        self.summary: dict[str, Any] = summary
        self.flows = _frame(raw.get("flows"))
        self.queues = _frame(raw.get("queues"))
        self.timeseries = _frame(raw.get("timeseries"))
        self.histograms = _frame(raw.get("histograms"))
        self.trace: pl.DataFrame | None = None if raw.get("trace") is None else _frame(raw["trace"])
        self.pcap: bytes | None = raw.get("pcap")
        self.scenario = scenario
        self.source = source

    def __repr__(self) -> str:
        return (
            f"<Results {len(self.flows)} flows, {len(self.queues)} queues, "
            f"{len(self.timeseries)} samples>"
        )

    @property
    def name(self) -> str:
        return getattr(self.source, "name", "scenario")

    def metric(self, metric: str, entity: str | None = None) -> pl.DataFrame:
        """One metric of the time series (``time_s``, ``entity``, ``value``)."""
        ts = self.timeseries
        if ts.is_empty():
            return pl.DataFrame({"time_s": [], "entity": [], "value": []})
        out = ts.filter(pl.col("metric") == metric)
        if entity is not None:
            out = out.filter(pl.col("entity") == entity)
        return out.select("time_s", "entity", "value").sort("entity", "time_s", maintain_order=True)

    def write(self, out: str | Path) -> Path:
        """Write the results directory (created if needed); returns its path."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        if self.source is not None:
            (out / "scenario.toml").write_text(self.source.to_toml(), encoding="utf-8")
        contract.write(out / "resolved.json", self.scenario)
        (out / "summary.json").write_text(dump_json(self.summary), encoding="utf-8")
        (out / "timing.json").write_text(dump_json(self.timing), encoding="utf-8")
        for name in _TABLES:
            getattr(self, name).write_parquet(out / f"{name}.parquet", **PARQUET_OPTIONS)
        if self.trace is not None:
            self.trace.write_parquet(out / "trace.parquet", **PARQUET_OPTIONS)
        if self.pcap is not None:
            (out / "trace.pcap").write_bytes(self.pcap)
        return out

    @classmethod
    def read(cls, directory: str | Path) -> "Results":
        """Load a results directory written by :meth:`write`."""
        d = Path(directory)
        raw: dict[str, Any] = {"summary": json.loads((d / "summary.json").read_text())}
        for name in (*_TABLES, "trace"):
            p = d / f"{name}.parquet"
            raw[name] = pl.read_parquet(p) if p.exists() else None
        if (d / "trace.pcap").exists():
            raw["pcap"] = (d / "trace.pcap").read_bytes()
        timing = json.loads((d / "timing.json").read_text()) if (d / "timing.json").exists() else {}
        source = None
        if (d / "scenario.toml").exists():
            from .scenario import Scenario

            source = Scenario.load(d / "scenario.toml")
        return cls(raw, contract.load(d / "resolved.json"), source, timing)
