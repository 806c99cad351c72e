//! Each flow's one-way delay, jitter and reordering, taken at its
//! receiver from the data packets (TCP data, UDP) that reach it:
//! - one-way delay: arrival time less send time;
//! - jitter: RFC 3550 section 6.4.1's interarrival jitter, J += (|D| - J)
//!   / 16, where D is the difference of two consecutive arrivals' transit
//!   times (as iperf reports it, seed 004's measure);
//! - reordering: RFC 4737 section 3.3's reordered packets, with the order
//!   of sending in place of the sequence number (a TCP retransmission is
//!   sent after the packets above it, and is not reordered by arriving
//!   after them): a packet is reordered if one sent after it arrived first.
//!   Packets sent in one nanosecond are ordered by their place in it (a
//!   TCP sender's `SimPacket::tag`: an ACK's new data, then the timer's
//!   retransmission, may share an instant), then by sequence number.
//!
//! Delays and reordering count the packets that arrive in the measurement
//! window; the jitter estimator runs from the first packet, and is read
//! after the last.

use crate::packet::{Kind, SimPacket};
use crate::Time;

/// One flow's figures so far.
#[derive(Clone, Debug, PartialEq)]
pub struct OneWay {
    /// Packets that arrived in the window.
    pub packets: u64,
    /// Their delays: sum, least and most (ns).
    delay_sum: u128,
    delay_min: Time,
    delay_max: Time,
    /// The transit time of the packet before (ns), if any.
    last_transit: Option<Time>,
    /// RFC 3550's J (ns).
    jitter: f64,
    /// The latest sent of the packets arrived: its send time, place in
    /// that instant and sequence number.
    latest_sent: Option<(Time, u8, u32)>,
    /// Packets that arrived in the window after one sent later.
    pub reordered: u64,
}

impl Default for OneWay {
    fn default() -> Self {
        Self {
            packets: 0,
            delay_sum: 0,
            delay_min: Time::MAX,
            delay_max: 0,
            last_transit: None,
            jitter: 0.0,
            latest_sent: None,
            reordered: 0,
        }
    }
}

impl OneWay {
    /// A packet sent at `sent`, `place`-th in that instant, with sequence
    /// number `seq` arrives at `now`; `in_window` if the measurement
    /// window is open.
    pub fn arrive(&mut self, now: Time, sent: Time, place: u8, seq: u32, in_window: bool) {
        let transit = now - sent;
        if let Some(last) = self.last_transit {
            let d = transit.abs_diff(last) as f64;
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.last_transit = Some(transit);
        let order = (sent, place, seq);
        let reordered = self.latest_sent.is_some_and(|latest| order < latest);
        if !reordered {
            self.latest_sent = Some(order);
        }
        if in_window {
            self.packets += 1;
            self.delay_sum += transit as u128;
            self.delay_min = self.delay_min.min(transit);
            self.delay_max = self.delay_max.max(transit);
            self.reordered += reordered as u64;
        }
    }

    /// Least, mean and most delay in the window (s), if a packet arrived.
    pub fn delays_s(&self) -> Option<[f64; 3]> {
        (self.packets > 0).then(|| {
            let mean = self.delay_sum as f64 / self.packets as f64;
            [self.delay_min as f64, mean, self.delay_max as f64].map(|ns| ns * 1e-9)
        })
    }

    /// The jitter estimate after the last packet (s), if one arrived.
    pub fn jitter_s(&self) -> Option<f64> {
        self.last_transit.map(|_| self.jitter * 1e-9)
    }
}

/// Every flow's [`OneWay`], by flow.
pub struct FlowStats {
    warmup: Time,
    flows: Vec<OneWay>,
}

impl FlowStats {
    /// The window opens at `warmup`.
    pub fn new(warmup: Time) -> Self {
        Self {
            warmup,
            flows: Vec::new(),
        }
    }

    /// `packet` reached its host now: a data packet counts.
    pub fn received(&mut self, now: Time, packet: &SimPacket) {
        if !matches!(packet.kind, Kind::Data | Kind::Udp) {
            return;
        }
        let f = packet.flow as usize;
        if f >= self.flows.len() {
            self.flows.resize(f + 1, OneWay::default());
        }
        (self.flows[f]).arrive(
            now,
            packet.stamp,
            packet.tag,
            packet.seq,
            now >= self.warmup,
        );
    }

    /// Flow `f`'s figures, if a packet of it arrived.
    pub fn flow(&self, f: usize) -> Option<&OneWay> {
        self.flows.get(f).filter(|w| w.last_transit.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::{FlowStats, OneWay};
    use crate::packet::Kind;
    use crate::trace::tests::packet;

    #[test]
    fn delays_and_jitter_follow_rfc_3550() {
        let mut w = OneWay::default();
        // Sent every 10 ns; transits 100, 130, 90, 90.
        for (sent, transit) in [(0, 100), (10, 130), (20, 90), (30, 90)] {
            w.arrive(sent + transit, sent, 0, sent as u32 / 10, true);
        }
        // J: 0, then 30/16, then += (40 - J)/16, then += (0 - J)/16.
        let mut j = 30.0 / 16.0;
        j += (40.0 - j) / 16.0;
        j += (0.0 - j) / 16.0;
        assert_eq!(w.jitter_s(), Some(j * 1e-9));
        assert_eq!(w.delays_s(), Some([90.0, 102.5, 130.0].map(|ns| ns * 1e-9)));
        assert_eq!(w.reordered, 0);
    }

    #[test]
    fn a_packet_overtaken_by_one_sent_later_is_reordered() {
        let mut w = OneWay::default();
        // Sent in the order 0, 1, 2, 3; arrive 0, 2, 1, 3: 1 is reordered.
        for (sent, arrival) in [(0, 100), (20, 150), (10, 160), (30, 170)] {
            w.arrive(arrival, sent, 0, sent as u32 / 10, true);
        }
        assert_eq!(w.reordered, 1);
        // A retransmission of 1, sent after 3, is not.
        w.arrive(300, 200, 0, 1, true);
        assert_eq!(w.reordered, 1);
        // Two packets sent in one nanosecond, in sequence order, arrive
        // the other way round.
        w.arrive(400, 350, 0, 6, true);
        w.arrive(401, 350, 0, 7, true);
        w.arrive(402, 360, 1, 9, true);
        w.arrive(403, 360, 0, 8, true);
        assert_eq!(w.reordered, 2);
        // New data, then a retransmission, in one nanosecond (an ACK, then
        // the timer): the retransmission arriving second is in order.
        w.arrive(500, 450, 0, 12, true);
        w.arrive(501, 450, 1, 4, true);
        assert_eq!(w.reordered, 2);
    }

    #[test]
    fn the_window_keeps_early_packets_out_of_delays_only() {
        let mut stats = FlowStats::new(1_000);
        let mut p = packet(2, 0, Kind::Data);
        p.stamp = 900;
        stats.received(990, &p); // before the window: transit 90
        p.stamp = 1_000;
        p.seq = 1;
        stats.received(1_050, &p); // transit 50
        stats.received(2_000, &packet(2, 1, Kind::Ack)); // not data
        let w = stats.flow(2).unwrap();
        assert_eq!(w.packets, 1);
        assert_eq!(w.delays_s(), Some([50.0 * 1e-9; 3]));
        assert_eq!(w.jitter_s(), Some(40.0 / 16.0 * 1e-9));
        assert_eq!(stats.flow(0), None, "no packet of flow 0");
        assert_eq!(stats.flow(7), None, "nor of flow 7");
    }
}
