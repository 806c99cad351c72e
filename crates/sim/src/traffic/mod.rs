//! Traffic sources: UDP sources and Poisson arrivals of TCP flows (their
//! random quantities are `aqmlab_qdisc::source::Dist`).

pub mod arrivals;
pub mod udp;
