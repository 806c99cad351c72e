"""The tidy tables of a sweep: a row per run, and a summary across seeds."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

#: Columns of the run table that are not results of the simulation.
ID_COLUMNS = ("point", "seed", "status", "error", "hash", "store_path")


def _column(values: list[Any]) -> pl.Series | list[Any]:
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int, float} and kinds != {int, float}:
        return values
    if kinds == {int, float}:
        return [None if v is None else float(v) for v in values]
    if len(kinds) <= 1:
        return values
    return [None if v is None else str(v).lower() if isinstance(v, bool) else str(v) for v in values]


def runs_table(fields: list[str], rows: list[dict[str, Any]]) -> pl.DataFrame:
    """``rows``: dicts with point, the varied fields, seed, status, error, hash,
    store_path and summary (a dict of scalars). Sorted by grid point, then seed."""
    rows = sorted(rows, key=lambda r: (r["point"], r["seed"]))
    metrics: list[str] = []
    for r in rows:
        for k in r["summary"]:
            if k not in metrics and k not in fields and k not in ID_COLUMNS:
                metrics.append(k)
    metrics.sort()
    data: dict[str, Any] = {"point": [r["point"] for r in rows]}
    for f in fields:
        data[f] = _column([r["values"][f] for r in rows])
    data["seed"] = [r["seed"] for r in rows]
    data["status"] = [r["status"] for r in rows]
    data["error"] = [r["error"] for r in rows]
    for m in metrics:
        data[m] = _column([r["summary"].get(m) for r in rows])
    data["hash"] = [r["hash"] for r in rows]
    data["store_path"] = [r["store_path"] for r in rows]
    schema = {"point": pl.Int64, "seed": pl.UInt64, "status": pl.String, "error": pl.String, "hash": pl.String, "store_path": pl.String}
    return pl.DataFrame(data, schema_overrides=schema, strict=False)


def numeric_metrics(runs: pl.DataFrame, fields: list[str]) -> list[str]:
    skip = set(fields) | set(ID_COLUMNS)
    return [c for c, t in runs.schema.items() if c not in skip and t.is_numeric()]


def summary_table(runs: pl.DataFrame, fields: list[str]) -> pl.DataFrame:
    """Per grid point: the number of runs and of failures, and for every numeric
    figure over the successful runs its mean, standard deviation (n - 1) and the
    half-width of the 95% confidence interval of the mean (Student's t; null for
    fewer than two runs), as ``<figure>_mean``, ``_std``, ``_ci95``."""
    from scipy import stats

    metrics = numeric_metrics(runs, fields)
    ok = pl.col("status") == "ok"
    aggs: list[pl.Expr] = [pl.len().alias("runs"), (~ok).sum().alias("failed")]
    for m in metrics:
        x = pl.col(m).filter(ok).cast(pl.Float64)
        aggs += [x.mean().alias(f"{m}_mean"), x.std(ddof=1).alias(f"{m}_std"), x.drop_nulls().count().alias(f"{m}__n")]
    out = runs.group_by(["point", *fields], maintain_order=True).agg(aggs).sort("point")
    for m in metrics:
        tq = [
            (float(stats.t.ppf(0.975, n - 1)) * s / math.sqrt(n) if n is not None and n >= 2 and s is not None else None)
            for n, s in zip(out[f"{m}__n"].to_list(), out[f"{m}_std"].to_list())
        ]
        out = out.with_columns(pl.Series(f"{m}_ci95", tq, dtype=pl.Float64)).drop(f"{m}__n")
    ordered = ["point", *fields, "runs", "failed"] + [f"{m}_{s}" for m in metrics for s in ("mean", "std", "ci95")]
    return out.select(ordered)
