"""`aqmlab report` with an experiment reproduced on both engines: one section, the
paper's value, the simulation's and the emulator's in one table, and both figures. The
experiment is a small one of this file's own (one UDP flow at twice a 4 Mb/s link's
rate, 2 s), reproduced for real on the simulator and on the emulator."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from aqmlab.experiments.core import Experiment, Reference, reproduce, run_points
from aqmlab.report import collect, fmt, render_html, render_markdown, sections


@dataclass(frozen=True)
class Params:
    duration_s: float


class Overload(Experiment):
    """A link offered twice its rate: it is busy all the time and drops half."""

    id = "test.overload"
    title = "A 4 Mb/s DropTail link offered 8 Mb/s of UDP"
    source = "tests/test_report_engines.py"
    summary = "One UDP flow at twice the link's rate through a DropTail of 20 packets."
    fidelities = {"quick": Params(duration_s=2.0)}

    def scenario(self, p: Params) -> dict[str, Any]:
        return {
            "name": "overload", "duration": f"{p.duration_s}s", "warmup": "0.5s", "sample_interval": "100ms",
            "topology": {"kind": "dumbbell", "senders": 1,
                         "bottleneck": {"rate": "4Mbps", "delay": "5ms", "qdisc": {"kind": "droptail", "limit": "20pkt"}},
                         "access": {"rate": "100Mbps", "delay": "1ms"}},
            "flows": [{"kind": "udp", "rate": "8Mbps", "packet_size": "1000B"}],
        }

    def measure(self, runner: Any, p: Params) -> pl.DataFrame:
        (summary,), = run_points(runner, [[self.scenario(p)]], self.id)
        return pl.DataFrame([{"utilization": summary["bottleneck_utilization"],
                              "loss_rate": summary["bottleneck_loss_rate"]}])

    def findings(self, t: pl.DataFrame, p: Params) -> dict[str, float | None]:
        return {"utilization": float(t["utilization"][0]), "loss_rate": float(t["loss_rate"][0])}

    def references(self, p: Params) -> list[Reference]:
        return [Reference("utilization", "utilization of the link", 1.0, "abs", 0.02, "its rate"),
                Reference("loss_rate", "fraction of the offered packets dropped", 0.5, "abs", 0.05, "half")]

    def plot(self, t: pl.DataFrame, p: Params, path: Path) -> Path:
        from aqmlab.plots import pyplot, save

        plt = pyplot()
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.bar(["utilization", "loss rate"], [t["utilization"][0], t["loss_rate"][0]])
        return save(fig, path)

    def example_scenario(self, p: Params) -> dict[str, Any]:
        return self.scenario(p)


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> Path:
    """The experiment reproduced on the simulator and on the emulator, under one root."""
    root, store = tmp_path_factory.mktemp("reproduce"), tmp_path_factory.mktemp("store")
    for engine in ("sim", "emulator"):
        reproduce(Overload(), "quick", out=root, store=store, engine=engine)
    return root


def comparisons(directory: Path) -> dict[str, dict[str, Any]]:
    return {c["key"]: c for c in json.loads((directory / "comparison.json").read_text())}


def test_an_experiment_on_both_engines_is_one_section_with_both_values(emulator_machine, both):
    sim = comparisons(both / "quick" / "test.overload")
    emulated = comparisons(both / "emulator" / "quick" / "test.overload")
    entries = collect(both)
    assert [(e.meta["id"], e.engine) for e in entries] == [("test.overload", "sim"), ("test.overload", "emulator")]
    assert len(sections(entries)) == 1
    page = render_html(entries)
    assert page.count("<h2 id=") == 1
    assert "<th>simulation</th>" in page and "<th>emulator</th>" in page
    for key, c in sim.items():
        # the paper's value, the simulation's and the emulator's on one row, each with its verdict
        verdict = {True: '<td class="verdict ok">yes</td>', False: '<td class="verdict fail">NO</td>'}
        row = (f'<td>{c["quantity"]}</td><td class="num">{fmt(c["paper"])}</td>'
               f'<td class="num">{fmt(c["ours"])}</td>{verdict[c["ok"]]}'
               f'<td class="num">{fmt(emulated[key]["ours"])}</td>{verdict[emulated[key]["ok"]]}')
        assert row in page
    # each engine's values are its own runs': the emulator's came from the emulator
    assert json.loads((both / "emulator" / "quick" / "test.overload" / "experiment.json").read_text())["engine"] == "emulator"
    for e in entries:  # both figures, inlined
        assert base64.b64encode(e.figure.read_bytes()).decode() in page
    figures = {e.anchor: f"figures/{e.anchor}.png" for e in entries}
    md = render_markdown(entries, figures)
    assert "| quantity | paper | simulation | within | emulator | within |" in md
    assert "(figures/quick-test-overload.png)" in md and "(figures/emulator-quick-test-overload.png)" in md
    assert md.count("\n## ") == 1


def test_an_experiment_on_one_engine_keeps_its_own_table(emulator_machine, both, tmp_path):
    """Only the emulator's reproduction: its section says so and has the one-engine table."""
    import shutil

    shutil.copytree(both / "emulator", tmp_path / "emulator")
    entries = collect(tmp_path)
    assert [e.engine for e in entries] == ["emulator"]
    page = render_html(entries)
    assert "<th>ours</th>" in page and "<th>simulation</th>" not in page
    assert "(emulator)" in page and "emulator-quick-test-overload" in page
