//! What a `Sample` event reads of each sender, kept for the senders that
//! answered an ACK ahead of it (`Simulation::answer_ahead`): such a sender
//! is already past the sample's time when the sample runs, so the sample
//! takes the state it had then from here.

use crate::scenario::TcpProfile;
use crate::tcp::{Phase, TcpSender};

/// A sender as a sample counts it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderSample {
    /// In the established phase: counted among the active flows.
    pub established: bool,
    pub in_congestion_avoidance: bool,
    /// The window the sender may use: its congestion window, at most the
    /// receiver's.
    pub window: f64,
}

impl SenderSample {
    pub fn of(sender: &TcpSender, p: &TcpProfile) -> Self {
        Self {
            established: sender.phase == Phase::Established,
            in_congestion_avoidance: sender.is_in_congestion_avoidance(),
            window: sender.cwnd().min(p.receiver_window as f64),
        }
    }
}

/// A kept sample in 12 bytes (a sample may keep one for most flows): the
/// window, negative in congestion avoidance, NaN outside the established
/// phase.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct Kept {
    flow: u32,
    window: f64,
}

impl Kept {
    fn new(flow: u32, s: SenderSample) -> Self {
        let window = match (s.established, s.in_congestion_avoidance) {
            (false, _) => f64::NAN,
            (true, false) => s.window,
            (true, true) => -s.window,
        };
        Self { flow, window }
    }

    fn sample(self) -> SenderSample {
        let window = self.window;
        SenderSample {
            established: !window.is_nan(),
            in_congestion_avoidance: window.is_sign_negative(),
            // The sign bit cleared: the window to the bit.
            window: window.abs(),
        }
    }
}

/// The samples kept for the next `Sample` event, by flow.
#[derive(Default)]
pub struct KeptSamples {
    /// One bit a flow: its sample is kept.
    kept_for: Vec<u64>,
    kept: Vec<Kept>,
}

impl KeptSamples {
    /// Keep `sample` of `flow` unless one is kept already (the sender's
    /// state when it first went past the sample's time).
    pub fn keep(&mut self, flow: u32, sample: impl FnOnce() -> SenderSample) {
        let (word, bit) = (flow as usize / 64, 1u64 << (flow % 64));
        if self.kept_for.len() <= word {
            self.kept_for.resize(word + 1, 0);
        }
        if self.kept_for[word] & bit == 0 {
            self.kept_for[word] |= bit;
            if self.kept.len() == self.kept.capacity() {
                // By a quarter, not double: the list may hold most flows,
                // and its room at the peak counts in the memory per flow.
                self.kept.reserve_exact(self.kept.len() / 4 + 64);
            }
            self.kept.push(Kept::new(flow, sample()));
        }
    }

    /// Hand the kept samples over in order of flow, for one sample, and
    /// forget them.
    pub fn take(&mut self) -> impl Iterator<Item = (u32, SenderSample)> + '_ {
        self.kept.sort_unstable_by_key(|k| k.flow);
        for k in &self.kept {
            self.kept_for[k.flow as usize / 64] = 0;
        }
        self.kept.drain(..).map(|k| (k.flow, k.sample()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(window: f64) -> SenderSample {
        SenderSample {
            established: true,
            in_congestion_avoidance: false,
            window,
        }
    }

    #[test]
    fn a_kept_sample_comes_back_to_the_bit() {
        for (established, in_congestion_avoidance) in [(true, true), (true, false), (false, false)]
        {
            let mut kept = KeptSamples::default();
            let s = SenderSample {
                established,
                in_congestion_avoidance,
                window: if established { 1.0 / 3.0 } else { 0.0 },
            };
            kept.keep(7, || s);
            let back = kept.take().next().unwrap().1;
            assert_eq!(back.established, s.established);
            assert_eq!(
                back.in_congestion_avoidance,
                s.in_congestion_avoidance && established
            );
            if established {
                assert_eq!(back.window.to_bits(), s.window.to_bits());
            }
        }
    }

    #[test]
    fn keeps_the_first_sample_of_a_flow_and_hands_them_over_in_order() {
        let mut kept = KeptSamples::default();
        kept.keep(130, || sample(1.0));
        kept.keep(2, || sample(2.0));
        kept.keep(130, || sample(3.0));
        let taken: Vec<_> = kept.take().collect();
        assert_eq!(taken, vec![(2, sample(2.0)), (130, sample(1.0))]);
        // Forgotten: the next sample keeps anew.
        kept.keep(130, || sample(4.0));
        assert_eq!(kept.take().collect::<Vec<_>>(), vec![(130, sample(4.0))]);
    }
}
