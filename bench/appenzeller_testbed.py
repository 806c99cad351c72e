"""appenzeller.fig6_1's 'testbed' fidelity in simulation: what its short measurement and
its unscaled TCP timers cost (docs/experiments/appenzeller.md, "On the emulator").

    nice -n 15 python bench/appenzeller_testbed.py [SEEDS]     # default 5 seeds

For each of the fidelity's four points, the bottleneck's utilization (mean, s.d. and
range over the seeds):

* testbed: the fidelity's own scenario (160 s warm-up, 360 s measured, only the minimum
  RTO scaled), as the emulator runs it;
* all timers scaled: the same with the initial and maximum RTO and the clock tick
  scaled too (the 'scaled' fidelity's TCP), so the difference is what the kernel's
  unscalable timers cost the simulation;
* 8x longer: the testbed scenario measured for 2880 s, the value the 360 s estimate.

Prints; never fails. Runs go to the default store (results/store), one process.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np

from aqmlab.experiments import get
from aqmlab.experiments.appenzeller.chapter6 import TCP_TIMERS_MS
from aqmlab.experiments.core import run_points
from aqmlab.sweeps import Runner


def main(seeds: int) -> None:
    p = get("appenzeller.fig6_1").fidelities["testbed"]
    variants = {
        "testbed (360 s)": replace(p.setup, seeds=seeds),
        "all timers scaled (360 s)": replace(p.setup, seeds=seeds, scaled=tuple(TCP_TIMERS_MS)),
        "testbed, 8x longer (2880 s)": replace(p.setup, seeds=min(seeds, 2), measure_s=8 * p.setup.measure_s),
    }
    points = p.points()
    print("| n | buffer | variant | seeds | utilization mean | s.d. | min - max | loss rate |")
    print("|---|---|---|---|---|---|---|---|")
    with Runner(None, 1) as runner:
        for label, setup in variants.items():
            runs = run_points(runner, [setup.seeds_of(n, b) for n, b in points], label)
            for (n, b), summaries in zip(points, runs):
                u = np.array([s["bottleneck_utilization"] for s in summaries])
                loss = np.mean([s["bottleneck_loss_rate"] for s in summaries])
                print(f"| {n} | {b} | {label} | {len(u)} | {100 * u.mean():.2f}% | {100 * u.std(ddof=1) if len(u) > 1 else 0:.2f} "
                      f"| {100 * u.min():.2f} - {100 * u.max():.2f} | {100 * loss:.2f}% |", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
