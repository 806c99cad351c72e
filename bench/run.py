"""Whole-run benchmarks: print figures, never fail on a noisy machine.

    python bench/run.py                      # the foundation case (bench-dumbbell-1000)
    python bench/run.py --case backbone-50k  # one case; --all for every case
    python bench/run.py --all --repeat 1 --json bench/results.json

The cases are the scenarios ``scenarios/bench-<case>.toml``: the 1 Gb/s, 1,000-flow
DropTail dumbbell and the same with QSDRR; seed 003's backbones (2.5 Gb/s with
10,000 flows, 10 Gb/s with 50,000); seed 000's main case (500 Mb/s, 100 flows)
with DropTail, RED and QSDRR; and a short-flow workload (Poisson arrivals of
Pareto-sized flows at 80% of 1 Gb/s).

Each repeat runs the scenario in a fresh child process through the public Python
API (``aqmlab.run``) and reports the core's wall time (the simulation only, not
scenario resolution or result conversion), data packets delivered and all packets
(data, ACK and SYN) injected per wall second, events per second, and memory: the
child's peak RSS, the growth of its RSS across the run (the core's own memory),
that growth per flow, and the growth set against the budget of 1 KB per flow plus
100 B per packet at the peak number in flight. The best of the repeats is
reported (the least disturbed by other work on the machine).

Two peers run the same scenarios: ns-3 (``bench/ns3/reference/<ns-3 case>_reno.json``,
written by ``bench/ns3/run_reference.py``) and ns-2 (``bench/ns2/reference/<case>.json``,
written by ``bench/ns2/run_reference.py``). Where a reference exists, the peer's figure
is printed beside ours with two ratios: data packets delivered per wall second, and
wall time per simulated second (the peers' runs may be shortened). A peer's wall time
is its simulation alone, without building the topology, as ours is. ns-2's is its CPU
time, its wall time on an idle core, which other work on a shared machine does not
stretch; its ratios take our CPU time through aqmlab.run (conversions included).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
def rss_kb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1])
import aqmlab, polars, pyarrow          # libraries loaded before measuring
scenario = aqmlab.Scenario.load(sys.argv[1])
resolved = scenario.resolve()          # resolve once outside the timed run
before = rss_kb("VmRSS:")
t0, c0 = time.perf_counter(), time.process_time()
res = aqmlab.run(scenario)
total, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"summary": res.summary, "timing": res.timing, "api_wall_s": total, "api_cpu_s": cpu,
                  "rss_before_kb": before, "peak_rss_kb": rss_kb("VmHWM:")}))
"""


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def core_build() -> str:
    """How the core was built (tools/pgo.py): its speed depends on it."""
    from aqmlab.run import _core

    return _core().build()


def run_once(scenario: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(scenario)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{scenario}: the benchmark run failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


#: case -> the ns-3 reference of the same scenario (bench/ns3/run_reference.py --case ...)
NS3 = {
    "dumbbell-1000": "dumbbell1000",
    "backbone-10k": "backbone10k",
    "backbone-50k": "backbone50k",
    "kantawala-droptail": "kantawala-droptail",
    "kantawala-red": "kantawala-red",
    "short-flows": "short-flows",
}

#: cases without an ns-3 peer, and why
NO_NS3 = {
    "dumbbell-1000-qsdrr": "ns-3 has no QSDRR",
    "kantawala-qsdrr": "ns-3 has no QSDRR",
}


def cases() -> list[str]:
    return sorted(p.stem.removeprefix("bench-") for p in (ROOT / "scenarios").glob("bench-*.toml"))


def measure(case: str, repeat: int) -> dict:
    """Run a case ``repeat`` times; the figures of the best run."""
    scenario = ROOT / "scenarios" / f"bench-{case}.toml"
    runs = [run_once(scenario) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["timing"]["wall_time_s"])
    s, wall = best["summary"], best["timing"]["wall_time_s"]
    grown_kb = best["peak_rss_kb"] - best["rss_before_kb"]
    out = {
        "case": case,
        "scenario": str(scenario.relative_to(ROOT)),
        "simulated_s": s["duration_s"],
        "flows": s["flows"],
        "utilization": s["bottleneck_utilization"],
        "wall_s": wall,
        "wall_s_runs": [r["timing"]["wall_time_s"] for r in runs],
        "api_wall_s": best["api_wall_s"],
        # CPU time through the API: well below the wall time when other work shares the machine
        "api_cpu_s": best["api_cpu_s"],
        "data_packets": s["data_packets_delivered"],
        "data_packets_per_s": s["data_packets_delivered"] / wall,
        "packets": s["packets_injected"],
        "packets_per_s": s["packets_injected"] / wall,
        "events": best["timing"]["events"],
        "events_per_s": best["timing"]["events"] / wall,
        "peak_rss_mib": best["peak_rss_kb"] / 1024,
        "rss_growth_mib": grown_kb / 1024,
        "rss_growth_per_flow_b": grown_kb * 1024 / s["flows"],
        "peak_in_flight": s["peak_packets_in_flight"],
        "budget_mib": (1024 * s["flows"] + 100 * s["peak_packets_in_flight"]) / 1024 / 1024,
    }
    for name, read in PEERS.items():
        peer = read(case)
        if peer is not None:
            out[name] = peer
            if "refused" not in peer:
                # CPU against CPU where the peer's is CPU time (ours includes the API's conversions)
                ours = out["api_cpu_s"] if peer.get("clock") == "CPU" else wall
                out[f"ratio_to_{name}"] = out["data_packets"] / ours / peer["data_packets_per_s"]
                out[f"ratio_to_{name}_per_simulated_s"] = peer["wall_per_simulated_s"] / (ours / out["simulated_s"])
    return out


def peer_figures(data_packets: int, wall_s: float, simulated_s: float, peak_rss_mb: float, machine: str) -> dict:
    return {
        "data_packets": data_packets,
        "wall_s": wall_s,
        "simulated_s": simulated_s,
        "peak_rss_mb": peak_rss_mb,
        "data_packets_per_s": data_packets / wall_s,
        "wall_per_simulated_s": wall_s / simulated_s,
        "machine": machine,
    }


def ns3_peer(case: str) -> dict | None:
    ref = ROOT / "bench" / "ns3" / "reference" / f"{NS3.get(case, '-')}_reno.json"
    if not ref.exists():
        return None
    r = json.loads(ref.read_text())
    x = r["results"]
    return peer_figures(x["data_packets_delivered"], x["wall_time_run_s"], r["params"]["duration_s"],
                        x["peak_rss_mb"], r.get("machine", "not recorded"))


def ns2_peer(case: str) -> dict | None:
    ref = ROOT / "bench" / "ns2" / "reference" / f"{case}.json"
    if not ref.exists():
        return None
    r = json.loads(ref.read_text())
    if "refused" in r:
        return {"refused": r["refused"]}
    x = r["results"]
    # ns-2's CPU time: its wall time on an idle core (bench/ns2/run_reference.py)
    figures = peer_figures(x["data_packets_delivered"], x["run_cpu_time_s"], r["duration_s"], x["peak_rss_mb"],
                           r["machine"])
    return {**figures, "clock": "CPU", "setup_s": x["setup_cpu_time_s"]}


#: peer -> how to read its reference of a case (None: no reference)
PEERS = {"ns3": ns3_peer, "ns2": ns2_peer}

#: peer -> the command that writes its reference of a case
RERUN = {
    "ns3": lambda case: f"bench/ns3/run_reference.py --case {NS3[case]}",
    "ns2": lambda case: f"bench/ns2/run_reference.py --case {case}",
}


def report(f: dict) -> None:
    print(f"case         {f['case']} ({f['scenario']})")
    print(f"simulated    {f['simulated_s']:.0f} s, {f['flows']:,} flows, bottleneck utilization {f['utilization']:.4f}")
    print(f"wall time    {f['wall_s']:.2f} s in the core (best of {len(f['wall_s_runs'])}: "
          + ", ".join(f"{w:.2f}" for w in f["wall_s_runs"]) + f"); {f['api_wall_s']:.2f} s through aqmlab.run ({f['api_cpu_s']:.2f} s of CPU)")
    print(f"delivered    {f['data_packets']:,} data packets: {f['data_packets_per_s'] / 1e6:.2f} M per wall second")
    print(f"packets      {f['packets']:,} injected (data, ACK, SYN): {f['packets_per_s'] / 1e6:.2f} M per wall second")
    print(f"events       {f['events']:,}: {f['events_per_s'] / 1e6:.2f} M per wall second")
    print(f"memory       peak RSS {f['peak_rss_mib']:.1f} MiB (Python, polars and the core); grew "
          f"{f['rss_growth_mib']:.1f} MiB during the run = {f['rss_growth_per_flow_b']:,.0f} B per flow")
    print(f"             budget 1 KB x {f['flows']:,} flows + 100 B x {f['peak_in_flight']:,} packets at peak in flight = "
          f"{f['budget_mib']:.1f} MiB; growth/budget = {f['rss_growth_mib'] / f['budget_mib']:.2f}")
    report_peer("ns3", "ns-3", f)
    report_peer("ns2", "ns-2", f)
    print()


def report_peer(name: str, label: str, f: dict) -> None:
    """The peer's line and the ratios, or why there is none."""
    p, case = f.get(name), f["case"]
    if p is None:
        why = NO_NS3.get(case) if name == "ns3" else None
        print(f"{label:<12} " + (f"no peer: {why}" if why else f"no reference (run {RERUN[name](case)})"))
        return
    if "refused" in p:
        print(f"{label:<12} no peer: the translator refuses the scenario ({p['refused']})")
        return
    setup = f"; {p['setup_s']:.1f} s more to build it" if "setup_s" in p else ""
    print(f"{label:<12} {p['data_packets']:,} data packets in {p['wall_s']:.1f} s of {p.get('clock', 'wall')} time "
          f"({p['simulated_s']:g} s simulated{setup}; {p['peak_rss_mb']:.0f} MB peak RSS): "
          f"{p['data_packets_per_s'] / 1e3:.1f} k per second, {p['wall_per_simulated_s']:.1f} s per simulated second")
    clock = p.get("clock", "wall")
    print(f"ratio        aqmlab / {label} = {f[f'ratio_to_{name}']:.0f}x in data packets delivered per {clock} second, "
          f"{f[f'ratio_to_{name}_per_simulated_s']:.0f}x in {clock} time per simulated second")
    if p["machine"] != machine():
        print(f"             ({label} ran on another machine: {p['machine']}; {RERUN[name](case)} reruns it here)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", choices=cases(), help="a case (repeatable; default dumbbell-1000)")
    ap.add_argument("--all", action="store_true", help="every case")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = ap.parse_args()

    chosen = cases() if args.all else (args.case or ["dumbbell-1000"])
    print(f"machine      {machine()}")
    print(f"core build   {core_build()} (tools/pgo.py: pgo = profile-guided, release = plain)\n")
    figures = []
    for case in chosen:
        figures.append(measure(case, args.repeat))
        report(figures[-1])
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "core_build": core_build(), "cases": figures}, indent=1) + "\n")


if __name__ == "__main__":
    main()
