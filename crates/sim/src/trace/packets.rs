//! The per-packet event trace: a row per event of a packet that the
//! filter selects, in the order the engine handled them (time order; at one
//! nanosecond, the engine's), as ns-2's trace files list `+`, `d`, `-` and
//! `r` lines.

use std::sync::Arc;

use aqmlab_qdisc::{DropReason, Ecn};

use super::Filter;
use crate::metrics::{Column, Table};
use crate::names::Names;
use crate::packet::{Kind, SimPacket};
use crate::scenario::TraceEvent;
use crate::Time;

/// One event of one packet (32 bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Row {
    time: Time,
    link: u32,
    flow: u32,
    seq: u32,
    size: u32,
    event: TraceEvent,
    kind: Kind,
    ecn: Ecn,
    /// A drop's reason.
    reason: Option<Reason>,
    /// A drop of a packet the discipline had queued.
    buffered: bool,
    ece: bool,
}

/// Why a packet was dropped, as the `reason` column names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Its link's discipline dropped it.
    Discipline(DropReason),
    /// Its link's wire lost it (`engine::wire`).
    Lost,
}

impl Reason {
    /// Every reason's name, in the order of `code`.
    fn names() -> impl Iterator<Item = &'static str> {
        DropReason::ALL
            .map(DropReason::as_str)
            .into_iter()
            .chain(["lost"])
    }

    fn code(self) -> u32 {
        match self {
            Reason::Discipline(d) => d.index() as u32,
            Reason::Lost => DropReason::ALL.len() as u32,
        }
    }
}

/// The events recorded so far.
pub struct PacketLog {
    filter: Filter,
    /// Which events are recorded, by `TraceEvent as usize`.
    events: [bool; 4],
    rows: Vec<Row>,
}

/// The names of `Kind`'s packets, in its order.
const KINDS: [&str; 5] = ["data", "ack", "syn", "syn_ack", "udp"];

impl PacketLog {
    pub fn new(filter: Filter, events: &[TraceEvent]) -> Self {
        let mut recorded = [false; 4];
        for &e in events {
            recorded[e as usize] = true;
        }
        Self {
            filter,
            events: recorded,
            rows: Vec::new(),
        }
    }

    /// `event` happened to `packet` at `link` now; a drop says why, and
    /// whether the discipline had queued the packet.
    pub fn record(
        &mut self,
        now: Time,
        event: TraceEvent,
        link: u32,
        packet: &SimPacket,
        drop: Option<(Reason, bool)>,
    ) {
        if !self.events[event as usize] || !self.filter.matches(link, packet.flow) {
            return;
        }
        self.rows.push(Row {
            time: now,
            link,
            flow: packet.flow,
            seq: packet.seq,
            size: packet.size,
            event,
            kind: packet.kind,
            ecn: packet.ecn,
            reason: drop.map(|(reason, _)| reason),
            buffered: drop.is_some_and(|(_, buffered)| buffered),
            ece: packet.ece,
        });
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The trace as a table; `link_name` names a link by its number.
    pub fn table<'a>(&self, link_name: impl Fn(u32) -> std::borrow::Cow<'a, str>) -> Table {
        let rows = &self.rows;
        let column = |f: fn(&Row) -> u64| Column::U64(rows.iter().map(f).collect());
        let labels = |names: &[&str], code: fn(&Row) -> u32| Column::Cat {
            values: Arc::new(names.iter().fold(Names::default(), |mut all, n| {
                all.push(n);
                all
            })),
            codes: rows.iter().map(code).collect(),
        };
        let events = TraceEvent::ALL.map(TraceEvent::as_str);
        let reasons: Vec<&str> = [""].into_iter().chain(Reason::names()).collect();
        let mut t = Table::default();
        t.push("time_ns", column(|r| r.time));
        t.push("event", labels(&events, |r| r.event as u32));
        t.push("link", self.links(link_name));
        t.push("flow", column(|r| r.flow.into()));
        t.push("kind", labels(&KINDS, |r| r.kind as u32));
        t.push("seq", column(|r| r.seq.into()));
        t.push("size", column(|r| r.size.into()));
        t.push(
            "ecn",
            labels(&["not_ect", "ect", "ce"], |r| ecn_code(r.ecn)),
        );
        t.push("ece", Column::Bool(rows.iter().map(|r| r.ece).collect()));
        t.push(
            "reason",
            labels(&reasons, |r| r.reason.map_or(0, |d| d.code() + 1)),
        );
        t.push(
            "buffered",
            Column::Bool(rows.iter().map(|r| r.buffered).collect()),
        );
        t
    }

    /// The link column: each link's name once, in order of first use.
    fn links<'a>(&self, link_name: impl Fn(u32) -> std::borrow::Cow<'a, str>) -> Column {
        let mut values = Names::default();
        let mut code_of = std::collections::HashMap::new();
        let codes = (self.rows.iter())
            .map(|r| {
                *code_of
                    .entry(r.link)
                    .or_insert_with(|| values.intern(&link_name(r.link)))
            })
            .collect();
        Column::Cat {
            values: Arc::new(values),
            codes,
        }
    }
}

fn ecn_code(ecn: Ecn) -> u32 {
    match ecn {
        Ecn::NotEct => 0,
        Ecn::Ect => 1,
        Ecn::Ce => 2,
    }
}

#[cfg(test)]
mod tests {
    use aqmlab_qdisc::{DropReason, Dropped};

    use super::{Filter, PacketLog, Reason};
    use crate::metrics::Column;
    use crate::packet::Kind;
    use crate::scenario::TraceEvent;
    use crate::trace::tests::packet;

    #[test]
    fn the_log_keeps_the_events_and_packets_asked_for() {
        let filter = Filter::new(Some(&[0, 2]), Some(&[1]), 3);
        let mut log = PacketLog::new(filter, &[TraceEvent::Drop, TraceEvent::Dequeue]);
        let p = packet(1, 7, Kind::Data);
        log.record(5, TraceEvent::Enqueue, 0, &p, None); // not an event asked for
        log.record(6, TraceEvent::Dequeue, 1, &p, None); // not a link asked for
        log.record(7, TraceEvent::Dequeue, 2, &packet(0, 1, Kind::Data), None); // nor a flow
        log.record(8, TraceEvent::Dequeue, 2, &p, None);
        let dropped = Dropped {
            packet: packet(1, 9, Kind::Data),
            reason: DropReason::PushOut,
            buffered: true,
        };
        let drop = Some((Reason::Discipline(dropped.reason), dropped.buffered));
        log.record(9, TraceEvent::Drop, 0, &dropped.packet, drop);
        log.record(10, TraceEvent::Drop, 2, &p, Some((Reason::Lost, false)));
        assert_eq!(log.len(), 3);
        let names = ["a", "b", "c"];
        let t = log.table(|l| names[l as usize].into());
        assert_eq!(t.u64("time_ns"), [8, 9, 10]);
        assert_eq!(t.strings("event"), ["dequeue", "drop", "drop"]);
        assert_eq!(t.strings("link"), ["c", "a", "c"]);
        assert_eq!(t.u64("flow"), [1, 1, 1]);
        assert_eq!(t.u64("seq"), [7, 9, 7]);
        assert_eq!(t.strings("kind"), ["data", "data", "data"]);
        assert_eq!(t.strings("ecn"), ["ect", "ect", "ect"]);
        assert_eq!(t.strings("reason"), ["", "push_out", "lost"]);
        let buffered = Column::Bool(vec![false, true, false]);
        assert_eq!(t.get("buffered"), Some(&buffered));
        let lengths: Vec<usize> = t.columns.iter().map(|(_, c)| c.len()).collect();
        assert!(lengths.iter().all(|&n| n == 3), "{lengths:?}");
    }
}
