//! The router process's event loop: single-threaded, driven by epoll over
//! the hosts' TUN devices, a timerfd armed for the network's next event
//! (absolute CLOCK_MONOTONIC time, to the nanosecond) and a signalfd for
//! SIGTERM and SIGINT. It sleeps whenever nothing is due: no busy loop.

use std::io;
use std::os::fd::RawFd;

use aqmlab_qdisc::Time;
use serde_json::Value;

use crate::measure::Usage;
use crate::network::Network;
use crate::tun::Tun;

/// Packets read from one device per wake-up before the others get a turn.
const READ_BATCH: usize = 64;
const TIMER: u64 = u64::MAX - 1;
/// Tokens of the kernel ports' `from` devices: this plus the port.
const KERNEL: u64 = 1 << 32;
const SIGNAL: u64 = u64::MAX;

/// Why the loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Signal,
    TimeLimit,
}

pub struct Router {
    network: Network,
    tuns: Vec<Tun>,
    /// Per kernel port: the device written to, the device read from.
    kernel: Vec<(Tun, Tun)>,
    epoll: RawFd,
    timer: RawFd,
    signals: RawFd,
    start: Time,
    armed: Option<Time>,
    /// Events due within this many nanoseconds of a wake-up are run in it
    /// rather than after another sleep (the config's `batch_ns`).
    batch: Time,
    /// Packets read from the devices, and writes the host's kernel refused.
    pub packets_read: u64,
    pub write_failures: u64,
    pub read_failures: u64,
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn monotonic_ns() -> Time {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as Time * 1_000_000_000 + ts.tv_nsec as Time
}

impl Router {
    /// Block SIGTERM and SIGINT (they are read from a signalfd instead) and
    /// set up epoll over `tuns`.
    pub fn new(
        network: Network,
        tuns: Vec<Tun>,
        kernel: Vec<(Tun, Tun)>,
        batch: Time,
    ) -> io::Result<Self> {
        // SAFETY: plain system calls on descriptors this function owns.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::sigaddset(&mut set, libc::SIGINT);
            check(libc::sigprocmask(
                libc::SIG_BLOCK,
                &set,
                std::ptr::null_mut(),
            ))?;
            let signals = check(libc::signalfd(
                -1,
                &set,
                libc::SFD_CLOEXEC | libc::SFD_NONBLOCK,
            ))?;
            let timer = check(libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
            ))?;
            // Timers to the nanosecond: no slack added to the wake-ups.
            libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
            let epoll = check(libc::epoll_create1(libc::EPOLL_CLOEXEC))?;
            let watch = |fd: RawFd, token: u64| {
                let mut ev = libc::epoll_event {
                    events: libc::EPOLLIN as u32,
                    u64: token,
                };
                check(libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, fd, &mut ev))
            };
            watch(signals, SIGNAL)?;
            watch(timer, TIMER)?;
            for (device, tun) in tuns.iter().enumerate() {
                watch(tun.fd(), device as u64)?;
            }
            for (port, (_, from)) in kernel.iter().enumerate() {
                watch(from.fd(), KERNEL + port as u64)?;
            }
            Ok(Self {
                network,
                tuns,
                kernel,
                epoll,
                timer,
                signals,
                start: monotonic_ns(),
                armed: None,
                batch,
                packets_read: 0,
                write_failures: 0,
                read_failures: 0,
            })
        }
    }

    fn now(&self) -> Time {
        monotonic_ns() - self.start
    }

    /// Forward packets until a signal comes or `limit` nanoseconds have passed.
    pub fn run(&mut self, limit: Time) -> io::Result<Stop> {
        let mut events =
            vec![libc::epoll_event { events: 0, u64: 0 }; self.tuns.len() + self.kernel.len() + 2];
        loop {
            let deadline = self.network.next_event().map_or(limit, |t| t.min(limit));
            self.arm(deadline)?;
            // SAFETY: epoll_wait writes at most events.len() entries.
            let n = unsafe {
                libc::epoll_wait(self.epoll, events.as_mut_ptr(), events.len() as i32, -1)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            let now = self.now();
            self.advance(now);
            for ev in &events[..n as usize] {
                let token = ev.u64;
                match token {
                    SIGNAL => return Ok(Stop::Signal),
                    TIMER => self.drain_timer(),
                    port if port >= KERNEL => self.read_kernel((port - KERNEL) as u32, now),
                    device => self.read_device(device as u32, now),
                }
            }
            self.write_kernel();
            if now >= limit {
                return Ok(Stop::TimeLimit);
            }
        }
    }

    /// Hand the packets bound for kernel queues to their devices.
    fn write_kernel(&mut self) {
        let mut outbox = std::mem::take(&mut self.network.kernel.outbox);
        for (port, packet) in outbox.drain(..) {
            if !self.kernel[port as usize].0.write(&packet.data) {
                self.write_failures += 1;
            }
            self.network.recycle(packet.data);
        }
        self.network.kernel.outbox = outbox;
    }

    /// Read what the kernel released from port `port`.
    fn read_kernel(&mut self, port: u32, now: Time) {
        for _ in 0..READ_BATCH {
            let mut buf = self.network.buffer();
            match self.kernel[port as usize].1.read_into(&mut buf) {
                Ok(true) => self.network.from_kernel(port, buf, now),
                Ok(false) => return self.network.recycle(buf),
                Err(_) => {
                    self.read_failures += 1;
                    return self.network.recycle(buf);
                }
            }
        }
    }

    fn advance(&mut self, now: Time) {
        let (network, tuns, failures) = (&mut self.network, &self.tuns, &mut self.write_failures);
        network.advance(now + self.batch, now, &mut |device, bytes| {
            if !tuns[device as usize].write(bytes) {
                *failures += 1;
            }
        });
    }

    /// Read what the hosts of device `device` sent. A device that fails (its
    /// namespace removed under a run that is ending) is no longer watched.
    fn read_device(&mut self, device: u32, now: Time) {
        for _ in 0..READ_BATCH {
            let mut buf = self.network.buffer();
            match self.tuns[device as usize].read_into(&mut buf) {
                Ok(true) => {
                    self.packets_read += 1;
                    self.network.arrive(device, buf, now);
                }
                Ok(false) => return self.network.recycle(buf),
                Err(_) => {
                    self.read_failures += 1;
                    // SAFETY: removes a descriptor of this router from its own epoll set.
                    unsafe {
                        libc::epoll_ctl(
                            self.epoll,
                            libc::EPOLL_CTL_DEL,
                            self.tuns[device as usize].fd(),
                            std::ptr::null_mut(),
                        )
                    };
                    return;
                }
            }
        }
    }

    /// Set the timer for `at` (router time), unless it is set for it already.
    fn arm(&mut self, at: Time) -> io::Result<()> {
        if self.armed == Some(at) {
            return Ok(());
        }
        let abs = self.start + at.max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (abs / 1_000_000_000) as i64,
                tv_nsec: (abs % 1_000_000_000) as i64,
            },
        };
        // SAFETY: arms the router's own timerfd.
        check(unsafe {
            libc::timerfd_settime(
                self.timer,
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })?;
        self.armed = Some(at);
        Ok(())
    }

    fn drain_timer(&mut self) {
        let mut expirations = 0u64;
        // SAFETY: a timerfd read writes one u64.
        unsafe { libc::read(self.timer, (&mut expirations as *mut u64).cast(), 8) };
        self.armed = None;
    }

    /// Everything measured, the router's own cost included.
    pub fn report(&self, stop: Stop) -> Value {
        let mut report = self.network.report();
        let usage = Usage::now();
        let cpu = usage.user_s + usage.system_s;
        report["router"] = serde_json::json!({
            "stopped_by": format!("{stop:?}"),
            "packets_read": self.packets_read,
            "write_failures": self.write_failures,
            "read_failures": self.read_failures,
            "elapsed_s": self.now() as f64 / 1e9,
            "start_monotonic_ns": self.start,
            "cpu_user_s": usage.user_s,
            "cpu_system_s": usage.system_s,
            "cpu_per_packet_ns": (self.packets_read > 0).then(|| cpu * 1e9 / self.packets_read as f64),
            "max_rss_kb": usage.max_rss_kb,
        });
        report
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        // SAFETY: closes descriptors this router opened and owns.
        unsafe {
            libc::close(self.epoll);
            libc::close(self.timer);
            libc::close(self.signals);
        }
    }
}
