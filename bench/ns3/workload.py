"""An aqmlab scenario's flows, written for the ns-3 peer (`dumbbell.cc --workload`).

A workload of flow arrivals (scenarios/bench-short-flows.toml: Poisson arrivals of
Pareto-sized transfers) is drawn inside aqmlab's simulator as it runs. So that ns-3
runs the very same flows, this runs the scenario once in aqmlab and writes what the
flows table says of each flow (its sender, start and size) and each sender's access
delay from the resolved scenario, in the plain formats `dumbbell.cc` reads:

    workload      "sender start_s bytes", a flow a line
    access delays one delay in seconds a line, sender 0 first

Needs the project's environment (aqmlab and polars), unlike run_reference.py.
"""

from __future__ import annotations

import re
from pathlib import Path


def link_names(runs: list[dict]) -> list[str]:
    """The resolved scenario's link names, its runs of templates written out."""
    names = []
    for run in runs:
        if "numbers" in run:
            first, count = run["numbers"]
            names += [t.format(k) for k in range(first, first + count) for t in run["names"]]
        else:
            names += run["names"]
    return names


def export(scenario_path: Path, out_dir: Path) -> dict:
    """Run `scenario_path` in aqmlab and write its flows and its senders' access delays
    into `out_dir`; returns the two files' paths and the number of senders."""
    import aqmlab

    scenario = aqmlab.Scenario.load(scenario_path)
    resolved = scenario.resolve()
    links = resolved["links"]
    delay_of = dict(zip(link_names(links["names"]), links["delay_ns"]))
    senders = sorted(int(m.group(1)) for name in delay_of if (m := re.fullmatch(r"access_s(\d+)", name)))
    if senders != list(range(len(senders))):
        raise ValueError(f"{scenario_path}: senders are not numbered 0 to n-1")
    flows = aqmlab.run(scenario).flows.sort("start_s", "flow_id")
    out_dir.mkdir(parents=True, exist_ok=True)
    workload = out_dir / f"{scenario_path.stem}.workload"
    with open(workload, "w") as f:
        for src, start, size in flows.select("src", "start_s", "size_bytes").iter_rows():
            f.write(f"{int(src.lstrip('s'))} {start!r} {size}\n")
    delays = out_dir / f"{scenario_path.stem}.delays"
    with open(delays, "w") as f:
        for i in senders:
            f.write(f"{int(delay_of[f'access_s{i}']) / 1e9!r}\n")
    return {"workload": str(workload), "accessDelays": str(delays), "n": len(senders)}
