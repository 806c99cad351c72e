//! Links whose queue is the kernel's: the baseline of `aqmlab emulate
//! --baseline kernel` (docs/emulator.md, "The kernel as the baseline").
//!
//! Such a link hands each packet to a TUN device (`into`) in a namespace
//! where the kernel forwards it out of another TUN device (`from`), whose
//! `tc` qdisc (tbf or htb over pfifo or bfifo, or any qdisc the kernel has)
//! queues and shapes it; the router reads it back from `from` as the kernel
//! releases it and puts it on the link's wire (its propagation delay). The
//! kernel's drops are not seen packet by packet: the link counts what went
//! in and came out, and `aqmlab emulate` reads the qdisc's own counters.
//!
//! A packet's measurement (its flow, when it entered the router) waits here
//! while the kernel holds it, found again by its 5-tuple and IP
//! identification.

use std::collections::HashMap;

use aqmlab_qdisc::Time;

use crate::packet::{FiveTuple, RealPacket};

/// What the router knows of a packet the kernel holds.
#[derive(Clone, Copy)]
pub struct Held {
    pub entered: Time,
    pub handed: Time,
}

#[derive(Default)]
pub struct KernelPassage {
    /// Packets to write to each port's `into` device, in order.
    pub outbox: Vec<(u32, RealPacket)>,
    held: HashMap<(FiveTuple, u16), Held>,
}

/// Packets held longer than this are taken to be dropped by the kernel
/// and forgotten (no kernel queue here holds one for a minute).
const FORGET_NS: Time = 60_000_000_000;

impl KernelPassage {
    /// Hand `packet` to the kernel through `port` at `now`.
    pub fn hand(&mut self, port: u32, tuple: FiveTuple, packet: RealPacket, now: Time) {
        if self.held.len() > 1 << 20 {
            self.held
                .retain(|_, h| now.saturating_sub(h.handed) < FORGET_NS);
        }
        self.held.insert(
            (tuple, ip_id(&packet.data)),
            Held {
                entered: packet.entered,
                handed: now,
            },
        );
        self.outbox.push((port, packet));
    }

    /// What was known of a packet the kernel released.
    pub fn release(&mut self, tuple: FiveTuple, data: &[u8]) -> Option<Held> {
        self.held.remove(&(tuple, ip_id(data)))
    }
}

fn ip_id(data: &[u8]) -> u16 {
    u16::from_be_bytes([data[4], data[5]])
}
