"""The ns-2 validation matrix: scenarios that span what aqmlab and ns-2 both model
(1 to 1,000 flows, equal and spread RTTs, buffers from 0.1 to 2 BDP, DropTail, RED,
SFQ and DRR, Tahoe, Reno, NewReno and Sack1, with and without delayed ACKs, UDP mixes),
each run in both simulators over the same start-time draws (:mod:`aqmlab.crosscheck`).

    python -m aqmlab.ns2.matrix [--draws 5] [--quick] [--only NAME ...] [--out DIR]

writes ``matrix.parquet`` (one row per case and figure) and prints the table that
docs/validation.md shows. ``--quick`` runs :data:`QUICK`, the subset ``make test`` runs.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

#: The dumbbell every case varies: a 20 Mb/s, 20 ms bottleneck, 100 Mb/s access.
RATE_BPS = 20_000_000
PACKET = 1000


@dataclass(frozen=True)
class Case:
    name: str
    flows: int = 10
    spread: bool = False  # access delays 1..50 ms rather than all 10 ms
    buffer_bdp: float = 1.0
    qdisc: str = "droptail"
    variant: str = "reno"
    delayed_ack: bool = False
    udp: str | None = None  # "cbr", "poisson" or "onoff": one stream at 40% of the link
    duration_s: int = 60
    warmup_s: int = 20
    rate_bps: int = RATE_BPS
    extra: dict[str, Any] = field(default_factory=dict)  # qdisc parameters

    def delays_ms(self) -> list[float]:
        if not self.spread:
            return [10.0] * self.flows
        return [1 + 49 * i / max(self.flows - 1, 1) for i in range(self.flows)]

    def bdp_packets(self) -> float:
        rtt = 2 * (0.020 + 0.001) + 2 * sum(self.delays_ms()) / len(self.delays_ms()) / 1000
        return self.rate_bps * rtt / (8 * PACKET)

    def scenario(self) -> dict[str, Any]:
        n = self.flows + (self.udp is not None)
        limit = max(2, round(self.buffer_bdp * self.bdp_packets()))
        return {
            "name": f"ns2-{self.name}",
            "seed": 1,
            "duration": f"{self.duration_s}s",
            "warmup": f"{self.warmup_s}s",
            "sample_interval": "100ms",
            "tcp": {"variant": self.variant, "packet_size": f"{PACKET}B", "header_size": "40B",
                    "delayed_ack": self.delayed_ack},
            "topology": {
                "kind": "dumbbell", "senders": n, "receivers": n,
                "bottleneck": {"rate": f"{self.rate_bps}bps", "delay": "20ms", "qdisc": self._qdisc(limit)},
                "receiver_access": {"rate": f"{5 * self.rate_bps}bps", "delay": "1ms"},
                "access": {"rate": f"{5 * self.rate_bps}bps",
                           "delay": [f"{d:.3f}ms" for d in self.delays_ms()] + ["5ms"] * (n - self.flows)},
                # Hosts that never drop (the default's 50 packets drop a few bursts in two
                # cases): the comparison is of the bottleneck's discipline.
                "access_qdisc": {"kind": "droptail", "limit": "100000pkt"},
            },
            "flows": [{"kind": "tcp", "group": "tcp", "count": self.flows, "src": "senders", "dst": "receivers",
                       "start": [f"{2.0 * i / self.flows:.6f}s" for i in range(self.flows)]}] + self._udp(n),
        }

    def _qdisc(self, limit: int) -> dict[str, Any]:
        if self.qdisc == "droptail":
            return {"kind": "droptail", "limit": f"{limit}pkt"}
        if self.qdisc == "red":
            lo = max(1.0, limit / 4)
            return {"kind": "red", "limit": f"{limit}pkt", "min_th": lo, "max_th": 3 * lo, "w_q": 0.002,
                    "max_p": 0.1, "variant": "ns2", **self.extra}
        if self.qdisc == "sfq":
            return {"kind": "sfq", "limit": f"{limit}pkt", "admission": "ns2", **self.extra}
        if self.qdisc == "drr":
            return {"kind": "drr", "limit": f"{limit * PACKET}B", "quantum": "1000B", **self.extra}
        raise ValueError(self.qdisc)

    def _udp(self, n: int) -> list[dict[str, Any]]:
        if self.udp is None:
            return []
        rate = f"{int(0.4 * self.rate_bps)}bps"
        src, dst = f"s{n - 1}", f"d{n - 1}"
        udp = {"kind": "udp", "group": "udp", "src": src, "dst": dst, "rate": rate, "packet_size": f"{PACKET}B",
               "start": "1s"}
        if self.udp == "cbr":
            return [{**udp, "model": "cbr", "jitter": 0.5}]
        if self.udp == "poisson":
            return [{**udp, "model": "poisson"}]
        return [{**udp, "model": "onoff", "on": {"dist": "exponential", "mean": "500ms"},
                 "off": {"dist": "exponential", "mean": "500ms"}}]


#: The matrix.
CASES: list[Case] = [
    *(Case(f"reno-equal-{n}", flows=n) for n in (1, 2, 10, 50, 200)),
    *(Case(f"reno-spread-50-b{b}", flows=50, spread=True, buffer_bdp=b) for b in (0.1, 0.25, 0.5, 1.0, 2.0)),
    *(Case(f"{v}-spread-20", flows=20, spread=True, buffer_bdp=0.5, variant=v) for v in ("tahoe", "newreno", "sack")),
    *(Case(f"{v}-delack-20", flows=20, spread=True, buffer_bdp=0.5, variant=v, delayed_ack=True)
      for v in ("reno", "newreno", "sack")),
    Case("red-10", flows=10, qdisc="red"),
    Case("red-50-spread", flows=50, spread=True, qdisc="red"),
    Case("red-gentle-50", flows=50, qdisc="red", extra={"gentle": True}),
    Case("red-ecn-20", flows=20, qdisc="red", extra={"ecn": True}),
    Case("sfq-20", flows=20, spread=True, qdisc="sfq", extra={"buckets": 64, "hash": "ns2"}),
    Case("sfq-50", flows=50, qdisc="sfq", extra={"buckets": 16, "hash": "ns2"}),
    Case("drr-20", flows=20, spread=True, qdisc="drr"),
    Case("drr-50", flows=50, qdisc="drr"),
    *(Case(f"udp-{m}-{q}", flows=10, udp=m, qdisc=q, extra={"buckets": 64, "hash": "ns2"} if q == "sfq" else {})
      for m, q in (("cbr", "droptail"), ("cbr", "red"), ("cbr", "sfq"), ("cbr", "drr"), ("poisson", "droptail"),
                   ("onoff", "droptail"))),
    Case("reno-1000", flows=1000, buffer_bdp=0.25, rate_bps=200_000_000, duration_s=30, warmup_s=10),
]

#: The cases ``make test`` runs live (with two draws).
QUICK = ["reno-equal-10", "reno-spread-50-b0.25", "reno-equal-50", "reno-delack-20", "sfq-50", "udp-cbr-drr"]


def run_case(case: Case, draws: int, out: Path) -> pl.DataFrame:
    """One case: the crosscheck's table, tagged with the case's name."""
    from ..crosscheck import crosscheck_ns2, write

    check = crosscheck_ns2(case.scenario(), out / case.name, draws)
    write(check, out / case.name)
    return check.table.with_columns(pl.lit(case.name).alias("case"), pl.lit(draws).alias("draws"))


def run_matrix(names: list[str] | None, draws: int, out: Path) -> pl.DataFrame:
    cases = [c for c in CASES if names is None or c.name in names]
    table = pl.concat([run_case(c, draws, out) for c in cases])
    out.mkdir(parents=True, exist_ok=True)
    table.write_parquet(out / "matrix.parquet")
    return table


def markdown(table: pl.DataFrame) -> str:
    """One line per case: each bounded figure as aqmlab with ns-2's choices / ns-2 (a
    star where the bound is missed), and for the Jain index and the RTT-bias slope also
    aqmlab as written, in brackets, where the order of ties makes them differ."""
    shown = ["utilization", "loss_rate", "jain_index", "rtt_bias_slope", "timeouts_per_flow"]
    lines = ["| case | " + " | ".join(shown) + " |", "|---" * (len(shown) + 1) + "|"]
    for case in table["case"].unique(maintain_order=True):
        rows = {r["figure"]: r for r in table.filter(pl.col("case") == case).iter_rows(named=True)}
        lines.append(f"| {case} | " + " | ".join(_cell(rows[f]) for f in shown) + " |")
    return "\n".join(lines)


def _cell(r: dict[str, Any]) -> str:
    if r["aqmlab_ns2"] is None or math.isnan(r["aqmlab_ns2"]):
        return ""
    star = " **\\***" if r["within"] is False else ""
    digits = 4 if r["figure"] == "utilization" else 3
    own = f" ({r['aqmlab']:.{digits}g})" if r["figure"] in ("jain_index", "rtt_bias_slope") else ""
    return f"{r['aqmlab_ns2']:.{digits}g} / {r['ns2']:.{digits}g}{star}{own}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--out", type=Path, default=Path("results") / "ns2-matrix")
    args = ap.parse_args(argv)
    names = QUICK if args.quick else args.only
    table = run_matrix(names, args.draws, args.out)
    print(markdown(table))


if __name__ == "__main__":
    main()
