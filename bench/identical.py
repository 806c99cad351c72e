"""Check that a change to the simulator leaves its results bit-identical.

    python bench/identical.py record /tmp/before.json   # before the change
    python bench/identical.py check  /tmp/before.json   # after it

Runs every scenario in scenarios/ and scenarios/disciplines/ (and a few again
with another seed) through ``aqmlab run`` and records the SHA-256 of each
result file. ``summary.json`` is hashed without its ``events`` field, which
counts the event loop's work and not the simulated network; ``events`` is
recorded beside it so that ``check`` can say when (and by how much) it
changed. Wall time lives in ``timing.json``, which is not compared, and so
does ``resolved.json``: it is the run's input, not a result (its format
became column-wise on purpose; tests/test_contract*.py check it).

The manifest also keeps each run's summary figures, so that when a change is
deliberate (one that moves results on purpose) ``check`` prints how far each
figure moved, not only that it did.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ["flows.parquet", "queues.parquet", "timeseries.parquet", "histograms.parquet"]
OTHER_SEED = 7
OTHER_SEED_SCENARIOS = ["dumbbell.toml", "short-flows.toml", "udp-mix.toml", "disciplines/qsdrr.toml"]


def runs() -> list[tuple[str, int | None]]:
    scenarios = sorted(p.relative_to(ROOT / "scenarios").as_posix() for p in (ROOT / "scenarios").rglob("*.toml"))
    return [(s, None) for s in scenarios] + [(s, OTHER_SEED) for s in OTHER_SEED_SCENARIOS]


def fingerprint(scenario: str, seed: int | None) -> dict:
    with tempfile.TemporaryDirectory() as out:
        cmd = [str(Path(sys.executable).parent / "aqmlab"), "run", str(ROOT / "scenarios" / scenario), "--out", out, "-q"]
        if seed is not None:
            cmd += ["--seed", str(seed)]
        subprocess.run(cmd, check=True)
        summary = json.loads((Path(out) / "summary.json").read_text())
        summary.pop("events", None)  # kept there before it moved to timing.json
        events = json.loads((Path(out) / "timing.json").read_text())["events"]
        result = {"events": events, "summary.json": hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest()}
        result["figures"] = {k: v for k, v in summary.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        for f in FILES:
            result[f] = hashlib.sha256((Path(out) / f).read_bytes()).hexdigest()
        return result


def moved(before: dict, after: dict) -> list[str]:
    """The summary figures that changed, largest relative change first."""
    rows = []
    for k in sorted(before.keys() & after.keys()):
        a, b = before[k], after[k]
        if a != b:
            rel = abs(b - a) / max(abs(a), abs(b))
            rows.append((rel, f"{k}: {a:.6g} -> {b:.6g} ({rel:.2%})"))
    return [r for _, r in sorted(rows, reverse=True)]


def key(scenario: str, seed: int | None) -> str:
    return scenario if seed is None else f"{scenario} --seed {seed}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["record", "check"])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    todo = runs()
    with ThreadPoolExecutor(args.jobs) as pool:
        prints = dict(zip([key(*r) for r in todo], pool.map(lambda r: fingerprint(*r), todo)))
    if args.mode == "record":
        args.manifest.write_text(json.dumps(prints, indent=1, sort_keys=True))
        print(f"recorded {len(prints)} runs in {args.manifest}")
        return

    before = json.loads(args.manifest.read_text())
    differ = 0
    for name, now in prints.items():
        was = before.get(name)
        if was is None:
            print(f"{name}: not in the manifest")
            continue
        changed = [f for f in ["summary.json", *FILES] if was[f] != now[f]]
        differ += bool(changed)
        note = "identical" if not changed else "DIFFERENT: " + ", ".join(changed)
        if was["events"] != now["events"]:
            note += f"; events {was['events']} -> {now['events']} ({now['events'] / was['events'] - 1:+.1%})"
        print(f"{name}: {note}")
        if "summary.json" in changed:
            for line in moved(was.get("figures", {}), now["figures"]):
                print("    " + line)
    print(f"{len(prints) - differ} of {len(prints)} runs identical")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
