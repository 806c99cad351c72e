use crate::stats::DropReason;

/// A packet a discipline discarded.
#[derive(Clone, Debug, PartialEq)]
pub struct Dropped<P> {
    pub packet: P,
    pub reason: DropReason,
    /// True if the packet had been written into the buffer before it was
    /// dropped (push-out, head drop), false if it was refused on arrival.
    /// Seed 000, chapter 6: such drops cost memory bandwidth twice.
    pub buffered: bool,
}

/// The sink in which a discipline reports what it did besides queueing and
/// dequeueing: the packets it dropped and the packets it marked. The caller
/// owns it and drains it after each call, so it allocates nothing once warm.
#[derive(Debug)]
pub struct Verdicts<P> {
    dropped: Vec<Dropped<P>>,
    marked: u64,
    marked_bytes: u64,
}

impl<P> Default for Verdicts<P> {
    fn default() -> Self {
        Self {
            dropped: Vec::new(),
            marked: 0,
            marked_bytes: 0,
        }
    }
}

impl<P> Verdicts<P> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Refuse an arriving packet that was never written into the buffer.
    #[inline]
    pub fn refuse(&mut self, packet: P, reason: DropReason) {
        self.dropped.push(Dropped {
            packet,
            reason,
            buffered: false,
        });
    }

    /// Discard a packet that had been queued.
    #[inline]
    pub fn discard(&mut self, packet: P, reason: DropReason) {
        self.dropped.push(Dropped {
            packet,
            reason,
            buffered: true,
        });
    }

    /// Count an ECN mark of `bytes` bytes (the discipline sets CE itself).
    #[inline]
    pub fn mark(&mut self, bytes: u32) {
        self.marked += 1;
        self.marked_bytes += bytes as u64;
    }

    pub fn dropped(&self) -> &[Dropped<P>] {
        &self.dropped
    }

    pub fn marked(&self) -> u64 {
        self.marked
    }

    pub fn marked_bytes(&self) -> u64 {
        self.marked_bytes
    }

    /// Where the sink stands now, so that what a call adds can be told apart.
    #[inline]
    pub(crate) fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            dropped: self.dropped.len(),
            marked: self.marked,
            marked_bytes: self.marked_bytes,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.dropped.is_empty() && self.marked == 0
    }

    /// Hand the drops to `each` and reset the sink for the next call.
    #[inline]
    pub fn drain(&mut self, mut each: impl FnMut(Dropped<P>)) {
        for d in self.dropped.drain(..) {
            each(d);
        }
        self.marked = 0;
        self.marked_bytes = 0;
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Checkpoint {
    pub dropped: usize,
    pub marked: u64,
    pub marked_bytes: u64,
}
