//! Serving on 127.0.0.1 only: binding, the accept loop, and the listener's life
//! under `down` (the socket is closed for each down window — so connections are
//! refused — open connections are cut, and the same port is bound again when
//! the window ends). Requests to a tier run detached from their connection,
//! so a caller that times out does not cancel the work (it holds its overload
//! slot and its downstream calls go on, as in a real service).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpSocket};
use tokio_util::sync::CancellationToken;
use tower::Service;

use super::context::Run;
use super::fault_layer::Dropped;
use crate::topology::ServiceId;

impl From<Infallible> for Dropped {
    fn from(never: Infallible) -> Self {
        match never {}
    }
}

/// A listener on 127.0.0.1 at `port` (0: the OS picks). Address reuse lets a
/// service that was `down` take its port back while old connections linger.
pub(crate) fn bind(port: u16) -> io::Result<TcpListener> {
    bind_addr(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
}

/// A listener on `addr` (`retrylint serve --listen`), with address reuse.
pub(crate) fn bind_addr(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Counts arrivals and answers of a service, around everything else.
#[derive(Clone)]
pub(crate) struct Meter<S> {
    pub inner: S,
    pub run: Arc<Run>,
    pub service: ServiceId,
}

impl<S, B> Service<Request<B>> for Meter<S>
where
    S: Service<Request<B>, Response = Response<Body>> + Clone + Send + 'static,
    S::Error: Into<Dropped>,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Dropped;
    type Future = BoxFuture<Result<Response<Body>, Dropped>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Dropped>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let mut inner = self.inner.clone();
        let run = Arc::clone(&self.run);
        let service = self.service;
        Box::pin(async move {
            let arrived = run.now();
            run.metrics.arrived(service, arrived);
            match inner.call(req).await {
                Ok(resp) => {
                    let took = run.now().saturating_sub(arrived);
                    run.metrics.answered(service, resp.status().as_u16(), took);
                    Ok(resp)
                }
                Err(e) => {
                    let e: Dropped = e.into();
                    if e != Dropped::Hang {
                        run.metrics.dropped(service, e);
                    }
                    Err(e)
                }
            }
        })
    }
}

/// Whether the caller of a detached request hung up before its answer (its
/// attempt timed out, or it was cut): work finished after that is wasted.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallerGone(Arc<AtomicBool>);

impl CallerGone {
    pub(crate) fn hung_up(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Marks the caller gone when hyper drops the answer's future unfinished
/// (the connection closed under it).
struct HangUpGuard(Option<CallerGone>);

impl Drop for HangUpGuard {
    fn drop(&mut self) {
        if let Some(g) = self.0.take() {
            g.0.store(true, Ordering::Relaxed);
        }
    }
}

/// Runs each request as its own tracked task, so it survives its connection.
#[derive(Clone)]
pub(crate) struct Detach<S> {
    pub inner: S,
    pub run: Arc<Run>,
}

impl<S, B> Service<Request<B>> for Detach<S>
where
    S: Service<Request<B>, Response = Response<Body>, Error = Dropped> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Dropped;
    type Future = BoxFuture<Result<Response<Body>, Dropped>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Dropped>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let gone = CallerGone::default();
        req.extensions_mut().insert(gone.clone());
        let fut = self.inner.clone().call(req);
        let handle = self.run.spawn(fut);
        Box::pin(async move {
            let mut guard = HangUpGuard(Some(gone));
            let answered = handle.await;
            guard.0 = None;
            match answered {
                Ok(Some(result)) => result,
                // The run ended, or the task panicked: close without an answer.
                Ok(None) => Err(Dropped::Hang),
                Err(_) => Err(Dropped::Reset),
            }
        })
    }
}

/// Serves `svc` on `listener` until the run is cancelled, closing the socket
/// during each down window `[start, end)` (`end: None` stays down).
pub(crate) fn serve<S>(
    run: &Arc<Run>,
    listener: TcpListener,
    down: Vec<(Duration, Option<Duration>)>,
    svc: S,
) where
    S: Service<Request<hyper::body::Incoming>, Response = Response<Body>> + Clone + Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::Future: Send + 'static,
{
    let Ok(addr) = listener.local_addr() else {
        return;
    };
    let mut listener = Some(listener);
    // Down from the start: the socket closes now, before any load begins, so
    // no connection lands in its backlog and the very first one is refused.
    // A later window closes a listener that may hold connections not yet
    // accepted; their callers see a reset, as they would from a real crash.
    if down.first().is_some_and(|(start, _)| start.is_zero()) {
        listener = None;
    }
    let run2 = Arc::clone(run);
    run.spawn(async move {
        let run = run2;
        for (start, end) in down {
            if let Some(l) = listener.take() {
                accept_until(&run, l, svc.clone(), Some(start)).await;
            }
            let Some(end) = end else {
                return;
            };
            tokio::time::sleep_until(run.instant(end)).await;
            listener = rebind(addr).await;
        }
        if let Some(l) = listener {
            accept_until(&run, l, svc, None).await;
        }
    });
}

/// Binds `addr` again after a down window, trying for a short while. Should
/// another socket have taken the port meanwhile (an ephemeral port, say),
/// the service stays down for the rest of the run: its refusals then show
/// in the report as `refused` past the window's end.
async fn rebind(addr: SocketAddr) -> Option<TcpListener> {
    for _ in 0..50 {
        if let Ok(l) = bind_addr(addr) {
            return Some(l);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    None
}

/// Accepts until `until` (run time); then closes the listener and cuts every
/// connection it accepted.
async fn accept_until<S>(run: &Arc<Run>, listener: TcpListener, svc: S, until: Option<Duration>)
where
    S: Service<Request<hyper::body::Incoming>, Response = Response<Body>> + Clone + Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::Future: Send + 'static,
{
    let connections = run.cancel.child_token();
    let stop = async {
        match until {
            Some(t) => tokio::time::sleep_until(run.instant(t)).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    connection(run, stream, svc.clone(), connections.clone());
                }
                // Out of descriptors (counted: no fault did that) or a
                // connection aborted before accept: go on.
                Err(e) => {
                    if super::descriptors::is_exhaustion(&e) {
                        run.metrics.out_of_descriptors();
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await
                }
            },
        }
    }
    drop(listener);
    connections.cancel();
}

/// The HTTP/1.1 server side of both ports, service and admin: a connection
/// that has not sent a whole request head within `header_timeout` of
/// opening or of its last answer is closed (slow clients cannot hold it).
pub(crate) fn http1(header_timeout: Duration) -> hyper::server::conn::http1::Builder {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    builder
}

fn connection<S>(run: &Arc<Run>, stream: tokio::net::TcpStream, svc: S, stop: CancellationToken)
where
    S: Service<Request<hyper::body::Incoming>, Response = Response<Body>> + Clone + Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::Future: Send + 'static,
{
    let header_timeout = run.header_timeout;
    run.spawn(async move {
        let conn = http1(header_timeout)
            .keep_alive(true)
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc));
        tokio::select! {
            _ = conn => {}
            _ = stop.cancelled() => {}
        }
    });
}
