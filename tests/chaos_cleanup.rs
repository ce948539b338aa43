//! Nothing outlives a run: after it ends, and after it is stopped midway,
//! every port it listened on refuses connections.

use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use crate::common::sockets;

use retrylint::chaos::{self, ChaosError, RunOptions, StopHandle};
use retrylint::faults;
use retrylint::run::{LoadSettings, RunReport};
use retrylint::topology::{self, Topology};

fn topo() -> Topology {
    topology::load_str(
        "version: 1\nentry: web\nservices:\n  web:\n    calls:\n      - to: db\n        timeout: 300ms\n        retry: { max_attempts: 2 }\n        via: [ { name: mesh, timeout: 200ms, retry: { max_attempts: 2 } } ]\n  db: {}\n",
        "t.yaml",
        "t",
        &Default::default(),
    )
    .expect("valid topology")
}

fn assert_all_closed(r: &RunReport) {
    assert_eq!(r.listeners.len(), 3, "web, db and the mesh sidecar");
    for l in &r.listeners {
        assert!(
            l.addr.starts_with("127.0.0.1:"),
            "{} bound {}",
            l.name,
            l.addr
        );
        let addr = l.addr.parse().expect("socket address");
        let refused = TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err();
        assert!(refused, "{} still listens on {}", l.name, l.addr);
    }
}

#[test]
fn no_listener_is_left_after_a_run() {
    let load = LoadSettings::new(
        Some(50.0),
        None,
        None,
        Some(Duration::from_millis(500)),
        Some(1),
    )
    .expect("valid load");
    let options = RunOptions {
        ctrl_c: false,
        ..RunOptions::default()
    };
    let s = faults::load("brownout").expect("shipped");
    let r = chaos::run_with(&topo(), &s, &load, &options).expect("run completes");
    assert_eq!(r.end_to_end.requests, 25);
    assert_all_closed(&r);
}

#[test]
fn no_listener_is_left_after_a_run_stopped_midway() {
    // A blackhole with long phases: without the stop this run lasts 30 s.
    let s = faults::load_str(
        "target: db\nphases: [ { inject: { kind: hang } } ]\n",
        "hang.yaml",
    )
    .expect("valid fault");
    let load = LoadSettings::new(None, Some(4), None, Some(Duration::from_secs(30)), Some(1))
        .expect("valid load");
    let stop = StopHandle::new();
    let (ready, listening) = std::sync::mpsc::channel();
    let options = RunOptions {
        ctrl_c: false,
        stop: Some(stop.clone()),
        ready: Some(ready),
        ..RunOptions::default()
    };
    // Stop once the servers are up and the storm has reached db: its
    // sidecar holds connections to it (the requests hang there).
    let stopper = thread::spawn(move || {
        let listeners = listening
            .recv_timeout(Duration::from_secs(10))
            .expect("the run reports its servers");
        let db = listeners
            .iter()
            .find(|l| l.name == "db")
            .expect("db listens");
        let port: u16 = db.addr.rsplit(':').next().unwrap().parse().unwrap();
        sockets::wait_until(Duration::from_secs(10), "a connection to db", || {
            sockets::established_to(port) > 0
        });
        stop.cancel();
        Instant::now()
    });
    let result = chaos::run_with(&topo(), &s, &load, &options);
    let returned = Instant::now();
    let stopped = stopper.join().expect("stopper thread");
    let took = returned.saturating_duration_since(stopped);
    let Err(ChaosError::Interrupted(report)) = result else {
        panic!("expected an interrupted run, got {result:?}");
    };
    assert!(took < Duration::from_secs(3), "stopping took {took:?}");
    assert!(report.interrupted);
    assert!(report.elapsed_ms < 30_000.0, "stopped before its horizon");
    assert_all_closed(&report);
}
