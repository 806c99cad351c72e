//! One emulated link: a discipline in front of a transmitter of exact rate,
//! then a wire of fixed propagation delay with optional random loss.
//!
//! The transmitter is a token bucket of depth one packet: a packet of `s`
//! bytes occupies it for exactly `8 s / rate` seconds, carried to the
//! nanosecond (the remainder of each division is kept for the next packet,
//! so a backlogged link sends at its rate with no drift). Its times are the
//! link's own schedule, not the moments the router happens to wake: a
//! wake-up that comes late does not slow the link down, it only delivers
//! later (that lateness is measured, `Network::lateness`).

use std::collections::VecDeque;

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::{Backlog, Dropped, Qdisc, QdiscCounters, QdiscSpec, Time, Verdicts};

use crate::measure::Histogram;
use crate::packet::RealPacket;

const NS_PER_S: u128 = 1_000_000_000;

/// What a link does next, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// The packet on the transmitter is fully sent.
    Sent,
    /// The packet at the head of the wire reaches the far end.
    Arrives,
    /// The discipline's clock (a timer, or a non-work-conserving release).
    Wakeup,
}

pub struct Link {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay: Time,
    pub monitor: bool,
    /// The kernel port whose qdisc is this link's queue and transmitter
    /// (kernel.rs), if the kernel's.
    pub kernel_port: Option<u32>,
    pub qdisc: Qdisc<RealPacket>,
    pub counters: QdiscCounters,
    verdicts: Verdicts<RealPacket>,
    /// The packet being sent and when its last bit leaves.
    sending: Option<(Time, RealPacket)>,
    /// Bits times 1e9 not yet turned into whole nanoseconds.
    carry: u128,
    wire: VecDeque<(Time, RealPacket)>,
    loss: f64,
    rng: Rng,
    /// Packets and bytes lost on the wire.
    pub lost: u64,
    pub lost_bytes: u64,
    /// Time from entering the queue to starting on the transmitter.
    pub sojourn: Histogram,
}

impl Link {
    pub fn new(
        name: String,
        ends: (u32, u32),
        rate_bps: u64,
        delay: Time,
        loss: f64,
        spec: &QdiscSpec,
        seed: u64,
    ) -> Self {
        Self {
            name,
            from: ends.0,
            to: ends.1,
            rate_bps,
            delay,
            monitor: false,
            kernel_port: None,
            qdisc: Qdisc::from_spec(spec, seed),
            counters: QdiscCounters::default(),
            verdicts: Verdicts::new(),
            sending: None,
            carry: 0,
            wire: VecDeque::new(),
            loss,
            rng: Rng::stream(seed, 0x1055),
            lost: 0,
            lost_bytes: 0,
            sojourn: Histogram::default(),
        }
    }

    /// The link's next event, if it has one.
    #[inline]
    pub fn next(&self) -> Option<(Time, Due)> {
        let sent = self.sending.as_ref().map(|(t, _)| (*t, Due::Sent));
        let arrives = self.wire.front().map(|(t, _)| (*t, Due::Arrives));
        let wakeup = self.qdisc.next_wakeup().map(|t| (t, Due::Wakeup));
        [sent, arrives, wakeup]
            .into_iter()
            .flatten()
            .min_by_key(|(t, _)| *t)
    }

    /// Offer a packet to the discipline at `now`; start sending if idle.
    /// Packets the discipline drops go to `dropped`.
    pub fn enqueue(
        &mut self,
        mut packet: RealPacket,
        now: Time,
        dropped: &mut impl FnMut(Dropped<RealPacket>),
    ) {
        packet.enqueued = now;
        self.qdisc
            .enqueue(&mut self.counters, packet, now, &mut self.verdicts);
        self.verdicts.drain(&mut *dropped);
        if self.sending.is_none() {
            self.carry = 0;
            self.send_next(now, dropped);
        }
    }

    /// The transmitter is done at `now`: the packet goes on the wire (or
    /// is lost), and the next one starts.
    pub fn finish_sending(
        &mut self,
        now: Time,
        dropped: &mut impl FnMut(Dropped<RealPacket>),
    ) -> Option<RealPacket> {
        let (_, packet) = self.sending.take().expect("a packet was being sent");
        let lost = self.put_on_wire(packet, now);
        self.send_next(now, dropped);
        lost
    }

    /// Put a packet fully sent at `now` (by this link's transmitter, or by
    /// the kernel's qdisc) on the wire; returns it if the wire lost it.
    pub fn put_on_wire(&mut self, packet: RealPacket, now: Time) -> Option<RealPacket> {
        if self.loss > 0.0 && self.rng.chance(self.loss) {
            self.lost += 1;
            self.lost_bytes += packet.data.len() as u64;
            return Some(packet);
        }
        self.wire.push_back((now + self.delay, packet));
        None
    }

    /// The packet at the head of the wire, arrived at the far end.
    pub fn take_arrival(&mut self) -> (Time, RealPacket) {
        self.wire.pop_front().expect("a packet on the wire")
    }

    /// The discipline's clock fired at `now`.
    pub fn wakeup(&mut self, now: Time, dropped: &mut impl FnMut(Dropped<RealPacket>)) {
        self.qdisc
            .wakeup(&mut self.counters, now, &mut self.verdicts);
        self.verdicts.drain(&mut *dropped);
        if self.sending.is_none() {
            self.send_next(now, dropped);
        }
    }

    pub fn backlog(&self) -> Backlog {
        self.qdisc.backlog()
    }

    /// Packets between the queue and the far end (sending or on the wire).
    pub fn in_flight(&self) -> usize {
        self.wire.len() + self.sending.is_some() as usize
    }

    fn send_next(&mut self, now: Time, dropped: &mut impl FnMut(Dropped<RealPacket>)) {
        let packet = self
            .qdisc
            .dequeue(&mut self.counters, now, &mut self.verdicts);
        self.verdicts.drain(&mut *dropped);
        if let Some(packet) = packet {
            self.sojourn.record(now - packet.enqueued);
            let bits = packet.data.len() as u128 * 8 * NS_PER_S + self.carry;
            let rate = self.rate_bps as u128;
            self.carry = bits % rate;
            self.sending = Some((now + (bits / rate) as Time, packet));
        }
    }
}
