//! FQ-CoDel: FlowQueue-CoDel (RFC 8290), as Linux `net/sched/sch_fq_codel.c`
//! implements it.
//!
//! Packets are hashed by flow into `flows` queues, each with its own CoDel
//! state (the shared [`CodelVars`] block). A deficit round robin with a
//! `quantum` of bytes serves the queues, in two lists ([`SparseRound`]):
//! a queue that becomes active joins the *new* list, served first, so
//! sparse flows see little delay; a queue that spends its deficit moves to
//! the tail of the *old* list; a new queue found empty goes to the old list
//! once (if that is not empty) before leaving, so it cannot starve the old
//! queues by re-entering at once (RFC 8290 section 4.2).
//!
//! When the packet limit or the memory limit is passed, FQ-CoDel finds the
//! queue with the most bytes and drops from its head half of its backlog,
//! at most `drop_batch_size` packets (Linux `fq_codel_drop`); these are
//! push-out drops of queued packets (the arrival may be among them).
//!
//! Parameters, their defaults and sources: [`FqCodelParams`]. Memory is
//! counted as packet bytes (Linux counts `truesize`).
//! O(1) per packet, except the overflow drop: a scan of all `flows` queues,
//! amortized over the up to 64 packets it drops (as Linux).

use crate::blocks::{CodelConfig, CodelVars, FlowHead, SparseRound, Stamped};
use crate::params::{nonzero, params, SpecError, MS};
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, FlowQueues, HashFamily, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// FQ-CoDel's parameters, with Linux's defaults (`fq_codel_init`).
    #[derive(PartialEq)]
    pub struct FqCodelParams {
        /// Flow queues: 1024 (Linux; RFC 8290 section 5.1).
        pub flows: u64 [Number] = 1024,
        /// Bytes a queue may send per round: 1514, the device MTU with its
        /// Ethernet header (Linux; RFC 8290 section 5.2).
        pub quantum: u32 [Bytes] = 1514,
        /// Packets over all queues: 10240 (Linux; RFC 8290 section 5.3).
        pub limit: u64 [Packets] = 10_240,
        /// Bytes over all queues: 32 MiB (Linux).
        pub memory_limit: u64 [Bytes] = 32 << 20,
        /// Most packets one overflow drops: 64 (Linux).
        pub drop_batch_size: u32 [Number] = 64,
        /// CoDel's TARGET: 5 ms (RFC 8289, RFC 8290).
        pub target: Time [Time] = 5 * MS,
        /// CoDel's INTERVAL: 100 ms (RFC 8289, RFC 8290).
        pub interval: Time [Time] = 100 * MS,
        /// CoDel's MAXPACKET: 1514 bytes (Linux's `psched_mtu`).
        pub mtu: u32 [Bytes] = 1514,
        /// Mark ECN-capable packets instead of dropping them: on (Linux;
        /// RFC 8290 section 5.1).
        pub ecn: bool [Flag] = true,
    }
}

impl QdiscParams for FqCodelParams {
    const SUMMARY: &'static str = "FQ-CoDel (RFC 8290), as Linux sch_fq_codel";

    fn validate(&self) -> Result<(), SpecError> {
        nonzero("flows", self.flows)?;
        nonzero("quantum", self.quantum)?;
        nonzero("limit", self.limit)?;
        nonzero("memory_limit", self.memory_limit)?;
        nonzero("drop_batch_size", self.drop_batch_size)?;
        nonzero("target", self.target)?;
        nonzero("interval", self.interval)
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(FqCodel::new(self.clone(), seed))
    }
}

pub struct FqCodel<P> {
    queues: FlowQueues<Stamped<P>>,
    vars: Vec<CodelVars>,
    round: SparseRound,
    hash: HashFamily,
    flows: usize,
    codel: CodelConfig,
    params: FqCodelParams,
}

impl<P: Packet> FqCodel<P> {
    pub fn new(params: FqCodelParams, seed: u64) -> Self {
        let n = params.flows as usize;
        Self {
            queues: FlowQueues::new(n),
            vars: vec![CodelVars::default(); n],
            round: SparseRound::new(n, params.quantum as u64),
            hash: HashFamily::new(1, seed),
            flows: n,
            codel: CodelConfig {
                target: params.target,
                interval: params.interval,
                mtu: params.mtu,
                ecn: params.ecn,
            },
            params,
        }
    }

    /// The queue a flow key maps to.
    pub fn queue_of(&self, key: u64) -> usize {
        self.hash.bucket(0, key, self.flows)
    }

    /// `fq_codel_drop`: from the fattest queue, drop half its bytes from
    /// the head, at most `drop_batch_size` packets.
    fn drop_from_fattest(&mut self, verdicts: &mut Verdicts<P>) {
        let mut fat = 0;
        let mut max = 0;
        for q in 0..self.flows {
            if self.queues.bytes(q) > max {
                max = self.queues.bytes(q);
                fat = q;
            }
        }
        let threshold = max / 2;
        let mut len = 0u64;
        let mut i = 0;
        loop {
            let Some(p) = self.queues.pop_front(fat) else {
                break;
            };
            len += p.size() as u64;
            verdicts.discard(p.packet, DropReason::PushOut);
            i += 1;
            if i >= self.params.drop_batch_size || len >= threshold {
                break;
            }
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for FqCodel<P> {
    fn name(&self) -> &'static str {
        "fq_codel"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        let q = self.queue_of(packet.flow_key());
        self.queues.push_back(q, Stamped::new(packet, now));
        self.round.activate(q);
        let total = self.queues.total();
        if total.packets > self.params.limit || total.bytes > self.params.memory_limit {
            self.drop_from_fattest(verdicts);
        }
    }

    /// CoDel drops at the head, as packets leave (RFC 8289 section 5).
    fn drops_on_dequeue(&self) -> bool {
        true
    }

    fn dequeue(&mut self, now: Time, verdicts: &mut Verdicts<P>) -> Option<P> {
        loop {
            let (q, _) = self.round.head()?;
            if self.round.deficit(q) <= 0 {
                self.round.rotate_head();
                continue;
            }
            let mut head = FlowHead {
                queues: &mut self.queues,
                q,
            };
            match self.vars[q].dequeue(&self.codel, now, &mut head, verdicts) {
                None => self.round.retire_head(),
                Some(p) => {
                    self.round.charge(q, p.size());
                    return Some(p);
                }
            }
        }
    }

    fn backlog(&self) -> Backlog {
        self.queues.total()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    /// Keys that land in distinct queues.
    fn distinct_keys(fq: &FqCodel<TestPacket>, n: usize) -> Vec<u64> {
        let mut seen = std::collections::HashSet::new();
        (0..)
            .filter(|&k| seen.insert(fq.queue_of(k)))
            .take(n)
            .collect()
    }

    fn fq(params: FqCodelParams) -> FqCodel<TestPacket> {
        FqCodel::new(params, 11)
    }

    #[test]
    fn sparse_flow_goes_first_and_bulk_flows_share_by_quantum() {
        let mut fq = fq(FqCodelParams::default());
        let k = distinct_keys(&fq, 3);
        let mut v = Verdicts::new();
        // Two bulk flows: A with 1514 B packets, B with 500 B packets.
        for i in 0..20 {
            fq.enqueue(TestPacket::new(k[0], i, 1514), 0, &mut v);
            fq.enqueue(TestPacket::new(k[1], i, 500), 0, &mut v);
        }
        // A: deficit 1514 -> sends one (deficit 0), rotates. B: 1514 -> sends
        // 4 x 500 (deficit -486), rotates with +1514 = 1028.
        let order: Vec<u64> = (0..5)
            .map(|_| fq.dequeue(0, &mut v).unwrap().flow)
            .collect();
        assert_eq!(order, vec![k[0], k[1], k[1], k[1], k[1]]);
        // A sparse flow arriving now is served next, ahead of both.
        fq.enqueue(TestPacket::new(k[2], 0, 100), 0, &mut v);
        assert_eq!(fq.dequeue(0, &mut v).unwrap().flow, k[2]);
        // Then old list: A (deficit 0 + 1514) sends one 1514 B packet.
        assert_eq!(fq.dequeue(0, &mut v).unwrap().flow, k[0]);
        // Over many rounds, bytes are shared equally (1514 per round each).
        let mut bytes = [0u64; 2];
        for _ in 0..20 {
            let p = fq.dequeue(0, &mut v).unwrap();
            bytes[(p.flow == k[1]) as usize] += p.size as u64;
        }
        assert!(bytes[0].abs_diff(bytes[1]) <= 1514, "{bytes:?}");
    }

    #[test]
    fn overflow_drops_half_the_fattest_flow_from_its_head() {
        let mut fq = fq(FqCodelParams {
            limit: 10,
            ..Default::default()
        });
        let k = distinct_keys(&fq, 2);
        let mut v = Verdicts::new();
        for i in 0..8 {
            fq.enqueue(TestPacket::new(k[0], i, 1000), 0, &mut v);
        }
        for i in 0..2 {
            fq.enqueue(TestPacket::new(k[1], i, 1000), 0, &mut v);
        }
        assert!(v.dropped().is_empty());
        // 11th packet: the fattest queue (A, 8000 B) loses 4000 B from its head.
        fq.enqueue(TestPacket::new(k[1], 2, 1000), 0, &mut v);
        let dropped: Vec<(u64, u64)> = v
            .dropped()
            .iter()
            .map(|d| (d.packet.flow, d.packet.seq))
            .collect();
        assert_eq!(dropped, vec![(k[0], 0), (k[0], 1), (k[0], 2), (k[0], 3)]);
        assert!(v
            .dropped()
            .iter()
            .all(|d| d.buffered && d.reason == DropReason::PushOut));
        assert_eq!(fq.backlog().packets, 7);
        // The memory limit works the same way, in bytes.
        let mut fq2 = fq_with_memory(5000);
        let k = distinct_keys(&fq2, 2);
        let mut v = Verdicts::new();
        for i in 0..5 {
            fq2.enqueue(TestPacket::new(k[0], i, 1000), 0, &mut v);
        }
        fq2.enqueue(TestPacket::new(k[1], 0, 1000), 0, &mut v);
        assert_eq!(v.dropped().len(), 3); // half of 5000 B: 3 packets reach 3000 >= 2500
    }

    fn fq_with_memory(bytes: u64) -> FqCodel<TestPacket> {
        fq(FqCodelParams {
            memory_limit: bytes,
            ..Default::default()
        })
    }

    #[test]
    fn each_flow_has_its_own_codel() {
        // A standing queue in flow A is dropped by A's CoDel; flow B, sparse,
        // is never dropped.
        let ms = 1_000_000;
        let mut fq = fq(FqCodelParams {
            ecn: false,
            ..Default::default()
        });
        let k = distinct_keys(&fq, 2);
        let mut v = Verdicts::new();
        for i in 0..400 {
            fq.enqueue(TestPacket::new(k[0], i, 1000), 0, &mut v);
        }
        let mut b_seq = 0;
        for t in 0..300 {
            if t % 10 == 0 {
                fq.enqueue(TestPacket::new(k[1], b_seq, 100), t * ms, &mut v);
                b_seq += 1;
            }
            fq.dequeue(t * ms, &mut v);
        }
        assert!(!v.dropped().is_empty());
        assert!(v
            .dropped()
            .iter()
            .all(|d| d.packet.flow == k[0] && d.reason == DropReason::Early));
        assert!(fq.vars[fq.queue_of(k[0])].dropping);
        assert!(!fq.vars[fq.queue_of(k[1])].dropping);
    }
}
