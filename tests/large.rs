//! Large topologies are ordinary input: 10,000 services (~6 MB) load and check.

use crate::common;
use crate::common::generate;

#[test]
fn ten_thousand_services_load_and_check() {
    let text = generate::random_dag(10_000, 3, 7);
    assert!(text.len() > 5_000_000, "{} bytes", text.len());
    let t = common::load(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.services.len(), 10_000);
    let calls = t.calls().count();
    assert!((25_000..=30_000).contains(&calls), "{calls} calls");
    let report = common::check(&t);
    assert_eq!(report.amplification.len(), 10_000);
    // The defaults anchor merged into every service arrived.
    assert_eq!(t.services[9_999].latency.p99.as_millis(), 20);
    assert!(report.amplification.iter().all(|a| a.reachable));
}

#[test]
fn rules_on_several_threads_find_what_one_thread_finds() {
    // 1,000 services, ~3,000 calls: `check` shares its rules among threads
    // here. Every finding, fix and figure is the same, in the same order.
    let t = common::load(&generate::random_dag(1_000, 3, 7)).unwrap_or_else(|e| panic!("{e}"));
    let config = retrylint::lint::Config::resolve(&t, &Default::default()).expect("levels");
    let one = retrylint::fix::check_on(&t, &config, 1);
    assert!(one.findings.len() > 5_000, "{}", one.findings.len());
    assert!(one.findings.iter().any(|f| f.fix.is_some()));
    for threads in [2, 3, 4, 64] {
        let many = retrylint::fix::check_on(&t, &config, threads);
        assert!(many.findings == one.findings, "{threads} threads");
        assert_eq!(many.amplification, one.amplification);
        assert_eq!(many.summary, one.summary);
    }
}

#[test]
fn the_first_bad_service_in_the_file_is_the_one_reported() {
    // 3,000 services are read in two halves side by side: an error in
    // either is found, and with one in each, the earlier one is reported.
    let text = generate::random_dag(3_000, 3, 7);
    let bad = |text: &str, service: usize| {
        let at = format!("  s{service}:\n    <<: *defaults\n");
        assert!(text.contains(&at), "s{service}");
        text.replacen(&at, &format!("{at}    capacity: lots\n"), 1)
    };
    let line_of = |text: &str, service: usize| {
        let at = text.find(&format!("  s{service}:\n")).expect("there");
        text[..at].lines().count() as u32 + 3
    };
    let late = bad(&text, 2_900);
    let both = bad(&late, 100);
    for (text, service) in [(&late, 2_900), (&both, 100)] {
        let e = common::load(text).expect_err("a capacity that is not a number");
        let pos = e.pos.expect("located");
        assert_eq!(pos.line, line_of(text, service), "{e}");
        assert!(e.message.contains("capacity"), "{e}");
    }
}

#[test]
fn calls_to_unknown_services_are_reported_first_in_the_file_after_other_errors() {
    // Targets are resolved in each half as it is read: the first bad call in
    // the file is reported, and only when nothing else is wrong.
    let text = generate::random_dag(3_000, 3, 7);
    // `text` with the first call of `service` sent to `to` instead, and the
    // line of that call.
    let retarget = |text: &str, service: usize, to: &str| {
        let at = text.find(&format!("  s{service}:\n")).expect("there");
        let call = at + text[at..].find("      - to: ").expect("a call") + "      - to: ".len();
        let end = call + text[call..].find('\n').expect("line end");
        let line = text[..call].lines().count() as u32;
        (format!("{}{to}{}", &text[..call], &text[end..]), line)
    };
    let (late, late_line) = retarget(&text, 2_900, "nope");
    let (both, early_line) = retarget(&late, 100, "s100");
    for (text, line, message) in [
        (&late, late_line, "`s2900` calls unknown service `nope`"),
        (&both, early_line, "`s100` calls itself"),
    ] {
        let e = common::load(text).expect_err("a bad call");
        assert_eq!(e.pos.expect("located").line, line, "{e}");
        assert!(e.message.contains(message), "{e}");
    }
    // A schema error later in the file still comes first.
    let at = both.find("  s2950:\n    <<: *defaults\n").expect("there") + "  s2950:\n".len();
    let worse = format!("{}    capacity: lots\n{}", &both[..at], &both[at..]);
    let e = common::load(&worse).expect_err("a capacity that is not a number");
    assert!(e.message.contains("capacity"), "{e}");
}

#[test]
fn a_large_file_read_in_two_halves_reports_yaml_errors_where_they_are() {
    // Over 1 MB, `services:` is read in two halves side by side. A service
    // named in both halves, or a syntax error in the second, is reported at
    // its line, as one read of the whole file reports it.
    let text = generate::random_dag(2_500, 3, 7);
    assert!(text.len() > 1 << 20, "{} bytes", text.len());
    let line_of = |text: &str, at: &str| {
        let i = text.find(at).unwrap_or_else(|| panic!("{at:?}"));
        text[..i].lines().count() as u32 + 1
    };
    let late = "  s2400:\n";
    let twice = text.replacen(late, &format!("{late}    capacity: 8\n  s3:\n"), 1);
    // (`expect_err` would print the whole topology.)
    let Err(e) = common::load(&twice) else {
        panic!("s3 twice was read without an error")
    };
    assert!(e.message.contains("duplicate"), "{e}");
    let second = twice.rfind("  s3:\n").expect("twice");
    assert!(second > twice.find("  s3:\n").expect("once"));
    assert_eq!(
        e.pos.expect("located").line,
        twice[..second].lines().count() as u32 + 1
    );
    let unclosed = text.replacen(late, &format!("{late}    capacity: [8\n"), 1);
    let Err(e) = common::load(&unclosed) else {
        panic!("an unclosed bracket was read without an error")
    };
    let line = e.pos.expect("located").line;
    let at = line_of(&unclosed, "    capacity: [8");
    assert!(
        (at..=at + 1).contains(&line),
        "{e} (the bracket is on line {at})"
    );
}

#[test]
fn a_chain_of_ten_thousand_does_not_overflow_the_stack() {
    let mut y = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..10_000 {
        y.push_str(&format!(
            "  s{i}: {{ calls: [ {{ to: s{}, timeout: 1s }} ] }}\n",
            i + 1
        ));
    }
    y.push_str("  s10000: {}\n");
    let t = common::load(&y).unwrap();
    let r = common::check(&t);
    assert_eq!(common::amplification(&r, "s10000"), 1.0);
    // And a cycle at the end of it is found and named.
    let y = y.replace("  s10000: {}\n", "  s10000: { calls: [ { to: s9999 } ] }\n");
    let e = common::load(&y).unwrap_err();
    assert!(
        e.message.ends_with("s9999 → s10000 → s9999"),
        "{}",
        e.message
    );
}

#[test]
fn a_hundred_thousand_fault_phases_strike_on_time_in_both_engines() {
    use std::fmt::Write as _;
    use std::time::Duration;

    // db answers 503 in the first 50 ms of every 100 ms, for 10,000 s:
    // 100,000 phases. Ten user requests 100 ms apart each arrive at the
    // start of one (no retries, no work before the call).
    let mut fault = String::from("name: comb\ntarget: db\nphases:\n");
    for k in 0..100_000u64 {
        let _ = writeln!(
            fault,
            "  - {{ after: {}ms, for: 50ms, inject: {{ kind: status, status: 503 }} }}",
            k * 100
        );
    }
    let scenario = retrylint::faults::load_str(&fault, "comb.yaml").unwrap();
    let t = common::load(
        "version: 1\nentry: web\nservices:\n  web: { latency: 0s, calls: [ { to: db, timeout: 1s } ] }\n  db: { latency: 0s }\n",
    )
    .unwrap();
    let load = retrylint::run::LoadSettings::new(
        Some(10.0),
        None,
        None,
        Some(Duration::from_secs(1)),
        Some(1),
    )
    .unwrap();
    let sim = retrylint::sim::run(&t, &scenario, &load, 1, None).unwrap();
    let db = sim.service("db").unwrap();
    assert_eq!((db.received, db.statuses.get("503")), (10, Some(&10)));
    // On real servers each request lands within the first milliseconds of
    // its phase; only a stall of more than 50 ms could let one through.
    let options = retrylint::chaos::RunOptions {
        ctrl_c: false,
        ..Default::default()
    };
    let chaos = retrylint::chaos::run_with(&t, &scenario, &load, &options).unwrap();
    let db = chaos.service("db").unwrap();
    assert_eq!(db.received, 10);
    assert!(
        db.statuses.get("503").copied().unwrap_or(0) >= 8,
        "{:?}",
        db.statuses
    );
}

#[test]
fn a_call_through_two_thousand_via_layers_names_six_and_counts_the_rest() {
    // Each retrying layer's RL002 finding named every layer above it: 2,000
    // findings naming up to 1,999 layers each, 130 MB of text.
    let mut text = String::from(
        "version: 1\nentry: app\nservices:\n  app:\n    calls:\n      - to: api\n        retry: { max_attempts: 3 }\n        via:\n",
    );
    for i in 0..2_000 {
        text += &format!("          - {{ name: mesh{i}, retry: {{ max_attempts: 2 }} }}\n");
    }
    text += "  api: {}\n";
    let t = common::load(&text).unwrap_or_else(|e| panic!("{e}"));
    let report = common::check(&t);
    let rl002: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.code == "RL002")
        .collect();
    assert_eq!(rl002.len(), 2_000);
    let last = rl002.last().unwrap();
    assert_eq!(
        last.message,
        "the mesh1999 layer of app → api retries (2 attempts) beneath 2,000 other retrying layers: the app layer of app → api, the mesh0 layer of app → api, the mesh1 layer of app → api, the mesh2 layer of app → api, the mesh3 layer of app → api, the mesh4 layer of app → api, 1,994 more layers"
    );
    assert!(
        last.help
            .ends_with("and the mesh4 layer of app → api and 1,994 more layers"),
        "{}",
        last.help
    );
    let bytes: usize = rl002.iter().map(|f| f.message.len() + f.help.len()).sum();
    // Each finding the size of a few layers: 2 MB, not 130.
    assert!(bytes < 2_000 * 1_000, "{bytes} bytes");
}
