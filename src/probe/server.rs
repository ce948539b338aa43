//! The probe server: one per run, on 127.0.0.1 with an OS-assigned port. It
//! records every arrival (time, method, path, connection, the headers that
//! matter for retries) and applies the scenario's `Effect` to the attempt
//! itself — answer a status (with Retry-After), close the connection without
//! an answer, or hang until the client gives up. The chaos harness's fault
//! layer is private to it and built around a topology run; this is the same
//! plain data applied to a single unknown client.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::record::Arrival;
use super::scenario::Scenario;
use crate::faults::Effect;

/// Headers worth keeping beside `Idempotency-Key`: a deadline sent
/// downstream, or the client's own count of attempts.
pub const NOTABLE_HEADERS: &[&str] = &[
    "grpc-timeout",
    "x-request-timeout",
    "request-timeout",
    "x-envoy-expected-rq-timeout-ms",
    "x-envoy-upstream-rq-timeout-ms",
    "x-envoy-upstream-rq-per-try-timeout-ms",
    "x-retrylint-deadline-us",
    "x-envoy-attempt-count",
    "grpc-previous-rpc-attempts",
    "amz-sdk-request",
    "x-stainless-retry-count",
    "x-retry-attempt",
];

/// Request bodies beyond this are cut off (the probe only counts them).
const BODY_LIMIT: usize = 1 << 20;
/// Arrivals recorded per run: a client retrying in a tight loop for the
/// whole time bound must not take the probe's memory with it (about 50 MB
/// at most). Later ones are answered all the same.
pub const MAX_RECORDED: usize = 250_000;

/// Why the server closed a connection without an answer.
#[derive(Debug, thiserror::Error)]
enum Dropped {
    #[error("reset by the scenario")]
    Reset,
    #[error("the run ended while the attempt hung")]
    Hang,
}

/// An arrival as recorded, in server time.
struct Raw {
    at: Instant,
    arrival: Arrival,
    hung_up: Option<Instant>,
}

struct Log {
    scenario: Scenario,
    attempts: AtomicU32,
    connections: AtomicU64,
    /// TLS handshakes that failed, and the first one's error.
    handshakes_failed: AtomicU32,
    handshake_error: Mutex<Option<String>>,
    arrivals: Mutex<Vec<Raw>>,
    /// Told of every arrival (a permit is kept for a waiter still to come).
    arrived: tokio::sync::Notify,
    /// Ends hanging attempts and open connections when the run is over.
    stop: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a run's server saw besides its arrivals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Served {
    pub arrivals: Vec<Arrival>,
    /// TLS handshakes the client did not complete (it did not trust the
    /// probe's CA, or spoke plain HTTP), and the first one's error.
    pub handshakes_failed: u32,
    pub handshake_error: Option<String>,
}

/// The longest a client may take over its TLS handshake: one that stalls
/// is counted as failed, not as an attempt.
const HANDSHAKE_BOUND: Duration = Duration::from_secs(10);

/// A running probe server.
pub struct ProbeServer {
    addr: SocketAddr,
    log: Arc<Log>,
    accept: JoinHandle<()>,
    connections: tokio_util::task::TaskTracker,
}

/// Binds a listener on 127.0.0.1 and nothing else.
pub(crate) async fn bind_loopback() -> std::io::Result<TcpListener> {
    TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
}

/// A port on 127.0.0.1 that nobody listens on: bound by the OS, noted, and
/// closed again, so connecting to it is refused.
pub(crate) async fn closed_port() -> std::io::Result<SocketAddr> {
    let l = bind_loopback().await?;
    l.local_addr()
}

impl ProbeServer {
    /// Starts serving `scenario` on a fresh loopback port, in plain HTTP.
    pub async fn start(scenario: Scenario) -> std::io::Result<ProbeServer> {
        Self::start_with(scenario, None).await
    }

    /// Starts serving `scenario` on a fresh loopback port, over TLS when
    /// `tls` is given.
    pub(crate) async fn start_with(
        scenario: Scenario,
        tls: Option<TlsAcceptor>,
    ) -> std::io::Result<ProbeServer> {
        let listener = bind_loopback().await?;
        let addr = listener.local_addr()?;
        let log = Arc::new(Log {
            scenario,
            attempts: AtomicU32::new(0),
            connections: AtomicU64::new(0),
            handshakes_failed: AtomicU32::new(0),
            handshake_error: Mutex::new(None),
            arrivals: Mutex::new(Vec::new()),
            arrived: tokio::sync::Notify::new(),
            stop: CancellationToken::new(),
        });
        let connections = tokio_util::task::TaskTracker::new();
        let accept = tokio::spawn(accept_loop(
            listener,
            Arc::clone(&log),
            connections.clone(),
            tls,
        ));
        Ok(ProbeServer {
            addr,
            log,
            accept,
            connections,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Returns once an attempt has arrived (at once if one already has).
    pub(crate) async fn first_arrival(&self) {
        if !lock(&self.log.arrivals).is_empty() {
            return;
        }
        self.log.arrived.notified().await;
    }

    /// Closes the listener and every connection, ends hanging attempts, and
    /// returns the arrivals, timed from `start`.
    pub async fn stop(self, start: Instant) -> Vec<Arrival> {
        self.finish(start).await.arrivals
    }

    /// As [`ProbeServer::stop`], with the failed TLS handshakes.
    pub(crate) async fn finish(self, start: Instant) -> Served {
        self.accept.abort();
        let _ = self.accept.await;
        self.log.stop.cancel();
        self.connections.close();
        // Every connection task selects on `stop`; the bound only guards
        // against one stuck in a write to a client that stopped reading.
        let _ = tokio::time::timeout(Duration::from_secs(2), self.connections.wait()).await;
        let ms = |t: Instant| t.saturating_duration_since(start).as_secs_f64() * 1e3;
        let mut raws = std::mem::take(&mut *lock(&self.log.arrivals));
        raws.sort_by_key(|r| r.at);
        let arrivals = raws
            .into_iter()
            .map(|r| Arrival {
                at_ms: ms(r.at),
                hung_up_ms: r.hung_up.map(ms),
                ..r.arrival
            })
            .collect();
        Served {
            arrivals,
            handshakes_failed: self.log.handshakes_failed.load(Ordering::Relaxed),
            handshake_error: lock(&self.log.handshake_error).take(),
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    log: Arc<Log>,
    tracker: tokio_util::task::TaskTracker,
    tls: Option<TlsAcceptor>,
) {
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            // Out of descriptors, or a connection aborted before accept.
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let connection = log.connections.fetch_add(1, Ordering::Relaxed) + 1;
        let log = Arc::clone(&log);
        let tls = tls.clone();
        tracker.spawn(async move {
            let stop = log.stop.clone();
            let Some(tls) = tls else {
                serve(log, stream, connection, peer.port()).await;
                return;
            };
            let handshake = tokio::time::timeout(HANDSHAKE_BOUND, tls.accept(stream));
            let result = tokio::select! {
                r = handshake => r,
                _ = stop.cancelled() => return,
            };
            match result {
                Ok(Ok(stream)) => serve(log, stream, connection, peer.port()).await,
                Ok(Err(e)) => handshake_failed(&log, e.to_string()),
                Err(_) => handshake_failed(
                    &log,
                    format!("no handshake within {}s", HANDSHAKE_BOUND.as_secs()),
                ),
            }
        });
    }
}

/// One connection's requests, until it closes or the run ends.
async fn serve<S>(log: Arc<Log>, stream: S, connection: u64, peer_port: u16)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let stop = log.stop.clone();
    let svc =
        hyper::service::service_fn(move |req| handle(Arc::clone(&log), req, connection, peer_port));
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), svc);
    tokio::select! {
        _ = conn => {}
        _ = stop.cancelled() => {}
    }
}

/// Counts a handshake the client did not complete; a failure is never an
/// attempt (the request was not sent), so it is not read as a reset.
fn handshake_failed(log: &Log, error: String) {
    if log.stop.is_cancelled() {
        return;
    }
    log.handshakes_failed.fetch_add(1, Ordering::Relaxed);
    lock(&log.handshake_error).get_or_insert(error);
}

/// Marks when a hanging attempt ended: dropped by hyper when the client
/// closes the connection, or at the end of the run (then not a hang-up).
struct HangUp {
    log: Arc<Log>,
    index: usize,
}

impl Drop for HangUp {
    fn drop(&mut self) {
        if self.log.stop.is_cancelled() {
            return;
        }
        if let Some(r) = lock(&self.log.arrivals).get_mut(self.index) {
            r.hung_up = Some(Instant::now());
        }
    }
}

async fn handle(
    log: Arc<Log>,
    req: Request<hyper::body::Incoming>,
    connection: u64,
    peer_port: u16,
) -> Result<Response<Body>, Dropped> {
    let at = Instant::now();
    let n = log.attempts.fetch_add(1, Ordering::Relaxed) + 1;
    let (parts, body) = req.into_parts();
    let text = |v: &HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned();
    let idempotency_key = parts.headers.get("idempotency-key").map(text);
    let notable_headers = NOTABLE_HEADERS
        .iter()
        .filter_map(|name| {
            parts
                .headers
                .get(*name)
                .map(|v| ((*name).to_owned(), text(v)))
        })
        .collect();
    let effect = log.scenario.effect(n);
    let content_type = parts.headers.get(header::CONTENT_TYPE).map(text);
    // Every AWS SDK names its invocation or its attempt in these.
    let aws_sdk = ["amz-sdk-invocation-id", "amz-sdk-request"]
        .iter()
        .any(|h| parts.headers.contains_key(*h));
    // The name the client addressed, when it is one (`--host`; a
    // virtual-hosted bucket's `bucket.NAME`), not the address.
    let host = parts
        .headers
        .get(header::HOST)
        .map(text)
        .filter(|h| !is_address(h));
    // "After reading the request": the whole body, as a server would before
    // doing the work.
    let body_bytes = axum::body::to_bytes(Body::new(body), BODY_LIMIT)
        .await
        .map_or(0, |b| b.len());
    let index = {
        let mut arrivals = lock(&log.arrivals);
        if arrivals.len() >= MAX_RECORDED {
            None
        } else {
            arrivals.push(Raw {
                at,
                arrival: Arrival {
                    at_ms: 0.0,
                    method: parts.method.to_string(),
                    path: parts.uri.path().to_owned(),
                    connection,
                    peer_port,
                    body_bytes,
                    idempotency_key,
                    notable_headers,
                    hung_up_ms: None,
                    host,
                },
                hung_up: None,
            });
            Some(arrivals.len() - 1)
        }
    };
    log.arrived.notify_one();
    let mut resp = respond(&log, effect, index.unwrap_or(usize::MAX)).await?;
    if let Some(aws) = log.scenario.aws
        && resp.status().as_u16() >= 400
    {
        let (ty, body) = aws.body(content_type.as_deref());
        let headers = resp.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(ty));
        headers.insert(
            "x-amzn-errortype",
            HeaderValue::from_static(aws.code(content_type.as_deref())),
        );
        if let Some(ms) = aws.retry_after_ms {
            headers.insert("x-amz-retry-after", HeaderValue::from(ms));
        }
        *resp.body_mut() = Body::from(body);
    } else if resp.status().as_u16() >= 400
        && let Some(ty) = content_type.as_deref().filter(|t| t.starts_with(AWS_JSON))
    {
        // A JSON-protocol AWS SDK parses every error body as a JSON object:
        // botocore 1.44 fails on a bare `503` (an int has no `.get`) before
        // its retry logic sees the status. No `__type`, so the status alone
        // decides, as for an error AWS did not model.
        let body = format!(r#"{{"message":"{}"}}"#, resp.status().as_u16());
        if let Ok(v) = HeaderValue::from_str(ty) {
            resp.headers_mut().insert(header::CONTENT_TYPE, v);
        }
        *resp.body_mut() = Body::from(body);
    } else if resp.status() == hyper::StatusCode::OK && aws_sdk {
        // botocore reads a 200 whose body is not XML, on an S3 call, as an
        // answer cut short and retries it as a 500 (handlers.py,
        // `_looks_like_special_case_error`): `ok` would make every success
        // a failure. An empty body is a success to every AWS protocol.
        *resp.body_mut() = Body::empty();
    }
    Ok(resp)
}

/// The content type of AWS's JSON protocols (`application/x-amz-json-1.0`).
const AWS_JSON: &str = "application/x-amz-json";

/// Whether a Host header names an address (`127.0.0.1:PORT`, `[::1]`)
/// rather than a host name.
fn is_address(host: &str) -> bool {
    let bare = host.rsplit_once(':').map_or(host, |(h, port)| {
        if port.bytes().all(|b| b.is_ascii_digit()) {
            h
        } else {
            host
        }
    });
    let bare = bare.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<std::net::IpAddr>().is_ok() || host.parse::<std::net::IpAddr>().is_ok()
}

/// Applies the scenario's effect to arrival `index`.
async fn respond(
    log: &Arc<Log>,
    effect: Option<Effect>,
    index: usize,
) -> Result<Response<Body>, Dropped> {
    match effect {
        None => Ok(Response::new(Body::from("ok\n"))),
        Some(Effect::Respond {
            status,
            retry_after,
        }) => {
            let mut resp = Response::new(Body::from(format!("{status}\n")));
            *resp.status_mut() =
                StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            if let Some(ra) = retry_after {
                // Whole seconds, rounded up: a client never waits less.
                let secs = ra.as_secs() + u64::from(ra.subsec_nanos() > 0);
                resp.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(secs));
            }
            Ok(resp)
        }
        Some(Effect::Delay(d)) => {
            tokio::time::sleep(d).await;
            Ok(Response::new(Body::from("ok\n")))
        }
        Some(Effect::Hang) => {
            let _guard = HangUp {
                log: Arc::clone(log),
                index,
            };
            log.stop.cancelled().await;
            Err(Dropped::Hang)
        }
        // A refused connection never gets here (the port is closed), and
        // overload needs concurrent load a single client does not make.
        Some(Effect::Reset | Effect::Refuse | Effect::Overload { .. }) => Err(Dropped::Reset),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bodies of three requests to `success-on-3` (503, 503, 200), with
    /// `headers` on each.
    async fn bodies(headers: &[(&str, &str)]) -> Vec<(u16, String)> {
        let srv = ProbeServer::start(Scenario::named("success-on-3").expect("shipped"))
            .await
            .expect("binds");
        let url = format!("http://{}/", srv.addr());
        let client = reqwest::Client::new();
        let mut got = Vec::new();
        for _ in 0..3 {
            let mut req = client.get(&url);
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            let resp = tokio::time::timeout(Duration::from_secs(10), req.send())
                .await
                .expect("answered in time")
                .expect("answered");
            let status = resp.status().as_u16();
            got.push((status, resp.text().await.expect("a body")));
        }
        srv.stop(Instant::now()).await;
        got
    }

    #[tokio::test]
    async fn an_aws_sdk_success_has_an_empty_body() {
        // botocore retries an S3 200 whose body is not XML as a 500.
        let aws = bodies(&[("amz-sdk-request", "attempt=1; max=3")]).await;
        assert_eq!(aws[2], (200, String::new()));
        let plain = bodies(&[]).await;
        assert_eq!(plain[2], (200, "ok\n".to_owned()));
        assert_eq!(plain[0].0, 503);
    }
}
