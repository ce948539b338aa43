//! The command lines the exported processes run, once for every target: the
//! contract with `retrylint serve` and `retrylint drive` — where the files
//! are mounted, which ports serve what, how a callee is found — written
//! down in one place.
//!
//! - `serve TOPOLOGY --service NAME --listen 0.0.0.0:8080 --admin 0.0.0.0:9090
//!   --resolve dns --peer-port 8080 --fault FAULT --seed S --allow-host DNS
//!   …`: one service (its `via` sidecars inside the same process) on 8080;
//!   the admin port serves `/metrics`, `/retrylint/counters`,
//!   `/retrylint/start` and `/healthz`; callee X is
//!   `http://<dns_names()[X]>:8080`. Start and stop name the service's DNS
//!   names as `Host`, which `--allow-host` lets through.
//! - `drive TOPOLOGY --entry http://ENTRY:8080 --fault FAULT [load flags]
//!   --collect http://X:9090 … --format json`: starts every clock, drives the
//!   load, collects every service's counters and prints the report.
//! - The run's token, which start and stop need, is in the environment of
//!   every `serve` and the `drive` as [`TOKEN_ENV`] (on Kubernetes from a
//!   Secret), never on a command line.
//! - Health: `probe-client` (the harness's own retrying client as a
//!   command) asks `/healthz` once for a health check, or until it answers
//!   (bounded) to wait for a service. It is in the image already, which has
//!   no shell, curl or wget.

use std::time::Duration;

use crate::run::{Arrival, LoadSettings};

/// Where the ConfigMap (or Compose config) is mounted.
pub(crate) const CONFIG_DIR: &str = "/etc/retrylint";
pub(crate) const TOPOLOGY_FILE: &str = "topology.yaml";
pub(crate) const FAULT_FILE: &str = "fault.yaml";
/// The port a service serves its tier on.
pub(crate) const HTTP_PORT: u16 = 8080;
/// The port of `/metrics`, `/retrylint/*` and `/healthz`.
pub(crate) const ADMIN_PORT: u16 = 9090;
/// Where the admin port answers health checks and scrapes: `serve`'s own.
pub(crate) use crate::chaos::{HEALTH_PATH, METRICS_PATH};
/// How long a wait for one service's health may take.
pub(crate) const WAIT_FOR: Duration = Duration::from_secs(300);
/// Where `serve` and `drive` find the run's token.
pub use crate::chaos::fleet::token::TOKEN_ENV;

pub(crate) fn topology_path() -> String {
    format!("{CONFIG_DIR}/{TOPOLOGY_FILE}")
}

pub(crate) fn fault_path() -> String {
    format!("{CONFIG_DIR}/{FAULT_FILE}")
}

/// `retrylint serve …` for the service named `service` in the topology,
/// its admin port reached by the names `hosts`.
pub fn serve(service: &str, seed: u64, hosts: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "serve",
        &topology_path(),
        "--service",
        service,
        "--listen",
        &format!("0.0.0.0:{HTTP_PORT}"),
        "--admin",
        &format!("0.0.0.0:{ADMIN_PORT}"),
        "--resolve",
        "dns",
        "--peer-port",
        &HTTP_PORT.to_string(),
        "--fault",
        &fault_path(),
        "--seed",
        &seed.to_string(),
    ]
    .map(str::to_owned)
    .to_vec();
    for h in hosts {
        args.extend(["--allow-host".into(), h.clone()]);
    }
    args
}

/// `retrylint drive …` against the entry's DNS name, collecting from every
/// service's, under `load` with the `--expect` gates `expect`.
pub fn drive(
    entry: &str,
    collect: &[String],
    load: &LoadSettings,
    expect: &[String],
) -> Vec<String> {
    let mut args: Vec<String> = [
        "drive",
        &topology_path(),
        "--entry",
        &format!("http://{entry}:{HTTP_PORT}"),
        "--fault",
        &fault_path(),
    ]
    .map(str::to_owned)
    .to_vec();
    match load.arrival {
        Arrival::Rate(r) => args.extend(["--rate".into(), format!("{r}")]),
        Arrival::Clients(n) => args.extend(["--clients".into(), n.to_string()]),
    }
    if let Some(m) = load.requests {
        args.extend(["--requests".into(), m.to_string()]);
    }
    if let Some(d) = load.duration {
        args.extend(["--duration".into(), duration(d)]);
    }
    args.extend(["--seed".into(), load.seed.to_string()]);
    for gate in expect {
        args.extend(["--expect".into(), gate.clone()]);
    }
    for name in collect {
        args.extend(["--collect".into(), admin_url(name)]);
    }
    args.extend(["--format".into(), "json".into()]);
    args
}

/// The admin base URL of the service whose DNS name is `name`.
pub(crate) fn admin_url(name: &str) -> String {
    format!("http://{name}:{ADMIN_PORT}")
}

/// Asks `url` once; exit 0 when it answers 2xx: a health check.
pub(crate) fn health_check(url: &str) -> Vec<String> {
    [
        "probe-client",
        "--policy",
        "{ max_attempts: 1 }",
        "--timeout",
        "2s",
        url,
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Asks `url` every second until it answers 2xx, for at most [`WAIT_FOR`]:
/// waiting for a service before the load starts.
pub(crate) fn wait_for(url: &str) -> Vec<String> {
    [
        "probe-client",
        "--policy",
        "{ max_attempts: unlimited, backoff: { kind: constant, base: 1s } }",
        "--timeout",
        "1s",
        "--horizon",
        &duration(WAIT_FOR),
        url,
    ]
    .map(str::to_owned)
    .to_vec()
}

/// A duration as the schema writes one, exactly: `5s`, `1500ms`, `250us`.
pub fn duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_back_exactly() {
        for d in [
            Duration::from_secs(5),
            Duration::from_millis(1500),
            Duration::from_micros(250),
            Duration::from_nanos(7),
        ] {
            assert_eq!(crate::input::duration::parse(&duration(d)), Ok(d));
        }
        assert_eq!(duration(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn drive_passes_the_load_and_collects_from_everyone() {
        let load = LoadSettings::new(
            None,
            Some(8),
            Some(100),
            Some(Duration::from_secs(10)),
            Some(7),
        )
        .unwrap();
        let args = drive(
            "web",
            &["web".into(), "db".into()],
            &load,
            &["success >= 0.99".into()],
        );
        assert_eq!(
            args.join(" "),
            "drive /etc/retrylint/topology.yaml --entry http://web:8080 --fault /etc/retrylint/fault.yaml --clients 8 --requests 100 --duration 10s --seed 7 --expect success >= 0.99 --collect http://web:9090 --collect http://db:9090 --format json"
        );
        let load = LoadSettings::new(None, None, None, None, None).unwrap();
        let args = drive("web", &[], &load, &[]).join(" ");
        assert!(args.contains("--rate 20 --seed 42 --format json"), "{args}");
    }

    #[test]
    fn serve_names_the_service_as_the_topology_does() {
        assert_eq!(
            serve("Payments_API", 42, &["payments-api".into()]).join(" "),
            "serve /etc/retrylint/topology.yaml --service Payments_API --listen 0.0.0.0:8080 --admin 0.0.0.0:9090 --resolve dns --peer-port 8080 --fault /etc/retrylint/fault.yaml --seed 42 --allow-host payments-api"
        );
    }
}
