"""Build the simulator core with profile-guided optimization (PGO).

    python tools/pgo.py            # what `make build` runs
    AQMLAB_PGO=0 make build        # a plain release build instead (faster to build)

Three steps, each a `maturin develop --release`-style build of ``aqmlab._core``:

1. an instrumented build (``-Cprofile-generate``);
2. training: every example scenario in ``scenarios/`` (the discipline catalogue
   included) runs for at most ``TRAIN_SECONDS`` simulated seconds, in a child
   process, so that the profile covers every discipline and topology builder, not
   only the benchmark's dumbbell;
3. the final build with the merged profile (``-Cprofile-use``), which lays out and
   inlines the hot path as the training runs took it.

PGO changes code layout, inlining and branch order, never what the code computes:
results are bit-identical to a plain build (``bench/identical.py check``). The
speed it buys is in docs/performance.md ("Profile-guided optimization").

``llvm-profdata`` must match rustc's LLVM; it comes with rustup's ``llvm-tools``
component, which this script adds when it is missing. Without rustup (or with
``AQMLAB_PGO=0``) it builds plainly and says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROFILE_DIR = ROOT / "target" / "pgo"
#: Simulated seconds per training scenario: long enough to pass slow start on
#: the benchmark dumbbell, short enough that training takes about a minute.
TRAIN_SECONDS = 4.0
#: Scenarios too large to train on in a minute (their code paths are the
#: 10,000-flow backbone's).
SKIP = {"bench-backbone-50k.toml"}

TRAIN = f"""
import sys, tomllib
from pathlib import Path
import aqmlab
from aqmlab import units

for path in sys.argv[1:]:
    d = tomllib.loads(Path(path).read_text())
    seconds = min(units.parse_time(d.get("duration", "10s"), "duration") / 1e9, {TRAIN_SECONDS})
    d["duration"] = f"{{seconds}}s"
    d["warmup"] = f"{{seconds / 2}}s"
    aqmlab.run(d)
    print(f"  trained on {{Path(path).name}} ({{seconds:g}} s)", flush=True)
"""


def maturin(build: str, rustflags: str | None = None) -> None:
    """`maturin develop --release`, the build's kind recorded for `_core.build()`."""
    env = {**os.environ, "AQMLAB_BUILD": build}
    if rustflags:
        env["RUSTFLAGS"] = (env.get("RUSTFLAGS", "") + " " + rustflags).strip()
    subprocess.run(["maturin", "develop", "--release", "-q"], cwd=ROOT, env=env, check=True)


def llvm_profdata() -> Path | None:
    """rustc's own llvm-profdata (from rustup's llvm-tools), added if missing."""
    sysroot = Path(subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True,
                                  check=True).stdout.strip())
    host = next(line.split()[1] for line in subprocess.run(
        ["rustc", "-vV"], capture_output=True, text=True, check=True).stdout.splitlines()
        if line.startswith("host:"))
    tool = sysroot / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    if not tool.exists() and shutil.which("rustup"):
        subprocess.run(["rustup", "component", "add", "llvm-tools"], check=False)
    return tool if tool.exists() else None


def training_scenarios() -> list[Path]:
    files = sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "scenarios" / "disciplines").glob("*.toml"))
    return [f for f in files if f.name not in SKIP]


def main() -> int:
    skipped = os.environ.get("AQMLAB_PGO", "1") == "0"
    profdata = None if skipped else llvm_profdata()
    if profdata is None:
        why = "AQMLAB_PGO=0" if skipped else "llvm-profdata not found (rustup's llvm-tools component)"
        print(f"pgo: {why}; plain release build", file=sys.stderr)
        maturin("release")
        return 0
    shutil.rmtree(PROFILE_DIR, ignore_errors=True)
    raw = PROFILE_DIR / "raw"
    raw.mkdir(parents=True)
    print("pgo: 1/3 instrumented build")
    maturin("instrumented", f"-Cprofile-generate={raw}")
    print("pgo: 2/3 training")
    with tempfile.TemporaryDirectory() as tmp:  # no stray results
        subprocess.run([sys.executable, "-c", TRAIN, *map(str, training_scenarios())], cwd=tmp, check=True)
    merged = PROFILE_DIR / "merged.profdata"
    subprocess.run([str(profdata), "merge", "-o", str(merged), *map(str, raw.glob("*.profraw"))], check=True)
    print("pgo: 3/3 optimized build")
    maturin("pgo", f"-Cprofile-use={merged}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
