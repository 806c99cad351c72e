"""``aqmlab size``: the buffer-sizing calculator on the command line.

The main CLI mounts this group with ``app.add_typer(size_app, name="size")``.  Every
command catches :class:`aqmlab.errors.UserError`, prints its message to stderr and exits
with status 2 (no traceback), so the group behaves the same mounted or on its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from aqmlab.errors import UserError

size_app = typer.Typer(
    name="size",
    help="Size a router buffer from what you know about the link and its traffic "
         "(Appenzeller's models, seed 003).",
    invoke_without_command=True,
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
)


def _fail(err: UserError) -> None:
    typer.echo(f"error: {err}", err=True)
    raise typer.Exit(2)


@size_app.callback(invoke_without_command=True)
def size(
    ctx: typer.Context,
    rate: Optional[str] = typer.Option(None, "--rate", help="Bottleneck line rate, e.g. 10Gbps, 2.5Gb/s, 155Mbps."),
    rtt: Optional[str] = typer.Option(None, "--rtt", help="Mean two-way propagation delay (250ms), a uniform range (80ms..98ms) or a list (80ms,90ms,98ms)."),
    packet: str = typer.Option("1500B", "--packet", help="Packet size on the wire, e.g. 1500B."),
    flows: Optional[str] = typer.Option(None, "--flows", help="Number of long-lived flows, or a bracket 400..1900 (sized for the low end)."),
    flows_total: Optional[str] = typer.Option(None, "--flows-total", help="Total active flows (e.g. from NetFlow), for a Stanford-style bracket."),
    udp_flows: Optional[str] = typer.Option(None, "--udp-flows", help="UDP flows among --flows-total, a count or range (1000..2000)."),
    web_flows: Optional[str] = typer.Option(None, "--web-flows", help="Short web flows among --flows-total, a count or range (500..1000)."),
    target_util: str = typer.Option("99%", "--target-util", help="Target utilization for the long-flow buffer (Eq 3.7), below 100%."),
    short_load: Optional[str] = typer.Option(None, "--short-load", help="Load of short (slow-start) flows, a fraction of the link: 0.2 or 20%."),
    short_length: Optional[str] = typer.Option(None, "--short-length", help="Short-flow length in packets (14) or a mix (14:0.7,30:0.3). Default 14."),
    short_loss: str = typer.Option("1e-3", "--short-loss", help="Target P(queue >= B) for short flows."),
    eb_order: str = typer.Option("2", "--eb-order", help="Effective-bandwidth order for the short-flow tail: 2, 3 or exact."),
    smoothed: bool = typer.Option(False, "--smoothed", help="Slow access links smooth bursts: use the M/D/1 tail."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
) -> None:
    """Print the rule-of-thumb buffer, the RTT x C / sqrt(n) buffer, the buffer for a target
    utilization and the short-flow buffer, in packets, bytes and ms of queueing delay."""
    if ctx.invoked_subcommand is not None:
        return
    from aqmlab.theory.calculator import format_report
    from aqmlab.theory.calculator import size as compute
    try:
        if rate is None:
            raise UserError("missing; give the line rate, e.g. --rate 10Gbps", field="--rate")
        if rtt is None:
            raise UserError("missing; give the round-trip time, e.g. --rtt 250ms", field="--rtt")
        rep = compute(rate, rtt, packet, flows=flows, flows_total=flows_total,
                      udp_flows=udp_flows, web_flows=web_flows, target_util=target_util,
                      short_load=short_load, short_length=short_length,
                      short_loss=short_loss, eb_order=eb_order, smoothed=smoothed)
    except UserError as err:
        _fail(err)
    if as_json:
        typer.echo(json.dumps(rep.to_dict(), indent=2))
    else:
        typer.echo(format_report(rep))


def _int_list(text: str, field: str) -> list[int]:
    out = []
    for p in text.split(","):
        p = p.strip()
        if not p:
            continue
        try:
            v = int(p)
        except ValueError:
            raise UserError(f"cannot read {p!r} as a number of flows", field=field) from None
        if v < 1:
            raise UserError(f"the number of flows must be at least 1, got {p!r}", field=field)
        out.append(v)
    if not out:
        raise UserError("give at least one number of flows", field=field)
    return out


@size_app.command("plot")
def plot(
    rate: str = typer.Option("155Mbps", "--rate", help="Line rate."),
    rtt: str = typer.Option("100ms", "--rtt", help="Mean two-way propagation delay."),
    packet: str = typer.Option("1000B", "--packet", help="Packet size on the wire."),
    flows: str = typer.Option("1,10,50,100,400,1000,10000", "--flows", help="Comma-separated numbers of long flows, one curve each."),
    short_length: str = typer.Option("2,14,62", "--short-length", help="Comma-separated short-flow lengths (packets), one tail each."),
    short_load: str = typer.Option("0.85", "--short-load", help="Short-flow load for the tail plot."),
    out_dir: Path = typer.Option(Path("."), "--out-dir", help="Directory for the PNG files."),
    as_json: bool = typer.Option(False, "--json", help="Print the written paths as JSON."),
) -> None:
    """Draw utilization against buffer for several n (Eq 3.7 and the single-flow sawtooth)
    and the short-flow queue tail, as PNG files."""
    from aqmlab.theory import plots
    from aqmlab.theory.calculator import parse_lengths, parse_rtt
    from aqmlab.theory._units import parse_fraction, parse_packet_size, parse_rate
    try:
        rate_bps = parse_rate(rate, "--rate")
        rtt_s = parse_rtt(rtt)
        pkt = parse_packet_size(packet, "--packet")
        ns = _int_list(flows, "--flows")
        lengths = sorted(parse_lengths(short_length))
        load = parse_fraction(short_load, "--short-load")
        if not 0.0 < load < 1.0:
            raise UserError(f"must be above 0 and below 1 (100%), got {short_load!r}",
                            field="--short-load")
        if out_dir.exists() and not out_dir.is_dir():
            raise UserError(f"{str(out_dir)!r} is not a directory", field="--out-dir")
        out_dir.mkdir(parents=True, exist_ok=True)
    except UserError as err:
        _fail(err)
    from aqmlab.theory.sizing import bdp_packets
    bdp = bdp_packets(rate_bps, rtt_s, pkt)
    p1 = plots.utilization_vs_buffer(bdp, ns, out_dir / "utilization_vs_buffer.png",
                                     title=f"{rate}, RTT {rtt}, {packet} packets")
    p2 = plots.short_flow_tail(lengths, load, out_dir / "short_flow_tail.png")
    paths = [str(p1), str(p2)]
    if as_json:
        typer.echo(json.dumps({"files": paths, "bdp_packets": bdp}))
    else:
        for p in paths:
            typer.echo(p)
