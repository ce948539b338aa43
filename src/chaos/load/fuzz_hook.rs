//! A door for the fuzzer into the load driver's HTTP/1.1 client (`http1`),
//! which is crate-private: arbitrary bytes go in as a server's answer, through
//! the same head parser and body framing a real run uses.
//!
//! The client reads only from a `TcpStream`, so the bytes travel over a real
//! loopback connection: a server on 127.0.0.1 (OS-assigned port) reads the
//! request, writes the bytes and closes its side; the client exchanges one
//! GET. Each thread keeps one runtime and one listener for all its calls, and
//! every connection ends with a reset (zero linger), so millions of calls
//! leave no socket in TIME_WAIT behind.
//!
//! Not part of the API: used by `fuzz/` and `tests/fuzz_corpus.rs` only.
#![doc(hidden)]

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::sync::oneshot;

use super::http1::Conn;

/// An exchange that takes longer than this is a hang in the client: every
/// input ends with the server closing its side.
const BOUND: Duration = Duration::from_secs(10);

/// What the client made of a response.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub retry_after: Option<Duration>,
    /// Whether the client would send its next request on this connection.
    pub(crate) reusable: bool,
}

struct Loopback {
    rt: Runtime,
    listener: TcpListener,
    addr: SocketAddr,
}

impl Loopback {
    fn new() -> Loopback {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread tokio runtime");
        let listener = rt
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("a listener on 127.0.0.1");
        let addr = listener.local_addr().expect("the listener's address");
        Loopback { rt, listener, addr }
    }
}

thread_local! {
    static LOOPBACK: Loopback = Loopback::new();
}

/// Sends one GET through the load driver's client to a server that answers
/// with `response` and closes its side. `None` when the client saw a broken
/// exchange (malformed, truncated, or closed early) — what the driver counts
/// as a failed attempt. Panics if the client has not finished within 10 s.
#[doc(hidden)]
pub fn exchange(response: &[u8]) -> Option<Answer> {
    LOOPBACK.with(|lo| {
        lo.rt.block_on(async {
            let (done_tx, done_rx) = oneshot::channel::<()>();
            let (closed_tx, closed_rx) = oneshot::channel::<()>();
            let server = serve_once(&lo.listener, response, done_rx, closed_tx);
            let client = async {
                let mut conn = Conn::connect(lo.addr).await.expect("connect to 127.0.0.1");
                let result = conn.exchange("GET", "/", "fuzz", []).await;
                let _ = done_tx.send(());
                // Keep our end open until the server has reset the connection:
                // closing first would leave its side in TIME_WAIT.
                let _ = closed_rx.await;
                drop(conn);
                result
            };
            let joined = tokio::time::timeout(BOUND, async { tokio::join!(server, client) }).await;
            let ((), result) = joined.expect("the HTTP/1.1 client finished within 10 s");
            result.ok().map(|(r, reusable)| Answer {
                status: r.status,
                retry_after: r.retry_after,
                reusable,
            })
        })
    })
}

/// Accepts one connection, reads the request head, answers with `bytes`,
/// closes the write side, and resets the connection once the client is done.
async fn serve_once(
    listener: &TcpListener,
    bytes: &[u8],
    mut done: oneshot::Receiver<()>,
    closed: oneshot::Sender<()>,
) {
    let (mut sock, _) = listener.accept().await.expect("accept on 127.0.0.1");
    let mut head = Vec::new();
    let mut chunk = [0u8; 512];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match sock.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
    }
    // The client may give up before reading everything (a malformed head):
    // then stop writing rather than wait for room in its buffer.
    let mut client_done = false;
    tokio::select! {
        _ = async {
            let _ = sock.write_all(bytes).await;
            let _ = sock.shutdown().await;
        } => {}
        _ = &mut done => client_done = true,
    }
    if !client_done {
        let _ = done.await;
    }
    let _ = sock.set_zero_linger();
    drop(sock);
    let _ = closed.send(());
}
