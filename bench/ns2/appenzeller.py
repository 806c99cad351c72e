#!/usr/bin/env python3
"""Appenzeller's long-flow experiments run in ns-2 (bench/ns2/appenzeller.tcl), beside
aqmlab's reproductions at quick fidelity: appenzeller.fig5_1 (utilization against the
number of flows), fig3_4 and fig5_2 (the minimum buffer for a utilization target).

    python bench/ns2/appenzeller.py                  # all three: 10 min of ns-2 CPU time
    python bench/ns2/appenzeller.py --only fig5_1
    python bench/ns2/appenzeller.py --attribute fig5_1 400 50 --per-seed fig5_2 100 517 5

Every point of a reproduction at quick fidelity goes to the Tcl script with the
reproduction's own parameters (flows, rate, buffer, warm-up and measurement, seeds) and
the access delays and start times aqmlab drew for the same run, in two TCP models:

  thesis   ns-2 2.35 as the thesis's script leaves it: ns-2's defaults but for
           window_ and packetSize_, and queue-limit B, which holds B - 1 waiting
           packets (DropTail drops when length + 1 >= limit_);
  matched  the agent variables aqmlab's translator sets to give ns-2 aqmlab's TCP
           (aqmlab.ns2.translate.sender_vars), and queue-limit B + 1: B waiting
           packets, as aqmlab's buffer of B.

aqmlab's figures come from the reproductions themselves (aqmlab.experiments.reproduce).
The minimum buffers in ns-2 come from the same bisection (min_buffer_table: the same
first guesses, precision and rounds) with ns-2's utilizations.

Writes bench/ns2/appenzeller.json and bench/ns2/appenzeller.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from aqmlab.experiments.appenzeller.chapter3 import Fig34
from aqmlab.experiments.appenzeller.chapter5 import Fig51, Fig52
from aqmlab.experiments.appenzeller.common import LongFlows, min_buffer_table
from aqmlab.experiments.core import reproduce
from aqmlab.names import NameList
from aqmlab.ns2.run import ns_binary
from aqmlab.ns2.translate import sender_vars
from aqmlab.scenario import Scenario

HERE = Path(__file__).resolve().parent
TCL = HERE / "appenzeller.tcl"
EXPERIMENTS = {"fig5_1": Fig51(), "fig3_4": Fig34(), "fig5_2": Fig52()}


@dataclass(frozen=True)
class Model:
    """How ns-2 is set up: Agent/TCP variables, and the queue-limit of a buffer B."""

    name: str
    tcp_vars: tuple[str, ...]
    limit_offset: int


def models(setup: LongFlows) -> list[Model]:
    """The thesis's ns-2, and ns-2 with aqmlab's TCP (what the translator sets)."""
    profile = Scenario.coerce(setup.scenario(1, 1, 1)).resolve()["tcp_profiles"][0]
    return [Model("thesis", (), 0), Model("matched", tuple(sender_vars(profile, "tcp")), 1)]


def draws(setup: LongFlows, n: int, buffer: int, seed: int) -> tuple[list[float], list[float]]:
    """aqmlab's draws for one run: each flow's access delay (ms) and start (s), so that
    ns-2 runs the very flows aqmlab runs."""
    resolved = Scenario.coerce(setup.scenario(n, buffer, seed)).resolve()
    links, flows = resolved["links"], resolved["flows"]
    delay_ns = dict(zip(NameList.from_contract(links["names"]), links["delay_ns"]))
    nodes = NameList.from_contract(resolved["nodes"])
    delays = [float(delay_ns[f"access_{nodes[int(src)]}"]) / 1e6 for src in flows["src"]]
    return delays, [float(start) / 1e9 for start in flows["start_ns"]]


def tcl_args(setup: LongFlows, n: int, buffer: int, seed: int, model: Model) -> list[str]:
    """The script's command line for one run (its names and units: MB/s, ms)."""
    warmup = setup.warmup(n, buffer)
    delays, starts = draws(setup, n, buffer, seed)
    params = {
        "bw": setup.rate_bps / 8e6,
        "long_n": n,
        "bneck_buffer": buffer + model.limit_offset,
        "time_length": warmup + setup.measure_s,
        "time_startphase": warmup,
        "start_window": setup.start_window_s,
        "seed": seed,
        "tcp_vars": " ".join(model.tcp_vars),
        "access_lats": " ".join(map(repr, delays)),
        "starts": " ".join(map(repr, starts)),
    }
    return [str(x) for kv in params.items() for x in kv]


def run_tcl(args: list[str]) -> dict[str, float]:
    """One ns-2 run of the script: its last line, ``name value`` pairs."""
    with tempfile.TemporaryDirectory(prefix="appenzeller-") as work:
        done = subprocess.run([ns_binary(), str(TCL), *args], cwd=work, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"ns-2 failed on {' '.join(args)}: {done.stderr.strip()[-1000:]}")
    words = done.stdout.strip().splitlines()[-1].split()
    return {k: float(v) for k, v in zip(words[::2], words[1::2])}


class Ns2:
    """Measures points in ns-2 for one setup and model, like LongFlows.measure_points
    (means over the setup's seeds), running the script on every core."""

    def __init__(self, setup: LongFlows, model: Model, pool: ThreadPoolExecutor):
        self.setup, self.model, self.pool = setup, model, pool
        self.runs = 0

    def measure_points(self, points: list[tuple[int, int]]) -> list[dict[str, float]]:
        seeds = range(1, self.setup.seeds + 1)
        jobs = [[self.pool.submit(run_tcl, tcl_args(self.setup, n, b, s, self.model)) for s in seeds] for n, b in points]
        self.runs += sum(len(j) for j in jobs)
        return [mean([j.result() for j in point]) for point in jobs]

    def utilization(self, points: list[tuple[int, int]]) -> list[float]:
        return [x["util"] for x in self.measure_points(points)]


def mean(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}


def thesis_values(names: list[str]) -> dict[str, str]:
    """The thesis model's value of each agent variable, as ns-2 has it (show_vars)."""
    done = subprocess.run([ns_binary(), str(TCL), "show_vars", " ".join(names)], capture_output=True, text=True, check=True)
    return dict(line.split(maxsplit=1) for line in done.stdout.splitlines() if line.strip())


def _same(a: str, b: str) -> bool:
    as_number = lambda v: float({"true": 1, "false": 0}.get(v, v))  # noqa: E731
    return as_number(a) == as_number(b)


#: variables that change together: ns-2's packetSize_ is the payload when useHeaders_ is on
TOGETHER = {"packetSize_": "useHeaders_", "useHeaders_": "packetSize_"}


def changes(matched: Model) -> list[Model]:
    """The thesis model with one of the matched model's differences at a time: each
    agent variable (or pair) whose value differs, and the queue-limit of B + 1."""
    wanted = dict(v.split(maxsplit=1) for v in matched.tcp_vars)
    thesis = thesis_values(list(wanted))
    differ = [k for k in wanted if not _same(wanted[k], thesis[k])]
    groups = sorted({tuple(sorted({k, TOGETHER.get(k, k)} & set(differ))) for k in differ})
    out = [Model("+".join(g), tuple(f"{k} {wanted[k]}" for k in g), 0) for g in groups]
    return out + [Model(f"limit_ B+{matched.limit_offset}", (), matched.limit_offset)]


def attribute(
    name: str, n: int, buffer: int, pool: ThreadPoolExecutor, seeds: int | None = None, also: str = ""
) -> list[dict[str, Any]]:
    """ns-2 at one point of a reproduction in the thesis model, with each of the
    matched model's differences alone, in the matched model, and in the matched model
    with the agent variables ``also`` (name-value pairs); means over ``seeds`` seeds, by
    default the reproduction's."""
    setup = EXPERIMENTS[name].fidelities["quick"].setup
    setup = replace(setup, seeds=seeds or setup.seeds)
    thesis, matched = models(setup)
    variants = [thesis, *changes(matched), matched]
    if also:
        words = also.split()
        extra = tuple(f"{k} {v}" for k, v in zip(words[::2], words[1::2]))
        variants.append(Model(f"matched, {also}", matched.tcp_vars + extra, matched.limit_offset))
    figures = [Ns2(setup, m, pool).measure_points([(n, buffer)])[0] for m in variants]
    return [{**f, "experiment": name, "flows": n, "buffer": buffer, "seeds": setup.seeds, "model": m.name}
            for m, f in zip(variants, figures)]


def per_seed(name: str, n: int, buffer: int, seeds: int, pool: ThreadPoolExecutor) -> list[dict[str, Any]]:
    """Utilization of each seed at one point, in aqmlab and in ns-2's two models (the
    same draws): how far apart seeds are, against how far apart the simulators are."""
    import aqmlab

    setup = EXPERIMENTS[name].fidelities["quick"].setup
    rows = []
    for seed in range(1, seeds + 1):
        jobs = {m.name: pool.submit(run_tcl, tcl_args(setup, n, buffer, seed, m)) for m in models(setup)}
        ours = aqmlab.run(setup.scenario(n, buffer, seed)).summary["bottleneck_utilization"]
        rows.append({"experiment": name, "flows": n, "buffer": buffer, "seed": seed, "aqmlab": ours,
                     **{k: j.result()["util"] for k, j in jobs.items()}})
    return rows


def aqmlab_table(name: str, out: Path) -> pl.DataFrame:
    """The reproduction's own table at quick fidelity, through aqmlab's API."""
    return reproduce(EXPERIMENTS[name], "quick", out=out).table


def fig5_1(pool: ThreadPoolExecutor, out: Path) -> list[dict[str, Any]]:
    """Utilization, goodput, loss and timeouts at every (buffer, flows) point."""
    p = EXPERIMENTS["fig5_1"].fidelities["quick"]
    rows = aqmlab_table("fig5_1", out).select("buffer", "flows", "utilization", "goodput", "loss_rate").to_dicts()
    points = [(r["flows"], r["buffer"]) for r in rows]
    for model in models(p.setup):
        figures = Ns2(p.setup, model, pool).measure_points(points)
        for r, f in zip(rows, figures):
            r.update({f"{model.name}_{k}": f[k] for k in ("util", "goodput", "loss", "timeouts")})
    return rows


def min_buffers(name: str, pool: ThreadPoolExecutor, out: Path) -> list[dict[str, Any]]:
    """The minimum buffer of every (flows, target) in aqmlab and in ns-2's two models,
    each with the bracket (low, min] the bisection left."""
    p = EXPERIMENTS[name].fidelities["quick"]
    keys = ["flows", "target"]
    table = aqmlab_table(name, out).select(*keys, "min_buffer", "bracket_low", "model_eq37", "evaluations")
    for model in models(p.setup):
        ns2 = Ns2(p.setup, model, pool)
        found = min_buffer_table(p, ns2.utilization).select(
            *keys, *(pl.col(c).alias(f"{model.name}_{c}") for c in ("min_buffer", "bracket_low", "evaluations")))
        table = table.join(found, on=keys)
    return [{"experiment": name, **r} for r in table.to_dicts()]


def bracket(row: dict[str, Any], prefix: str = "") -> str:
    b, lo = row[f"{prefix}min_buffer"], row[f"{prefix}bracket_low"]
    return "above the cap" if b is None else f"{b} ({lo}, {b}]"


def markdown(result: dict[str, Any]) -> str:
    """The two tables, as docs write them."""
    lines = ["## Fig 5.1: utilization (goodput), 20 Mb/s, mean 2T_p 130 ms, quick fidelity", "",
             "| B | n | aqmlab | ns-2 thesis | ns-2 matched | loss: aqmlab, thesis, matched | timeouts/flow: thesis, matched |",
             "|---|---|---|---|---|---|---|"]
    for r in result.get("fig5_1", []):
        lines.append(f"| {r['buffer']} | {r['flows']} | {r['utilization']:.4f} ({r['goodput']:.4f}) | "
                     f"{r['thesis_util']:.4f} ({r['thesis_goodput']:.4f}) | {r['matched_util']:.4f} ({r['matched_goodput']:.4f}) | "
                     f"{r['loss_rate']:.4f}, {r['thesis_loss']:.4f}, {r['matched_loss']:.4f} | "
                     f"{r['thesis_timeouts']:.1f}, {r['matched_timeouts']:.1f} |")
    lines += ["", "## Figs 3.4 and 5.2: minimum buffer (packets; bracket (low, min]), OC3, mean 2T_p 89 ms, quick fidelity", "",
              "| figure | n | target | aqmlab | ns-2 thesis | ns-2 matched | Eq 3.7 |", "|---|---|---|---|---|---|---|"]
    for r in result.get("min_buffers", []):
        model = "-" if r["model_eq37"] is None else f"{r['model_eq37']:.0f}"
        lines.append(f"| {r['experiment']} | {r['flows']} | {r['target']:g} | {bracket(r)} | {bracket(r, 'thesis_')} | "
                     f"{bracket(r, 'matched_')} | {model} |")
    if result.get("attribution"):
        lines += ["", "## One difference at a time: the thesis model with each setting of the matched model alone", "",
                  "| figure | n | B | seeds | ns-2 model | utilization | goodput | loss | timeouts/flow |",
                  "|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r['experiment']} | {int(r['flows'])} | {r['buffer']} | {r.get('seeds', '')} | {r['model']} | {r['util']:.4f} | {r['goodput']:.4f} | "
                  f"{r['loss']:.4f} | {r['timeouts']:.1f} |" for r in result["attribution"]]
    if result.get("per_seed"):
        lines += ["", "## Utilization seed by seed (the same draws in both simulators)", "",
                  "| figure | n | B | seed | aqmlab | ns-2 thesis | ns-2 matched |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['experiment']} | {r['flows']} | {r['buffer']} | {r['seed']} | {r['aqmlab']:.4f} | {r['thesis']:.4f} | "
                  f"{r['matched']:.4f} |" for r in result["per_seed"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=sorted(EXPERIMENTS), action="append", help="one reproduction (repeatable)")
    ap.add_argument("--out", type=Path, default=HERE, help="where appenzeller.json and .md go")
    ap.add_argument("--attribute", nargs=3, action="append", metavar=("FIG", "N", "B"), default=[],
                    help="also run ns-2 at FIG's point (N flows, buffer B) with each difference of the models alone")
    ap.add_argument("--also", default="", help="agent variables (name-value pairs) of one more model for "
                    "--attribute: the matched model with these")
    ap.add_argument("--attribute-seeds", type=int, help="seeds of each --attribute point (default: the reproduction's)")
    ap.add_argument("--per-seed", nargs=4, action="append", metavar=("FIG", "N", "B", "SEEDS"), default=[],
                    help="also give the utilization of each of SEEDS seeds at FIG's point (N flows, buffer B)")
    ap.add_argument("--add-to", type=Path, help="keep the tables of this earlier appenzeller.json and add the "
                    "--attribute and --per-seed runs to it")
    ap.add_argument("--workers", type=int, default=os.cpu_count(), help="ns-2 runs at a time")
    args = ap.parse_args(argv)
    chosen = args.only or list(EXPERIMENTS)
    result: dict[str, Any] = json.loads(args.add_to.read_text()) if args.add_to else {}
    with ThreadPoolExecutor(args.workers) as pool, tempfile.TemporaryDirectory(prefix="reproduce-") as tmp:
        if not args.add_to:
            if "fig5_1" in chosen:
                result["fig5_1"] = fig5_1(pool, Path(tmp))
            result["min_buffers"] = [r for name in chosen if name != "fig5_1" for r in min_buffers(name, pool, Path(tmp))]
        result["attribution"] = result.get("attribution", []) + [
            r for fig, n, b in args.attribute for r in attribute(fig, int(n), int(b), pool, args.attribute_seeds, args.also)]
        result["per_seed"] = result.get("per_seed", []) + [
            r for fig, n, b, k in args.per_seed for r in per_seed(fig, int(n), int(b), int(k), pool)]
    result["models"] = {m.name: list(m.tcp_vars) for m in models(EXPERIMENTS["fig3_4"].fidelities["quick"].setup)}
    (args.out / "appenzeller.json").write_text(json.dumps(result, indent=1) + "\n")
    text = markdown(result)
    (args.out / "appenzeller.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
