//! A discipline's CPU time per packet on synthetic traffic: the harness
//! behind seed 004's cost figures in our terms (its sections 5.3-5.4
//! measured the router's system CPU under real traffic; here only the
//! discipline's own work is timed, with this harness's small overhead, the
//! same for every discipline).
//!
//! Packets of `size` bytes from flows of the given classes (each arrival
//! from a flow drawn uniformly) reach a link of `rate_bps` at `load` times
//! its rate, evenly spaced; the link sends whenever its last packet is out.
//! Every flow's hosts are its own, as the simulator tells a discipline that
//! counts host pairs. The figure is the best of `repeats` timed passes, so
//! that another process taking the core for a moment does not count.

use std::time::Instant;

use crate::rng::Rng;
use crate::testkit::TestPacket;
use crate::{QdiscSpec, QueueDiscipline, Time, TrafficClass, Verdicts};

/// What the cost of a discipline is measured on.
#[derive(Clone, Debug)]
pub struct Workload {
    pub classes: Vec<TrafficClass>,
    pub packets: u64,
    pub size: u32,
    pub rate_bps: u64,
    pub load: f64,
    pub repeats: u32,
    pub seed: u64,
}

/// The measurement: nanoseconds of CPU (wall clock of one thread) per
/// arriving packet, and the packets dropped in one pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    pub ns_per_packet: f64,
    pub drops: u64,
}

/// Time `spec` on `work` (see the module's documentation).
pub fn measure(spec: &QdiscSpec, work: &Workload) -> Cost {
    let mut spec = spec.clone();
    spec.fill_link_rate(work.rate_bps);
    let mut best = f64::INFINITY;
    let mut drops = 0;
    for _ in 0..work.repeats.max(1) {
        let mut q = spec.build::<TestPacket>(work.seed);
        for flow in 0..work.classes.len() as u64 {
            q.learn_hosts(flow, flow);
        }
        let start = Instant::now();
        drops = one_pass(q.as_mut(), work);
        best = best.min(start.elapsed().as_nanos() as f64);
    }
    Cost {
        ns_per_packet: best / work.packets.max(1) as f64,
        drops,
    }
}

fn one_pass(q: &mut (dyn QueueDiscipline<TestPacket> + Send), work: &Workload) -> u64 {
    let ns_per_byte = 8e9 / work.rate_bps as f64;
    let tx = (work.size as f64 * ns_per_byte) as Time;
    let gap = (tx as f64 / work.load) as Time;
    let mut rng = Rng::new(work.seed);
    let mut verdicts = Verdicts::new();
    let (mut now, mut link_free, mut drops) = (0, 0, 0u64);
    let flows = work.classes.len() as u64;
    for seq in 0..work.packets {
        now += gap;
        while link_free <= now {
            match q.dequeue(link_free, &mut verdicts) {
                Some(_) => link_free += tx,
                None => link_free = now + 1,
            }
        }
        let flow = rng.below(flows);
        let mut p = TestPacket::new(flow, seq, work.size);
        p.class = work.classes[flow as usize];
        q.enqueue(p, now, &mut verdicts);
        if let Some(at) = q.next_wakeup().filter(|&at| at <= now) {
            q.wakeup(at, &mut verdicts);
        }
        drops += verdicts.dropped().len() as u64;
        verdicts.drain(|_| {});
    }
    drops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overloaded_fifo_drops_the_excess_and_is_timed() {
        let spec =
            QdiscSpec::from_json(r#"{"kind": "droptail", "limit": {"packets": 10}}"#).unwrap();
        let work = Workload {
            classes: vec![TrafficClass::UdpUntagged],
            packets: 10_000,
            size: 1000,
            rate_bps: 10_000_000,
            load: 2.0,
            repeats: 2,
            seed: 1,
        };
        let cost = measure(&spec, &work);
        // Twice the link's rate: about half the arrivals are dropped.
        assert!((4_900..=5_100).contains(&cost.drops), "{}", cost.drops);
        assert!(cost.ns_per_packet > 0.0 && cost.ns_per_packet.is_finite());
    }

    #[test]
    fn below_the_link_rate_nothing_is_dropped() {
        let spec = QdiscSpec::from_json(r#"{"kind": "dcbt"}"#).unwrap();
        let work = Workload {
            classes: vec![TrafficClass::Tcp, TrafficClass::UdpUntagged],
            packets: 5_000,
            size: 1000,
            rate_bps: 10_000_000,
            load: 0.5,
            repeats: 1,
            seed: 1,
        };
        assert_eq!(measure(&spec, &work).drops, 0);
    }
}
