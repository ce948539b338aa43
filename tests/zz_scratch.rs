use std::time::Duration;
use retrylint::{faults, sim, run::LoadSettings, topology};
#[test]
fn scratch() {
    let load_t = |text: &str| topology::load_str(text, "t.yaml", "t", &topology::Presets::embedded()).unwrap();
    let sc = faults::load("total-outage").unwrap();
    let load = LoadSettings::new(Some(100.0), None, None, Some(Duration::from_secs(60)), Some(5)).unwrap();
    let t = load_t("version: 1\nentry: api\nservices:\n  api:\n    calls:\n      - to: db\n        timeout: 1s\n        retry: { max_attempts: 3, budget: { kind: ratio, ratio: 0.1, min_per_second: 0, window: 10s } }\n  db: {}\n");
    let r = sim::run(&t, &sc, &load, 3, None).unwrap();
    eprintln!("single: db {} / {}", r.service("db").unwrap().received, r.end_to_end.requests);
    let t = load_t("version: 1\nentry: web\nservices:\n  web: { calls: [ { to: frontend, timeout: 30s, retry: sre-book } ] }\n  frontend: { latency: 2ms, calls: [ { to: backend, timeout: 10s, retry: sre-book } ] }\n  backend: { latency: 2ms, calls: [ { to: db, timeout: 2s, retry: sre-book } ] }\n  db: {}\n");
    let r = sim::run(&t, &sc, &load, 3, None).unwrap();
    for s in &r.services { eprintln!("{} {} {:?}", s.service, s.received, s.received_quantiles); }
    print!("{}", retrylint::report::run_table::render(&r));
}
