//! Counting connection attempts to a port that refuses them. A refused
//! attempt never reaches a listener, so no server can count it, and a
//! listener that resets at accept is a reset, not a refusal. What does see
//! a real refusal is the kernel: every attempt is a SYN to the closed port,
//! answered by a RST. A raw IPv4 TCP socket receives a copy of every TCP
//! segment arriving on the machine, loopback included, so the probe counts
//! the SYNs (without ACK) to each closed port it hands out.
//!
//! A raw socket needs CAP_NET_RAW (root, or the capability on the binary).
//! Without it [`SynCounter::start`] returns `None` and the probe says how
//! the refusal verdict was reached instead (from run times, at low
//! confidence) — never a guess at medium or high.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::net::{AddressFamily, RecvFlags, SocketType, ipproto};

/// How often the reader looks at its stop flag.
const POLL: Duration = Duration::from_millis(100);
/// The longest [`SynCounter::settle`] waits for its own connect to be read.
const SETTLE: Duration = Duration::from_secs(1);
/// SYNs kept per port: a client that reconnects without end is counted
/// up to here.
const MAX_PER_PORT: usize = 100_000;

/// SYNs seen per destination port, while it runs.
pub struct SynCounter {
    /// Destination port → the source ports of the SYNs to it (at most
    /// [`MAX_PER_PORT`] each).
    counts: Arc<Mutex<HashMap<u16, Vec<u16>>>>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl SynCounter {
    /// Starts counting; `None` when a raw socket is not permitted here.
    pub fn start() -> Option<SynCounter> {
        let fd =
            rustix::net::socket(AddressFamily::INET, SocketType::RAW, Some(ipproto::TCP)).ok()?;
        rustix::net::sockopt::set_socket_timeout(
            &fd,
            rustix::net::sockopt::Timeout::Recv,
            Some(POLL),
        )
        .ok()?;
        let counts: Arc<Mutex<HashMap<u16, Vec<u16>>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (Arc::clone(&counts), Arc::clone(&stop));
        let reader = std::thread::Builder::new()
            .name("retrylint-syn-count".into())
            .spawn(move || {
                let mut buf = [0u8; 256];
                while !s.load(Ordering::Relaxed) {
                    let Ok((n, _)) = rustix::net::recv(&fd, &mut buf[..], RecvFlags::TRUNC) else {
                        continue;
                    };
                    if let Some((from, to)) = syn_ports(&buf[..n]) {
                        let mut counts = c.lock().unwrap_or_else(|e| e.into_inner());
                        let srcs = counts.entry(to).or_default();
                        if srcs.len() < MAX_PER_PORT {
                            srcs.push(from);
                        }
                    }
                }
            })
            .ok()?;
        Some(SynCounter {
            counts,
            stop,
            reader: Some(reader),
        })
    }

    /// The SYNs the client sent to `port`, once every one has been read:
    /// the reader sees segments in the order they arrived, so once a
    /// connect of our own (from a source port we know) is read, the
    /// client's earlier ones are too. Waits at most [`SETTLE`]; forgets
    /// the port (it may be handed out again).
    pub(crate) async fn settle(&self, port: u16) -> u32 {
        let to = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let sentinel = tokio::net::TcpSocket::new_v4().and_then(|s| {
            s.bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))?;
            Ok((s.local_addr()?.port(), s))
        });
        let Ok((from, socket)) = sentinel else {
            return self.take(port);
        };
        let _ = tokio::time::timeout(SETTLE, socket.connect(to)).await;
        let started = std::time::Instant::now();
        while !self.seen(port, from) && started.elapsed() < SETTLE {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let all = self.take(port);
        all.saturating_sub(u32::from(all > 0))
    }

    fn seen(&self, port: u16, from: u16) -> bool {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&port)
            .is_some_and(|srcs| srcs.contains(&from))
    }

    /// The SYNs seen to `port` so far, forgetting them.
    pub(crate) fn take(&self, port: u16) -> u32 {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&port)
            .map_or(0, |srcs| u32::try_from(srcs.len()).unwrap_or(u32::MAX))
    }
}

impl Drop for SynCounter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

/// The source and destination ports of an IPv4 packet carrying a TCP SYN
/// without ACK to 127.0.0.0/8 — a new connection attempt — and `None` for
/// anything else.
fn syn_ports(packet: &[u8]) -> Option<(u16, u16)> {
    let first = *packet.first()?;
    if first >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(first & 0x0f) * 4;
    if packet.get(16) != Some(&127) {
        return None;
    }
    let tcp = packet.get(ihl..)?;
    let flags = *tcp.get(13)?;
    let (syn, ack) = (flags & 0x02 != 0, flags & 0x10 != 0);
    (syn && !ack).then(|| {
        (
            u16::from_be_bytes([tcp[0], tcp[1]]),
            u16::from_be_bytes([tcp[2], tcp[3]]),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(dst: [u8; 4], port: u16, flags: u8) -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 127, 0, 0, 1];
        p.extend(dst);
        p.extend([0x9c, 0x40]);
        p.extend(port.to_be_bytes());
        p.extend([0; 8]);
        p.extend([0x50, flags, 0, 0, 0, 0, 0, 0]);
        p
    }

    #[test]
    fn only_a_syn_to_loopback_counts() {
        assert_eq!(
            syn_ports(&packet([127, 0, 0, 1], 8080, 0x02)),
            Some((40000, 8080))
        );
        assert_eq!(
            syn_ports(&packet([127, 0, 0, 1], 8080, 0x12)),
            None,
            "SYN-ACK"
        );
        assert_eq!(
            syn_ports(&packet([127, 0, 0, 1], 8080, 0x14)),
            None,
            "RST-ACK"
        );
        assert_eq!(syn_ports(&packet([10, 0, 0, 1], 8080, 0x02)), None);
        assert_eq!(syn_ports(&[0x60; 40]), None, "IPv6");
        assert_eq!(syn_ports(&[0x45, 0, 0]), None, "truncated");
    }

    /// Where the probe may open a raw socket (root in CI), three refused
    /// connects to a closed port are counted as three; elsewhere this says
    /// it did not run.
    #[test]
    fn refused_connects_to_a_closed_port_are_counted() {
        let Some(counter) = SynCounter::start() else {
            eprintln!(
                "NOT RUN: refused_connects_to_a_closed_port_are_counted needs CAP_NET_RAW (run as root)"
            );
            assert!(
                std::env::var_os("RETRYLINT_REQUIRE_TOOLS").is_none(),
                "RETRYLINT_REQUIRE_TOOLS is set but a raw socket is not permitted"
            );
            return;
        };
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        for _ in 0..3 {
            assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let seen = rt.block_on(counter.settle(port));
        assert_eq!(seen, 3);
    }
}
