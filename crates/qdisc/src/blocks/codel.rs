//! The CoDel control loop (RFC 8289, section 5 pseudocode), written once for
//! CoDel and FQ-CoDel, as Linux shares `include/net/codel_impl.h` between
//! `sch_codel.c` and `sch_fq_codel.c`.
//!
//! The state is [`CodelVars`] (one per queue); the queue it controls is seen
//! through [`CodelQueue`]: take the head, and the backlog left behind.
//! ECN marking follows Linux `codel_dequeue`: instead of dropping an
//! ECN-capable packet, mark it, schedule the next signal and send it.

use crate::blocks::Stamped;
use crate::{DropReason, Ecn, Packet, Time, Verdicts};

/// The settings of the control law (a discipline's parameters give them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelConfig {
    /// TARGET: acceptable standing queue delay, ns (RFC 8289 section 4.4: 5 ms).
    pub target: Time,
    /// INTERVAL: the sliding window, ns (RFC 8289 section 4.3: 100 ms).
    pub interval: Time,
    /// MAXPACKET: no drop while the backlog is at most this many bytes
    /// (RFC 8289 section 4.4; Linux uses the device MTU).
    pub mtu: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

/// What CoDel takes from the queue it controls.
pub trait CodelQueue<P> {
    /// Remove the head packet.
    fn pop(&mut self) -> Option<Stamped<P>>;
    /// Bytes left in the queue (Linux passes the qdisc's whole backlog).
    fn backlog_bytes(&self) -> u64;
}

/// The per-queue state of RFC 8289's `CoDelQueue`.
#[derive(Clone, Debug, Default)]
pub struct CodelVars {
    /// Drops since entering the dropping state.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// When the sojourn time will have been above target for an interval;
    /// 0 while it is below target.
    pub first_above_time: Time,
    /// When the next drop is due in the dropping state.
    pub drop_next: Time,
}

/// `t + interval / sqrt(count)` (RFC 8289 section 5.5, `control_law`).
#[inline]
pub fn control_law(t: Time, interval: Time, count: u32) -> Time {
    t + (interval as f64 / (count.max(1) as f64).sqrt()) as Time
}

impl CodelVars {
    /// RFC 8289 `dodequeue`'s test: has the head's sojourn time been above
    /// target for at least an interval?
    fn should_drop<P: Packet>(
        &mut self,
        p: &CodelConfig,
        head: Option<&Stamped<P>>,
        backlog: u64,
        now: Time,
    ) -> bool {
        let Some(head) = head else {
            self.first_above_time = 0;
            return false;
        };
        let sojourn = now.saturating_sub(head.at);
        if sojourn < p.target || backlog <= p.mtu as u64 {
            // Went below: stay below for at least an interval.
            self.first_above_time = 0;
            return false;
        }
        if self.first_above_time == 0 {
            self.first_above_time = now + p.interval;
            false
        } else {
            now >= self.first_above_time
        }
    }

    /// RFC 8289 `dequeue`: the next packet to send, dropping (or marking)
    /// at the head as the control law says. Dropped packets go to
    /// `verdicts` as buffered [`DropReason::Early`] drops.
    pub fn dequeue<P: Packet, Q: CodelQueue<P>>(
        &mut self,
        p: &CodelConfig,
        now: Time,
        queue: &mut Q,
        verdicts: &mut Verdicts<P>,
    ) -> Option<P> {
        let mut head = queue.pop();
        let ok_to_drop = self.should_drop(p, head.as_ref(), queue.backlog_bytes(), now);
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                let mut pkt = head.take().expect("ok_to_drop implies a packet");
                self.count += 1;
                if p.ecn && pkt.ecn() != Ecn::NotEct {
                    pkt.mark_ce();
                    verdicts.mark(pkt.size());
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    return Some(pkt.packet);
                }
                verdicts.discard(pkt.packet, DropReason::Early);
                head = queue.pop();
                if !self.should_drop(p, head.as_ref(), queue.backlog_bytes(), now) {
                    self.dropping = false;
                } else {
                    // Schedule the next drop: interval / sqrt(count) later.
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                }
            }
        } else if ok_to_drop {
            let mut pkt = head.take().expect("ok_to_drop implies a packet");
            if p.ecn && pkt.ecn() != Ecn::NotEct {
                pkt.mark_ce();
                verdicts.mark(pkt.size());
                head = Some(pkt);
            } else {
                verdicts.discard(pkt.packet, DropReason::Early);
                head = queue.pop();
                self.should_drop(p, head.as_ref(), queue.backlog_bytes(), now);
            }
            self.dropping = true;
            // If we were dropping recently, start from the drop rate that
            // controlled the queue last time (RFC 8289 section 5.6).
            let delta = self.count.saturating_sub(self.lastcount);
            self.count =
                if delta > 1 && (now as i128 - self.drop_next as i128) < 16 * p.interval as i128 {
                    delta
                } else {
                    1
                };
            self.drop_next = control_law(now, p.interval, self.count);
            self.lastcount = self.count;
        }
        head.map(|s| s.packet)
    }
}

/// Queue `q` of a [`FlowQueues`](crate::FlowQueues) as CoDel sees it; the
/// backlog is the total of all queues, as Linux passes the qdisc backlog to
/// `codel_dequeue` in both `sch_codel.c` and `sch_fq_codel.c`.
pub struct FlowHead<'a, P> {
    pub queues: &'a mut crate::FlowQueues<Stamped<P>>,
    pub q: usize,
}

impl<P: Packet> CodelQueue<P> for FlowHead<'_, P> {
    #[inline]
    fn pop(&mut self) -> Option<Stamped<P>> {
        self.queues.pop_front(self.q)
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.queues.total().bytes
    }
}
