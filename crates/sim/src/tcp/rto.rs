//! The retransmission timeout of RFC 6298: the smoothed RTT and its
//! variation, folded from every RTT sample, the timeout they give, and
//! its exponential back-off.

use crate::scenario::TcpProfile;
use crate::Time;

/// Most doublings of the RTO: 64 times its base at most (RFC 6298 section
/// 5.5 leaves the bound to the implementation; ns-2's is 64).
const MAX_BACKOFF: u8 = 6;

/// SRTT and RTTVAR (RFC 6298 section 2), in nanoseconds. 16 bytes: SRTT
/// is NaN until the first sample, in place of a flag that would pad the
/// sender's two cache lines past their 128 bytes.
#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    srtt: f64,
    rttvar: f64,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self {
            srtt: f64::NAN,
            rttvar: 0.0,
        }
    }
}

impl RttEstimator {
    /// Whether an RTT was measured yet.
    #[inline]
    pub fn has_sample(&self) -> bool {
        !self.srtt.is_nan()
    }

    /// RFC 6298 (2.2, 2.3): fold one RTT sample (ns) into SRTT and RTTVAR.
    pub fn sample(&mut self, rtt: f64) {
        if self.has_sample() {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - rtt).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * rtt;
        } else {
            self.srtt = rtt;
            self.rttvar = rtt / 2.0;
        }
    }

    /// RTO = max(min_rto, SRTT + max(G, 4 RTTVAR)) (2.2-2.4; the initial
    /// RTO before a sample, 2.1), doubled `backoff` times (5.5), at most
    /// `max_rto`.
    pub fn rto(&self, backoff: Backoff, p: &TcpProfile) -> Time {
        let base = if self.has_sample() {
            let g = p.clock_granularity_ns as f64;
            let variation = 4.0 * self.rttvar;
            // Neither is NaN, both are finite and non-negative, and an RTO
            // is far below 2^63 ns: a plain comparison and the signed
            // conversion give what `f64::max` and `as u64` do, with fewer
            // instructions on every ACK.
            let rto = self.srtt + if variation > g { variation } else { g };
            (rto as i64 as Time).max(p.min_rto_ns)
        } else {
            p.initial_rto_ns
        };
        (base << backoff.0).min(p.max_rto_ns)
    }
}

/// How many times the RTO doubled since the last new ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backoff(u8);

impl Backoff {
    /// A timeout (RFC 6298 5.5): double, up to the bound.
    pub fn double(&mut self) {
        self.0 = (self.0 + 1).min(MAX_BACKOFF);
    }

    /// A new ACK: back to the base RTO.
    pub fn reset(&mut self) {
        self.0 = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::profile;

    #[test]
    fn rto_follows_rfc6298() {
        let p = profile(TcpVariant::Reno);
        let mut r = RttEstimator::default();
        let none = Backoff::default();
        assert_eq!(r.rto(none, &p), 1_000_000_000, "initial RTO");
        r.sample(300e6);
        // SRTT = 300 ms, RTTVAR = 150 ms: RTO = 300 + 4 * 150 = 900 ms.
        assert_eq!(r.rto(none, &p), 900_000_000);
        r.sample(100e6);
        // RTTVAR = 3/4 150 + 1/4 |300 - 100| = 162.5; SRTT = 275.
        assert_eq!(r.rto(none, &p), 925_000_000);
    }

    #[test]
    fn backoff_doubles_to_its_bound_and_the_cap() {
        let p = profile(TcpVariant::Reno);
        let mut r = RttEstimator::default();
        r.sample(100e6);
        // 100 + max(10, 4 * 50) = 300 ms, doubled per timeout.
        let mut b = Backoff::default();
        b.double();
        b.double();
        assert_eq!(r.rto(b, &p), 1_200_000_000);
        for _ in 0..10 {
            b.double();
        }
        assert_eq!(r.rto(b, &p), 64 * 300_000_000, "at most 64 times");
        r.sample(2e9);
        assert_eq!(r.rto(b, &p), p.max_rto_ns, "capped at max_rto");
        b.reset();
        assert!(r.rto(b, &p) < p.max_rto_ns);
    }
}
