//! aqmlab's emulator router: the disciplines of crates/qdisc forwarding real
//! IPv4 packets between network namespaces (docs/emulator.md).
//!
//! `aqmlab emulate` creates a namespace per host; this router opens one TUN
//! device per host ([`tun`]), which `aqmlab emulate` then moves into the
//! host's namespace, so that every packet a host sends is read here. The
//! router classifies it from its headers ([`packet`]), routes it by
//! destination address over the scenario's links ([`network`]), each a
//! discipline, an exact-rate transmitter and a delay line ([`link`]), and
//! writes it to the destination host's device when it arrives. The event
//! loop ([`router`]) is single-threaded and sleeps until the next event.

pub mod config;
pub mod kernel;
pub mod link;
pub mod measure;
pub mod network;
pub mod packet;
pub mod router;
pub mod tun;
