//! DropTail: a FIFO that refuses arrivals when full. Linux `pfifo`/`bfifo`;
//! ns-2/ns-3 `DropTail`. The baseline every seed compares against.

use std::collections::VecDeque;
use std::num::NonZeroU64;

use crate::params::{params, positive_limit, SpecError};
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// DropTail's one parameter.
    pub struct DropTailParams {
        required {
            /// The buffer, in packets (Linux `pfifo`) or bytes (`bfifo`); no
            /// default: every seed sizes it for its experiment.
            pub limit: Limit [Buffer],
        }
    }
}

impl QdiscParams for DropTailParams {
    const SUMMARY: &'static str = "FIFO; drops arrivals that do not fit";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)
    }

    fn build<P: Packet + Send + 'static>(&self, _seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(DropTail::new(self.limit))
    }
}

pub struct DropTail<P> {
    /// Allocated when the first packet waits: most FIFOs of a simulated
    /// network (every access link) never hold one, and an empty `VecDeque`
    /// with its byte count would cost them 40 bytes each.
    buffer: Option<Box<Buffer<P>>>,
    limit: PackedLimit,
}

/// A [`Limit`] in 8 bytes that are never zero. A FIFO is then 16 bytes
/// with a niche, which tells `Qdisc` a FIFO from a boxed discipline
/// without a tag of its own: what lets a link's pass-through state fit one
/// cache line (the simulator's `Link`).
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

pub(crate) struct Buffer<P> {
    queue: VecDeque<P>,
    bytes: u64,
}

/// Short FIFOs' buffers that emptied, lent to the next FIFO that needs
/// one: a burst on an access link (a sender's window opening) then costs
/// no allocation. Every link's FIFO fills and empties its own buffer
/// again and again; allocating it each time and freeing it after (two
/// blocks, the box and the ring) was 6-8% of the instructions of a
/// dumbbell's run. Kept by the caller in the `Verdicts` sink it passes to
/// every call, at most `Spares::MOST` of them, so the memory they hold
/// stays small whatever the number of links. Boxed on purpose: a FIFO
/// holds its buffer boxed, and the box itself is what is lent.
#[allow(clippy::vec_box)]
pub(crate) struct Spares<P>(Vec<Box<Buffer<P>>>);

impl<P> Default for Spares<P> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<P> std::fmt::Debug for Spares<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Spares({})", self.0.len())
    }
}

impl<P> Spares<P> {
    const MOST: usize = 64;

    /// An empty buffer: a spare one, or a new one.
    #[inline]
    fn take(&mut self) -> Box<Buffer<P>> {
        self.0.pop().unwrap_or_else(|| {
            Box::new(Buffer {
                queue: VecDeque::new(),
                bytes: 0,
            })
        })
    }

    /// Keep an empty buffer for the next FIFO, or free it.
    #[inline]
    fn give(&mut self, buffer: Box<Buffer<P>>) {
        debug_assert!(buffer.queue.is_empty() && buffer.bytes == 0);
        if self.0.len() < Self::MOST {
            self.0.push(buffer);
        }
    }
}

impl<P: Packet> DropTail<P> {
    pub fn new(limit: Limit) -> Self {
        Self {
            buffer: None,
            limit: PackedLimit::new(limit),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buffer.as_ref().is_none_or(|b| b.queue.is_empty())
    }

    #[inline]
    pub fn admits(&self, packet: &P) -> bool {
        self.limit.admits(self.backlog(), packet.size())
    }

    /// Whether the FIFO, empty, admits a packet of `size` bytes.
    pub fn admits_into_empty(&self, size: u32) -> bool {
        self.limit.admits_into_empty(size)
    }

    /// Whether the FIFO is empty and admits `packet`: whether it can let
    /// the packet pass an idle link.
    #[inline]
    pub fn lets_pass(&self, packet: &P) -> bool {
        self.is_empty() && self.limit.admits_into_empty(packet.size())
    }

    /// Queue a packet the FIFO admits (`admits`).
    #[inline(always)]
    pub fn push(&mut self, packet: P, verdicts: &mut Verdicts<P>) {
        let buffer = self.buffer.get_or_insert_with(|| verdicts.spares.take());
        buffer.bytes += packet.size() as u64;
        buffer.queue.push_back(packet);
    }

    /// Where the buffer's state lies, if one is allocated, without reading
    /// it: for a caller that fetches it early (the box is a cache miss of
    /// its own).
    #[inline]
    pub fn buffer_state(&self) -> Option<&impl Sized> {
        self.buffer.as_deref()
    }

    /// The first packet waiting, which `release_while` reads first.
    #[inline]
    pub fn front(&self) -> Option<&P> {
        self.buffer.as_ref()?.queue.front()
    }

    /// The packets at the front for which `leaves` holds leave, uncopied
    /// (a reserving link's buffer holds copies whose departure was already
    /// computed): returns how many, and their bytes.
    #[inline]
    pub fn release_while(
        &mut self,
        leaves: impl Fn(&P) -> bool,
        verdicts: &mut Verdicts<P>,
    ) -> Backlog {
        let mut left = Backlog {
            packets: 0,
            bytes: 0,
        };
        let Some(buffer) = self.buffer.as_mut() else {
            return left;
        };
        while let Some(p) = buffer.queue.front().filter(|p| leaves(p)) {
            left.packets += 1;
            left.bytes += p.size() as u64;
            buffer.queue.pop_front();
        }
        buffer.bytes -= left.bytes;
        self.return_if_spent(verdicts);
        left
    }

    /// A short burst (an access link in slow start) is over: give the
    /// memory back rather than keep it for every flow. A buffer that has
    /// held more (a bottleneck) keeps its allocation.
    #[inline]
    fn return_if_spent(&mut self, verdicts: &mut Verdicts<P>) {
        if let Some(buffer) = self
            .buffer
            .take_if(|b| b.queue.is_empty() && b.queue.capacity() <= SMALL)
        {
            verdicts.spares.give(buffer);
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for DropTail<P> {
    fn name(&self) -> &'static str {
        "droptail"
    }

    #[inline]
    fn enqueue(&mut self, packet: P, _now: Time, verdicts: &mut Verdicts<P>) {
        if self.admits(&packet) {
            self.push(packet, verdicts);
        } else {
            verdicts.refuse(packet, DropReason::Overflow);
        }
    }

    #[inline]
    fn dequeue(&mut self, _now: Time, verdicts: &mut Verdicts<P>) -> Option<P> {
        let buffer = self.buffer.as_mut()?;
        let packet = buffer.queue.pop_front()?;
        buffer.bytes -= packet.size() as u64;
        self.return_if_spent(verdicts);
        Some(packet)
    }

    #[inline]
    fn backlog(&self) -> Backlog {
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
}

#[cfg(test)]
mod tests {
    use super::PackedLimit;
    use crate::{Backlog, Limit};

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
}
