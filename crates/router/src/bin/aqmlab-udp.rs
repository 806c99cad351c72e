//! The emulator's UDP sources and sinks (docs/emulator.md, "Traffic").
//!
//!     aqmlab-udp send SRC_ADDR DST_ADDR:PORT RATE_BPS PACKET_BYTES JITTER TOS SEED [poisson]
//!     aqmlab-udp recv ADDR:PORT
//!
//! `send` sends packets of PACKET_BYTES on the wire (IPv4 and UDP headers
//! included) at RATE_BPS on the wire, as the simulator's sources do: CBR with
//! each gap uniform in `interval * (1 +- JITTER)`, or Poisson (exponential
//! gaps) with `poisson`; with the TOS byte TOS (tagged multimedia: 0xb8). It
//! sleeps until each packet's own instant (absolute CLOCK_MONOTONIC, timer
//! slack 1 ns), so that lateness does not accumulate, until SIGINT or SIGTERM.
//! `recv` takes the packets and discards them (the router measures them).

use std::net::{SocketAddr, UdpSocket};

use aqmlab_qdisc::rng::Rng;
use std::os::fd::AsRawFd;
use std::process::ExitCode;

const IPV4_UDP_HEADERS: usize = 28;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("send") if args.len() >= 8 => send(&args[1..]),
        Some("recv") if args.len() == 2 => recv(&args[1]),
        _ => Err("usage: aqmlab-udp send SRC DST:PORT RATE_BPS PACKET_BYTES JITTER TOS SEED [poisson] | recv ADDR:PORT".into()),
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
    let rate: f64 = parse(&args[2], "RATE_BPS")?;
    let size: usize = parse(&args[3], "PACKET_BYTES")?;
    let jitter: f64 = parse(&args[4], "JITTER")?;
    let tos: i32 = parse(&args[5], "TOS")?;
    let mut rng = Rng::new(parse(&args[6], "SEED")?);
    let poisson = args.get(7).is_some_and(|a| a == "poisson");
    if size <= IPV4_UDP_HEADERS || rate <= 0.0 || !(0.0..1.0).contains(&jitter) {
        return Err("PACKET_BYTES > 28, RATE_BPS > 0 and JITTER in [0, 1)".into());
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
    let interval_ns = size as f64 * 8.0 * 1e9 / rate;
    let mut payload = vec![0u8; size - IPV4_UDP_HEADERS];
    let mut next = now_ns() as f64;
    for seq in 0u64.. {
        payload[..8].copy_from_slice(&seq.to_be_bytes());
        // A full socket buffer or an unreachable port is the network's business: go on.
        let _ = socket.send(&payload);
        next += match poisson {
            true => rng.exponential(interval_ns),
            false => interval_ns * (1.0 + jitter * (2.0 * rng.uniform() - 1.0)),
        };
        sleep_until(next as u64);
    }
    Ok(())
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
