//! The probe's own cost (issue 10, "Speed"):
//!
//! 1. `probe_server`: one attempt at the probe server (record the arrival,
//!    answer 503) next to a bare hyper server answering 503 on the same
//!    loopback, same client, same run; the difference is the probe's own
//!    overhead per attempt (target: under 100 µs), printed with the ratio.
//! 2. A full probe of the reference client — the harness's own
//!    retrying client with 3 attempts, 100 ms base backoff (full jitter), a
//!    200 ms per-attempt timeout — all 13 scenarios × 5 runs (target: under
//!    30 s), printed next to the longest single run, which no schedule can
//!    beat.
//!
//! `cargo bench --bench probe`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Response, StatusCode};
use criterion::{Criterion, Throughput};
use hyper_util::rt::TokioIo;
use retrylint::probe::server::ProbeServer;
use retrylint::probe::{self, ClientCommand, ProbeOptions, Scenario};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A bare hyper server answering 503 to everything: the baseline.
async fn bare_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = l.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(|_req| async {
                    let mut r = Response::new(Body::from("503\n"));
                    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                    Ok::<_, std::convert::Infallible>(r)
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(s), svc)
                    .await;
            });
        }
    });
    addr
}

/// A keep-alive HTTP/1.1 client as lean as can be: one request, read the
/// head and the `Content-Length` body.
struct Lean {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Lean {
    async fn connect(addr: SocketAddr) -> Lean {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Lean {
            stream,
            buf: vec![0; 4096],
        }
    }

    async fn request(&mut self) -> u16 {
        self.stream
            .write_all(b"GET / HTTP/1.1\r\nHost: probe\r\n\r\n")
            .await
            .expect("write");
        let mut got = 0;
        loop {
            let n = self.stream.read(&mut self.buf[got..]).await.expect("read");
            assert!(n > 0, "closed");
            got += n;
            let text = &self.buf[..got];
            if let Some(end) = text.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&text[..end]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                if got >= end + 4 + len {
                    return head[9..12].parse().expect("status");
                }
            }
        }
    }
}

fn per_request(
    c: &mut Criterion,
    name: &str,
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
) -> Duration {
    let mut client = rt.block_on(Lean::connect(addr));
    let mut g = c.benchmark_group("probe_server");
    g.throughput(Throughput::Elements(1));
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let began = Instant::now();
                for _ in 0..iters {
                    assert_eq!(client.request().await, 503);
                }
                began.elapsed()
            })
        })
    });
    g.finish();
    // The same figure again, outside criterion, for the printed ratio.
    rt.block_on(async {
        let n = 20_000;
        let began = Instant::now();
        for _ in 0..n {
            client.request().await;
        }
        began.elapsed() / n
    })
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    // Servers on a runtime thread of their own; the client on this one.
    let servers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let bare = servers.block_on(bare_server());
    let mut rounds = Vec::new();
    for round in 1..=3 {
        // A fresh server each round, so every request is recorded (a run
        // records at most `MAX_RECORDED`).
        let srv = servers
            .block_on(ProbeServer::start(Scenario::named("503").expect("503")))
            .expect("probe server");
        let base = per_request(&mut c, "bare_hyper_503", &client, bare);
        let ours = per_request(&mut c, "probe_server_503_recorded", &client, srv.addr());
        let recorded = servers
            .block_on(srv.stop(tokio::time::Instant::now()))
            .len();
        let over = ours.as_secs_f64() * 1e6 - base.as_secs_f64() * 1e6;
        println!(
            "round {round}: bare hyper {:.1} µs per request, probe server {:.1} µs: overhead {over:.1} µs per attempt, ratio {:.2}",
            base.as_secs_f64() * 1e6,
            ours.as_secs_f64() * 1e6,
            ours.as_secs_f64() / base.as_secs_f64()
        );
        println!("  ({recorded} attempts recorded this round)");
        rounds.push(over);
    }
    rounds.sort_by(f64::total_cmp);
    println!(
        "probe server overhead per attempt, median of 3 rounds: {:.1} µs",
        rounds[1]
    );

    let exe = env!("CARGO_BIN_EXE_retrylint");
    let cmd = ClientCommand::from_argv(&[
        exe.into(),
        "probe-client".into(),
        "--policy".into(),
        "{ max_attempts: 3, backoff: { kind: exponential, base: 100ms, cap: 1s, jitter: full } }"
            .into(),
        "--timeout".into(),
        "200ms".into(),
        "{url}".into(),
    ])
    .expect("command");
    let options = ProbeOptions {
        ctrl_c: false,
        ..ProbeOptions::default()
    };
    let began = Instant::now();
    let r = probe::probe(&cmd, &options).expect("probe");
    let wall = began.elapsed().as_secs_f64();
    let longest = r
        .scenarios
        .iter()
        .flat_map(|s| &s.runs)
        .map(|run| run.elapsed_ms)
        .fold(0.0, f64::max)
        / 1e3;
    let total: f64 = r
        .scenarios
        .iter()
        .flat_map(|s| &s.runs)
        .map(|run| run.elapsed_ms)
        .sum::<f64>()
        / 1e3;
    println!(
        "full probe (3 attempts, 100 ms base, {} scenarios × {} runs, {} at a time): {wall:.1} s; the longest run alone {longest:.1} s (ratio {:.2}); the runs end to end {total:.1} s (ratio {:.2})",
        r.scenarios.len(),
        r.runs,
        options.parallel,
        wall / longest,
        wall / total
    );
    c.final_summary();
}
