//! The reserving FIFO (`reserve.rs`): a FIFO whose departures its link
//! computes at each arrival. The buffer holds a copy of each packet still
//! waiting, its `at` the time it will start, so that admission, backlog and
//! the counters are the FIFO's own; the copies leave the buffer, counted as
//! departures, once their start has passed (`release`). A packet that
//! finds the transmitter idle and the buffer empty passes without touching
//! the buffer, counted in the FIFO itself (`pass_through`).
//!
//! It counts exactly as `aqmlab_qdisc::DropTail` in a `Qdisc` counts the same
//! packets queued and dequeued at their times, which the reference engine
//! runs instead (tests/fifo.rs).

use std::collections::VecDeque;
use std::num::NonZeroU64;

use aqmlab_qdisc::{Backlog, DropReason, Limit, QdiscCounters, QdiscStats, Verdicts};

use crate::packet::SimPacket;
use crate::Time;

/// A FIFO whose departures are reserved at arrival. 24 bytes with a niche:
/// with the discipline it stands in for, it fits the link's hot line
/// (`engine::link::Link`).
pub struct ReservingFifo {
    /// Allocated when the first packet waits: most FIFOs of a simulated
    /// network (every access link) never hold one, and an empty `VecDeque`
    /// with its byte count would cost them 40 bytes each.
    buffer: Option<Box<Buffer>>,
    limit: PackedLimit,
    passed: Passed,
}

impl ReservingFifo {
    pub fn new(limit: Limit) -> Self {
        Self {
            buffer: None,
            limit: PackedLimit::new(limit),
            passed: Passed::default(),
        }
    }

    /// Let a packet of `size` bytes pass an idle transmitter, if the buffer
    /// is empty and admits it: counted in and out at once, in the FIFO
    /// itself (`counters` are asked for only when its 32-bit counts are
    /// full, every 4 GB). Returns false, having done nothing, otherwise.
    #[inline]
    pub fn pass_through<'c>(
        &mut self,
        size: u32,
        counters: impl FnOnce() -> &'c mut QdiscCounters,
    ) -> bool {
        if self.buffer.as_ref().is_some_and(|b| !b.queue.is_empty())
            || !self.limit.admits_into_empty(size)
        {
            return false;
        }
        let p = &mut self.passed;
        match (p.packets.checked_add(1), p.bytes.checked_add(size)) {
            (Some(packets), Some(bytes)) => *p = Passed { packets, bytes },
            _ => p.empty_into(counters(), size),
        }
        true
    }

    /// Whether the FIFO, empty, admits a packet of `size` bytes.
    pub fn admits_into_empty(&self, size: u32) -> bool {
        self.limit.admits_into_empty(size)
    }

    /// A packet arrives to wait: its copy, `at` its start, joins the
    /// buffer if the FIFO admits it; if not, it is counted refused and
    /// handed to `verdicts`. Returns whether it was admitted.
    #[inline]
    pub fn wait(
        &mut self,
        counters: &mut QdiscCounters,
        copy: SimPacket,
        spares: &mut Spares,
        verdicts: &mut Verdicts<SimPacket>,
    ) -> bool {
        counters.count_arrival(copy.size);
        if !self.limit.admits(self.backlog(), copy.size) {
            counters.count_drop(DropReason::Overflow, copy.size, false);
            verdicts.refuse(copy, DropReason::Overflow);
            return false;
        }
        let buffer = self.buffer.get_or_insert_with(|| spares.take());
        buffer.bytes += copy.size as u64;
        buffer.queue.push_back(copy);
        counters.note_peak(buffer.queue.len() as u64);
        true
    }

    /// The copies that started before `before` leave, counted as
    /// departures (nothing is counted if none leave: the counters are a
    /// cache line an idle link's packet otherwise never reads).
    #[inline]
    pub fn release(&mut self, before: Time, counters: &mut QdiscCounters, spares: &mut Spares) {
        let Some(buffer) = self.buffer.as_mut() else {
            return;
        };
        let (mut packets, mut bytes) = (0, 0);
        while let Some(p) = buffer.queue.front().filter(|p| p.at < before) {
            packets += 1;
            bytes += p.size as u64;
            buffer.queue.pop_front();
        }
        if packets > 0 {
            buffer.bytes -= bytes;
            counters.count_departures(packets, bytes);
            self.return_if_spent(spares);
        }
    }

    /// A short burst (an access link in slow start) is over: give the
    /// memory back rather than keep it for every flow. A buffer that has
    /// held more (a bottleneck) keeps its allocation.
    #[inline]
    fn return_if_spent(&mut self, spares: &mut Spares) {
        if let Some(buffer) = self
            .buffer
            .take_if(|b| b.queue.is_empty() && b.queue.capacity() <= SMALL)
        {
            spares.give(buffer);
        }
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        match &self.buffer {
            Some(b) => Backlog {
                packets: b.queue.len() as u64,
                bytes: b.bytes,
            },
            None => Backlog {
                packets: 0,
                bytes: 0,
            },
        }
    }

    /// Everything counted: `counters` with the packets let through.
    pub fn stats<'a>(&self, counters: &'a QdiscCounters) -> QdiscStats<'a> {
        QdiscStats::new(
            counters,
            self.passed.packets.into(),
            self.passed.bytes.into(),
        )
    }

    /// Where the buffer's state lies, if one is allocated, without reading
    /// it: for a caller that fetches it early (the box is a cache miss of
    /// its own).
    #[inline]
    pub fn buffer_state(&self) -> Option<&impl Sized> {
        self.buffer.as_deref()
    }

    /// The first copy waiting, which `release` reads first.
    #[inline]
    pub fn front(&self) -> Option<&SimPacket> {
        self.buffer.as_ref()?.queue.front()
    }
}

/// Packets let through an idle FIFO (`ReservingFifo::pass_through`), each
/// counted once here rather than as an arrival and a departure in the
/// counters apart; 32 bits each, added to the counters before they would
/// overflow.
#[derive(Clone, Copy, Default)]
struct Passed {
    packets: u32,
    bytes: u32,
}

impl Passed {
    /// Add these and one more packet of `size` bytes to `counters`.
    #[cold]
    fn empty_into(&mut self, counters: &mut QdiscCounters, size: u32) {
        let (packets, bytes) = (self.packets as u64 + 1, self.bytes as u64 + size as u64);
        counters.count_passed(packets, bytes);
        *self = Passed::default();
    }
}

/// A [`Limit`] in 8 bytes that are never zero: the niche that lets a link
/// tell a reserving FIFO from a discipline without a tag of its own.
#[derive(Clone, Copy)]
struct PackedLimit(NonZeroU64);

impl PackedLimit {
    /// The limit counts bytes (else packets).
    const BYTES: u64 = 1;
    /// Set in every packed limit, so that none is zero.
    const SET: u64 = 2;
    /// The largest limit kept as it is. A larger one is as good as no
    /// limit (no buffer reaches 2^62 packets or bytes) and is kept as this.
    const MAX: u64 = (1 << 62) - 1;

    fn new(limit: Limit) -> Self {
        let (max, unit) = match limit {
            Limit::Packets(max) => (max, 0),
            Limit::Bytes(max) => (max, Self::BYTES),
        };
        let packed = max.min(Self::MAX) << 2 | Self::SET | unit;
        Self(NonZeroU64::new(packed).expect("SET is never zero"))
    }

    /// `Limit::admits`, without unpacking the limit first.
    #[inline]
    fn admits(self, backlog: Backlog, size: u32) -> bool {
        let packed = self.0.get();
        let max = packed >> 2;
        if packed & Self::BYTES != 0 {
            backlog.bytes + size as u64 <= max
        } else {
            backlog.packets < max
        }
    }

    /// `admits` into an empty buffer, without a branch on the unit (every
    /// packet through an idle link asks): a packet limit admits if it is
    /// not zero, a byte limit if the packet fits.
    #[inline]
    fn admits_into_empty(self, size: u32) -> bool {
        let packed = self.0.get();
        let bytes = packed & Self::BYTES;
        // Packets: 0 < max; bytes: size < max + 1.
        (size as u64 & bytes.wrapping_neg()) < (packed >> 2) + bytes
    }

    #[cfg(test)]
    fn get(self) -> Limit {
        let packed = self.0.get();
        let max = packed >> 2;
        if packed & Self::BYTES != 0 {
            Limit::Bytes(max)
        } else {
            Limit::Packets(max)
        }
    }
}

/// Buffers of at most this capacity are given back when they empty.
const SMALL: usize = 8;

pub struct Buffer {
    queue: VecDeque<SimPacket>,
    bytes: u64,
}

/// Short FIFOs' buffers that emptied, lent to the next FIFO that needs
/// one: a burst on an access link (a sender's window opening) then costs
/// no allocation. Every link's FIFO fills and empties its own buffer again
/// and again; allocating it each time and freeing it after (two blocks,
/// the box and the ring) was 6-8% of the instructions of a dumbbell's run.
/// At most `Spares::MOST` of them, so the memory they hold stays small
/// whatever the number of links. Boxed on purpose: a FIFO holds its buffer
/// boxed, and the box itself is what is lent.
#[allow(clippy::vec_box)]
#[derive(Default)]
pub struct Spares(Vec<Box<Buffer>>);

impl Spares {
    const MOST: usize = 64;

    /// An empty buffer: a spare one, or a new one.
    #[inline]
    fn take(&mut self) -> Box<Buffer> {
        self.0.pop().unwrap_or_else(|| {
            Box::new(Buffer {
                queue: VecDeque::new(),
                bytes: 0,
            })
        })
    }

    /// Keep an empty buffer for the next FIFO, or free it.
    #[inline]
    fn give(&mut self, buffer: Box<Buffer>) {
        debug_assert!(buffer.queue.is_empty() && buffer.bytes == 0);
        if self.0.len() < Self::MOST {
            self.0.push(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqmlab_qdisc::{Ecn, Qdisc, QdiscSpec, TrafficClass};

    #[test]
    fn a_packed_limit_reads_back() {
        let backlogs = [(0, 0), (0, 999), (1, 1000), (564, 564_000), (565, 565_000)];
        for max in [0, 1, 565, 1000, 1 << 40, PackedLimit::MAX] {
            for limit in [Limit::Packets(max), Limit::Bytes(max)] {
                let packed = PackedLimit::new(limit);
                assert_eq!(packed.get(), limit);
                for (packets, bytes) in backlogs {
                    let b = Backlog { packets, bytes };
                    assert_eq!(packed.admits(b, 1), limit.admits(b, 1), "{limit:?} {b:?}");
                }
                let empty = Backlog {
                    packets: 0,
                    bytes: 0,
                };
                for size in [0, 1, 564, 565, 1000, 1001, u32::MAX] {
                    assert_eq!(
                        packed.admits_into_empty(size),
                        limit.admits(empty, size),
                        "{limit:?} {size}"
                    );
                }
            }
        }
        // Past 2^62, as good as no limit.
        let unlimited = PackedLimit::new(Limit::Bytes(u64::MAX)).get();
        assert_eq!(unlimited, Limit::Bytes(PackedLimit::MAX));
    }

    fn packet(size: u32, at: Time) -> SimPacket {
        SimPacket {
            stamp: 0,
            at,
            flow: 0,
            route: 0,
            seq: 0,
            size,
            epoch: 0,
            hop: 0,
            kind: crate::packet::Kind::Data,
            class: TrafficClass::Tcp,
            ecn: Ecn::NotEct,
            ece: false,
            tag: 0,
        }
    }

    /// Packets let through, waiting, refused and released count as a
    /// DropTail counts them queued and dequeued, also past the 32 bits
    /// the passed ones are kept in.
    #[test]
    fn counts_as_droptail_does() {
        let limit = Limit::Packets(2);
        let (mut fifo, mut counters) = (ReservingFifo::new(limit), QdiscCounters::default());
        let (mut spares, mut verdicts) = (Spares::default(), Verdicts::new());
        let big = 1 << 31;
        for _ in 0..3 {
            assert!(fifo.pass_through(big, || &mut counters));
        }
        assert!(
            counters != QdiscCounters::default(),
            "the 32-bit count overflowed"
        );
        for at in [10, 20] {
            assert!(fifo.wait(&mut counters, packet(100, at), &mut spares, &mut verdicts));
        }
        assert!(!fifo.wait(&mut counters, packet(100, 30), &mut spares, &mut verdicts));
        assert!(
            !fifo.pass_through(100, || &mut counters),
            "not while some wait"
        );
        fifo.release(20, &mut counters, &mut spares);
        assert_eq!(fifo.backlog().packets, 1);

        let spec = QdiscSpec::Droptail(aqmlab_qdisc::DropTailParams { limit });
        let (mut q, mut counted) = (Qdisc::from_spec(&spec, 0), QdiscCounters::default());
        for size in [big, big, big, 100, 100, 100] {
            q.enqueue(&mut counted, packet(size, 0), 0, &mut verdicts);
            if size == big {
                q.dequeue(&mut counted, 0, &mut verdicts).unwrap();
            }
        }
        q.dequeue(&mut counted, 0, &mut verdicts).unwrap();
        assert_eq!(fifo.stats(&counters), q.stats(&counted));
        assert_eq!(fifo.backlog(), q.backlog());
    }
}
