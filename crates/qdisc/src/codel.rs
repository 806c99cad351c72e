//! CoDel: Controlled Delay (RFC 8289; Nichols and Jacobson, "Controlling
//! Queue Delay", ACM Queue 2012), as the RFC's section 5 pseudocode, with
//! Linux `sch_codel.c`'s tail limit and ECN option.
//!
//! Packets are time-stamped on arrival; at dequeue CoDel looks at the
//! head's sojourn time. Once it has stayed at or above `target` for a whole
//! `interval` (and more than one MTU is queued), CoDel enters the dropping
//! state: it drops the head, then drops again at `interval / sqrt(count)`
//! spacing until the sojourn time falls below `target`. Re-entering soon
//! after leaving resumes from the previous drop rate (section 5.6). The
//! control loop is the shared [`CodelVars`] block.
//!
//! Parameters, their defaults and sources: [`CodelParams`]. O(1) amortized
//! per packet.

use crate::blocks::{CodelConfig, CodelVars, FlowHead, Stamped};
use crate::params::{nonzero, params, positive_limit, SpecError, MS};
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, FlowQueues, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// CoDel's parameters (RFC 8289; Linux `sch_codel`).
    pub struct CodelParams {
        /// The buffer: 1000 packets (Linux `sch_codel`'s default; RFC 8289
        /// leaves it to the device).
        pub limit: Limit [Buffer] = Limit::Packets(1000),
        /// TARGET, the acceptable standing queue delay: 5 ms (RFC 8289
        /// section 4.4).
        pub target: Time [Time] = 5 * MS,
        /// INTERVAL, the sliding window: 100 ms (RFC 8289 section 4.3).
        pub interval: Time [Time] = 100 * MS,
        /// MAXPACKET: no drop while at most this many bytes are queued; 1500
        /// (RFC 8289 section 4.4; Linux uses the device MTU).
        pub mtu: u32 [Bytes] = 1500,
        /// Mark ECN-capable packets instead of dropping them: off (Linux's
        /// default).
        pub ecn: bool [Flag] = false,
    }
}

impl CodelParams {
    /// The control law's settings.
    pub fn config(&self) -> CodelConfig {
        CodelConfig {
            target: self.target,
            interval: self.interval,
            mtu: self.mtu,
            ecn: self.ecn,
        }
    }
}

impl QdiscParams for CodelParams {
    const SUMMARY: &'static str = "CoDel (RFC 8289)";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        nonzero("target", self.target)?;
        nonzero("interval", self.interval)
    }

    fn build<P: Packet + Send + 'static>(&self, _seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Codel::new(self.limit, self.config()))
    }
}

pub struct Codel<P> {
    queue: FlowQueues<Stamped<P>>,
    limit: Limit,
    params: CodelConfig,
    vars: CodelVars,
}

impl<P: Packet> Codel<P> {
    pub fn new(limit: Limit, params: CodelConfig) -> Self {
        Self {
            queue: FlowQueues::new(1),
            limit,
            params,
            vars: CodelVars::default(),
        }
    }

    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

impl<P: Packet> QueueDiscipline<P> for Codel<P> {
    fn name(&self) -> &'static str {
        "codel"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        if self.limit.admits(self.queue.total(), packet.size()) {
            self.queue.push_back(0, Stamped::new(packet, now));
        } else {
            verdicts.refuse(packet, DropReason::Overflow);
        }
    }

    /// CoDel drops at the head, as packets leave (RFC 8289 section 5).
    fn drops_on_dequeue(&self) -> bool {
        true
    }

    fn dequeue(&mut self, now: Time, verdicts: &mut Verdicts<P>) -> Option<P> {
        let mut head = FlowHead {
            queues: &mut self.queue,
            q: 0,
        };
        self.vars.dequeue(&self.params, now, &mut head, verdicts)
    }

    fn backlog(&self) -> Backlog {
        self.queue.total()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::codel::control_law;
    use crate::testkit::TestPacket;
    use crate::Ecn;

    fn codel(ecn: bool) -> Codel<TestPacket> {
        Codel::new(
            Limit::Packets(10_000),
            CodelConfig {
                target: 5 * MS,
                interval: 100 * MS,
                mtu: 1500,
                ecn,
            },
        )
    }

    /// A standing queue: 1000 packets at t = 0, served one per ms. The head's
    /// sojourn passes 5 ms at t = 5 ms; first_above_time = 105 ms; the first
    /// drop is at the first dequeue at or after 105 ms, then drops follow at
    /// drop_next = previous + 100 ms / sqrt(count).
    #[test]
    fn drop_spacing_follows_interval_over_sqrt_count() {
        let mut q = codel(false);
        let mut v = Verdicts::new();
        for i in 0..1000 {
            q.enqueue(TestPacket::new(1, i, 1000), 0, &mut v);
        }
        let mut drop_times = Vec::new();
        for t in 0..600 {
            q.dequeue(t * MS, &mut v);
            if !v.dropped().is_empty() {
                assert_eq!(v.dropped().len(), 1, "one drop per dequeue at this rate");
                assert!(v.dropped()[0].buffered);
                assert_eq!(v.dropped()[0].reason, DropReason::Early);
                drop_times.push(t * MS);
            }
            v.drain(|_| {});
        }
        assert_eq!(drop_times[0], 105 * MS);
        // Expected: drop_next_k = drop_next_{k-1} + 100 ms / sqrt(k), and a
        // drop happens at the first dequeue (whole ms) at or after it.
        let mut next = control_law(105 * MS, 100 * MS, 1);
        for (k, &t) in drop_times.iter().enumerate().skip(1) {
            assert_eq!(t, next.div_ceil(MS) * MS, "drop {k}");
            next = control_law(next, 100 * MS, k as u32 + 1);
        }
        // 105, 205, 275.7->276, 333.4->334, 383.4->384, ... : at least 8 drops by 600 ms.
        assert_eq!(
            &drop_times[..5],
            &[105 * MS, 205 * MS, 276 * MS, 334 * MS, 384 * MS]
        );
        assert!(drop_times.len() >= 8);
        assert_eq!(q.vars().count as usize, drop_times.len());
    }

    #[test]
    fn leaves_dropping_state_below_target_and_resumes_count() {
        let mut q = codel(false);
        let mut v = Verdicts::new();
        for i in 0..1000 {
            q.enqueue(TestPacket::new(1, i, 1000), 0, &mut v);
        }
        for t in 0..400 {
            q.dequeue(t * MS, &mut v);
        }
        assert!(q.vars().dropping);
        let count = q.vars().count;
        assert!(count >= 4);
        // A fresh packet with a short sojourn (and a near-empty queue) ends it.
        v.drain(|_| {});
        while q.backlog().packets > 0 {
            q.dequeue(400 * MS, &mut v);
        }
        v.drain(|_| {});
        q.enqueue(TestPacket::new(1, 1000, 1000), 401 * MS, &mut v);
        q.enqueue(TestPacket::new(1, 1001, 1000), 401 * MS, &mut v);
        q.dequeue(402 * MS, &mut v);
        assert!(!q.vars().dropping);
        // Re-entering within 16 intervals starts from count - lastcount.
        for i in 0..400 {
            q.enqueue(TestPacket::new(1, 2000 + i, 1000), 402 * MS, &mut v);
        }
        let mut t = 402;
        while !q.vars().dropping {
            t += 1;
            q.dequeue(t * MS, &mut v);
        }
        assert!(
            q.vars().count > 1,
            "count {} resumed from {count}",
            q.vars().count
        );
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let mut q = codel(true);
        let mut v = Verdicts::new();
        for i in 0..300 {
            let mut p = TestPacket::new(1, i, 1000);
            p.ecn = Ecn::Ect;
            q.enqueue(p, 0, &mut v);
        }
        let mut marked = 0;
        for t in 0..300 {
            if let Some(p) = q.dequeue(t * MS, &mut v) {
                if p.ecn == Ecn::Ce {
                    marked += 1;
                }
            }
        }
        assert!(v.dropped().is_empty());
        assert_eq!(v.marked(), marked);
        // Marks at 105, 205, 276 ms.
        assert_eq!(marked, 3);
    }
}
