//! How an attempt travels: reqwest for tier-to-tier calls (the realistic
//! client a service would use), or a lean HTTP/1.1 client on hyper for the
//! load driver, whose own cost must stay small next to the system it loads
//! (issue 3, "Speed": measured against wrk in `benches/chaos.rs`).
//!
//! Both classify failures the same way: a refused connection is `connect`,
//! a connection that closes without a response is `reset`; per-attempt
//! timeouts are applied by the caller around `send`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Uri, header};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

use super::context::{Run, lock};
use crate::policy::{Outcome, retry_after};

/// What came back from one attempt that got an answer.
pub(crate) struct Answer {
    pub status: u16,
    pub retry_after: Option<Duration>,
}

pub(crate) enum Transport {
    Reqwest(reqwest::Client),
    Direct(Arc<DirectPool>),
}

/// Keep-alive HTTP/1.1 connections to one address, reused one request at a
/// time: no per-request URL parsing, no shared pool across hosts.
pub(crate) struct DirectPool {
    run: Arc<Run>,
    addr: SocketAddr,
    host: HeaderValue,
    idle: Mutex<Vec<SendRequest<Empty<Bytes>>>>,
    /// The last path sent and its parsed form: a load driver sends one path.
    uri: Mutex<(String, Uri)>,
}

impl DirectPool {
    pub fn new(run: Arc<Run>, addr: SocketAddr) -> Self {
        let host = HeaderValue::from_str(&addr.to_string())
            .unwrap_or_else(|_| HeaderValue::from_static("127.0.0.1"));
        DirectPool {
            run,
            addr,
            host,
            idle: Mutex::new(Vec::new()),
            uri: Mutex::new((String::from("/"), Uri::from_static("/"))),
        }
    }

    async fn connect(&self) -> Result<SendRequest<Empty<Bytes>>, Outcome> {
        let stream = tokio::net::TcpStream::connect(self.addr)
            .await
            .map_err(|_| Outcome::Connect)?;
        let _ = stream.set_nodelay(true);
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|_| Outcome::Reset)?;
        self.run.spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }

    async fn send(
        &self,
        method: &Method,
        path: &str,
        headers: HeaderMap,
    ) -> Result<Answer, Outcome> {
        let mut req = Request::new(Empty::<Bytes>::new());
        *req.method_mut() = method.clone();
        *req.uri_mut() = {
            let mut cached = lock(&self.uri);
            if cached.0 != path {
                *cached = (path.to_owned(), path.parse().unwrap_or_default());
            }
            cached.1.clone()
        };
        *req.headers_mut() = headers;
        req.headers_mut().insert(header::HOST, self.host.clone());
        // A pooled connection the server closed meanwhile is not a failure of
        // this attempt: drop it and take the next, or a fresh one. Only a
        // fresh connection's failure counts.
        let (sender, resp) = loop {
            let pooled = lock(&self.idle).pop();
            let (mut sender, fresh) = match pooled {
                Some(s) => (s, false),
                None => (self.connect().await?, true),
            };
            if sender.ready().await.is_err() {
                if fresh {
                    return Err(Outcome::Reset);
                }
                continue;
            }
            match sender.try_send_request(req).await {
                Ok(resp) => break (sender, resp),
                Err(mut e) => match e.take_message() {
                    // Never written: safe to send again on another connection.
                    Some(unsent) if !fresh => req = unsent,
                    _ => return Err(Outcome::Reset),
                },
            }
        };
        let status = resp.status().as_u16();
        let retry_after = parse_retry_after(resp.headers());
        resp.into_body()
            .collect()
            .await
            .map_err(|_| Outcome::Reset)?;
        if !sender.is_closed() {
            lock(&self.idle).push(sender);
        }
        Ok(Answer {
            status,
            retry_after,
        })
    }
}

fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| retry_after::parse(v, SystemTime::now()))
}

impl Transport {
    /// Sends one attempt to `base` + `path`; `Err` is `Connect` or `Reset`.
    pub async fn send(
        &self,
        base: &str,
        method: &Method,
        path: &str,
        headers: HeaderMap,
    ) -> Result<Answer, Outcome> {
        match self {
            Transport::Direct(pool) => pool.send(method, path, headers).await,
            Transport::Reqwest(http) => {
                let result = async {
                    let resp = http
                        .request(method.clone(), format!("{base}{path}"))
                        .headers(headers)
                        .send()
                        .await?;
                    let status = resp.status().as_u16();
                    let retry_after = parse_retry_after(resp.headers());
                    resp.bytes().await?;
                    Ok::<_, reqwest::Error>(Answer {
                        status,
                        retry_after,
                    })
                }
                .await;
                result.map_err(|e| {
                    if e.is_connect() {
                        Outcome::Connect
                    } else {
                        Outcome::Reset
                    }
                })
            }
        }
    }
}
