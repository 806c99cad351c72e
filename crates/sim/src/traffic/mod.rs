//! Traffic sources: UDP sources and Poisson arrivals of TCP flows, and the
//! random quantities they draw.

pub mod arrivals;
pub mod udp;

use aqmlab_qdisc::rng::Rng;

use crate::scenario::Dist;

/// Draw from a distribution (values in the distribution's own unit).
pub fn sample_dist(d: &Dist, rng: &mut Rng) -> f64 {
    match *d {
        Dist::Fixed { value } => value,
        Dist::Uniform { low, high } => low + (high - low) * rng.uniform(),
        Dist::Exponential { mean } => rng.exponential(mean),
        Dist::Pareto { mean, shape } => rng.pareto(mean, shape),
    }
}
