"""The emulator: a scenario's network in network namespaces, its links in aqmlab's
userspace router (crates/router), its flows real Linux TCP (iperf3) and UDP
(``aqmlab-udp``) (docs/emulator.md).

``emulate(scenario, out)`` takes the scenario files ``aqmlab run`` takes, within the
emulator's limits (:mod:`.support` names every field it cannot honour), and returns
:class:`~aqmlab.results.Results` with the simulator's tables, measured at the router
and from the applications' reports. It needs root (or CAP_NET_ADMIN), /dev/net/tun,
``ip`` and ``iperf3``, and the router built (``cargo build --release -p
aqmlab-router``). Runs take the scenario's duration in real time, plus about a second.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..results import Results
    from ..scenario import Scenario

#: Longest run the emulator accepts, in seconds of real time.
MAX_DURATION_S = 600.0


def emulate(
    scenario: "Scenario | str | Path | dict[str, Any]",
    out: str | Path | None = None,
    seed: int | None = None,
    baseline: str | None = None,
    shaper: str = "tbf",
    flow_key: str = "five_tuple",
) -> "Results":
    """Run ``scenario`` on the emulator; with ``out``, the router's and iperf3's own
    files are kept in ``out/emulator/`` (the results are written by the caller,
    :meth:`Results.write`). ``baseline="kernel"`` queues and shapes the monitored
    links (a dumbbell's bottleneck) with the kernel's ``tc`` instead: ``shaper``
    ``"tbf"`` or ``"htb"`` over the kernel's qdisc of the link's discipline
    (:mod:`.kernel_qdiscs`; refused by field where the kernel has none). ``flow_key``: what
    a flow is to the disciplines, ``"five_tuple"`` or ``"host_pair"`` (seed 004's DCBT
    option: every flow between two hosts is one)."""
    import polars as pl

    from ..errors import UserError
    from ..names import NameList
    from ..results import Results
    from ..scenario import Scenario
    from . import collect, netns, support
    from .session import Session, check_machine, signals_raise, workdir

    if baseline not in (None, "kernel"):
        raise UserError(f'"kernel" or none, got {baseline!r}', "--baseline")
    if shaper not in ("tbf", "htb"):
        raise UserError(f'"tbf" or "htb", got {shaper!r}', "--shaper")
    if flow_key not in ("five_tuple", "host_pair"):
        raise UserError(f'"five_tuple" or "host_pair", got {flow_key!r}', "--flow-key")
    s = Scenario.coerce(scenario, seed)
    support.check(s)
    resolved = s.resolve()
    if int(resolved["duration_ns"]) / 1e9 > MAX_DURATION_S:
        raise UserError(f"the emulator runs in real time: at most {MAX_DURATION_S:g}s", "duration")
    check_machine()
    netns.remove_stale()
    wall = time.perf_counter()
    files = workdir(out)
    try:
        session = Session(s, resolved, files, baseline, shaper, flow_key)
        with signals_raise(), session:
            session.start_router()
            session.start_servers()
            session.run_traffic()
            report = session.report()
            apps = session.client_reports()
            t0_ns = session.t0_ns
    finally:
        if out is None:  # a temporary directory: the measurements are read, the files go
            shutil.rmtree(files, ignore_errors=True)
    nodes = NameList.from_contract(resolved["nodes"])
    clock = collect.Clock(report, t0_ns, resolved)
    flows = collect.flows_frame(report, session.plans, apps, session.addr, nodes, clock)
    queues = collect.queues_frame(report, nodes, clock, session.kernel_stats)
    raw = {
        "summary": collect.summary(resolved, flows, queues, report),
        "flows": flows,
        "queues": queues,
        "timeseries": collect.timeseries_frame(report, session.plans, session.addr, clock, apps, session.kernel_stats),
        "histograms": pl.DataFrame(schema={"link": pl.String, "bin_low_s": pl.Float64, "bin_high_s": pl.Float64, "count": pl.Int64}),
    }
    if baseline:
        raw["summary"]["baseline"] = f"kernel:{shaper}"
        names = session.link_names()
        for link, queue in session.kernel_links.values():
            raw["summary"][f"baseline_qdisc.{names[link]}"] = " ".join(queue.args)
            raw["summary"][f"baseline_untranslated.{names[link]}"] = "; ".join(queue.untranslated)
    if flow_key != "five_tuple":
        raw["summary"]["flow_key"] = flow_key
    return Results(raw, resolved, s, collect.timing(report, time.perf_counter() - wall))
