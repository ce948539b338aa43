//! The load driver's pool against a loopback server that answers once per
//! connection and then closes it, as a server with an idle timeout would.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use crate::chaos::harness::draw::DrawKey;

const BOUND: Duration = Duration::from_secs(5);

/// Answers one request on each of `connections` connections, closing each
/// after its answer (with a reset when `abort`); returns how many it accepted.
async fn one_answer_each(
    connections: usize,
    abort: bool,
) -> (SocketAddr, tokio::task::JoinHandle<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        for accepted in 0..connections {
            let Ok(Ok((mut sock, _))) = tokio::time::timeout(BOUND, listener.accept()).await else {
                return accepted;
            };
            let mut buf = [0u8; 1024];
            let _ = sock.read(&mut buf).await;
            let _ = sock
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                .await;
            if abort {
                let _ = sock.set_zero_linger();
            }
        }
        connections
    });
    (addr, server)
}

async fn send(pool: &DirectPool) -> Result<u16, Outcome> {
    let headers = AttemptHeaders {
        request_id: 1,
        non_idempotent: false,
        idempotency_key: None,
        deadline_us: None,
        draw: DrawKey(7),
    };
    let answer = tokio::time::timeout(BOUND, pool.send(&Method::GET, "/", headers))
        .await
        .expect("bounded")
        .map_err(|e| e.outcome)?;
    Ok(answer.status)
}

async fn a_closed_idle_connection_costs_no_attempt(abort: bool) {
    let (addr, server) = one_answer_each(2, abort).await;
    let pool = DirectPool::new(addr);
    assert_eq!(send(&pool).await, Ok(200));
    assert_eq!(lock(&pool.idle).len(), 1, "a clean exchange is pooled");
    // Wait until the close has reached the client's reactor, as it would
    // between requests of a real run; the pooled connection must then be
    // passed over.
    let (conn, since) = lock(&pool.idle).pop().expect("pooled");
    tokio::time::timeout(BOUND, conn.readable())
        .await
        .expect("the server's close arrives");
    lock(&pool.idle).push((conn, since));
    assert_eq!(send(&pool).await, Ok(200));
    assert_eq!(
        server.await.unwrap(),
        2,
        "the second request took a new connection"
    );
}

#[tokio::test]
async fn a_connection_the_server_closed_is_passed_over() {
    a_closed_idle_connection_costs_no_attempt(false).await;
}

#[tokio::test]
async fn a_connection_the_server_reset_is_passed_over() {
    a_closed_idle_connection_costs_no_attempt(true).await;
}

#[tokio::test]
async fn a_refused_connection_is_connect() {
    // Bind, note the port, close: nothing listens there now.
    let addr = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let pool = DirectPool::new(addr);
    assert_eq!(send(&pool).await, Err(Outcome::Connect));
}

#[tokio::test]
async fn a_connection_closed_without_an_answer_is_reset_and_not_pooled() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        let _ = sock.read(&mut buf).await;
    });
    let pool = DirectPool::new(addr);
    assert_eq!(send(&pool).await, Err(Outcome::Reset));
    assert!(lock(&pool.idle).is_empty());
    server.await.unwrap();
}
