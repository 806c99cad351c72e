"""The ns-3 peer runs aqmlab's own flows of an arrivals scenario
(bench/ns3/workload.py): every flow aqmlab ran, with its sender, start and
size, and every sender's access delay, in the files dumbbell.cc reads."""

import importlib.util
from pathlib import Path

import aqmlab

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("workload", ROOT / "bench/ns3/workload.py")
workload = importlib.util.module_from_spec(spec)
spec.loader.exec_module(workload)

# The short-flow benchmark, scaled down: 20 senders, 2 s.
SCENARIO = (ROOT / "scenarios/bench-short-flows.toml").read_text().replace(
    "senders = 1000", "senders = 20").replace('duration = "20s"', 'duration = "2s"').replace(
    'warmup = "5s"', 'warmup = "1s"')


def test_link_names_write_out_the_runs():
    runs = [{"names": ["bottleneck", "bottleneck_rev"]},
            {"names": ["access_s{}", "access_s{}_rev"], "numbers": [0, 2]}]
    assert workload.link_names(runs) == [
        "bottleneck", "bottleneck_rev", "access_s0", "access_s0_rev", "access_s1", "access_s1_rev"]


def test_the_workload_is_the_flows_aqmlab_ran(tmp_path):
    path = tmp_path / "short.toml"
    path.write_text(SCENARIO)
    files = workload.export(path, tmp_path / "out")
    assert files["n"] == 20
    flows = aqmlab.run(aqmlab.Scenario.load(path)).flows
    lines = [line.split() for line in Path(files["workload"]).read_text().splitlines()]
    assert len(lines) == flows.height > 100
    starts = [float(start) for _, start, _ in lines]
    assert starts == sorted(starts)
    assert sorted(int(size) for *_, size in lines) == sorted(flows["size_bytes"].to_list())
    assert sorted(int(s) for s, *_ in lines) == sorted(int(s[1:]) for s in flows["src"])
    delays = [float(d) for d in Path(files["accessDelays"]).read_text().split()]
    assert len(delays) == 20 and all(0.020 <= d <= 0.040 for d in delays)
    assert len(set(delays)) == 20, "each sender its own delay, uniform in 20-40 ms"
