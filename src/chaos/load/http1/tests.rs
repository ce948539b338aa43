//! The lean client against a scripted server on loopback: each accepted
//! request head is recorded and answered with the next scripted bytes.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::*;

const BOUND: Duration = Duration::from_secs(5);

/// What the scripted server does after reading a request head; after the
/// last step it closes the connection.
enum Step {
    Answer(Vec<u8>),
    /// Close the connection without answering.
    Close,
}

/// One connection, answered step by step; returns the request heads seen.
async fn scripted(steps: Vec<Step>) -> (SocketAddr, JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.expect("accept");
        let mut seen = Vec::new();
        let mut buf = Vec::new();
        for step in steps {
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                let mut chunk = [0u8; 1024];
                match sock.read(&mut chunk).await {
                    Ok(0) | Err(_) => return seen,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            seen.push(String::from_utf8_lossy(&buf[..end]).into_owned());
            buf.drain(..end);
            match step {
                Step::Answer(bytes) => sock.write_all(&bytes).await.expect("write"),
                Step::Close => return seen,
            }
        }
        seen
    });
    (addr, server)
}

fn answer(bytes: impl Into<Vec<u8>>) -> Step {
    Step::Answer(bytes.into())
}

async fn get(conn: &mut Conn, path: &str) -> Result<(Response, bool), Failure> {
    tokio::time::timeout(BOUND, conn.exchange("GET", path, "h", []))
        .await
        .expect("bounded")
}

async fn connect(addr: SocketAddr) -> Conn {
    Conn::connect(addr).await.expect("connect")
}

#[tokio::test]
async fn content_length_bodies_keep_the_connection() {
    let (addr, server) = scripted(vec![
        answer(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"),
        answer(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"),
    ])
    .await;
    let mut conn = connect(addr).await;
    let (first, reusable) = tokio::time::timeout(
        BOUND,
        conn.exchange(
            "GET",
            "/a?b=1",
            "127.0.0.1:9",
            [("x-retrylint-request", "42"), ("idempotency-key", "k-1")],
        ),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(first.status, 200);
    assert!(reusable);
    let (second, reusable) = get(&mut conn, "/").await.unwrap();
    assert_eq!(second.status, 503);
    assert!(reusable);
    let seen = server.await.unwrap();
    assert_eq!(
        seen[0],
        "GET /a?b=1 HTTP/1.1\r\nhost: 127.0.0.1:9\r\nx-retrylint-request: 42\r\n\
         idempotency-key: k-1\r\n\r\n"
    );
    assert_eq!(seen[1], "GET / HTTP/1.1\r\nhost: h\r\n\r\n");
}

#[test]
fn a_value_with_a_line_break_is_not_sent() {
    let mut out = Vec::new();
    write_head(&mut out, "GET", "/", "h", [("a", "1\r\nx: 2"), ("b", "3")]);
    assert_eq!(out, b"GET / HTTP/1.1\r\nhost: h\r\nb: 3\r\n\r\n");
}

#[tokio::test]
async fn a_post_says_its_body_is_empty() {
    let (addr, server) = scripted(vec![answer(
        b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n",
    )])
    .await;
    let mut conn = connect(addr).await;
    let (r, _) = conn.exchange("POST", "/orders", "h", []).await.unwrap();
    assert_eq!(r.status, 201);
    assert_eq!(
        server.await.unwrap()[0],
        "POST /orders HTTP/1.1\r\nhost: h\r\ncontent-length: 0\r\n\r\n"
    );
}

#[tokio::test]
async fn chunked_bodies_with_extensions_and_trailers() {
    let (addr, _server) = scripted(vec![
        answer(
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
              5;name=value\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nx-trailer: 1\r\n\r\n",
        ),
        answer(b"HTTP/1.1 204 No Content\r\n\r\n"),
    ])
    .await;
    let mut conn = connect(addr).await;
    let (r, reusable) = get(&mut conn, "/").await.unwrap();
    assert_eq!((r.status, reusable), (200, true));
    // The next response is read from where the chunked body ended.
    let (r, reusable) = get(&mut conn, "/").await.unwrap();
    assert_eq!((r.status, reusable), (204, true));
}

#[tokio::test]
async fn a_body_until_close_ends_the_connection() {
    let (addr, _server) = scripted(vec![answer(b"HTTP/1.1 200 OK\r\n\r\nall of it")]).await;
    let mut conn = connect(addr).await;
    let (r, reusable) = get(&mut conn, "/").await.unwrap();
    assert_eq!((r.status, reusable), (200, false));
}

#[tokio::test]
async fn connection_close_is_honoured() {
    let (addr, _server) = scripted(vec![answer(
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
    )])
    .await;
    let mut conn = connect(addr).await;
    let (r, reusable) = get(&mut conn, "/").await.unwrap();
    assert_eq!((r.status, reusable), (200, false));
}

#[tokio::test]
async fn interim_responses_are_skipped() {
    let (addr, _server) = scripted(vec![answer(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n\
          HTTP/1.1 429 Too Many Requests\r\nretry-after: 3\r\ncontent-length: 0\r\n\r\n",
    )])
    .await;
    let mut conn = connect(addr).await;
    let (r, reusable) = get(&mut conn, "/").await.unwrap();
    assert_eq!(r.status, 429);
    assert_eq!(r.retry_after, Some(Duration::from_secs(3)));
    assert!(reusable);
}

#[tokio::test]
async fn a_close_without_an_answer_is_broken() {
    let (addr, _server) = scripted(vec![Step::Close]).await;
    let mut conn = connect(addr).await;
    assert_eq!(get(&mut conn, "/").await, Err(Failure::Broken));
}

#[tokio::test]
async fn a_truncated_body_is_broken() {
    // The script ends after this answer: the server closes mid-body.
    let (addr, _server) = scripted(vec![answer(
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc",
    )])
    .await;
    let mut conn = connect(addr).await;
    assert_eq!(get(&mut conn, "/").await, Err(Failure::Broken));
}

#[tokio::test]
async fn garbage_is_broken() {
    let (addr, _server) = scripted(vec![answer(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")]).await;
    let mut conn = connect(addr).await;
    assert_eq!(get(&mut conn, "/").await, Err(Failure::Broken));
}

#[tokio::test]
async fn an_endless_head_is_refused_within_its_bound() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let _ = sock.write_all(b"HTTP/1.1 200 OK\r\nx-pad: ").await;
        // One header value that never ends: the client must give up at its
        // bound, not buffer it all.
        let pad = [b'a'; 1024];
        for _ in 0..10_000 {
            if sock.write_all(&pad).await.is_err() {
                return;
            }
        }
    });
    let mut conn = connect(addr).await;
    let e = tokio::time::timeout(BOUND, conn.read_head())
        .await
        .expect("bounded")
        .expect_err("refused");
    assert_eq!(e.to_string(), "response head too large");
    assert!(
        conn.inbuf.len() <= MAX_HEAD + READ_CHUNK,
        "{}",
        conn.inbuf.len()
    );
    drop(conn);
    tokio::time::timeout(BOUND, server).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_hundred_headers_are_fine() {
    let head: String = std::iter::once("HTTP/1.1 200 OK\r\n".to_owned())
        .chain((0..98).map(|i| format!("set-cookie: c{i}=1\r\n")))
        .chain(["content-length: 0\r\n\r\n".to_owned()])
        .collect();
    let (addr, _server) = scripted(vec![answer(head)]).await;
    let mut conn = connect(addr).await;
    let (r, reusable) = get(&mut conn, "/").await.unwrap();
    assert_eq!((r.status, reusable), (200, true));
}

#[tokio::test]
async fn an_idle_connection_the_server_closed_is_not_reused() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (close, closed) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        let _ = sock.read(&mut buf).await;
        sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .await
            .unwrap();
        let _ = closed.await;
    });
    let mut conn = connect(addr).await;
    get(&mut conn, "/").await.unwrap();
    assert!(conn.is_idle_usable());
    close.send(()).unwrap();
    server.await.unwrap();
    // The reactor sees the FIN on its next turn.
    tokio::time::timeout(BOUND, async {
        while conn.is_idle_usable() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the close is noticed");
}

#[test]
fn chunk_sizes() {
    assert_eq!(chunk_size(b"0").unwrap(), 0);
    assert_eq!(chunk_size(b"1a").unwrap(), 26);
    assert_eq!(chunk_size(b"FF ; ext=\"x\"").unwrap(), 255);
    // Leading zeros do not count against the 15-digit bound.
    assert_eq!(chunk_size(b"00000000000000000001").unwrap(), 1);
    assert_eq!(chunk_size(b"000").unwrap(), 0);
    for bad in [
        &b""[..],
        b"zz",
        b"-1",
        b"+a",
        b"1 2",
        b"1234567890abcdef0",
        b";x",
    ] {
        assert!(chunk_size(bad).is_err(), "{}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn heads() {
    let (head, used) = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nrest")
        .unwrap()
        .unwrap();
    assert_eq!(used, 38);
    assert_eq!(
        (head.status, head.framing, head.keep_alive),
        (200, Framing::Length(7), true)
    );
    assert!(
        parse_head(b"HTTP/1.1 200 OK\r\ncontent-le")
            .unwrap()
            .is_none()
    );
    // HTTP/1.0 closes unless it asks to stay.
    let (head, _) = parse_head(b"HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n")
        .unwrap()
        .unwrap();
    assert!(!head.keep_alive);
    let (head, _) =
        parse_head(b"HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n")
            .unwrap()
            .unwrap();
    assert!(head.keep_alive);
    // Chunked wins over a length; two different lengths are malformed.
    let (head, _) =
        parse_head(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 4\r\n\r\n")
            .unwrap()
            .unwrap();
    assert_eq!((head.framing, head.keep_alive), (Framing::Chunked, false));
    assert!(
        parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\ncontent-length: 5\r\n\r\n").is_err()
    );
    assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: -4\r\n\r\n").is_err());
    assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: +4\r\n\r\n").is_err());
    // Any transfer coding overrides a length, in either order, and a response
    // framed both ways is not trusted with the next request.
    for both in [
        &b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\ncontent-length: 4\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\ntransfer-encoding: gzip\r\n\r\n",
    ] {
        let (head, _) = parse_head(both).unwrap().unwrap();
        assert_eq!(
            (head.framing, head.keep_alive),
            (Framing::UntilClose, false)
        );
    }
}

#[tokio::test]
async fn a_response_dribbled_one_byte_at_a_time() {
    const RESPONSE: &[u8] =
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nretry-after: 2\r\n\r\n\
        3;x=y\r\nabc\r\n0\r\nx-t: 1\r\n\r\n";
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        sock.set_nodelay(true).unwrap();
        let mut buf = [0u8; 1024];
        let _ = sock.read(&mut buf).await;
        for byte in RESPONSE {
            sock.write_all(&[*byte]).await.unwrap();
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        // Keep the connection open: the client must not need the close.
        let _ = sock.read(&mut buf).await;
    });
    let mut conn = connect(addr).await;
    let (r, reusable) = get(&mut conn, "/").await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.retry_after, Some(Duration::from_secs(2)));
    assert!(reusable);
    drop(conn);
    tokio::time::timeout(BOUND, server).await.unwrap().unwrap();
}
