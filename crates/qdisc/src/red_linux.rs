//! RED as Linux 2.4 implements it (`net/sched/sch_red.c`, Alexey Kuznetsov,
//! unchanged from 2.4 to 2.6.12; parameters computed by iproute2's `tc`
//! helpers `tc_red_eval_ewma`, `tc_red_eval_P`, `tc_red_eval_idle_damping`).
//! The baseline and the substrate of seed 004 (digest 004, section 1.2):
//! CBT, DCBT and ChIPS are built on [`LinuxRedCore`].
//!
//! Exactly as the kernel does it, in fixed point:
//! - `qave` is the average backlog in **bytes**, scaled by `2^Wlog`;
//!   updated on every arrival, before the decision, from the backlog
//!   before the arrival: `qave += backlog - (qave >> Wlog)`.
//! - Idle decay: when the queue goes idle the start is stored; at the next
//!   arrival `qave` is shifted right by `Stab[idle >> Scell_log]`, or, if
//!   that entry is 0, reduced linearly by `qave idle >> Scell_log` (at most
//!   halved). The arrival then does not add a sample.
//! - `qave < qth_min`: accept, `qcount = -1`; `qave >= qth_max`: drop (or
//!   mark), `qcount = -1`; between: `++qcount`; the first packet of an
//!   episode draws `qR` in `[0, 2^Plog)` and passes; later ones are
//!   dropped when `((qave - qth_min) >> Wlog) qcount >= qR`, i.e.
//!   `max_P (avg - min)/(max - min) >= R/qcount`; a drop resets
//!   `qcount = 0` and draws a new `qR`.
//! - Accepted packets are tail-dropped if `backlog + len > limit` (bytes).
//!
//! Parameters in `tc`'s terms (`limit`, `min`, `max`, `avpkt`, `burst`,
//! `probability`, `bandwidth`, `ecn`), their defaults and sources:
//! [`LinuxRedParams`]. O(1).
//!
//! Time: the kernel's psched clock is taken as microseconds.

use crate::blocks::CountedFifo;
use crate::params::{
    link_rate, nonzero, params, probability, refuse, thresholds, SpecError, DEFAULT_LINK_RATE_BPS,
    VALID,
};
use crate::rng::Rng;
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Ecn, Packet, QueueDiscipline, Time, Verdicts};

/// Kernel parameters, as `tc` computes them from the user's values.
#[derive(Clone, Debug, PartialEq)]
pub struct LinuxRedConfig {
    /// Hard limit, bytes.
    pub limit: u64,
    /// Thresholds, bytes (unscaled).
    pub qth_min: u64,
    pub qth_max: u64,
    pub wlog: u8,
    pub plog: u8,
    pub scell_log: u8,
    pub stab: [u8; 256],
    pub ecn: bool,
}

params! {
    /// The user's (`tc`'s) parameters, with seed 004's experiment (section
    /// 3.3, digest 004 A18).
    #[derive(PartialEq)]
    pub struct LinuxRedParams {
        /// tc's `limit`, the hard limit: 20000 bytes (seed 004 section 4.2.2).
        pub limit: u64 [Bytes] = 20_000,
        /// tc's `min`: 5000 bytes (seed 004 section 4.2.2).
        pub min_th: u64 [Bytes] = 5_000,
        /// tc's `max`: 15000 bytes (seed 004 section 4.2.2).
        pub max_th: u64 [Bytes] = 15_000,
        /// tc's `avpkt`, the typical packet: 1000 bytes (seed 004's packets;
        /// digest A18).
        pub avpkt: u32 [Bytes] = 1000,
        /// tc's `burst`, in packets of `avpkt`, which sets Wlog: 8, Wlog 3
        /// (digest A18, iproute2's `(2 min + max) / (3 avpkt)`).
        pub burst: u32 [Number] = 8,
        /// tc's `probability`, the drop probability at `max`: 0.01 (seed
        /// 004; effectively 10000/2^20 = 0.00954).
        pub max_p: f64 [Number] = 0.01,
        /// tc's `ecn`: mark instead of dropping (digest A18: off).
        pub ecn: bool [Flag] = false,
        /// tc's `bandwidth`, for the idle damping: the simulator fills in the
        /// link's (10 Mb/s, tc's default, if unknown).
        pub link_rate_bps: Option<u64> [Rate] = None,
    }
}

impl LinuxRedParams {
    fn link_rate(&self) -> u64 {
        self.link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS)
    }
}

impl QdiscParams for LinuxRedParams {
    const SUMMARY: &'static str = "RED as Linux 2.4 implements it (fixed point, byte averages)";

    /// The checks `tc` makes, and one more: the rate.
    fn validate(&self) -> Result<(), SpecError> {
        link_rate(self.link_rate_bps)?;
        nonzero("limit", self.limit)?;
        thresholds(self.min_th as f64, self.max_th as f64)?;
        nonzero("avpkt", self.avpkt)?;
        nonzero("burst", self.burst)?;
        probability("max_p", self.max_p)?;
        if eval_wlog(self.min_th, self.burst, self.avpkt).is_none() {
            return refuse(
                "burst",
                format!(
                    "burst {} is too small for min_th {} and avpkt {} \
                     (tc needs burst + 1 - min_th/avpkt >= 1)",
                    self.burst, self.min_th, self.avpkt
                ),
            );
        }
        if eval_plog(self.min_th, self.max_th, self.max_p).is_none() {
            return refuse(
                "max_p",
                format!(
                    "{} is too small to represent for max_th - min_th = {} (Plog >= 32)",
                    self.max_p,
                    self.max_th - self.min_th
                ),
            );
        }
        LinuxRedConfig::from_tc(self)
            .map(|_| ())
            .or_else(|m| refuse("link_rate_bps", m))
    }

    fn fill_link_rate(&mut self, bps: u64) {
        self.link_rate_bps.get_or_insert(bps);
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(RedLinux::new(self, seed).expect(VALID))
    }
}

/// `tc_red_eval_ewma`: the smallest Wlog whose filter lets a burst of
/// `burst` packets in without the average reaching `min`.
pub fn eval_wlog(qmin: u64, burst: u32, avpkt: u32) -> Option<u8> {
    let a = burst as f64 + 1.0 - qmin as f64 / avpkt as f64;
    if a < 1.0 {
        return None;
    }
    let mut w = 0.5f64;
    for wlog in 1..32u8 {
        if a <= (1.0 - (1.0 - w).powi(burst as i32)) / w {
            return Some(wlog);
        }
        w /= 2.0;
    }
    None
}

/// `tc_red_eval_P`: Plog with `max_P ~ (max - min) / 2^Plog`.
pub fn eval_plog(qmin: u64, qmax: u64, probability: f64) -> Option<u8> {
    if qmax <= qmin {
        return None;
    }
    let mut prob = probability / (qmax - qmin) as f64;
    for i in 0..32u8 {
        if prob > 1.0 {
            return Some(i);
        }
        prob *= 2.0;
    }
    None
}

/// `tc_red_eval_idle_damping`: Scell_log and the table of right shifts for
/// an idle time of `i << Scell_log` microseconds.
pub fn eval_idle_damping(wlog: u8, avpkt: u32, bps: u64) -> Option<(u8, [u8; 256])> {
    // tc_calc_xmittime: microseconds to send avpkt bytes at bps/8 bytes/s.
    let xmit_time = 1e6 * avpkt as f64 / (bps as f64 / 8.0);
    let lw = -(1.0 - 1.0 / (1u64 << wlog) as f64).ln() / xmit_time;
    let maxtime = 31.0 / lw;
    let clog = (0..32u8).find(|&c| maxtime / ((1u64 << c) as f64) < 512.0)?;
    let mut stab = [0u8; 256];
    for (i, s) in stab.iter_mut().enumerate().take(255).skip(1) {
        let v = (((i as u64) << clog) as f64 * lw).floor();
        *s = if v > 31.0 { 31 } else { v as u8 };
    }
    stab[255] = 31;
    Some((clog, stab))
}

impl LinuxRedConfig {
    /// What `tc qdisc add ... red limit L min A max B avpkt S burst N
    /// probability P bandwidth R [ecn]` hands the kernel.
    pub fn from_tc(p: &LinuxRedParams) -> Result<Self, String> {
        let wlog = eval_wlog(p.min_th, p.burst, p.avpkt)
            .ok_or("burst too small for min and avpkt (tc: failed to calculate EWMA constant)")?;
        let plog = eval_plog(p.min_th, p.max_th, p.max_p)
            .ok_or("probability too small or max <= min (tc: failed to calculate probability)")?;
        let (scell_log, stab) = eval_idle_damping(wlog, p.avpkt, p.link_rate())
            .ok_or("tc: failed to calculate idle damping table")?;
        Ok(Self {
            limit: p.limit,
            qth_min: p.min_th,
            qth_max: p.max_th,
            wlog,
            plog,
            scell_log,
            stab,
            ecn: p.ecn,
        })
    }
}

/// Where the average stands against the thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Region {
    Below,
    Between,
    Above,
}

/// A per-class average kept with the same filter as `qave` (CBT/DCBT,
/// digest 004 section 1.3 [REC]): scaled by `2^Wlog`, bytes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClassAvg {
    pub avg: u64,
    pub bytes: u64,
}

/// The state of `struct red_sched_data`, without the queue.
pub struct LinuxRedCore {
    cfg: LinuxRedConfig,
    qth_min: u64,
    qth_max: u64,
    rmask: u64,
    scell_max: u64,
    qave: u64,
    qcount: i64,
    qr: u64,
    /// `qidlestart`; `None` is PSCHED_PASTPERFECT.
    idle_start: Option<Time>,
    rng: Rng,
}

impl LinuxRedCore {
    pub fn new(cfg: LinuxRedConfig, seed: u64) -> Self {
        let w = cfg.wlog;
        Self {
            qth_min: cfg.qth_min << w,
            qth_max: cfg.qth_max << w,
            rmask: if cfg.plog < 32 {
                (1u64 << cfg.plog) - 1
            } else {
                u32::MAX as u64
            },
            scell_max: 255u64 << cfg.scell_log,
            qave: 0,
            qcount: -1,
            qr: 0,
            idle_start: None,
            rng: Rng::stream(seed, 0x248ED),
            cfg,
        }
    }

    pub fn config(&self) -> &LinuxRedConfig {
        &self.cfg
    }

    /// The average in bytes, scaled by `2^Wlog`.
    pub fn qave_scaled(&self) -> u64 {
        self.qave
    }

    /// The average in bytes.
    pub fn avg_bytes(&self) -> u64 {
        self.qave >> self.cfg.wlog
    }

    pub fn wlog(&self) -> u8 {
        self.cfg.wlog
    }

    /// The top of `red_enqueue`: the average, and the class averages with
    /// the same filter.
    pub(crate) fn arrive(&mut self, backlog: u64, now: Time, classes: &mut [ClassAvg]) {
        if let Some(start) = self.idle_start.take() {
            let us_idle = (now.saturating_sub(start) / 1000).min(self.scell_max);
            let shift = self.cfg.stab[(us_idle >> self.cfg.scell_log) as usize];
            let decay = |v: u64| -> u64 {
                if shift > 0 {
                    v >> shift
                } else {
                    // (1-W)^m ~ 1 - mW for the first part of the exponent.
                    let d = (v * us_idle) >> self.cfg.scell_log;
                    if d < v / 2 {
                        v - d
                    } else {
                        v >> 1
                    }
                }
            };
            self.qave = decay(self.qave);
            for c in classes.iter_mut() {
                c.avg = decay(c.avg);
            }
        } else {
            let w = self.cfg.wlog;
            // qave = qave (1-W) + backlog W, with the point at Wlog.
            self.qave = self.qave + backlog - (self.qave >> w);
            for c in classes.iter_mut() {
                c.avg = c.avg + c.bytes - (c.avg >> w);
            }
        }
    }

    #[inline]
    pub(crate) fn region(&self) -> Region {
        if self.qave < self.qth_min {
            Region::Below
        } else if self.qave >= self.qth_max {
            Region::Above
        } else {
            Region::Between
        }
    }

    /// `qave < qth_min`: no congestion episode.
    #[inline]
    pub(crate) fn below(&mut self) {
        self.qcount = -1;
    }

    /// `qave >= qth_max`: forced drop.
    #[inline]
    pub(crate) fn above(&mut self) {
        self.qcount = -1;
    }

    /// Between the thresholds: whether to drop (mark) this packet.
    #[inline]
    pub(crate) fn random_drop(&mut self) -> bool {
        self.qcount += 1;
        if self.qcount != 0 {
            if ((self.qave - self.qth_min) >> self.cfg.wlog) * (self.qcount as u64) < self.qr {
                return false;
            }
            self.qcount = 0;
            self.qr = self.rng.next_u64() & self.rmask;
            return true;
        }
        self.qr = self.rng.next_u64() & self.rmask;
        false
    }

    /// The queue went idle at `now` (`red_dequeue` found it empty).
    #[inline]
    pub(crate) fn idle(&mut self, now: Time) {
        self.idle_start = Some(now);
    }

    #[cfg(test)]
    pub(crate) fn set_qave_for_tests(&mut self, qave: u64) {
        self.qave = qave;
    }

    #[cfg(test)]
    pub(crate) fn idle_start_none_for_tests(&mut self) {
        self.idle_start = None;
    }

    /// Drop (or mark and keep) a packet RED signals congestion on; returns
    /// it if it is to be queued.
    #[inline]
    pub(crate) fn congestion<P: Packet>(
        &self,
        mut packet: P,
        fits: bool,
        verdicts: &mut Verdicts<P>,
    ) -> Option<P> {
        if self.cfg.ecn && packet.ecn() != Ecn::NotEct && fits {
            packet.mark_ce();
            verdicts.mark(packet.size());
            Some(packet)
        } else if self.cfg.ecn && packet.ecn() != Ecn::NotEct {
            verdicts.refuse(packet, DropReason::Overflow);
            None
        } else {
            verdicts.refuse(packet, DropReason::Early);
            None
        }
    }

    /// The hard limit: `backlog + len <= limit`.
    #[inline]
    pub(crate) fn fits(&self, backlog: u64, size: u32) -> bool {
        backlog + size as u64 <= self.cfg.limit
    }
}

/// Linux 2.4 `sch_red`: a byte FIFO under [`LinuxRedCore`].
pub struct RedLinux<P> {
    queue: CountedFifo<P>,
    core: LinuxRedCore,
}

impl<P: Packet> RedLinux<P> {
    pub fn new(params: &LinuxRedParams, seed: u64) -> Result<Self, String> {
        Ok(Self {
            queue: CountedFifo::default(),
            core: LinuxRedCore::new(LinuxRedConfig::from_tc(params)?, seed),
        })
    }

    pub fn core(&self) -> &LinuxRedCore {
        &self.core
    }
}

impl<P: Packet> QueueDiscipline<P> for RedLinux<P> {
    fn name(&self) -> &'static str {
        "red_linux"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.core.arrive(self.queue.bytes(), now, &mut []);
        let fits = self.core.fits(self.queue.bytes(), packet.size());
        let admitted = match self.core.region() {
            Region::Below => {
                self.core.below();
                Some(packet)
            }
            Region::Above => {
                self.core.above();
                self.core.congestion(packet, fits, verdicts)
            }
            Region::Between => {
                if self.core.random_drop() {
                    self.core.congestion(packet, fits, verdicts)
                } else {
                    Some(packet)
                }
            }
        };
        if let Some(p) = admitted {
            if fits {
                self.queue.push_back(p);
            } else {
                verdicts.refuse(p, DropReason::Overflow);
            }
        }
        if self.queue.is_empty() {
            // qdisc_run follows every enqueue; its dequeue finds nothing.
            self.core.idle(now);
        }
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let packet = self.queue.pop_front();
        if self.queue.is_empty() {
            self.core.idle(now);
        }
        packet
    }

    fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    #[test]
    fn tc_helpers_give_the_digest_values() {
        // Digest 004 section 1.2: min 5000, avpkt 1000: burst 6/8/10/15/20
        // -> Wlog 2/3/4/5/6; probability 0.01 over 10000 B -> Plog 20.
        for (burst, wlog) in [(6, 2), (8, 3), (10, 4), (15, 5), (20, 6)] {
            assert_eq!(eval_wlog(5000, burst, 1000), Some(wlog), "burst {burst}");
        }
        assert_eq!(eval_plog(5000, 15000, 0.01), Some(20));
        // 1000 B at 10 Mb/s = 800 us; lW = -ln(7/8)/800; 31/lW = 185727 us
        // -> Scell_log 9; Stab[i] = floor(i 512 lW) = floor(0.08546 i).
        let (clog, stab) = eval_idle_damping(3, 1000, 10_000_000).unwrap();
        assert_eq!(clog, 9);
        assert_eq!(&stab[..14], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
        assert_eq!(stab[24], 2);
        assert_eq!(stab[255], 31);
    }

    fn red() -> RedLinux<TestPacket> {
        RedLinux::new(&LinuxRedParams::default(), 5).unwrap()
    }

    #[test]
    fn fixed_point_average_in_bytes() {
        let mut r = red();
        let mut v = Verdicts::new();
        // Wlog 3: qave += backlog - qave/8, from the backlog before arrival.
        r.enqueue(TestPacket::new(1, 0, 1000), 0, &mut v); // backlog 0
        assert_eq!(r.core.qave_scaled(), 0);
        r.enqueue(TestPacket::new(1, 1, 1000), 0, &mut v); // backlog 1000
        assert_eq!(r.core.qave_scaled(), 1000);
        r.enqueue(TestPacket::new(1, 2, 1000), 0, &mut v); // 1000 - 125 + 2000
        assert_eq!(r.core.qave_scaled(), 2875);
        assert_eq!(r.core.avg_bytes(), 359);
        // Idle 2 ms = 2000 us: Stab[2000 >> 9 = 3] = 0, linear:
        // d = 2875 * 2000 >> 9 = 11230 >= 2875/2 -> halve.
        for _ in 0..3 {
            r.dequeue(1_000_000, &mut v);
        }
        r.enqueue(TestPacket::new(1, 3, 1000), 3_000_000, &mut v);
        assert_eq!(r.core.qave_scaled(), 1437);
        // Idle 20 ms: Stab[20000 >> 9 = 39] = floor(39 * 0.08546) = 3 -> >> 3.
        r.dequeue(3_000_000, &mut v);
        r.core.qave = 80_000;
        r.enqueue(TestPacket::new(1, 4, 1000), 23_000_000, &mut v);
        assert_eq!(r.core.qave_scaled(), 10_000);
    }

    #[test]
    fn count_based_drop_and_hard_limit() {
        let mut r = red();
        let mut v = Verdicts::new();
        // Put qave between the thresholds: avg 10000 B, (avg-min) = 5000.
        r.core.qave = 10_000 << 3;
        r.core.qcount = -1;
        // First packet of the episode passes and draws R.
        assert!(!r.core.random_drop());
        let r_draw = r.core.qr;
        // Then drop exactly when 5000 * count >= R.
        let mut count = 0u64;
        loop {
            count += 1;
            let dropped = r.core.random_drop();
            assert_eq!(dropped, 5000 * count >= r_draw, "count {count}, R {r_draw}");
            if dropped {
                break;
            }
        }
        assert_eq!(r.core.qcount, 0);
        // avg >= max: every packet dropped, Early.
        // (20000 << 3 decays to 17500 << 3 >= max with the empty sample.)
        r.core.qave = 20_000 << 3;
        r.core.idle_start = None;
        r.enqueue(TestPacket::new(2, 0, 1000), 0, &mut v);
        assert_eq!(v.dropped()[0].reason, DropReason::Early);
        v.drain(|_| {});
        // Below min: accepted up to backlog + len <= 20000, then Overflow.
        let mut r = red();
        for i in 0..25 {
            r.core.qave = 0;
            r.enqueue(TestPacket::new(1, i, 1000), 0, &mut v);
        }
        assert_eq!(r.backlog().bytes, 20_000);
        assert_eq!(v.dropped().len(), 5);
        assert!(v
            .dropped()
            .iter()
            .all(|d| d.reason == DropReason::Overflow && !d.buffered));
    }
}
