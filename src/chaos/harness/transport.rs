//! How an attempt travels: reqwest for tier-to-tier calls (the realistic
//! client a service would use), or the lean HTTP/1.1 client of `http1` for
//! the load driver, whose own cost must stay small next to the system it
//! loads (issue 3, "Speed": measured against wrk in `benches/chaos.rs`).
//!
//! Both classify failures the same way: a refused connection is `connect`,
//! a connection that closes without a response is `reset`; per-attempt
//! timeouts are applied by the caller around `send`.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, header};

use super::context::{CLIENT_IDLE, lock};
use super::header::{AttemptHeaders, HeaderScratch};
use crate::chaos::load::http1::{self, Conn};
use crate::policy::{Outcome, retry_after};

/// Why an attempt got no answer: the outcome the policy sees, and whether
/// the cause was this process out of file descriptors (no fault did that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NoAnswer {
    pub outcome: Outcome,
    pub(crate) out_of_descriptors: bool,
}

impl From<Outcome> for NoAnswer {
    fn from(outcome: Outcome) -> Self {
        NoAnswer {
            outcome,
            out_of_descriptors: false,
        }
    }
}

/// What came back from one attempt that got an answer.
pub(crate) struct Answer {
    pub status: u16,
    pub retry_after: Option<Duration>,
}

pub(crate) enum Transport {
    Reqwest(reqwest::Client),
    Direct(DirectPool),
}

/// Keep-alive connections to one address, each used by one request at a
/// time and returned after a clean exchange.
pub(crate) struct DirectPool {
    addr: SocketAddr,
    host: String,
    /// Each with the moment it went idle: one idle for longer than
    /// `CLIENT_IDLE` is dropped, before the server's header timeout
    /// (`context::HEADER_TIMEOUT`) could close it under a request.
    idle: Mutex<Vec<(Conn, Instant)>>,
}

impl DirectPool {
    pub(crate) fn new(addr: SocketAddr) -> Self {
        DirectPool {
            addr,
            host: addr.to_string(),
            idle: Mutex::new(Vec::new()),
        }
    }

    async fn send(
        &self,
        method: &Method,
        path: &str,
        headers: AttemptHeaders<'_>,
    ) -> Result<Answer, NoAnswer> {
        let mut scratch = HeaderScratch::default();
        // A pooled connection the server closed meanwhile is not a failure of
        // this attempt: drop it and take the next, or a fresh one. Only a
        // fresh connection's failure counts.
        loop {
            let pooled = lock(&self.idle).pop();
            let (mut conn, fresh) = match pooled {
                Some((c, since)) if since.elapsed() < CLIENT_IDLE && c.is_idle_usable() => {
                    (c, false)
                }
                Some(_) => continue,
                None => (
                    Conn::connect(self.addr).await.map_err(|e| NoAnswer {
                        outcome: Outcome::Connect,
                        out_of_descriptors: super::descriptors::is_exhaustion(&e),
                    })?,
                    true,
                ),
            };
            match conn
                .exchange(
                    method.as_str(),
                    path,
                    &self.host,
                    headers.pairs(&mut scratch),
                )
                .await
            {
                Ok((response, reusable)) => {
                    if reusable {
                        lock(&self.idle).push((conn, Instant::now()));
                    }
                    return Ok(Answer {
                        status: response.status,
                        retry_after: response.retry_after,
                    });
                }
                Err(http1::Failure::Unsent) if !fresh => {}
                Err(_) => return Err(Outcome::Reset.into()),
            }
        }
    }
}

impl Transport {
    /// Sends one attempt to `base` + `path`; `Err` is `Connect` or `Reset`,
    /// and says whether descriptors ran out.
    pub(crate) async fn send(
        &self,
        base: &str,
        method: &Method,
        path: &str,
        headers: AttemptHeaders<'_>,
    ) -> Result<Answer, NoAnswer> {
        match self {
            Transport::Direct(pool) => pool.send(method, path, headers).await,
            Transport::Reqwest(http) => {
                let mut scratch = HeaderScratch::default();
                let mut map = HeaderMap::with_capacity(4);
                for (name, value) in headers.pairs(&mut scratch) {
                    if let Ok(value) = HeaderValue::from_str(value) {
                        map.insert(HeaderName::from_static(name), value);
                    }
                }
                let result = async {
                    let resp = http
                        .request(method.clone(), format!("{base}{path}"))
                        .headers(map)
                        .send()
                        .await?;
                    let status = resp.status().as_u16();
                    let retry_after = resp
                        .headers()
                        .get(header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| retry_after::parse(v, SystemTime::now()));
                    resp.bytes().await?;
                    Ok::<_, reqwest::Error>(Answer {
                        status,
                        retry_after,
                    })
                }
                .await;
                result.map_err(|e| NoAnswer {
                    outcome: if e.is_connect() {
                        Outcome::Connect
                    } else {
                        Outcome::Reset
                    },
                    out_of_descriptors: super::descriptors::in_chain(&e),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests;
