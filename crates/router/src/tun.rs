//! TUN devices (Linux, `/dev/net/tun`): one per host, opened by the router,
//! non-blocking, carrying bare IPv4 packets (IFF_NO_PI). A device lives as
//! long as its file descriptor: when the router exits, however it exits,
//! the kernel removes its devices, in whatever namespace they were moved to.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

/// `_IOW('T', 202, int)` from linux/if_tun.h.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

/// struct ifreq, as far as TUNSETIFF reads it.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

pub struct Tun {
    file: File,
}

impl Tun {
    /// Create the device `name` in the router's network namespace.
    pub fn create(name: &str) -> io::Result<Self> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "device name of 1 to 15 bytes",
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")?;
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes an ifreq, which `req` is laid out as.
        if unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF, &mut req) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { file })
    }

    /// Read one packet into `buf` (its length set to the packet's);
    /// `Ok(false)` when none is waiting.
    pub fn read_into(&self, buf: &mut Vec<u8>) -> io::Result<bool> {
        buf.resize(buf.capacity().max(2048), 0);
        // SAFETY: reads at most buf.len() bytes into buf.
        let n = unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            buf.clear();
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock => Ok(false),
                _ => Err(e),
            };
        }
        buf.truncate(n as usize);
        Ok(true)
    }

    /// Hand a packet to the host's kernel. A device that is down or gone
    /// (its host removed) refuses it: counted by the caller.
    pub fn write(&self, packet: &[u8]) -> bool {
        // SAFETY: writes packet.len() bytes from packet.
        let n = unsafe { libc::write(self.fd(), packet.as_ptr().cast(), packet.len()) };
        n == packet.len() as isize
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}
