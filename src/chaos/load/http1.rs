//! A lean HTTP/1.1 client connection for the load driver.
//!
//! The driver must cost little next to the system it loads (issue 3: at least
//! 0.9× wrk against the same server). hyper's client runs each connection as
//! its own task and hands every request and response across channels; on a
//! trivial server that bookkeeping was most of the driver's user-space time
//! (0.72–0.88× wrk). Here the caller's task writes the request and parses the
//! response itself, as wrk does: one task, one buffer, no channels.
//!
//! It speaks the part of HTTP/1.1 a keep-alive client needs: bodies framed by
//! `Content-Length`, `chunked` or the end of the connection; `1xx` interim
//! responses skipped; `Connection: close` honoured. Response bodies are
//! dropped as they arrive, never stored, and a response head is bounded in size,
//! so a misbehaving server costs time (bounded by the caller's timeout and
//! the run's grace) but not memory.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::policy::retry_after;

/// A response head larger than this is refused as malformed.
const MAX_HEAD: usize = 64 * 1024;
/// Headers parsed per response head, as many as hyper allows; more is
/// malformed for this client.
const MAX_HEADERS: usize = 100;
/// A chunk-size line or trailer line longer than this is malformed.
const MAX_LINE: usize = 4 * 1024;
const READ_CHUNK: usize = 8 * 1024;

/// What came back: the final status and its Retry-After.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Response {
    pub status: u16,
    pub retry_after: Option<Duration>,
}

/// How an exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The connection was closed or unusable before any byte of the request
    /// left: safe to send the request again on another connection.
    Unsent,
    /// The connection ended, or broke the protocol, after the request was
    /// sent: the server may have done the work.
    Broken,
}

/// One keep-alive connection, used one request at a time.
pub(crate) struct Conn {
    stream: TcpStream,
    /// Bytes read and not yet consumed.
    inbuf: Vec<u8>,
    /// The request being written; kept to reuse its allocation.
    outbuf: Vec<u8>,
}

impl Conn {
    pub(crate) async fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        // Only a latency tweak: a socket that refuses it still works.
        let _ = stream.set_nodelay(true);
        Ok(Conn {
            stream,
            inbuf: Vec::with_capacity(READ_CHUNK),
            outbuf: Vec::with_capacity(256),
        })
    }

    /// Whether an idle connection is still fit to carry a request: the
    /// server has not closed it and sent nothing unasked. Uses the reactor's
    /// cached readiness, so a healthy connection costs no system call.
    pub(crate) fn is_idle_usable(&self) -> bool {
        let mut probe = [0u8; 1];
        matches!(self.stream.try_read(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    /// Resolves once the connection has something to read (or was closed):
    /// for tests that must see a server's close before going on.
    #[cfg(test)]
    pub(crate) async fn readable(&self) {
        let _ = self.stream.readable().await;
    }

    /// Sends one request and reads its response. `Ok((response, reusable))`;
    /// a connection that is not reusable must be dropped, and so must one
    /// whose exchange was cancelled midway (it is out of step).
    pub(crate) async fn exchange<'n, 'v>(
        &mut self,
        method: &str,
        path: &str,
        host: &str,
        headers: impl IntoIterator<Item = (&'n str, &'v str)>,
    ) -> Result<(Response, bool), Failure> {
        self.outbuf.clear();
        write_head(&mut self.outbuf, method, path, host, headers);
        if self.stream.write_all(&self.outbuf).await.is_err() {
            // The peer had closed the connection: it cannot have received
            // this whole request, so it did none of the work.
            return Err(Failure::Unsent);
        }
        self.read_response(method == "HEAD")
            .await
            .map_err(|_| Failure::Broken)
    }

    async fn read_response(&mut self, head_only: bool) -> io::Result<(Response, bool)> {
        loop {
            let head = self.read_head().await?;
            // Interim responses (100 Continue, 103 Early Hints) precede the
            // real one; 101 would switch protocols, which this client never
            // asks for.
            if (100..200).contains(&head.status) && head.status != 101 {
                continue;
            }
            let response = Response {
                status: head.status,
                retry_after: head.retry_after,
            };
            let bodiless = head_only || head.status == 204 || head.status == 304;
            let mut reusable = head.keep_alive;
            if !bodiless {
                match head.framing {
                    Framing::Length(n) => self.discard(n).await?,
                    Framing::Chunked => self.discard_chunked().await?,
                    Framing::UntilClose => {
                        self.discard_to_end().await?;
                        reusable = false;
                    }
                }
            }
            // Bytes nobody asked for yet: the connection is out of step.
            reusable &= self.inbuf.is_empty();
            return Ok((response, reusable));
        }
    }

    /// Reads more bytes into `inbuf`'s spare room; an end of stream is an
    /// error.
    async fn fill(&mut self) -> io::Result<()> {
        self.inbuf.reserve(READ_CHUNK);
        match self.stream.read_buf(&mut self.inbuf).await? {
            0 => Err(io::ErrorKind::UnexpectedEof.into()),
            _ => Ok(()),
        }
    }

    async fn read_head(&mut self) -> io::Result<Head> {
        loop {
            if let Some((head, used)) = parse_head(&self.inbuf)? {
                self.inbuf.drain(..used);
                return Ok(head);
            }
            if self.inbuf.len() >= MAX_HEAD {
                return Err(malformed("response head too large"));
            }
            self.fill().await?;
        }
    }

    /// Drops the next `n` body bytes.
    async fn discard(&mut self, mut n: u64) -> io::Result<()> {
        loop {
            let have = self
                .inbuf
                .len()
                .min(usize::try_from(n).unwrap_or(usize::MAX));
            self.inbuf.drain(..have);
            n -= have as u64;
            if n == 0 {
                return Ok(());
            }
            self.fill().await?;
        }
    }

    /// Waits until `inbuf` starts with a whole line: its length without the
    /// CRLF.
    async fn next_line(&mut self) -> io::Result<usize> {
        loop {
            if let Some(i) = self.inbuf.windows(2).position(|w| w == b"\r\n") {
                return Ok(i);
            }
            if self.inbuf.len() > MAX_LINE {
                return Err(malformed("chunk line too long"));
            }
            self.fill().await?;
        }
    }

    async fn discard_chunked(&mut self) -> io::Result<()> {
        loop {
            let n = self.next_line().await?;
            let size = chunk_size(&self.inbuf[..n])?;
            self.inbuf.drain(..n + 2);
            if size == 0 {
                // Trailers, up to the empty line.
                loop {
                    let n = self.next_line().await?;
                    self.inbuf.drain(..n + 2);
                    if n == 0 {
                        return Ok(());
                    }
                }
            }
            self.discard(size).await?;
            let n = self.next_line().await?;
            self.inbuf.drain(..n + 2);
            if n != 0 {
                return Err(malformed("chunk not followed by CRLF"));
            }
        }
    }

    async fn discard_to_end(&mut self) -> io::Result<()> {
        self.inbuf.clear();
        loop {
            match self.fill().await {
                Ok(()) => self.inbuf.clear(),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }
}

fn malformed(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.to_owned())
}

/// Renders the request head; every request has an empty body.
fn write_head<'n, 'v>(
    out: &mut Vec<u8>,
    method: &str,
    path: &str,
    host: &str,
    headers: impl IntoIterator<Item = (&'n str, &'v str)>,
) {
    for part in [method, " ", path, " HTTP/1.1\r\nhost: ", host, "\r\n"] {
        out.extend_from_slice(part.as_bytes());
    }
    for (name, value) in headers {
        // A line break in a value would end the head early: never send one.
        if value.contains(['\r', '\n']) {
            continue;
        }
        for part in [name, ": ", value, "\r\n"] {
            out.extend_from_slice(part.as_bytes());
        }
    }
    // GET and HEAD carry no body by definition; anything else says so.
    if method != "GET" && method != "HEAD" {
        out.extend_from_slice(b"content-length: 0\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

#[derive(Debug)]
struct Head {
    status: u16,
    retry_after: Option<Duration>,
    framing: Framing,
    keep_alive: bool,
}

/// Parses a complete response head at the start of `buf`: the head and its
/// length, `None` when more bytes are needed.
fn parse_head(buf: &[u8]) -> io::Result<Option<(Head, usize)>> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let used = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(malformed(&e.to_string())),
    };
    // httparse takes any three digits; a status below 100 is no HTTP status
    // (hyper refuses it too), and taking it would report a code no server sent.
    let status = resp
        .code
        .filter(|c| *c >= 100)
        .ok_or_else(|| malformed("no status from 100 to 999"))?;
    let mut keep_alive = resp.version == Some(1);
    let mut length = None;
    // Transfer-Encoding overrides Content-Length (RFC 9112 6.3).
    let mut coded = None;
    let mut retry_after = None;
    for h in resp.headers.iter() {
        let value = std::str::from_utf8(h.value).unwrap_or("").trim();
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = decimal(value).ok_or_else(|| malformed("bad content-length"))?;
            if length.is_some_and(|m| m != n) {
                return Err(malformed("conflicting content-length"));
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // Chunked must be the last coding; anything else ends at close.
            let last = value.rsplit(',').next().unwrap_or("").trim();
            coded = Some(if last.eq_ignore_ascii_case("chunked") {
                Framing::Chunked
            } else {
                Framing::UntilClose
            });
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") && resp.version == Some(0) {
                    keep_alive = true;
                }
            }
        } else if h.name.eq_ignore_ascii_case("retry-after") {
            retry_after = retry_after::parse(value, SystemTime::now());
        }
    }
    let framing = match (coded, length) {
        (Some(coded), _) => coded,
        (None, Some(n)) => Framing::Length(n),
        (None, None) => Framing::UntilClose,
    };
    // Both framings at once is how request smuggling starts: do not reuse.
    if coded.is_some() && length.is_some() {
        keep_alive = false;
    }
    Ok(Some((
        Head {
            status,
            retry_after,
            framing,
            keep_alive,
        },
        used,
    )))
}

/// A Content-Length value: ASCII digits only (no sign, no spaces inside).
fn decimal(value: &str) -> Option<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// The size of a chunk from its size line (`1a;ext=1` → 26): hex digits
/// only, at most 15 of them after leading zeros.
fn chunk_size(line: &[u8]) -> io::Result<u64> {
    let bad = || malformed("bad chunk size");
    let digits = line
        .split(|b| *b == b';')
        .next()
        .unwrap_or(b"")
        .trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_hexdigit) {
        return Err(bad());
    }
    let significant = match digits.iter().position(|&b| b != b'0') {
        Some(i) => &digits[i..],
        None => return Ok(0),
    };
    if significant.len() > 15 {
        return Err(bad());
    }
    let text = std::str::from_utf8(significant).map_err(|_| bad())?;
    u64::from_str_radix(text, 16).map_err(|_| bad())
}

#[cfg(test)]
mod tests;
