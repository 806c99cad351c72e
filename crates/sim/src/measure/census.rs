//! A census of the work a run did, by kind: events by kind, packets
//! answered ahead and taken in at their hosts, arrivals gathered, packets
//! that waited in a reserving FIFO (by link), and how many packets each
//! host's reply held. It says how many steps a data packet costs, which an
//! instruction count cannot split (docs/performance.md, the fifteenth
//! round).
//!
//! Counted only with the `census` cargo feature; without it `Census` is
//! empty and every count compiles to nothing, so the simulator pays for it
//! only in a build made to take it:
//! `cargo run --release -p aqmlab-sim --features census --example
//! dumbbell_bench`.

use crate::engine::events::Event;

#[cfg(feature = "census")]
#[derive(Default, Debug, Clone)]
pub struct Census {
    /// Events run, by kind (`Event::kind`).
    pub events: [u64; Event::KINDS.len()],
    /// Packets taken in at their hosts ahead of their arrival
    /// (`Simulation::answer_ahead`): data packets, then ACKs.
    pub answered_ahead: [u64; 2],
    /// Packets taken in at their hosts, ahead or in their arrival's event:
    /// data packets (and SYNs), then ACKs (and SYN-ACKs).
    pub taken_in: [u64; 2],
    /// Arrivals put into a gathering link's inbox.
    pub gathered: u64,
    /// Packets that waited in a reserving FIFO's buffer (its transmitter
    /// busy, or packets ahead), by link.
    pub waits: Vec<u64>,
    /// Replies of a host to a packet taken in, by the packets they held:
    /// none, one, two, three or more.
    pub replies: [u64; 4],
}

#[cfg(not(feature = "census"))]
#[derive(Default, Debug, Clone)]
pub struct Census {}

#[cfg_attr(not(feature = "census"), allow(unused_variables))]
impl Census {
    #[inline(always)]
    pub fn event(&mut self, event: Event) {
        #[cfg(feature = "census")]
        {
            self.events[event.kind()] += 1;
        }
    }

    #[inline(always)]
    pub fn answered_ahead(&mut self, reverse: bool) {
        #[cfg(feature = "census")]
        {
            self.answered_ahead[reverse as usize] += 1;
        }
    }

    #[inline(always)]
    pub fn taken_in(&mut self, reverse: bool) {
        #[cfg(feature = "census")]
        {
            self.taken_in[reverse as usize] += 1;
        }
    }

    #[inline(always)]
    pub fn gathered(&mut self) {
        #[cfg(feature = "census")]
        {
            self.gathered += 1;
        }
    }

    #[inline(always)]
    pub fn waited(&mut self, link: usize) {
        #[cfg(feature = "census")]
        {
            if self.waits.len() <= link {
                self.waits.resize(link + 1, 0);
            }
            self.waits[link] += 1;
        }
    }

    #[inline(always)]
    pub fn replied(&mut self, packets: usize) {
        #[cfg(feature = "census")]
        {
            self.replies[packets.min(3)] += 1;
        }
    }
}

#[cfg(feature = "census")]
impl Census {
    /// The census per data packet taken in at a receiver, under a
    /// heading, a line a count, the waits summed over links whose names
    /// differ only in their numbers (named by `link_name`).
    pub fn report(&self, data_packets: u64, link_name: impl Fn(usize) -> String) -> String {
        use std::collections::BTreeMap;
        use std::fmt::Write;
        let per = |n: u64| n as f64 / data_packets.max(1) as f64;
        let mut out = String::from("census (count, per data packet taken in):\n");
        let mut line = |what: &str, n: u64| {
            let _ = writeln!(out, "{what:<34} {n:>12} {:>8.4}", per(n));
        };
        line("events", self.events.iter().sum());
        for (name, &n) in Event::KINDS.iter().zip(&self.events) {
            if n > 0 {
                line(&format!("  {name}"), n);
            }
        }
        line("data packets taken in", self.taken_in[0]);
        line("  of them answered ahead", self.answered_ahead[0]);
        line("ACKs taken in", self.taken_in[1]);
        line("  of them answered ahead", self.answered_ahead[1]);
        line("arrivals gathered", self.gathered);
        let held = ["none", "one", "two", "three or more"];
        for (held, &n) in held.iter().zip(&self.replies) {
            line(&format!("replies of {held}"), n);
        }
        line("waits in a FIFO", self.waits.iter().sum());
        let mut by_name: BTreeMap<String, u64> = BTreeMap::new();
        for (l, &n) in self.waits.iter().enumerate().filter(|(_, &n)| n > 0) {
            let mut pattern = String::new();
            for c in link_name(l).chars() {
                match c.is_ascii_digit() {
                    true if pattern.ends_with('#') => {}
                    true => pattern.push('#'),
                    false => pattern.push(c),
                }
            }
            *by_name.entry(pattern).or_default() += n;
        }
        for (name, n) in by_name {
            line(&format!("  at {name}"), n);
        }
        out
    }
}
