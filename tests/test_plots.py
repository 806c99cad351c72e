"""The plots a run writes with the real core: which ones each kind of traffic gets."""

import numpy as np

import aqmlab
from aqmlab.plots import _binned_medians, plot_all


def scenario(flows: list[dict]) -> dict:
    return {
        "name": "plots", "duration": "8s", "warmup": "1s",
        "topology": {
            "kind": "dumbbell", "senders": 4,
            "bottleneck": {"rate": "10Mbps", "delay": "10ms", "qdisc": {"kind": "droptail", "limit": "50pkt"}},
            "access": {"rate": "100Mbps", "delay": "2ms"},
        },
        "flows": flows,
    }


def test_transfers_get_completion_times_not_a_bar_each(tmp_path):
    arrivals = {"kind": "tcp_arrivals", "src": "senders", "dst": "receivers", "load": 0.5,
                "size": {"dist": "pareto", "mean": "20pkt", "shape": 1.2}}
    res = aqmlab.run(scenario([arrivals]))
    assert res.flows.height > 100
    made = sorted(p.name for p in plot_all(res, tmp_path))
    assert made == ["completion.png", "queue.png", "windows.png"]


def test_one_long_flow_gets_its_bar(tmp_path):
    res = aqmlab.run(scenario([{"kind": "tcp", "count": 1}]))
    made = sorted(p.name for p in plot_all(res, tmp_path))
    assert made == ["queue.png", "throughput.png", "windows.png"]


def test_medians_in_log_bins():
    x = np.array([1, 1.1, 1.2, 1.3, 1.4, 10, 11, 12, 13, 14, 15.0, 500])
    y = np.arange(12.0)
    centres, medians = _binned_medians(x, y)
    # Two bins of at least five points (the lone 500 is left out), each at its centre.
    assert medians == [2.0, 7.5]
    assert 1 <= centres[0] <= 1.8 and 10 <= centres[1] <= 18
