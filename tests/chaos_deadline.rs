//! Deadline propagation over real HTTP: a service with
//! `deadline_propagation: true` passes the remaining time downstream, and a
//! callee that honours it does not start an attempt it cannot finish.

use std::time::Duration;

use retrylint::chaos::{self, RunOptions};
use retrylint::faults;
use retrylint::run::{LoadSettings, RunReport};
use retrylint::topology;

fn run(propagation: bool) -> RunReport {
    let text = format!(
        "version: 1
entry: web
services:
  web:
    deadline_propagation: {propagation}
    calls: [ {{ to: api, timeout: 300ms }} ]
  api:
    deadline_propagation: {propagation}
    calls: [ {{ to: db, timeout: 1s, retry: {{ max_attempts: 3 }} }} ]
  db: {{}}
"
    );
    let t = topology::load_str(&text, "t.yaml", "t", &Default::default()).expect("valid topology");
    let s = faults::load_str(
        "target: db\nphases: [ { inject: { kind: hang } } ]\n",
        "hang.yaml",
    )
    .expect("valid fault");
    let load = LoadSettings::new(
        None,
        Some(1),
        None,
        Some(Duration::from_millis(2500)),
        Some(5),
    )
    .expect("valid load");
    let options = RunOptions {
        ctrl_c: false,
        grace: Duration::from_secs(1),
        ..RunOptions::default()
    };
    chaos::run_with(&t, &s, &load, &options).expect("run completes")
}

#[test]
fn a_propagated_deadline_stops_work_nobody_waits_for() {
    let r = run(true);
    let users = r.end_to_end.requests;
    assert!(users >= 5, "one request per ~300 ms for 2.5 s: {users}");
    assert_eq!(r.end_to_end.outcomes.get("504"), Some(&users));
    let db = r.service("db").expect("db row");
    // api gives up with web's 300 ms: one attempt per request, no retry. The
    // last request may reach api only at the horizon, too late to call db.
    assert!(
        (users - 1..=users).contains(&db.received),
        "db received {} for {users} requests",
        db.received
    );
    let api_layer = &r.service("api").expect("api row").calls[0].layers[0];
    // The last request's stop may race the end of the run.
    let stopped = api_layer
        .stops
        .get("deadline_exceeded")
        .copied()
        .unwrap_or(0);
    assert!(stopped + 1 >= users, "{:?}", api_layer.stops);
    assert_eq!(api_layer.retries, 0, "{:?}", api_layer.stops);

    // Without propagation api keeps retrying for 3 s after web gave up.
    let r = run(false);
    let db = r.service("db").expect("db row");
    assert!(
        db.received > r.end_to_end.requests,
        "{} attempts at db for {} requests",
        db.received,
        r.end_to_end.requests
    );
}
