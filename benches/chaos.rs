//! The chaos harness's own cost (issue 3, "Speed"):
//!
//! 1. `load_driver`: requests/s the load driver sustains against a trivial
//!    axum server on loopback (closed loop, 32 clients);
//! 2. next to `wrk` against the same server in the same run, when wrk is
//!    installed (`apt-get install wrk`): three alternating rounds, printed
//!    as ratios and their median;
//! 3. `hops`: the cost of one more tier (server + retrying client) from chains
//!    of 1 and 3 services with zero own latency;
//! 4. `serve`: a 2-service chain in-process (`chaos`) next to the same chain
//!    as two `retrylint serve` processes driven by `drive`, alternating three
//!    rounds in the same run: the per-request cost ratio (target: within 10 %).
//!
//! Keep it short: `cargo bench --bench chaos`.

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use retrylint::chaos::{self, RunOptions};
use retrylint::faults::Scenario;
use retrylint::run::LoadSettings;
use retrylint::topology;

const CLIENTS: u32 = 32;

/// A trivial axum server on 127.0.0.1, on its own runtime thread.
fn trivial_server() -> (SocketAddr, tokio::runtime::Runtime) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("bench-server")
        .enable_all()
        .build()
        .expect("runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    let app = axum::Router::new().fallback(|| async { "ok" });
    rt.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, rt)
}

fn options() -> RunOptions {
    RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(1),
        ..RunOptions::default()
    }
}

/// `CLIENTS` closed-loop callers for `secs` seconds.
fn closed_loop_for(secs: u64) -> LoadSettings {
    LoadSettings::new(
        None,
        Some(CLIENTS),
        None,
        Some(Duration::from_secs(secs)),
        None,
    )
    .expect("load")
}

/// The driver's requests/s over `secs` seconds against `url`.
fn driver_rps(url: &str, secs: u64) -> f64 {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("bench-driver")
        .enable_all()
        .build()
        .expect("runtime");
    let load = closed_loop_for(secs);
    let r = rt
        .block_on(chaos::drive_url(url, &load, &options()))
        .expect("drive");
    r.end_to_end.succeeded as f64 / (r.elapsed_ms / 1e3)
}

fn wrk_rps(addr: SocketAddr, secs: u64) -> Option<f64> {
    let out = Command::new("wrk")
        .args([
            "-t1",
            &format!("-c{CLIENTS}"),
            &format!("-d{secs}s"),
            &format!("http://{addr}/"),
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
}

fn chain_rps(services: usize, secs: u64) -> f64 {
    let mut text = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..services {
        if i + 1 < services {
            text += &format!(
                "  s{i}: {{ latency: 0s, calls: [ {{ to: s{}, timeout: 1s }} ] }}\n",
                i + 1
            );
        } else {
            text += &format!("  s{i}: {{ latency: 0s }}\n");
        }
    }
    let t =
        topology::load_str(&text, "chain.yaml", "chain", &Default::default()).expect("topology");
    let load = closed_loop_for(secs);
    let r = chaos::run_with(&t, &Scenario::none(), &load, &options()).expect("run");
    r.end_to_end.succeeded as f64 / (r.elapsed_ms / 1e3)
}

const CHAIN2: &str = "version: 1\nentry: s0\nservices:\n  s0: { latency: 0s, calls: [ { to: s1, timeout: 1s } ] }\n  s1: { latency: 0s }\n";

/// A `retrylint serve` process of the bench, killed on drop.
struct Served(std::process::Child, String, String);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The token every `serve` of the bench and its `drive` share.
const BENCH_TOKEN: &str = "bench-token-0123456789";

/// Starts `serve` for `service` and reads its ready line (http, admin).
fn serve(dir: &std::path::Path, service: &str, peers: &str) -> Served {
    use std::io::BufRead;
    let peers_file = dir.join(format!("peers-{service}.yaml"));
    std::fs::write(&peers_file, peers).expect("peers file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrylint"))
        .arg("serve")
        .arg(dir.join("chain.yaml"))
        .args(["--service", service, "--fault", "none", "--peers"])
        .arg(&peers_file)
        .args(["--token", BENCH_TOKEN])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("retrylint serve");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("ready line");
    let word = |k: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .expect("ready line field")
            .to_owned()
    };
    Served(child, word("http="), word("admin="))
}

/// Requests/s of the 2-service chain in-process and as `serve` processes,
/// `secs` seconds each, per second of load.
fn chain2_in_process_and_served(secs: u64) -> (f64, f64) {
    let t =
        topology::load_str(CHAIN2, "chain.yaml", "chain", &Default::default()).expect("topology");
    let load = closed_loop_for(secs);
    let inproc = chaos::run_with(&t, &Scenario::none(), &load, &options()).expect("run");
    let dir = std::env::temp_dir().join(format!("retrylint-bench-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("chain.yaml"), CHAIN2).expect("topology file");
    let s1 = serve(&dir, "s1", "");
    let s0 = serve(&dir, "s0", &format!("s1: {}\n", s1.1));
    let collect = [format!("http://{}", s0.2), format!("http://{}", s1.2)];
    let served = chaos::drive_blocking(
        &t,
        &Scenario::none(),
        &load,
        &format!("http://{}", s0.1),
        &collect,
        Some(&chaos::Token::new(BENCH_TOKEN).expect("token")),
        &options(),
    )
    .expect("drive");
    drop((s0, s1));
    let _ = std::fs::remove_dir_all(&dir);
    let rate = |n: u64| n as f64 / secs as f64;
    (
        rate(inproc.end_to_end.succeeded),
        rate(served.end_to_end.succeeded),
    )
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let (addr, _server) = trivial_server();
    let url = format!("http://{addr}/");

    let mut g = c.benchmark_group("load_driver");
    g.throughput(Throughput::Elements(1));
    g.bench_function("closed_loop_32_clients_trivial_axum", |b| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        b.iter_custom(|iters| {
            let load = LoadSettings::new(None, Some(CLIENTS), Some(iters.max(1)), None, None)
                .expect("load");
            let began = Instant::now();
            let r = rt
                .block_on(chaos::drive_url(&url, &load, &options()))
                .expect("drive");
            assert_eq!(r.end_to_end.succeeded, iters.max(1));
            began.elapsed()
        });
    });
    g.finish();

    // Same server, same run: the driver next to wrk, alternating so that
    // drift in the machine's load hits both alike; the median ratio counts.
    let secs = 2;
    let mut ratios = Vec::new();
    for round in 1..=3 {
        let ours = driver_rps(&url, secs);
        match wrk_rps(addr, secs) {
            Some(theirs) => {
                println!(
                    "round {round}: load driver {ours:.0} req/s, wrk {theirs:.0} req/s (1 thread, {CLIENTS} connections, {secs} s each): ratio {:.2}",
                    ours / theirs
                );
                ratios.push(ours / theirs);
            }
            None => {
                println!("load driver {ours:.0} req/s; wrk not installed (apt-get install wrk)");
                break;
            }
        }
    }
    if !ratios.is_empty() {
        ratios.sort_by(f64::total_cmp);
        println!(
            "load driver / wrk, median of {}: {:.2}",
            ratios.len(),
            ratios[ratios.len() / 2]
        );
    }

    // One more tier: server + retrying client.
    let one = chain_rps(1, 2);
    let three = chain_rps(3, 2);
    let per_hop_us = (1e6 / three - 1e6 / one) / 2.0;
    println!(
        "harness chain of 1 service: {one:.0} req/s; of 3: {three:.0} req/s; one more hop costs {per_hop_us:.1} µs of wall time per request at {CLIENTS} clients (2 cores saturated: about {:.1} µs of CPU)",
        per_hop_us * 2.0
    );

    // The same 2-service chain in one process and as `serve` processes.
    let mut ratios = Vec::new();
    for round in 1..=3 {
        let (inproc, served) = chain2_in_process_and_served(2);
        let ratio = inproc / served;
        println!(
            "round {round}: 2-service chain in-process {inproc:.0} req/s, as serve processes {served:.0} req/s ({CLIENTS} clients, 2 s each): per-request cost ratio served / in-process {ratio:.3}"
        );
        ratios.push(ratio);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "serve / in-process per-request cost, median of 3: {:.3} (target: within 10 %)",
        ratios[1]
    );
    c.final_summary();
}
