//! `aqmlab-router CONFIG REPORT`: create the hosts' TUN devices (one per
//! distinct `device`), print `ready` on stdout, forward until SIGTERM/SIGINT
//! or the configured time limit, then write everything measured to REPORT
//! (JSON).
//!
//! Exit status: 0 after writing the report, 2 for a configuration refused
//! (the message names the field), 1 for a system failure (no
//! `/dev/net/tun`, no CAP_NET_ADMIN).

use std::io::Write;
use std::process::ExitCode;

use aqmlab_router::config::Config;
use aqmlab_router::network::Network;
use aqmlab_router::router::Router;
use aqmlab_router::tun::Tun;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, config, report] = &args[..] else {
        eprintln!("usage: aqmlab-router CONFIG.json REPORT.json");
        return ExitCode::from(2);
    };
    let config = match std::fs::read_to_string(config)
        .map_err(|e| e.to_string())
        .and_then(|t| Config::from_json(&t).map_err(|e| e.to_string()))
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("aqmlab-router: {e}");
            return ExitCode::from(2);
        }
    };
    let network = match Network::new(&config) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("aqmlab-router: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&config, network, report) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("aqmlab-router: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(config: &Config, network: Network, report: &str) -> std::io::Result<()> {
    // Stop (cleanly: SIGTERM is read by the event loop) if whoever started
    // the router dies, even by SIGKILL: its devices go with it.
    // SAFETY: sets a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
    let tuns = config
        .devices()
        .0
        .into_iter()
        .map(|device| {
            Tun::create(device)
                .map_err(|e| std::io::Error::new(e.kind(), format!("/dev/net/tun ({device}): {e}")))
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    let kernel = config
        .kernel_ports
        .iter()
        .map(|p| Ok((Tun::create(&p.into)?, Tun::create(&p.from)?)))
        .collect::<std::io::Result<Vec<_>>>()?;
    if config.realtime {
        realtime();
    }
    let mut router = Router::new(network, tuns, kernel, config.batch_ns)?;
    let mut out = std::io::stdout();
    writeln!(out, "ready")?;
    out.flush()?;
    let stop = router.run(config.stop_after_ns)?;
    let text = serde_json::to_string(&router.report(stop)).expect("a report is JSON");
    let partial = format!("{report}.partial");
    std::fs::write(&partial, text)?;
    std::fs::rename(partial, report)
}

/// SCHED_FIFO at a low real-time priority, if allowed; without it the
/// router runs as any process does (its lateness is measured either way).
fn realtime() {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: sets this process's own scheduling policy.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        eprintln!(
            "aqmlab-router: no real-time priority ({}); running without",
            std::io::Error::last_os_error()
        );
    }
}
