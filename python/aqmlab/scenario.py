"""The scenario file: pydantic models of the user-facing TOML.

A scenario is validated once, here, into typed models (every table forbids unknown
fields; every value with a unit keeps the user's text), then *resolved* into the
plain value that crosses into Rust (``crates/sim/src/scenario.rs``): topology
builders expanded into nodes and links, routes computed, random per-flow
parameters drawn from the seed, every unit converted to integers.

Every field, its default and its unit is listed in ``docs/user-guide.md``; the
``description`` of each field below says the same.

Use::

    s = Scenario.load("scenarios/dumbbell.toml")
    s = Scenario.model_validate({...})
    contract = s.resolve()          # dict, the contract with Rust
    text = s.resolved_json()        # the same, as JSON
"""

from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import ConfigDict, Field, PrivateAttr, ValidationError, create_model, model_validator

from . import units
from .qdiscs import Qdisc, large_qdisc, ns2_qdisc
from .resolve import resolve
from .schema import (
    Amount,
    Frequency,
    HeaderSize,
    Model,
    Packets,
    PayloadOrInf,
    PositiveTime,
    Rate,
    Size,
    Time,
    field_error,
    is_list,
    is_scalar,
    is_table,
    shape_union,
    tagged_union,
    user_error,
)

Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$", max_length=100)]
PositiveInt = Annotated[int, Field(ge=1)]
#: A flow's src or dst: a node or group name, or a list of them (concatenated).
Endpoint = Union[Name, Annotated[list[Name], Field(min_length=1)]]

# ---------------------------------------------------------------------------
# distributions


def _spread_models(q: Any, qname: str, example: str) -> list[type[Model]]:
    """Distributions drawn in Python, one value per member (sender, flow)."""

    class Uniform(Model):
        """Uniform on [low, high]."""

        dist: Literal["uniform"]
        low: q = Field(description=f'Lower bound, e.g. "{example}".')
        high: q = Field(description="Upper bound (>= low).")

    class Normal(Model):
        """Normal, truncated at 0 (negative draws are drawn again)."""

        dist: Literal["normal"]
        mean: q = Field(description="Mean.")
        std: q = Field(description="Standard deviation.")

    class Exponential(Model):
        """Exponential with the given mean."""

        dist: Literal["exponential"]
        mean: q = Field(description="Mean (> 0).")

    class Linear(Model):
        """Evenly spaced, not random: member i of n gets first + (last - first) * i / (n - 1)."""

        dist: Literal["linear"]
        first: q = Field(description="Value of the first member.")
        last: q = Field(description="Value of the last member.")

    models = [Uniform, Normal, Exponential, Linear]
    for m in models:
        m.__name__ = m.__qualname__ = f"{qname}{m.__name__}"
    return models


def _varying(q: Any, qname: str, example: str) -> Any:
    models = _spread_models(q, qname, example)
    dists = tagged_union("dist", models, "distribution")
    return shape_union(
        [
            ("value", q, is_scalar),
            ("list", list[q], is_list),
            ("dist", dists, is_table),
        ],
        f'a {qname.lower()} such as "{example}", a list with one per member, or a '
        'table {dist = "uniform" | "normal" | "exponential" | "linear", ...}',
    )


#: A time per member: ``"10ms"``, ``["1ms", "2ms"]`` or ``{dist = "uniform", ...}``.
VaryingTime = _varying(Time, "Time", "10ms")
#: A rate per member.
VaryingRate = _varying(Rate, "Rate", "100Mbps")


def _sim_dist_models(q: Any, qname: str, example: str) -> list[type[Model]]:
    """Distributions drawn by the simulator (Rust ``Dist``)."""

    class Uniform(Model):
        """Uniform on [low, high]."""

        dist: Literal["uniform"]
        low: q = Field(description=f'Lower bound, e.g. "{example}".')
        high: q = Field(description="Upper bound (>= low).")

    class Exponential(Model):
        """Exponential with the given mean."""

        dist: Literal["exponential"]
        mean: q = Field(description="Mean (> 0).")

    class Pareto(Model):
        """Pareto with the given mean and shape (> 1), as ns-2 parameterizes it."""

        dist: Literal["pareto"]
        mean: q = Field(description="Mean (> 0).")
        shape: float = Field(gt=1, description="Shape (> 1).")

    models = [Uniform, Exponential, Pareto]
    for m in models:
        m.__name__ = m.__qualname__ = f"{qname}{m.__name__}"
    return models


def _sim_dist(q: Any, qname: str, example: str) -> Any:
    dists = tagged_union("dist", _sim_dist_models(q, qname, example), "distribution")
    return shape_union(
        [("value", q, is_scalar), ("dist", dists, is_table)],
        f'a fixed {qname.lower()} such as "{example}" or a table '
        '{dist = "uniform" | "exponential" | "pareto", ...}',
    )


#: A random time drawn by the simulator: ``"2s"`` or ``{dist = "exponential", mean = "2s"}``.
TimeDist = _sim_dist(PositiveTime, "Time", "2s")
#: A random transfer size drawn by the simulator: ``"30pkt"`` or ``{dist = "pareto", ...}``.
SizeDist = _sim_dist(Amount, "Size", "30pkt")


# ---------------------------------------------------------------------------
# TCP


class CubicConfig(Model):
    """CUBIC's parameters (RFC 9438), read only with ``variant = "cubic"``. A value left
    out takes the simulator's default (``CubicParams`` in crates/sim/src/scenario.rs),
    the RFC's and Linux's."""

    c: Optional[float] = Field(None, gt=0, description="C of RFC 9438 section 4.2, packets/s^3 (default 0.4).")
    beta: Optional[float] = Field(
        None, gt=0, lt=1, description="beta_cubic (section 4.6): the window kept on a loss (default 0.7)."
    )
    fast_convergence: Optional[bool] = Field(None, description="Fast convergence, section 4.7 (default true).")
    tcp_friendliness: Optional[bool] = Field(
        None, description="The TCP-friendly region, section 4.3 (default true)."
    )
    hystart: Optional[bool] = Field(None, description="Linux's HyStart in slow start (default false).")
    recovery: Optional[Literal["sack", "newreno"]] = Field(
        None, description='Loss recovery: "sack" (ns-2 Sack1, as Linux recovers with SACK) or "newreno" (default "sack").'
    )


class TcpConfig(Model):
    """TCP parameters (ns-2 one-way TCP: windows count packets)."""

    variant: Literal["reno", "tahoe", "newreno", "sack", "cubic"] = Field(
        "reno", description='Congestion control: "reno", "tahoe", "newreno", "sack" or "cubic".'
    )
    packet_size: Size = Field("1000B", description="Data packet size on the wire, headers included.")
    header_size: HeaderSize = Field(
        "40B", description='TCP/IP header bytes inside packet_size ("0B": the packet is all payload).'
    )
    ack_size: Size = Field("40B", description="ACK (and SYN) size on the wire.")
    initial_window: Packets = Field(2, description="Initial congestion window, packets.")
    initial_ssthresh: Optional[Packets] = Field(
        None, description="Initial slow-start threshold, packets (default: receiver_window)."
    )
    receiver_window: Packets = Field(
        10000, description="Receiver's advertised window, packets (large on purpose)."
    )
    delayed_ack: bool = Field(False, description="Acknowledge every other packet.")
    delayed_ack_timeout: PositiveTime = Field("100ms", description="Delayed-ACK timer.")
    dupack_threshold: PositiveInt = Field(3, description="Duplicate ACKs that trigger fast retransmit.")
    min_rto: PositiveTime = Field("200ms", description="Minimum retransmission timeout.")
    max_rto: PositiveTime = Field("60s", description="Maximum retransmission timeout (backoff cap).")
    initial_rto: PositiveTime = Field("1s", description="RTO before the first RTT sample.")
    clock_granularity: PositiveTime = Field(
        "10ms", description="Timer granularity G of RFC 6298 (ns-2's tcpTick_)."
    )
    syn: bool = Field(False, description="SYN/SYN-ACK handshake before data (counted in completion time).")
    ecn: bool = Field(False, description="ECN-capable: mark ECT and halve on ECN echo.")
    rtt_estimator: Literal["rfc6298", "ns2"] = Field(
        "rfc6298",
        description='RTT estimator of the retransmission timer: "rfc6298" (a sample on every new ACK) or "ns2" '
        "(ns-2 2.35's tcp.cc: one timed packet at a time, in clock_granularity ticks, ns-2's back-off).",
    )
    timeout_cwnd: Literal["restart", "half"] = Field(
        "restart",
        description='The window after a retransmission timeout: "restart" (one packet, then slow start) or "half" '
        "(ssthresh, as after a fast retransmit: seed 000's \"dup. only\" Reno).",
    )
    cubic: CubicConfig = Field(default_factory=CubicConfig, description='CUBIC\'s parameters (variant = "cubic").')


#: The same fields, all optional: a flow's ``tcp = {...}`` overrides.
TcpOverride = create_model(
    "TcpOverride",
    __base__=Model,
    **{
        name: (Optional[info.annotation], Field(None, description=info.description))  # type: ignore[valid-type]
        for name, info in TcpConfig.model_fields.items()
    },
)


# ---------------------------------------------------------------------------
# topologies


def _default_qdisc() -> Any:
    return Field(default_factory=large_qdisc, description="Queue discipline (default: DropTail 100000pkt).")


def _access_qdisc() -> Any:
    return Field(
        default_factory=ns2_qdisc,
        description="Queue discipline of the access links leaving the hosts, their own queues "
        "(default: DropTail 50pkt, ns-2's).",
    )


def _delivery_qdisc() -> Any:
    return Field(
        default_factory=large_qdisc,
        description="Queue discipline of the access links into the hosts (default: DropTail 100000pkt).",
    )


def _graph_qdisc() -> Any:
    return Field(default_factory=ns2_qdisc, description="Queue discipline (default: DropTail 50pkt, ns-2's).")


def _loss() -> Any:
    return Field(
        0.0, ge=0.0, lt=1.0,
        description="Probability that a packet is lost on the link's wire, each packet independently "
        "(after its transmission; docs/simulator.md, \"Random loss\"), in [0, 1).",
    )


class Link(Model):
    """A bottleneck or hop: one rate, one delay, a queue discipline, optional random loss."""

    rate: Rate = Field(description='Link rate, e.g. "10Mbps".')
    delay: Time = Field(description='One-way propagation delay, e.g. "20ms".')
    qdisc: Qdisc = Field(description='Queue discipline, e.g. {kind = "droptail", limit = "100pkt"}.')
    loss: float = _loss()


class AccessLinks(Model):
    """Sender access links: one per sender; values may vary per sender."""

    rate: VaryingRate = Field(description="Rate: one value, a list (one per sender) or a distribution.")
    delay: VaryingTime = Field(description="One-way delay: one value, a list or a distribution.")


class ReceiverAccess(Model):
    """Receiver access links."""

    rate: Optional[VaryingRate] = Field(
        None, description="Rate (default: the fastest sender access link)."
    )
    delay: VaryingTime = Field("0ms", description="One-way delay.")


class RateOnly(Model):
    """Sender access links whose delay the topology computes."""

    rate: VaryingRate = Field(description="Rate: one value, a list or a distribution.")


class HostAccess(Model):
    """Access links of end hosts (one rate and delay for all)."""

    rate: Rate = Field(description="Rate.")
    delay: Time = Field("0ms", description="One-way delay.")


class Dumbbell(Model):
    """Senders s0..s{N-1} -> router r1 -> bottleneck -> router r2 -> receivers d0..d{M-1}."""

    kind: Literal["dumbbell"]
    senders: PositiveInt = Field(description="Number of sender hosts.")
    receivers: Optional[PositiveInt] = Field(None, description="Number of receiver hosts (default: senders).")
    bottleneck: Link = Field(description="The bottleneck r1 -> r2 (monitored).")
    access: AccessLinks = Field(description="Sender access links s{i} <-> r1.")
    receiver_access: ReceiverAccess = Field(default_factory=ReceiverAccess, description="Links r2 <-> d{j}.")
    access_qdisc: Qdisc = _access_qdisc()
    delivery_qdisc: Qdisc = _delivery_qdisc()
    reverse_qdisc: Qdisc = _default_qdisc()


class RttGroup(Model):
    """A class of senders with one two-way propagation delay."""

    senders: PositiveInt = Field(description="Number of senders in the group.")
    rtt: PositiveTime = Field(description="Two-way propagation delay of the group's paths.")
    name: Optional[Name] = Field(None, description="Group name for flows' src (default: g0, g1, ...).")


class MultiRtt(Model):
    """A dumbbell whose senders come in groups with given RTTs (seed 000 Fig 3.7)."""

    kind: Literal["multi_rtt"]
    groups: Annotated[list[RttGroup], Field(min_length=1)] = Field(description="The RTT classes.")
    receivers: Optional[PositiveInt] = Field(None, description="Number of receivers (default: all senders).")
    bottleneck: Link = Field(description="The bottleneck r1 -> r2 (monitored).")
    access: RateOnly = Field(description="Sender access link rate (delays are computed from rtt).")
    receiver_access: ReceiverAccess = Field(default_factory=ReceiverAccess, description="Links r2 <-> d{j}.")
    access_qdisc: Qdisc = _access_qdisc()
    delivery_qdisc: Qdisc = _delivery_qdisc()
    reverse_qdisc: Qdisc = _default_qdisc()


HopLinks = shape_union(
    [("one", Link, is_table), ("list", list[Link], is_list)],
    "a link table {rate, delay, qdisc} or a list of them, one per hop",
)


class ParkingLot(Model):
    """Routers r0..r{hops} in a line; through traffic crosses every hop, cross traffic
    one hop each (seed 000 Fig 3.9)."""

    kind: Literal["parking_lot"]
    hops: PositiveInt = Field(description="Number of bottleneck hops.")
    hop: HopLinks = Field(description="Every hop's link, or a list with one per hop (monitored).")
    through: PositiveInt = Field(1, description="Host pairs src{k} -> dst{k} crossing all hops.")
    cross: Annotated[int, Field(ge=0)] = Field(1, description="Host pairs per hop crossing that hop only.")
    access: HostAccess = Field(description="Access links of every end host.")
    access_qdisc: Qdisc = _access_qdisc()
    delivery_qdisc: Qdisc = _delivery_qdisc()
    reverse_qdisc: Qdisc = _default_qdisc()


class GraphNode(Model):
    name: Name = Field(description="Node name.")


class GraphLink(Model):
    """A link between two nodes; duplex links get a twin in the other direction."""

    from_: Name = Field(alias="from", description="Sending node.")
    to: Name = Field(description="Receiving node.")
    rate: Rate = Field(description="Rate.")
    delay: Time = Field(description="One-way propagation delay.")
    qdisc: Qdisc = _graph_qdisc()
    reverse_qdisc: Qdisc = _graph_qdisc()
    duplex: bool = Field(True, description="Also make the link to -> from (same rate and delay).")
    monitor: bool = Field(False, description="Sample this link's queue (the forward direction).")
    loss: float = _loss()
    reverse_loss: float = Field(0.0, ge=0.0, lt=1.0, description="The twin's loss (duplex links), as loss.")
    name: Optional[Name] = Field(None, description='Link name (default "from->to"; twin "to->from").')


class Graph(Model):
    """Any network: nodes, links, optional named groups of nodes."""

    kind: Literal["graph"]
    nodes: Annotated[
        list[shape_union([("name", Name, is_scalar), ("table", GraphNode, is_table)], "a node name or {name = ...}")],
        Field(min_length=2),
    ] = Field(description="Node names (strings or {name = ...} tables).")
    links: Annotated[list[GraphLink], Field(min_length=1)] = Field(description="Links.")
    groups: dict[Name, Annotated[list[Name], Field(min_length=1)]] = Field(
        default_factory=dict, description="Named lists of nodes, usable as a flow's src or dst."
    )


Topology = tagged_union("kind", [Dumbbell, MultiRtt, ParkingLot, Graph], "topology")


# ---------------------------------------------------------------------------
# flows


class TcpFlow(Model):
    """``count`` TCP flows; flow j goes from src[j % len] to dst[j % len]."""

    kind: Literal["tcp"]
    group: Optional[Name] = Field(None, description='Label in the results (default "tcp<index>").')
    count: PositiveInt = Field(1, description="Number of flows.")
    src: Optional[Endpoint] = Field(None, description="Source node(s) or group (dumbbell default: senders).")
    dst: Optional[Endpoint] = Field(None, description="Destination node(s) or group (default: the src group's receivers).")
    path: Optional[Annotated[list[Name], Field(min_length=2)]] = Field(
        None, description="Explicit path as node names (graph only; default: shortest by delay)."
    )
    start: VaryingTime = Field("0s", description="Start time: a value, a list (one per flow) or a distribution.")
    size: PayloadOrInf = Field("inf", description='Payload to send: "inf" (long-lived), bytes or "30pkt".')
    off_time: Optional[TimeDist] = Field(
        None, description="Idle time between transfers: makes the flow an on-off source."
    )
    keep_connection: bool = Field(
        False,
        description="On-off sources: each transfer continues the connection (threshold and RTT estimate "
        "carry over the idle time, and the window unless the idle time reaches an RTO, as ns-2's reused "
        "Agent/TCP) instead of opening a fresh one.",
    )
    trace_cwnd: bool = Field(False, description="Record each flow's congestion window.")
    stop: Optional[Time] = Field(
        None,
        description="When the application stops writing: no new data after it; what was sent is "
        "still delivered (default: it writes to the end). Later than every start.",
    )
    tcp: Optional[TcpOverride] = Field(None, description="Overrides of [tcp] for these flows.")  # type: ignore[valid-type]


class UdpFlow(Model):
    """``count`` UDP sources."""

    kind: Literal["udp"]
    group: Optional[Name] = Field(None, description='Label in the results (default "udp<index>").')
    count: PositiveInt = Field(1, description="Number of sources.")
    src: Optional[Endpoint] = Field(None, description="Source node(s) or group.")
    dst: Optional[Endpoint] = Field(None, description="Destination node(s) or group.")
    path: Optional[Annotated[list[Name], Field(min_length=2)]] = Field(None, description="Explicit path (graph only).")
    model: Literal["cbr", "poisson", "onoff"] = Field("cbr", description="Sending process.")
    rate: Rate = Field(description="Sending rate (during on periods for onoff), on the wire.")
    packet_size: Size = Field("1000B", description="Packet size on the wire, headers included.")
    header_size: HeaderSize = Field(
        "28B", description="IP and UDP header bytes inside packet_size (IPv4 20 + UDP 8); throughput counts the rest."
    )
    jitter: float = Field(0.0, ge=0.0, lt=1.0, description="cbr only: each gap uniform in interval*(1 +- jitter).")
    on: Optional[TimeDist] = Field(None, description="onoff only: on-period distribution.")
    off: Optional[TimeDist] = Field(None, description="onoff only: off-period distribution.")
    start: VaryingTime = Field("0s", description="Start time.")
    stop: Optional[VaryingTime] = Field(
        None, description="Stop time: a value, a list (one per flow) or a distribution (default: the end of the run)."
    )
    tagged: bool = Field(False, description="Tagged multimedia traffic (for disciplines that treat it apart).")

    @model_validator(mode="after")
    def _model_fields(self) -> "UdpFlow":
        if self.model == "onoff":
            for f in ("on", "off"):
                if getattr(self, f) is None:
                    raise field_error(f, 'required when model = "onoff"')
        else:
            for f in ("on", "off"):
                if getattr(self, f) is not None:
                    raise field_error(f, 'only allowed when model = "onoff"')
        if self.jitter and self.model != "cbr":
            raise field_error("jitter", 'only allowed when model = "cbr"')
        return self


class TcpArrivals(Model):
    """A Poisson process of TCP flow arrivals (seed 003's short flows)."""

    kind: Literal["tcp_arrivals"]
    group: Optional[Name] = Field(None, description='Label in the results (default "tcp_arrivals<index>").')
    src: Optional[Endpoint] = Field(None, description="Source node(s) or group.")
    dst: Optional[Endpoint] = Field(None, description="Destination node(s) or group.")
    rate: Optional[Frequency] = Field(None, description='Arrival rate, e.g. "50/s" (give rate or load).')
    load: Optional[float] = Field(
        None, gt=0, description="Offered load as a fraction of the slowest link on the routes."
    )
    size: SizeDist = Field(description='Flow size: "30pkt", or {dist = "pareto", mean = "30pkt", shape = 1.2}.')
    start: Time = Field("0s", description="First possible arrival.")
    stop: Optional[Time] = Field(None, description="No arrivals after this (default: end of the run).")
    tcp: Optional[TcpOverride] = Field(None, description="Overrides of [tcp].")  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _rate_or_load(self) -> "TcpArrivals":
        if (self.rate is None) == (self.load is None):
            raise field_error("rate", "give exactly one of rate and load")
        return self


Flow = tagged_union("kind", [TcpFlow, UdpFlow, TcpArrivals], "flow kind")


# ---------------------------------------------------------------------------
# traces

#: What a packet trace records: a packet offered to a link's discipline, dropped by it,
#: starting on the link's transmitter, reaching its host.
TraceEventName = Literal["enqueue", "drop", "dequeue", "deliver"]
TRACE_EVENTS: list[str] = ["enqueue", "drop", "dequeue", "deliver"]
#: A flow's number, as ``flow_id`` in flows.parquet.
FlowId = Annotated[int, Field(ge=0, lt=2**32)]
LinkNames = Annotated[list[Name], Field(min_length=1)]
FlowIds = Annotated[list[FlowId], Field(min_length=1)]


class PacketTrace(Model):
    """A per-packet event trace (trace.parquet): the events of the packets on the links
    and of the flows named."""

    links: Optional[LinkNames] = Field(None, description="Links whose packets are recorded (default: every link).")
    flows: Optional[FlowIds] = Field(
        None, description="Flows (their flow_id) whose packets are recorded (default: every flow)."
    )
    events: Annotated[list[TraceEventName], Field(min_length=1)] = Field(
        default_factory=lambda: list(TRACE_EVENTS),
        description='Events recorded: "enqueue", "drop", "dequeue", "deliver" (default: all).',
    )


class Pcap(Model):
    """A capture of links' packets in pcap format (trace.pcap), with synthesized IPv4
    and TCP/UDP headers."""

    links: LinkNames = Field(description="Links whose packets are captured, as each starts on the link.")
    flows: Optional[FlowIds] = Field(None, description="Flows captured (default: every flow).")


class TraceConfig(Model):
    """What a run records beyond its result tables (user guide, "Traces")."""

    packets: Optional[PacketTrace] = Field(None, description="A per-packet event trace (default: none).")
    pcap: Optional[Pcap] = Field(None, description="A pcap capture of chosen links (default: none).")
    flow_series: Optional[PositiveTime] = Field(
        None, description='Each flow\'s throughput over windows of this length, e.g. "100ms" (default: none).'
    )
    flow_stats: bool = Field(False, description="Each flow's one-way delay, jitter and reordering.")
    flow_queues: Optional[str] = Field(
        None,
        description="A link's name: the queues of its discipline each flow hashes to (sfq, mqfq, sfb), "
        "in flows.parquet's `queues` (default: none).",
    )
    queue_flows: Optional[str] = Field(
        None,
        description="A link's name: at every sample, the most and fewest sending flows in one queue of its "
        "discipline (sfq, mqfq, sfb, and the drr family with `queues`), in timeseries.parquet (default: none).",
    )


# ---------------------------------------------------------------------------
# the scenario


class Scenario(Model):
    """A whole scenario file: a value, checked and resolved once when it is made
    (change one by making another: :meth:`with_seed`, or ``model_validate`` of an
    edited :meth:`to_dict`)."""

    model_config = ConfigDict(frozen=True)
    _resolved: Any = PrivateAttr(None)

    name: Name = Field("scenario", description="Name; default output directory results/<name>.")
    description: str = Field("", description="Free text.")
    seed: Annotated[int, Field(ge=0, lt=2**64)] = Field(1, description="Master seed.")
    duration: PositiveTime = Field(description="Simulated time.")
    warmup: Time = Field("0s", description="Excluded from summaries (< duration).")
    sample_interval: Time = Field("100ms", description='Time-series sampling period ("0s": off).')
    ties: Literal["hashed", "numbered"] = Field(
        "hashed",
        description='The order of events of one kind at one nanosecond (packets arriving together at a queue): '
        '"hashed", drawn afresh each nanosecond so that no component wins ties for good; or "numbered", '
        "the lower-numbered link or flow first every time, the order ns-2 falls into on a dumbbell (not a "
        "model: it gives the lower-numbered flows the last places in a full queue; kept to reproduce ns-2 "
        "and measure that bias).",
    )
    tcp: TcpConfig = Field(default_factory=TcpConfig, description="Defaults for every TCP flow.")
    topology: Topology = Field(description="The network.")
    flows: Annotated[list[Flow], Field(min_length=1)] = Field(description="Traffic.")
    trace: Optional[TraceConfig] = Field(None, description="Traces (default: none).")

    # -- construction that speaks in UserErrors --------------------------------

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise user_error(Scenario, e) from None

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> "Scenario":  # type: ignore[override]
        from .limits import check_depth

        if isinstance(obj, dict):
            check_depth(obj)
        try:
            return super().model_validate(obj, *args, **kwargs)
        except ValidationError as e:
            raise user_error(cls, e) from None

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        """Read and validate a TOML scenario file. ``name`` defaults to the file's stem."""
        return cls.model_validate(cls.read(path))

    @staticmethod
    def read(path: str | Path) -> dict[str, Any]:
        """A TOML scenario file's tables, not yet validated (refused by name when it
        is too large, not UTF-8, not TOML, or nested too deep: limits.read_toml)."""
        from .limits import read_toml

        path = Path(path)
        data = read_toml(path)
        data.setdefault("name", path.stem)
        return data

    @classmethod
    def coerce(cls, obj: "Scenario | str | Path | dict[str, Any]", seed: int | None = None) -> "Scenario":
        """A Scenario from a Scenario, a path to a TOML file, or a dict; with ``seed``
        in place of its own if given (checked and resolved once)."""
        if isinstance(obj, Scenario):
            return obj if seed is None else obj.with_seed(seed)
        if isinstance(obj, (str, Path)):
            obj = cls.read(obj)
        if isinstance(obj, dict):
            return cls.model_validate(obj if seed is None else {**obj, "seed": seed})
        raise TypeError(f"expected a Scenario, a path or a dict, got {type(obj).__name__}")

    # -- checks across fields ----------------------------------------------------

    @model_validator(mode="after")
    def _check(self) -> "Scenario":
        duration = units.parse_time(self.duration)
        if units.parse_time(self.warmup) >= duration:
            raise field_error("warmup", f"must be less than duration ({self.duration}), got {units._show(self.warmup)}")
        if units.parse_time(self.sample_interval) > duration:
            raise field_error("sample_interval", "must not exceed duration")
        # Everything that needs the network (names, routes, list lengths, draws) is
        # checked by resolving, once (pydantic runs this validator again around a
        # custom __init__); resolution raises UserErrors naming the field, and
        # refuses a run too large for the machine (limits.py), before and after.
        if self._resolved is None:
            from .limits import check_declared

            check_declared(self)
            self._resolved = resolve(self)
        return self

    # -- output ------------------------------------------------------------------

    def with_seed(self, seed: int) -> "Scenario":
        """The same scenario with another master seed."""
        return Scenario.model_validate({**self.to_dict(), "seed": seed})

    def to_dict(self) -> dict[str, Any]:
        """The scenario as the user would write it, with every default filled in."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_toml(self) -> str:
        from .tomlout import dumps

        header = f"# aqmlab scenario {self.name!r}, every default filled in.\n"
        return header + dumps(self.to_dict())

    def resolve(self) -> dict[str, Any]:
        """The contract value for the simulator (``crates/sim/src/scenario.rs``), as
        resolved when the scenario was made (a copy: the caller may change it)."""
        import copy

        return copy.deepcopy(self._resolved)

    def resolved_json(self, indent: int | None = None) -> str:
        """:meth:`resolve` as JSON (sorted keys: the same scenario gives the same text)."""
        from .contract import dumps

        return dumps(self.resolve(), indent)
