//! The admin port of `retrylint serve` is not an open door (issue 25): start
//! and stop need a loopback or configured `Host`, `application/json`, the
//! run's token and fields within their bounds; a start mid-run does not
//! replace the run; `drive` names a service whose run was replaced and
//! exits 1; binding beyond loopback warns; a connection that trickles its
//! request head is closed on both ports; `export` gives every process one
//! fresh token.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use retrylint::chaos::CountersAnswer;
use retrylint::run::RunReport;

const BIN: &str = env!("CARGO_BIN_EXE_retrylint");
/// How long anything here may take: a ready line, a drive, an answer.
const BOUND: Duration = Duration::from_secs(60);
const TOKEN: &str = "admin-port-test-token-0123";

/// A `retrylint serve` process, killed and reaped on drop.
struct Served {
    child: Child,
    http: SocketAddr,
    admin: SocketAddr,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scratch(tag: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("admin-port")
        .join(tag);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn field(line: &str, key: &str) -> SocketAddr {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in ready line `{line}`"))
}

/// Starts `retrylint serve TOPOLOGY --service NAME` with `args` and waits
/// for its ready line; its stderr is read in the background.
fn serve(dir: &Path, service: &str, args: &[&str]) -> Served {
    let mut child = Command::new(BIN)
        .arg("serve")
        .arg(dir.join("t.yaml"))
        .args(["--service", service])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("retrylint serve starts");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let (etx, erx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        let _ = etx.send(text);
    });
    let line = rx.recv_timeout(BOUND).expect("a ready line in time");
    assert!(line.starts_with("ready "), "{line}");
    Served {
        http: field(&line, "http="),
        admin: field(&line, "admin="),
        child,
        stderr: erx,
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

/// One HTTP/1.1 exchange on a fresh connection: the status and the body.
fn exchange(addr: SocketAddr, head: &str, body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(BOUND)).unwrap();
    write!(
        s,
        "{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut text = Vec::new();
    let _ = s.read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in `{head}`"));
    (status, body.to_owned())
}

/// A POST to the admin port with the given Host, Content-Type and token.
fn post(
    admin: SocketAddr,
    path: &str,
    host: &str,
    ct: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, String) {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    exchange(
        admin,
        &format!("POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {ct}\r\n{auth}"),
        body.as_bytes(),
    )
}

fn counters(admin: SocketAddr) -> CountersAnswer {
    let (status, body) = exchange(
        admin,
        "GET /retrylint/counters HTTP/1.1\r\nHost: x\r\n",
        b"",
    );
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("counters JSON")
}

fn start_body(run_id: &str, horizon_ns: u64, grace_ns: u64) -> String {
    format!(
        r#"{{"run_id":"{run_id}","seed":42,"fault":"none","horizon_ns":{horizon_ns},"grace_ns":{grace_ns}}}"#
    )
}

const ONE: &str = "version: 1\nservices:\n  api: {}\n";

#[test]
fn start_and_stop_refuse_a_page_a_stranger_and_a_horizon_of_u64_max() {
    let dir = scratch("refuse");
    std::fs::write(dir.join("t.yaml"), ONE).unwrap();
    let token_file = dir.join("run.token");
    let s = serve(
        &dir,
        "api",
        &[
            "--resolve",
            "dns",
            "--fault",
            "none",
            "--allow-host",
            "api.internal",
            "--token-file",
            token_file.to_str().unwrap(),
        ],
    );
    // The file did not exist: serve made it, for its owner only.
    let token = std::fs::read_to_string(&token_file).unwrap();
    let token = token.trim_end();
    assert_eq!(token.len(), 32, "128 random bits in hex");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let a = s.admin;
    let json = "application/json";
    let good = start_body("run-a", 10_000_000_000, 1_000_000_000);
    let host = format!("127.0.0.1:{}", a.port());

    // A cross-origin "simple request" from a page: text/plain.
    let (st, body) = post(
        a,
        "/retrylint/start",
        &host,
        "text/plain",
        Some(token),
        &good,
    );
    assert_eq!(st, 415, "{body}");
    assert!(body.contains("application/json"), "{body}");
    // A name rebound to 127.0.0.1 still sends its own Host.
    let (st, body) = post(
        a,
        "/retrylint/start",
        "evil.example",
        json,
        Some(token),
        &good,
    );
    assert_eq!(st, 403, "{body}");
    assert!(body.contains("--allow-host"), "{body}");
    // No token, a wrong one.
    let (st, body) = post(a, "/retrylint/start", &host, json, None, &good);
    assert_eq!(st, 401, "{body}");
    let (st, body) = post(
        a,
        "/retrylint/start",
        &host,
        json,
        Some("x".repeat(32).as_str()),
        &good,
    );
    assert_eq!(st, 403, "{body}");
    assert!(!body.contains(token), "{body}");
    let (st, _) = post(a, "/retrylint/stop", &host, json, None, "{}");
    assert_eq!(st, 401, "stop needs the token too");
    // Fields past their bounds, named with the bound.
    let (st, body) = post(
        a,
        "/retrylint/start",
        &host,
        json,
        Some(token),
        &start_body("run-a", u64::MAX, 1_000_000_000),
    );
    assert_eq!(st, 400, "{body}");
    assert!(
        body.contains("horizon_ns 18446744073709551615 is over its bound of 86400000000000"),
        "{body}"
    );
    let (st, body) = post(
        a,
        "/retrylint/start",
        &host,
        json,
        Some(token),
        &start_body("run-a", 1_000_000_000, u64::MAX),
    );
    assert_eq!(st, 400, "{body}");
    assert!(
        body.contains("grace_ns") && body.contains("600000000000"),
        "{body}"
    );
    let (st, body) = post(
        a,
        "/retrylint/start",
        &host,
        json,
        Some(token),
        &start_body("bad id!", 1_000_000_000, 0),
    );
    assert_eq!(st, 400, "{body}");
    assert!(body.contains("run_id"), "{body}");
    let huge = format!(r#"{{"pad":"{}"}}"#, "x".repeat(64 * 1024));
    let (st, _) = post(a, "/retrylint/start", &host, json, Some(token), &huge);
    assert_eq!(st, 413, "a body past 16 KiB is not read");
    // Nothing of that started a run.
    assert_eq!(counters(a).run, 0);

    // The configured name, the JSON, the token: run 1.
    let (st, body) = post(
        a,
        "/retrylint/start",
        "api.internal:9090",
        json,
        Some(token),
        &good,
    );
    assert_eq!((st, body.as_str()), (200, r#"{"run":1}"#));
    // Another driver's start mid-run is refused; the same run's is not.
    let (st, body) = post(
        a,
        "/retrylint/start",
        &host,
        json,
        Some(token),
        &start_body("run-b", 10_000_000_000, 1_000_000_000),
    );
    assert_eq!(st, 409, "{body}");
    assert!(body.contains("run 1 is going on"), "{body}");
    let (st, body) = post(a, "/retrylint/start", &host, json, Some(token), &good);
    assert_eq!((st, body.as_str()), (200, r#"{"run":1}"#));
    let c = counters(a);
    assert_eq!((c.run, c.run_id.as_str(), c.running), (1, "run-a", true));
    // Stopping someone else's run leaves it running.
    let (st, _) = post(
        a,
        "/retrylint/stop",
        &host,
        json,
        Some(token),
        r#"{"run_id":"run-b"}"#,
    );
    assert_eq!(st, 409);
    assert!(counters(a).running);
    let (st, _) = post(
        a,
        "/retrylint/stop",
        &host,
        json,
        Some(token),
        r#"{"run_id":"run-a"}"#,
    );
    assert_eq!(st, 204);
    assert!(!counters(a).running);
    // Once it ended, the next run may start.
    let (st, body) = post(
        a,
        "/retrylint/start",
        &host,
        json,
        Some(token),
        &start_body("run-b", 10_000_000_000, 1_000_000_000),
    );
    assert_eq!((st, body.as_str()), (200, r#"{"run":2}"#));
}

#[test]
fn drive_needs_the_token_and_a_wrong_one_starts_nothing() {
    let dir = scratch("drive-token");
    std::fs::write(dir.join("t.yaml"), ONE).unwrap();
    let s = serve(&dir, "api", &["--resolve", "dns", "--token", TOKEN]);
    let drive = |token: Option<&str>| {
        let mut cmd = Command::new(BIN);
        cmd.arg("drive")
            .arg(dir.join("t.yaml"))
            .args(["--entry", &format!("http://{}", s.http)])
            .args(["--collect", &format!("http://{}", s.admin)])
            .args(["--requests", "1", "--format", "json"])
            .env_remove("RETRYLINT_TOKEN");
        if let Some(t) = token {
            cmd.args(["--token", t]);
        }
        run_bounded(cmd)
    };
    let out = drive(None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs the run's token") && err.contains("--token-file"),
        "{err}"
    );
    let out = drive(Some("not-the-token-0123456789"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("403") && err.contains("not this run's"),
        "{err}"
    );
    assert_eq!(counters(s.admin).run, 0, "nothing started");
    // The token in the environment, as `export` wires it.
    let mut cmd = Command::new(BIN);
    cmd.arg("drive")
        .arg(dir.join("t.yaml"))
        .args(["--entry", &format!("http://{}", s.http)])
        .args(["--collect", &format!("http://{}", s.admin)])
        .args(["--requests", "1", "--format", "json"])
        .env("RETRYLINT_TOKEN", TOKEN);
    let out = run_bounded(cmd);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: RunReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.service("api").unwrap().received, 1);
}

const TWO: &str = "version: 1
entry: api
services:
  api:
    calls: [ { to: db, timeout: 300ms } ]
  db: {}
";

/// Polls `db`'s counters until its run is going on.
fn wait_running(admin: SocketAddr) {
    let began = Instant::now();
    while !counters(admin).running {
        assert!(began.elapsed() < BOUND, "the run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_service_whose_run_was_replaced_is_named_and_drive_exits_1() {
    let dir = scratch("replaced");
    std::fs::write(dir.join("t.yaml"), TWO).unwrap();
    let db = serve(&dir, "db", &["--resolve", "dns", "--token", TOKEN]);
    std::fs::write(dir.join("peers.yaml"), format!("db: {}\n", db.http)).unwrap();
    let api = serve(
        &dir,
        "api",
        &[
            "--peers",
            dir.join("peers.yaml").to_str().unwrap(),
            "--token",
            TOKEN,
        ],
    );
    let mut cmd = Command::new(BIN);
    cmd.arg("drive")
        .arg(dir.join("t.yaml"))
        .args(["--entry", &format!("http://{}", api.http)])
        .args(["--collect", &format!("http://{}", api.admin)])
        .args(["--collect", &format!("http://{}", db.admin)])
        .args(["--clients", "1", "--duration", "3s", "--format", "json"])
        .args(["--token", TOKEN]);
    let driving = std::thread::spawn(move || run_bounded(cmd));
    // Mid-run, `db`'s process restarts on the same ports: its counters are
    // of no run of this driver's.
    wait_running(db.admin);
    let (http, admin) = (db.http.to_string(), db.admin.to_string());
    drop(db);
    let db = serve(
        &dir,
        "db",
        &[
            "--resolve",
            "dns",
            "--token",
            TOKEN,
            "--listen",
            &http,
            "--admin",
            &admin,
        ],
    );
    let out = driving.join().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: RunReport = serde_json::from_slice(&out.stdout).expect("the report still comes");
    assert_eq!(r.harness.uncollected, ["db"]);
    assert!(
        r.harness
            .warnings
            .iter()
            .any(|w| w.starts_with("`db` had no run when its counters were read")),
        "{:?}",
        r.harness.warnings
    );
    // What `api` counted is in.
    assert!(r.service("api").unwrap().received > 0);
    drop((api, db));
}

#[test]
fn binding_beyond_loopback_says_so_on_stderr() {
    let dir = scratch("beyond");
    std::fs::write(dir.join("t.yaml"), ONE).unwrap();
    // The port is held on loopback, so the wildcard bind fails: the test
    // never listens beyond this machine, and the warning comes first.
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .arg(dir.join("t.yaml"))
        .args(["--service", "api", "--resolve", "dns", "--token", TOKEN])
        .args(["--listen", &format!("0.0.0.0:{port}")]);
    let out = run_bounded(cmd);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "warning: --listen 0.0.0.0:{port} listens beyond this machine"
        )),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(2), "{err}");
    // On loopback: no warning.
    let mut s = serve(&dir, "api", &["--resolve", "dns", "--token", TOKEN]);
    let text = s.end();
    assert!(!text.contains("warning"), "{text}");
    drop(held);
}

impl Served {
    /// Ends the process: what it wrote on stderr.
    fn end(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stderr.recv_timeout(BOUND).unwrap_or_default()
    }
}

/// Opens a connection to `addr`, sends half a request line, and waits for
/// the server to close it: how long that took.
fn half_a_request_line_is_cut(addr: SocketAddr) -> Duration {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(BOUND)).unwrap();
    let began = Instant::now();
    s.write_all(b"GET /healthz HT").unwrap();
    let mut buf = [0u8; 512];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return began.elapsed(),
            // hyper may answer 408 before it closes.
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return began.elapsed(),
            Err(e) => panic!("the connection was never closed: {e}"),
        }
    }
}

#[test]
fn a_connection_that_trickles_its_head_is_closed_on_both_ports() {
    let dir = scratch("slow");
    std::fs::write(dir.join("t.yaml"), ONE).unwrap();
    let s = serve(
        &dir,
        "api",
        &[
            "--resolve",
            "dns",
            "--token",
            TOKEN,
            "--fault",
            "none",
            "--header-timeout",
            "1s",
        ],
    );
    // The service port accepts once a run goes on.
    let host = format!("127.0.0.1:{}", s.admin.port());
    let (st, body) = post(
        s.admin,
        "/retrylint/start",
        &host,
        "application/json",
        Some(TOKEN),
        &start_body("slow", 60_000_000_000, 1_000_000_000),
    );
    assert_eq!(st, 200, "{body}");
    for (port, addr) in [("admin", s.admin), ("service", s.http)] {
        let took = half_a_request_line_is_cut(addr);
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(10),
            "{port} port: closed after {took:?}, not at the 1 s header timeout"
        );
    }
    // A whole request still gets its answer.
    let (st, _) = exchange(s.http, "GET / HTTP/1.1\r\nHost: x\r\n", b"");
    assert_eq!(st, 200);
}

#[test]
fn export_gives_every_process_one_fresh_token_and_lets_the_service_names_through() {
    let dir = scratch("export");
    let export = |target: &str, out: &str| {
        let mut cmd = Command::new(BIN);
        cmd.args(["export", target, "examples/ecommerce.yaml", "-o"])
            .arg(dir.join(out));
        let out = run_bounded(cmd);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let mode = |p: &Path| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(p).unwrap().permissions().mode() & 0o777
        }
        #[cfg(not(unix))]
        0o600
    };
    export("kubernetes", "k1");
    export("kubernetes", "k2");
    let secret = |d: &str| {
        let p = dir.join(d).join("secret.yaml");
        assert_eq!(mode(&p), 0o600, "{d}: the Secret's file is its owner's");
        let text = std::fs::read_to_string(p).unwrap();
        assert!(text.contains("kind: Secret\n"), "{text}");
        text.lines()
            .find_map(|l| l.trim().strip_prefix("token: "))
            .expect("a token")
            .trim_matches('"')
            .to_owned()
    };
    let (t1, t2) = (secret("k1"), secret("k2"));
    assert_eq!(t1.len(), 32);
    assert_ne!(t1, t2, "a fresh token at each export");
    let kustomization = std::fs::read_to_string(dir.join("k1/kustomization.yaml")).unwrap();
    assert!(kustomization.contains("- secret.yaml\n"), "{kustomization}");
    // Every serve and the driver read it from the Secret, never as a flag.
    let ref_ = "- name: RETRYLINT_TOKEN\n              valueFrom:\n                secretKeyRef:\n                  name: retrylint-token\n                  key: token\n";
    for name in [
        "web",
        "api",
        "catalog",
        "cart",
        "payments",
        "inventory",
        "db",
        "cache",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("k1/services/{name}.yaml")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(text.contains(ref_), "{name}: {text}");
        assert!(
            !text.contains(&t1),
            "{name}: the token itself is not in a Deployment"
        );
        for host in [
            name.to_owned(),
            format!("{name}.retrylint.svc.cluster.local"),
        ] {
            assert!(
                text.contains(&format!("- --allow-host\n            - {host}\n")),
                "{name}: {host}"
            );
        }
    }
    let job = std::fs::read_to_string(dir.join("k1/drive-job.yaml")).unwrap();
    assert!(job.contains(ref_), "{job}");

    export("compose", "c1");
    let p = dir.join("c1/compose.yaml");
    assert_eq!(mode(&p), 0o600);
    let text = std::fs::read_to_string(p).unwrap();
    let tokens: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("RETRYLINT_TOKEN: "))
        .map(|t| t.trim_matches('"'))
        .collect();
    assert_eq!(tokens.len(), 9, "eight services and the driver");
    assert!(tokens.iter().all(|t| t.len() == 32 && *t == tokens[0]));
    assert!(
        text.contains("- --allow-host\n      - payments\n"),
        "{text}"
    );
}

#[test]
fn a_dead_serve_process_is_named_and_the_rest_of_the_report_comes() {
    let dir = scratch("dead");
    std::fs::write(dir.join("t.yaml"), TWO).unwrap();
    let db = serve(&dir, "db", &["--resolve", "dns", "--token", TOKEN]);
    std::fs::write(dir.join("peers.yaml"), format!("db: {}\n", db.http)).unwrap();
    let api = serve(
        &dir,
        "api",
        &[
            "--peers",
            dir.join("peers.yaml").to_str().unwrap(),
            "--token",
            TOKEN,
        ],
    );
    let db_admin = format!("http://{}", db.admin);
    let mut cmd = Command::new(BIN);
    cmd.arg("drive")
        .arg(dir.join("t.yaml"))
        .args(["--entry", &format!("http://{}", api.http)])
        .args(["--collect", &format!("http://{}", api.admin)])
        .args(["--collect", &db_admin])
        .args(["--clients", "1", "--duration", "2s", "--format", "json"])
        .args(["--token", TOKEN]);
    let driving = std::thread::spawn(move || run_bounded(cmd));
    wait_running(db.admin);
    drop(db);
    let out = driving.join().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: RunReport = serde_json::from_slice(&out.stdout).expect("the report still comes");
    assert_eq!(r.harness.uncollected, ["db"]);
    let w = r
        .harness
        .warnings
        .iter()
        .find(|w| w.starts_with("`db`'s counters could not be read"))
        .unwrap_or_else(|| panic!("{:?}", r.harness.warnings));
    assert!(w.contains(&db_admin), "{w}");
    let api_row = r.service("api").unwrap();
    assert!(api_row.received > 0, "api's own counters are in");
    drop(api);
}

/// A stand-in for a `serve` admin port (and the entry) that answers the
/// first counters request as `serve` would and streams the second one
/// without end: how many bytes it got to send.
fn streaming_admin() -> (SocketAddr, mpsc::Receiver<u64>) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let gets = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            let gets = Arc::clone(&gets);
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut byte = [0u8; 1];
                loop {
                    // One request head (bodies here are small and sent whole).
                    buf.clear();
                    while !buf.ends_with(b"\r\n\r\n") {
                        match s.read(&mut byte) {
                            Ok(1) => buf.push(byte[0]),
                            _ => return,
                        }
                    }
                    let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    let mut body = vec![0u8; length];
                    if s.read_exact(&mut body).is_err() {
                        return;
                    }
                    let answer = |s: &mut TcpStream, status: &str, body: &str| {
                        let _ = write!(
                            s,
                            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        );
                    };
                    if head.starts_with("get /retrylint/counters") {
                        if gets.fetch_add(1, Ordering::Relaxed) == 0 {
                            let c = CountersAnswer {
                                service: "api".into(),
                                ..Default::default()
                            };
                            answer(&mut s, "200 OK", &serde_json::to_string(&c).unwrap());
                            continue;
                        }
                        let _ = write!(
                            s,
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
                        );
                        let chunk = format!("10000\r\n{}\r\n", " ".repeat(0x10000));
                        let mut sent = 0u64;
                        while s.write_all(chunk.as_bytes()).is_ok() {
                            sent += 0x10000;
                        }
                        let _ = tx.send(sent);
                        return;
                    } else if head.starts_with("post /retrylint/start") {
                        answer(&mut s, "200 OK", r#"{"run":1}"#);
                    } else if head.starts_with("post /retrylint/stop") {
                        let _ = write!(s, "HTTP/1.1 204 No Content\r\n\r\n");
                    } else {
                        answer(&mut s, "200 OK", "{}");
                    }
                }
            });
        }
    });
    (addr, rx)
}

#[test]
fn drive_reads_a_bounded_body_from_an_endpoint_that_streams_forever() {
    let dir = scratch("stream");
    std::fs::write(dir.join("t.yaml"), ONE).unwrap();
    let (fake, streamed) = streaming_admin();
    let mut cmd = Command::new(BIN);
    cmd.arg("drive")
        .arg(dir.join("t.yaml"))
        .args(["--entry", &format!("http://{fake}")])
        .args(["--collect", &format!("http://{fake}")])
        .args([
            "--requests",
            "1",
            "--duration",
            "1s",
            "--fault",
            "none",
            "--format",
            "json",
        ])
        .args(["--token", TOKEN]);
    let began = Instant::now();
    let out = run_bounded(cmd);
    let took = began.elapsed();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: RunReport = serde_json::from_slice(&out.stdout).expect("a report");
    assert_eq!(r.harness.uncollected, ["api"]);
    assert!(
        r.harness
            .warnings
            .iter()
            .any(|w| w.contains("the answer is over the 17 MiB limit for this topology")),
        "{:?}",
        r.harness.warnings
    );
    let sent = streamed.recv_timeout(BOUND).expect("the stream ended");
    // The limit (16 MiB and 1 KiB per service and layer), what the socket
    // buffers held, and no more: not gigabytes until a timeout.
    assert!(sent < 64 << 20, "{sent} bytes were read");
    assert!(took < Duration::from_secs(8), "took {took:?}");
}
