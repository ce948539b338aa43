//! Every service as its own `retrylint serve` process on loopback, the load
//! from `retrylint drive --collect`: the same figures as the in-process
//! harness (`chaos_amplification.rs`, `chaos_faults.rs`) — under total
//! outage exactly the static worst case `check` computes — `/metrics` that a
//! strict text-format checker accepts and that agrees with the JSON, and
//! every process gone at the end, nothing left listening.

use crate::common;
use crate::common::sockets;

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use retrylint::chaos::CountersAnswer;
use retrylint::run::{Layout, RunReport};
use retrylint::topology::Topology;

const BIN: &str = env!("CARGO_BIN_EXE_retrylint");
/// How long a process may take to print its ready line, or a drive to end.
const BOUND: Duration = Duration::from_secs(60);

/// A `retrylint serve` process, killed and reaped on drop.
struct Served {
    name: String,
    child: Child,
    http: SocketAddr,
    admin: SocketAddr,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn field(line: &str, key: &str) -> SocketAddr {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in ready line `{line}`"))
}

/// Starts `retrylint serve` for `service` and waits for its ready line.
fn serve(dir: &Path, service: &str, peers: &Path, fault: &str, seed: u64) -> Served {
    let mut child = Command::new(BIN)
        .arg("serve")
        .arg(dir.join("t.yaml"))
        .args(["--service", service, "--peers"])
        .arg(peers)
        .args(["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"])
        .args(["--fault", fault, "--seed", &seed.to_string()])
        // The first process makes the run's token; the others and the
        // driver read it.
        .arg("--token-file")
        .arg(dir.join("run.token"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("retrylint serve starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let mut served = Served {
        name: service.into(),
        child,
        http: "0.0.0.0:0".parse().unwrap(),
        admin: "0.0.0.0:0".parse().unwrap(),
    };
    let line = rx.recv_timeout(BOUND).expect("a ready line in time");
    assert!(
        line.starts_with(&format!("ready service={service} ")),
        "{line}"
    );
    served.http = field(&line, "http=");
    served.admin = field(&line, "admin=");
    served
}

/// The services of `t`, callees before their callers.
fn leaves_first(t: &Topology) -> Vec<usize> {
    fn visit(t: &Topology, s: usize, seen: &mut Vec<bool>, out: &mut Vec<usize>) {
        if seen[s] {
            return;
        }
        seen[s] = true;
        for c in &t.services[s].calls {
            visit(t, c.to, seen, out);
        }
        out.push(s);
    }
    let mut seen = vec![false; t.services.len()];
    let mut out = Vec::new();
    for s in 0..t.services.len() {
        visit(t, s, &mut seen, &mut out);
    }
    out
}

/// One game day on this machine: the topology's services as processes.
struct Cluster {
    dir: PathBuf,
    topology: Topology,
    served: Vec<Served>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.served.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("retrylint-serve-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Boots every service leaves first, each with a peers file naming the
/// callees already up.
fn cluster(tag: &str, topology: &str, fault: &str, seed: u64) -> Cluster {
    let dir = scratch(tag);
    std::fs::write(dir.join("t.yaml"), topology).unwrap();
    let t = common::load(topology).expect("valid topology");
    let mut peers = String::new();
    let mut served = Vec::new();
    for (i, sid) in leaves_first(&t).into_iter().enumerate() {
        let name = t.services[sid].name.clone();
        let file = dir.join(format!("peers-{i}.yaml"));
        std::fs::write(&file, &peers).unwrap();
        let s = serve(&dir, &name, &file, fault, seed);
        peers.push_str(&format!("{name}: {}\n", s.http));
        served.push(s);
    }
    Cluster {
        dir,
        topology: t,
        served,
    }
}

impl Cluster {
    fn get(&self, name: &str) -> &Served {
        self.served.iter().find(|s| s.name == name).expect("served")
    }

    /// `retrylint drive` against the entry, collecting from every process.
    fn drive(&self, fault: &str, load: &[&str], seed: u64) -> Output {
        let entry = self.get(&self.topology.services[self.topology.entry].name);
        let mut cmd = Command::new(BIN);
        cmd.arg("drive")
            .arg(self.dir.join("t.yaml"))
            .arg("--token-file")
            .arg(self.dir.join("run.token"))
            .args(["--entry", &format!("http://{}", entry.http)])
            .args([
                "--fault",
                fault,
                "--seed",
                &seed.to_string(),
                "--format",
                "json",
            ])
            .args(load);
        for s in &self.served {
            cmd.args(["--collect", &format!("http://{}", s.admin)]);
        }
        run_bounded(cmd)
    }

    fn report(&self, fault: &str, load: &[&str], seed: u64) -> RunReport {
        let out = self.drive(fault, load, seed);
        assert_eq!(
            out.status.code(),
            Some(0),
            "drive: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("a JSON run report")
    }

    /// Kills every process and checks nothing of theirs still listens. (A
    /// stopped run has closed its service port already; the admin port
    /// stays until the process ends.)
    fn end(mut self) {
        let mut ports = Vec::new();
        for s in &self.served {
            let open = sockets::listening_ports(s.child.id());
            assert!(open.contains(&s.admin.port()), "{}: {open:?}", s.name);
            ports.extend(open);
            ports.extend([s.http.port(), s.admin.port()]);
        }
        self.served.clear();
        let still: Vec<u16> = sockets::tcp_sockets()
            .into_iter()
            .filter(|s| s.listening && ports.contains(&s.local_port))
            .map(|s| s.local_port)
            .collect();
        assert!(still.is_empty(), "still listening: {still:?}");
    }
}

/// Runs `cmd` to its end, killed after [`BOUND`].
fn run_bounded(mut cmd: Command) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    let id = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(BOUND) {
        Ok(out) => out.expect("the command ran"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
            panic!("the command took longer than {BOUND:?}");
        }
    }
}

/// A GET on loopback, the body of a 200.
fn get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "{head}"
    );
    body.to_owned()
}

const CHAIN: &str = "version: 1
entry: entry
services:
  entry:
    calls: [ { to: a, timeout: 2s, retry: { max_attempts: 4 } } ]
  a:
    calls: [ { to: b, timeout: 2s, retry: { max_attempts: 4 } } ]
  b:
    calls: [ { to: leaf, timeout: 2s, retry: { max_attempts: 4 } } ]
  leaf: {}
";

const CLOSED: [&str; 6] = ["--clients", "2", "--requests", "6", "--duration", "20s"];

#[test]
fn leaf_down_chain_as_processes_sends_64_attempts_per_request() {
    let c = cluster("chain", CHAIN, "total-outage", 7);
    // Before the driver's start nothing runs, the fault plan included.
    let before = prometheus::parse(&get(c.get("leaf").admin, "/metrics")).expect("strict");
    assert_eq!(before.value("retrylint_run_number", &["service=leaf"]), 0.0);
    assert_eq!(
        before.value("retrylint_run_running", &["service=leaf"]),
        0.0
    );
    assert_eq!(
        before.value("retrylint_received_total", &["service=leaf"]),
        0.0
    );
    let r = c.report("total-outage", &CLOSED, 7);
    assert_eq!(r.mode, "drive");
    assert_eq!(r.end_to_end.requests, 6);
    assert_eq!(r.end_to_end.failed, 6);
    let received: Vec<u64> = r.services.iter().map(|s| s.received).collect();
    assert_eq!(received, [6, 24, 96, 384], "entry, a, b, leaf");
    let check = common::check(&c.topology);
    for s in &r.services {
        assert_eq!(
            s.amplification.measured, s.amplification.predicted,
            "{}",
            s.service
        );
        assert_eq!(
            s.amplification.measured,
            common::amplification(&check, &s.service),
            "{}",
            s.service
        );
    }
    let leaf = r.service("leaf").expect("leaf row");
    assert_eq!(leaf.amplification.measured, 64.0);
    assert_eq!(leaf.statuses.get("503"), Some(&384));
    let b = r.service("b").expect("b row");
    assert_eq!(b.calls[0].layers[0].attempts, 384);
    assert_eq!(
        b.calls[0].layers[0].retries_by_reason.get("503"),
        Some(&288)
    );
    assert_eq!(r.end_to_end.client, None);
    // Every service's listener is in the report, as `chaos` lists them.
    assert_eq!(r.listeners.len(), 4);

    // `/metrics` parses strictly and says what the JSON says.
    for name in ["leaf", "b"] {
        let s = c.get(name);
        let json: CountersAnswer =
            serde_json::from_str(&get(s.admin, "/retrylint/counters")).expect("counters JSON");
        let text = get(s.admin, "/metrics");
        let m = prometheus::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        let sid = c
            .topology
            .services
            .iter()
            .position(|x| x.name == name)
            .unwrap();
        let counts = &json.snapshot.counts.services[sid];
        let svc = format!("service={name}");
        assert_eq!(
            m.value("retrylint_received_total", &[&svc]),
            counts.received as f64
        );
        for &(status, n) in &counts.statuses {
            let st = format!("status={status}");
            assert_eq!(m.value("retrylint_responses_total", &[&svc, &st]), n as f64);
        }
        assert_eq!(m.value("retrylint_run_number", &[&svc]), 1.0);
        assert_eq!(
            m.value("retrylint_fault_target", &[&svc]),
            f64::from(u8::from(name == "leaf"))
        );
        let answered: u64 = counts.statuses.iter().map(|(_, n)| n).sum();
        let hist = &json.snapshot.latency[sid];
        assert_eq!(hist.len(), answered);
        assert_eq!(
            m.value("retrylint_response_seconds_count", &[&svc]),
            answered as f64
        );
        let layout = Layout::new(&c.topology);
        for (ci, call) in c.topology.services[sid].calls.iter().enumerate() {
            for (li, layer) in call.layers.iter().enumerate() {
                let l = &json.snapshot.counts.layers[layout.slot(sid, ci, li)];
                let labels = [
                    svc.clone(),
                    format!("call={ci}"),
                    format!("layer={}", layer.name),
                ];
                let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
                assert_eq!(
                    m.value("retrylint_attempts_total", &labels),
                    l.attempts as f64
                );
                assert_eq!(
                    m.value("retrylint_budget_refusals_total", &labels),
                    l.budget_refusals as f64
                );
                let mut with = labels.clone();
                with.push("reason=503");
                assert_eq!(m.value("retrylint_retries_total", &with), l.retries as f64);
            }
        }
        if name == "b" {
            assert_eq!(
                m.value("retrylint_attempts_total", &[&svc, "callee=leaf"]),
                384.0
            );
        }
    }
    assert_eq!(get(c.get("leaf").admin, "/healthz"), "ok\n");
    c.end();
}

#[test]
fn a_via_sidecar_inside_the_process_multiplies_like_any_other_layer() {
    let c = cluster(
        "sidecar",
        "version: 1
entry: app
services:
  app:
    calls:
      - to: api
        timeout: 2s
        retry: { max_attempts: 3 }
        via:
          - name: istio-sidecar
            timeout: 1s
            retry: { max_attempts: 3, retry_on: [connect, reset, 503] }
  api: {}
",
        "total-outage",
        7,
    );
    let r = c.report(
        "total-outage",
        &["--clients", "1", "--requests", "5", "--duration", "20s"],
        7,
    );
    let api = r.service("api").expect("api row");
    assert_eq!(api.received, 45);
    assert_eq!(api.amplification.measured, 9.0);
    assert_eq!(api.amplification.predicted, 9.0);
    let layers = &r.service("app").expect("app row").calls[0].layers;
    assert_eq!((layers[0].layer.as_str(), layers[0].attempts), ("app", 15));
    assert_eq!(
        (layers[1].layer.as_str(), layers[1].attempts),
        ("istio-sidecar", 45)
    );
    // The sidecar is a listener of the app's process.
    assert!(
        r.listeners
            .iter()
            .any(|l| l.name == "app→api/istio-sidecar"),
        "{:?}",
        r.listeners
    );
    c.end();
}

#[test]
fn fan_out_and_fan_in_as_processes_measure_the_sum_over_all_paths() {
    let c = cluster(
        "dag",
        "version: 1
entry: web
services:
  web:
    calls:
      - { to: a, timeout: 2s, retry: { max_attempts: 2 } }
      - { to: b, timeout: 2s, retry: { max_attempts: 3 } }
  a:
    calls: [ { to: db, timeout: 2s, retry: { max_attempts: 2 } } ]
  b:
    calls:
      - { to: db, timeout: 2s, parallel: true, retry: { max_attempts: 2 } }
      - { to: a, timeout: 2s, parallel: true }
  db: {}
",
        "total-outage",
        7,
    );
    let r = c.report(
        "total-outage",
        &["--clients", "1", "--requests", "2", "--duration", "20s"],
        7,
    );
    let received: Vec<u64> = r.services.iter().map(|s| s.received).collect();
    assert_eq!(received, [2, 10, 6, 32], "web, a, b, db");
    let check = common::check(&c.topology);
    for s in &r.services {
        assert_eq!(
            s.amplification.measured, s.amplification.predicted,
            "{}",
            s.service
        );
        assert_eq!(
            s.amplification.measured,
            common::amplification(&check, &s.service),
            "{}",
            s.service
        );
    }
    c.end();
}

#[test]
fn a_ratio_budget_caps_retries_across_processes_as_in_one() {
    // As `chaos_faults.rs` states it, exactly: one retry per ten requests.
    let c = cluster(
        "budget",
        "version: 1\nentry: api\nservices:\n  api:\n    calls:\n      - to: db\n        timeout: 1s\n        retry: { max_attempts: 3, budget: { kind: ratio, ratio: 0.1 } }\n  db: {}\n",
        "total-outage",
        3,
    );
    let r = c.report(
        "total-outage",
        &["--clients", "1", "--requests", "50", "--duration", "10s"],
        3,
    );
    let db = r.service("db").expect("db row");
    assert_eq!(db.received, 55);
    let layer = &r.service("api").expect("api row").calls[0].layers[0];
    assert_eq!(layer.retries, 5);
    assert_eq!(layer.budget_refusals, 50);

    // A driver with another seed is refused before anything runs.
    let out = c.drive("total-outage", &["--requests", "1"], 4);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("same --seed"), "{err}");
    // Collecting one service twice would count it twice.
    let mut cmd = Command::new(BIN);
    let admin = format!("http://{}", c.get("db").admin);
    cmd.arg("drive")
        .arg(c.dir.join("t.yaml"))
        .arg("--token-file")
        .arg(c.dir.join("run.token"))
        .args([
            "--entry",
            &format!("http://{}", c.get("api").http),
            "--fault",
            "total-outage",
        ])
        .args(["--seed", "3", "--collect", &admin, "--collect", &admin]);
    let out = run_bounded(cmd);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("collect each service once"));
    c.end();
}

#[test]
fn a_timed_phase_runs_on_the_served_clock_and_retry_after_crosses_processes() {
    // As `chaos_faults.rs`: 429 with Retry-After 1s for the first 300 ms of
    // the run; the client layer (in the driver) waits and its retry, 1 s on,
    // finds the phase over on the service's own clock.
    let dir = scratch("phase-fault");
    let fault = dir.join("f.yaml");
    std::fs::write(
        &fault,
        "target: api\nphases: [ { for: 300ms, inject: { kind: status, status: 429, retry_after: 1s } } ]\n",
    )
    .unwrap();
    let fault = fault.to_str().unwrap();
    let c = cluster(
        "phase",
        "version: 1\nclient: { timeout: 2s, retry: { max_attempts: 2 } }\nservices:\n  api: {}\n",
        fault,
        3,
    );
    let r = c.report(
        fault,
        &["--clients", "1", "--requests", "1", "--duration", "10s"],
        3,
    );
    assert_eq!(r.end_to_end.succeeded, 1, "{:?}", r.end_to_end.outcomes);
    let client = r.end_to_end.client.as_ref().expect("client layer");
    assert_eq!(client.retry_after_waits, 1);
    assert_eq!(client.retries_by_reason.get("429"), Some(&1));
    let api = r.service("api").expect("api row");
    assert_eq!(api.statuses.get("429"), Some(&1));
    assert_eq!(api.statuses.get("200"), Some(&1));
    c.end();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_non_loopback_listen_is_taken_only_as_an_ip_written_out() {
    let dir = scratch("listen");
    std::fs::write(dir.join("t.yaml"), CHAIN).unwrap();
    for listen in ["db.example.com:8080", ":8080", "localhost"] {
        let mut cmd = Command::new(BIN);
        cmd.arg("serve").arg(dir.join("t.yaml")).args([
            "--service",
            "leaf",
            "--resolve",
            "dns",
            "--listen",
            listen,
        ]);
        let out = run_bounded(cmd);
        assert_eq!(out.status.code(), Some(2), "--listen {listen}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("0.0.0.0:8080"), "{err}");
        assert!(err.contains("never from a host name or a default"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_peers_file_is_refused_at_its_line_and_column() {
    let dir = scratch("peers");
    std::fs::write(dir.join("t.yaml"), CHAIN).unwrap();
    for (peers, at, says) in [
        (
            "a: 127.0.0.1:9\nleef: 127.0.0.1:9\n",
            "peers.yaml:2:1",
            "did you mean `leaf`?",
        ),
        ("leaf: 127.0.0.1\n", "peers.yaml:1:7", "the port is missing"),
        ("leaf: [1, 2]\n", "peers.yaml:1:7", "HOST:PORT"),
    ] {
        std::fs::write(dir.join("peers.yaml"), peers).unwrap();
        let mut cmd = Command::new(BIN);
        cmd.current_dir(&dir)
            .args(["serve", "t.yaml", "--service", "b", "--peers", "peers.yaml"]);
        let out = run_bounded(cmd);
        assert_eq!(out.status.code(), Some(2), "{peers}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(at), "{at}: {err}");
        assert!(err.contains(says), "{says}: {err}");
    }
    // A callee missing from the file: refused before anything listens.
    std::fs::write(dir.join("peers.yaml"), "a: 127.0.0.1:9\n").unwrap();
    let mut cmd = Command::new(BIN);
    cmd.current_dir(&dir)
        .args(["serve", "t.yaml", "--service", "b", "--peers", "peers.yaml"])
        .args(["--token", "a-token-of-16-chars"]);
    let out = run_bounded(cmd);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no address for `leaf`"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A strict checker of the Prometheus text format (0.0.4), written for this
/// test: every line a comment, a blank or a sample; `# TYPE` once per family
/// and before its samples; metric and label names as the format allows;
/// label values quoted with only `\\`, `\"` and `\n` escapes; no series
/// twice; counters named `_total`; histograms with cumulative `_bucket`s
/// ending at `le="+Inf"` equal to `_count`, and a `_sum`.
mod prometheus {
    use super::*;

    pub struct Metrics {
        samples: Vec<(String, BTreeMap<String, String>, f64)>,
    }

    impl Metrics {
        /// The one sample of `name` whose labels include every `k=v` of
        /// `labels`.
        pub fn value(&self, name: &str, labels: &[&str]) -> f64 {
            let found: Vec<f64> = self
                .samples
                .iter()
                .filter(|(n, l, _)| {
                    n == name
                        && labels.iter().all(|kv| {
                            let (k, v) = kv.split_once('=').unwrap();
                            l.get(k).is_some_and(|x| x == v)
                        })
                })
                .map(|(_, _, v)| *v)
                .collect();
            assert_eq!(found.len(), 1, "{name} {labels:?}: {found:?}");
            found[0]
        }
    }

    fn is_name(s: &str, colon: bool) -> bool {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
    }

    fn number(s: &str) -> Result<f64, String> {
        match s {
            "+Inf" => Ok(f64::INFINITY),
            "-Inf" => Ok(f64::NEG_INFINITY),
            "NaN" => Ok(f64::NAN),
            _ => s.parse().map_err(|_| format!("`{s}` is not a number")),
        }
    }

    fn labels(s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
        let mut out = BTreeMap::new();
        let mut rest = s;
        loop {
            if let Some(r) = rest.strip_prefix('}') {
                return Ok((out, r));
            }
            let eq = rest.find('=').ok_or("a label without `=`")?;
            let name = &rest[..eq];
            if !is_name(name, false) {
                return Err(format!("bad label name `{name}`"));
            }
            rest = rest[eq + 1..]
                .strip_prefix('"')
                .ok_or("an unquoted label value")?;
            let mut value = String::new();
            let mut chars = rest.char_indices();
            let end = loop {
                match chars.next().ok_or("an unterminated label value")? {
                    (i, '"') => break i,
                    (_, '\\') => match chars.next().ok_or("a dangling escape")?.1 {
                        '\\' => value.push('\\'),
                        '"' => value.push('"'),
                        'n' => value.push('\n'),
                        c => return Err(format!("bad escape `\\{c}`")),
                    },
                    (_, '\n') => return Err("a newline in a label value".into()),
                    (_, c) => value.push(c),
                }
            };
            if out.insert(name.to_owned(), value).is_some() {
                return Err(format!("label `{name}` twice"));
            }
            rest = &rest[end + 1..];
            if let Some(r) = rest.strip_prefix(',') {
                rest = r;
            } else if !rest.starts_with('}') {
                return Err("labels not separated by `,`".into());
            }
        }
    }

    pub fn parse(text: &str) -> Result<Metrics, String> {
        if !text.ends_with('\n') {
            return Err("the exposition must end with a newline".into());
        }
        let mut types: HashMap<String, String> = HashMap::new();
        let mut samples = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let at = |e: String| format!("line {}: {e}: `{line}`", n + 1);
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("# ") {
                let mut w = rest.splitn(3, ' ');
                match (w.next(), w.next(), w.next()) {
                    (Some("TYPE"), Some(name), Some(kind)) => {
                        if !is_name(name, true) {
                            return Err(at("bad metric name".into()));
                        }
                        if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind)
                        {
                            return Err(at(format!("unknown type `{kind}`")));
                        }
                        if kind == "counter" && !name.ends_with("_total") {
                            return Err(at("a counter's name ends in _total".into()));
                        }
                        if types.insert(name.to_owned(), kind.to_owned()).is_some() {
                            return Err(at("TYPE twice".into()));
                        }
                        if samples
                            .iter()
                            .any(|(s, _, _): &(String, _, _)| s.starts_with(name))
                        {
                            return Err(at("TYPE after its samples".into()));
                        }
                    }
                    (Some("HELP"), Some(name), _) if is_name(name, true) => {}
                    _ => return Err(at("a comment that is neither HELP nor TYPE".into())),
                }
                continue;
            }
            let name_end = line.find(['{', ' ']).ok_or_else(|| at("no value".into()))?;
            let name = &line[..name_end];
            if !is_name(name, true) {
                return Err(at("bad metric name".into()));
            }
            let (labels, rest) = if line[name_end..].starts_with('{') {
                labels(&line[name_end + 1..]).map_err(at)?
            } else {
                (BTreeMap::new(), &line[name_end..])
            };
            let value = rest
                .strip_prefix(' ')
                .ok_or_else(|| at("no space before the value".into()))?;
            let value = number(value.trim_end()).map_err(at)?;
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| {
                    name.strip_suffix(s)
                        .filter(|f| types.get(*f).is_some_and(|t| t == "histogram"))
                })
                .unwrap_or(name);
            let kind = types
                .get(family)
                .ok_or_else(|| at("a sample before its TYPE".into()))?;
            if kind == "histogram" && name.ends_with("_bucket") != labels.contains_key("le") {
                return Err(at("`le` belongs on histogram buckets only".into()));
            }
            if kind == "counter" && value < 0.0 {
                return Err(at("a negative counter".into()));
            }
            if samples.iter().any(|(n, l, _)| n == name && *l == labels) {
                return Err(at("the same series twice".into()));
            }
            samples.push((name.to_owned(), labels, value));
        }
        // Histograms: cumulative buckets, +Inf equal to _count, a _sum.
        for (family, kind) in &types {
            if kind != "histogram" {
                continue;
            }
            let bucket = format!("{family}_bucket");
            let mut series: BTreeMap<BTreeMap<String, String>, Vec<(f64, f64)>> = BTreeMap::new();
            for (n, l, v) in &samples {
                if *n == bucket {
                    let mut key = l.clone();
                    let le = number(&key.remove("le").unwrap())?;
                    series.entry(key).or_default().push((le, *v));
                }
            }
            for (key, buckets) in series {
                if !buckets
                    .windows(2)
                    .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
                {
                    return Err(format!("{family}: buckets not cumulative in order"));
                }
                let Some(&(le, top)) = buckets.last() else {
                    continue;
                };
                if le != f64::INFINITY {
                    return Err(format!("{family}: no +Inf bucket"));
                }
                let find = |suffix: &str| {
                    samples
                        .iter()
                        .find(|(n, l, _)| *n == format!("{family}{suffix}") && *l == key)
                        .map(|(_, _, v)| *v)
                };
                if find("_count") != Some(top) {
                    return Err(format!("{family}: +Inf bucket {top} is not _count"));
                }
                if find("_sum").is_none() {
                    return Err(format!("{family}: no _sum"));
                }
            }
        }
        Ok(Metrics { samples })
    }

    #[test]
    fn the_checker_refuses_what_the_format_does() {
        assert!(parse("# TYPE x_total counter\nx_total 1\n").is_ok());
        assert!(parse("x_total 1\n").is_err(), "no TYPE");
        assert!(
            parse("# TYPE x counter\nx 1\n").is_err(),
            "counter without _total"
        );
        assert!(
            parse("# TYPE x gauge\nx{a=\"b\\q\"} 1\n").is_err(),
            "bad escape"
        );
        assert!(
            parse("# TYPE x gauge\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n").is_err(),
            "twice"
        );
        assert!(parse("# TYPE x gauge\nx 1").is_err(), "no final newline");
        let h = "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n";
        assert!(parse(h).is_err(), "not cumulative");
        let h = "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n";
        assert!(parse(h).is_err(), "+Inf is not _count");
    }
}
