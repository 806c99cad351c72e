"""Where the memory of a run through Python goes: RSS after each step of
``aqmlab.run`` (load, resolve, JSON, the core's run, the result frames).

    python bench/python_memory.py [--flows 100000] [--seconds 2]

Runs the benchmark dumbbell (scenarios/bench-dumbbell-1000.toml) with
``--flows`` senders and flows.
"""

from __future__ import annotations

import argparse
import gc
import json
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rss() -> str:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return f"RSS {int(fields['VmRSS'].split()[0]) / 1024:7.0f} MiB, peak {int(fields['VmHWM'].split()[0]) / 1024:7.0f} MiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()

    import aqmlab
    from aqmlab.results import Results
    from aqmlab.run import _core

    print(f"{'libraries loaded':28} {rss()}")
    d = tomllib.loads((ROOT / "scenarios" / "bench-dumbbell-1000.toml").read_text())
    d["topology"]["senders"] = d["flows"][0]["count"] = args.flows
    d["duration"], d["warmup"] = f"{args.seconds}s", f"{args.seconds / 2}s"
    scenario = aqmlab.Scenario.coerce(d)
    print(f"{'scenario loaded':28} {rss()}")
    resolved = scenario.resolve()
    print(f"{'resolved':28} {rss()}")
    text = json.dumps(resolved, sort_keys=True, allow_nan=False)
    print(f"{f'JSON ({len(text) / 1e6:.0f} MB)':28} {rss()}")
    raw = _core().run(text, None)
    print(f"{'core run, results handed':28} {rss()}")
    del text
    gc.collect()
    results = Results(raw, resolved, scenario, {})
    print(f"{'result frames built':28} {rss()}")
    del raw
    gc.collect()
    print(f"{'hand-over freed':28} {rss()}  ({results.summary['flows']:,} flows)")


if __name__ == "__main__":
    main()
