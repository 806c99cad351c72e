//! Exponentially weighted moving average, with the idle-time correction of
//! RED (Floyd and Jacobson 1993, section 11): while the queue is idle the
//! average decays as if `m` packets of typical size had left an empty queue.

#[derive(Clone, Copy, Debug)]
pub struct Ewma {
    weight: f64,
    value: f64,
}

impl Ewma {
    /// `weight` in (0, 1]: the share of each new sample (RED's w_q).
    pub fn new(weight: f64) -> Self {
        Self { weight, value: 0.0 }
    }

    #[inline]
    pub fn value(&self) -> f64 {
        self.value
    }

    #[inline]
    pub fn update(&mut self, sample: f64) -> f64 {
        self.value += self.weight * (sample - self.value);
        self.value
    }

    /// Decay toward zero as if `m` samples of 0 had arrived: value *= (1-w)^m.
    #[inline]
    pub fn decay(&mut self, m: f64) {
        if m > 0.0 {
            self.value *= (1.0 - self.weight).powf(m);
        }
    }

    /// RED's idle correction (Floyd and Jacobson 1993, section 11): after
    /// `idle` ns of an empty queue, decay as if `idle / per_sample` samples
    /// of 0 had arrived, one per transmission time of a typical packet.
    #[inline]
    pub fn decay_idle(&mut self, idle: crate::Time, per_sample: f64) {
        if per_sample > 0.0 {
            self.decay(idle as f64 / per_sample);
        }
    }

    pub fn weight(&self) -> f64 {
        self.weight
    }

    pub fn set(&mut self, value: f64) {
        self.value = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_and_decays() {
        let mut e = Ewma::new(0.5);
        e.update(8.0);
        assert_eq!(e.value(), 4.0);
        e.update(8.0);
        assert_eq!(e.value(), 6.0);
        e.decay(2.0);
        assert_eq!(e.value(), 1.5);
    }
}
