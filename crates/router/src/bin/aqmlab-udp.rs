//! The emulator's UDP sources and sinks (docs/emulator.md, "Traffic").
//!
//!     aqmlab-udp send SRC_ADDR DST_ADDR:PORT PACKET_BYTES TOS SEED SOURCE_JSON
//!     aqmlab-udp recv ADDR:PORT
//!
//! `send` sends packets of PACKET_BYTES on the wire (IPv4 and UDP headers
//! included) by the scenario's sending process SOURCE_JSON (the resolved
//! scenario's `source`: CBR with jitter, Poisson, or on-off with on and off
//! periods of any distribution), drawn from the simulator's own code
//! (`aqmlab_qdisc::source`) and stream (SEED), with the TOS byte TOS
//! (tagged multimedia: 0xb8). It sleeps until each packet's own instant
//! (absolute CLOCK_MONOTONIC, timer slack 1 ns), so that lateness does not
//! accumulate, until SIGINT or SIGTERM. `recv` takes the packets and
//! discards them (the router measures them).

use std::net::{SocketAddr, UdpSocket};

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::source::{Next, Process, UdpSource};
use std::os::fd::AsRawFd;
use std::process::ExitCode;

const IPV4_UDP_HEADERS: usize = 28;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("send") if args.len() == 7 => send(&args[1..]),
        Some("recv") if args.len() == 2 => recv(&args[1]),
        _ => Err("usage: aqmlab-udp send SRC DST:PORT PACKET_BYTES TOS SEED SOURCE_JSON | recv ADDR:PORT".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("aqmlab-udp: {e}");
            ExitCode::from(2)
        }
    }
}

fn parse<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{what}: not a number: {text}"))
}

fn send(args: &[String]) -> Result<(), String> {
    let src: std::net::IpAddr = parse(&args[0], "SRC")?;
    let dst: SocketAddr = parse(&args[1], "DST:PORT")?;
    let size: usize = parse(&args[2], "PACKET_BYTES")?;
    let tos: i32 = parse(&args[3], "TOS")?;
    let mut rng = Rng::new(parse(&args[4], "SEED")?);
    let source: UdpSource =
        serde_json::from_str(&args[5]).map_err(|e| format!("SOURCE_JSON: {e}"))?;
    if size <= IPV4_UDP_HEADERS {
        return Err("PACKET_BYTES > 28".into());
    }
    let socket = UdpSocket::bind(SocketAddr::new(src, 0)).map_err(|e| e.to_string())?;
    socket.connect(dst).map_err(|e| e.to_string())?;
    // SAFETY: plain socket and process options on descriptors this program owns.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_TOS,
            (&tos as *const i32).cast(),
            4,
        );
        libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
    }
    let mut process = Process::new(source, size as u32);
    let mut payload = vec![0u8; size - IPV4_UDP_HEADERS];
    let mut next = now_ns() as f64;
    let mut seq = 0u64;
    loop {
        match process.next(next as u64, &mut rng) {
            Next::Send(gap) => {
                payload[..8].copy_from_slice(&seq.to_be_bytes());
                seq += 1;
                // A full socket buffer or an unreachable port is the network's business: go on.
                let _ = socket.send(&payload);
                next += gap.max(1.0);
            }
            Next::Resume(at) => next = at as f64,
        }
        sleep_until(next as u64);
    }
}

fn recv(addr: &str) -> Result<(), String> {
    let socket =
        UdpSocket::bind(parse::<SocketAddr>(addr, "ADDR:PORT")?).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 65536];
    loop {
        socket.recv(&mut buf).map_err(|e| e.to_string())?;
    }
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn sleep_until(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as i64,
        tv_nsec: (ns % 1_000_000_000) as i64,
    };
    // SAFETY: sleeps; an interruption returns early and the next packet goes at once.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}
