"""Where the memory of a run through Python goes: RSS after each step of
``aqmlab.run`` (load, resolve, the core's input, the core's run, the result frames,
resolved.json written).

    python bench/python_memory.py [--flows 100000] [--seconds 2]

Runs the benchmark dumbbell (scenarios/bench-dumbbell-1000.toml) with
``--flows`` senders and flows. The resolved scenario is column-wise (numpy arrays
for links and flows, see aqmlab.contract); it crosses into the core as a small
JSON text and the columns as buffers.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
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
    from aqmlab import contract
    from aqmlab.results import Results
    from aqmlab.run import _core

    print(f"{'libraries loaded':28} {rss()}")
    d = tomllib.loads((ROOT / "scenarios" / "bench-dumbbell-1000.toml").read_text())
    d["topology"]["senders"] = d["flows"][0]["count"] = args.flows
    d["duration"], d["warmup"] = f"{args.seconds}s", f"{args.seconds / 2}s"
    scenario = aqmlab.Scenario.coerce(d)
    print(f"{'scenario loaded':28} {rss()}")
    resolved = scenario.resolve()
    print(f"{'resolved (columns)':28} {rss()}")
    text, columns = contract.for_core(resolved)
    size = sum(c.nbytes for c in columns.values())
    print(f"{f'core input ({len(text) / 1e3:.0f} kB + {size / 1e6:.0f} MB)':28} {rss()}")
    raw = _core().run(text, columns, None)
    print(f"{'core run, results handed':28} {rss()}")
    del text, columns
    gc.collect()
    results = Results(raw, resolved, scenario, {})
    print(f"{'result frames built':28} {rss()}")
    del raw
    gc.collect()
    print(f"{'hand-over freed':28} {rss()}  ({results.summary['flows']:,} flows)")
    with tempfile.TemporaryDirectory() as out:
        results.write(out)
        written = (Path(out) / "resolved.json").stat().st_size
    print(f"{f'written ({written / 1e6:.0f} MB resolved.json)':28} {rss()}")


if __name__ == "__main__":
    main()
