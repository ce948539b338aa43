//! What the kernel says about TCP sockets (Linux `/proc`), so tests can wait
//! on a real readiness signal — a port listening, a connection established —
//! instead of sleeping for a guessed time.
#![allow(dead_code)]

use std::collections::HashSet;
use std::time::{Duration, Instant};

/// A TCP socket as `/proc/net/tcp` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Socket {
    pub local_port: u16,
    pub listening: bool,
    pub established: bool,
    /// Bytes received and not yet read by the owner.
    pub rx_queue: u64,
    pub inode: u64,
}

/// Every IPv4 TCP socket of this network namespace.
pub fn tcp_sockets() -> Vec<Socket> {
    let Ok(text) = std::fs::read_to_string("/proc/net/tcp") else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let port = u16::from_str_radix(f.get(1)?.rsplit(':').next()?, 16).ok()?;
            let state = *f.get(3)?;
            let rx = u64::from_str_radix(f.get(4)?.split(':').nth(1)?, 16).ok()?;
            Some(Socket {
                local_port: port,
                listening: state == "0A",
                established: state == "01",
                rx_queue: rx,
                inode: f.get(9)?.parse().ok()?,
            })
        })
        .collect()
}

/// The inodes of the sockets process `pid` holds open.
pub fn socket_inodes(pid: u32) -> HashSet<u64> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return HashSet::new();
    };
    dir.filter_map(|e| {
        let target = std::fs::read_link(e.ok()?.path()).ok()?;
        let t = target.to_str()?;
        t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
    })
    .collect()
}

/// Ports process `pid` listens on.
pub fn listening_ports(pid: u32) -> Vec<u16> {
    let mine = socket_inodes(pid);
    tcp_sockets()
        .into_iter()
        .filter(|s| s.listening && mine.contains(&s.inode))
        .map(|s| s.local_port)
        .collect()
}

/// Connections established to `port` (the accepting side).
pub fn established_to(port: u16) -> usize {
    tcp_sockets()
        .iter()
        .filter(|s| s.established && s.local_port == port)
        .count()
}

/// Polls `cond` every few milliseconds until it holds; panics with `what`
/// after `bound`.
pub fn wait_until(bound: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let began = Instant::now();
    while !cond() {
        assert!(began.elapsed() < bound, "waited {bound:?} for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
