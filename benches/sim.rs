//! The simulator's speed (issue 4, "Speed"):
//!
//! 1. `overload_six_clients`: the overload model (docs/chaos.md) — six clients, one
//!    request each, 100 ms of service time, capacity 4, a 2 s horizon — with
//!    full jitter (5 attempts) and with immediate retries (20 waves, 120
//!    attempts), in trials per second on 1 and 2 threads;
//! 2. `tree_100_services`: a 100-service tree (fan-out 3, parallel calls,
//!    timeouts, jittered retries, ratio budgets, latency spreads) under a 20 %
//!    brownout at the leaves, 100 user requests per trial;
//! 3. a minimal reference implementation of the same overload model written
//!    directly here (one heap of arrivals and departures, no topology, no
//!    reports), measured in the same run; the simulator's cost per trial is
//!    printed as a ratio of it. Both draw their waits from the policy engine's
//!    `Backoff::wait` with the same seeds and process simultaneous events in
//!    the same order, so they must count the same attempts — checked before
//!    timing.
//!
//! Keep it short: `cargo bench --bench sim -- --warm-up-time 1 --measurement-time 3`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use retrylint::faults::{self, Scenario};
use retrylint::policy::{Backoff, BackoffKind, Jitter, seeded_rng};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim;
use retrylint::topology::{self, Topology};

const SEED: u64 = 42;

const FULL_JITTER: &str =
    "{ max_attempts: 5, backoff: { kind: exponential, base: 100ms, cap: 2s, jitter: full } }";
const IMMEDIATE: &str = "{ max_attempts: 50 }";

fn six_clients(retry: &str) -> Topology {
    let text = format!(
        "version: 1\nentry: api\nclient:\n  timeout: 1s\n  retry: {retry}\nservices:\n  api: {{ latency: 100ms }}\n"
    );
    topology::load_str(&text, "six.yaml", "six", &Default::default()).expect("topology")
}

fn overload() -> Scenario {
    faults::load_str(
        "name: overload-4\ntarget: entry\nphases: [ { inject: { kind: overload, capacity: 4 } } ]\n",
        "overload-4.yaml",
    )
    .expect("fault")
}

fn six_load() -> LoadSettings {
    LoadSettings::new(
        None,
        Some(6),
        Some(6),
        Some(Duration::from_secs(2)),
        Some(SEED),
    )
    .expect("load")
}

/// 100 services in a tree: s_i calls s_{3i+1}, s_{3i+2}, s_{3i+3} in parallel.
fn tree(n: usize) -> Topology {
    let mut y = String::from("version: 1\nname: tree100\nentry: s0\nservices:\n");
    for i in 0..n {
        let children: Vec<usize> = (3 * i + 1..=3 * i + 3).filter(|&c| c < n).collect();
        if children.is_empty() {
            writeln!(
                y,
                "  s{i}: {{ latency: {{ p50: 2ms, p99: 20ms }}, capacity: 16 }}"
            )
            .unwrap();
            continue;
        }
        writeln!(
            y,
            "  s{i}:\n    latency: {{ p50: 1ms, p99: 5ms }}\n    calls:"
        )
        .unwrap();
        for c in children {
            writeln!(
                y,
                "      - {{ to: s{c}, parallel: true, timeout: 300ms, retry: {{ max_attempts: 3, backoff: {{ kind: exponential, base: 10ms, cap: 100ms, jitter: full }}, budget: {{ kind: ratio, ratio: 0.1, min_per_second: 10 }} }} }}"
            )
            .unwrap();
        }
    }
    topology::load_str(&y, "tree100.yaml", "tree100", &Default::default()).expect("topology")
}

fn tree_load() -> LoadSettings {
    LoadSettings::new(
        Some(50.0),
        None,
        None,
        Some(Duration::from_secs(2)),
        Some(SEED),
    )
    .expect("load")
}

/// Mean attempts per trial over all services.
fn attempts_per_trial(r: &RunReport) -> f64 {
    r.services
        .iter()
        .map(|s| s.received_quantiles.map_or(s.received as f64, |q| q.mean))
        .sum()
}

/// The reference: the overload model for six clients alone. Returns
/// (attempts, successes) of one trial.
fn reference_trial(seed: u64, backoff: &Backoff, max_attempts: u32) -> (u64, u64) {
    const CLIENTS: usize = 6;
    const CAPACITY: u64 = 4;
    const SERVICE: u64 = 100_000_000;
    const HORIZON: u64 = 2_000_000_000;
    // (time, phase: 0 = departure before 1 = arrival, sequence, client)
    let mut heap: BinaryHeap<Reverse<(u64, u8, u64, usize)>> = BinaryHeap::with_capacity(16);
    let mut rng = seeded_rng(seed);
    let mut seq = 0;
    let mut ticket = [0u64; CLIENTS];
    let mut tries = [0u32; CLIENTS];
    let mut prev = [backoff.initial_prev(); CLIENTS];
    let (mut in_flight, mut overflows) = (0u64, 0u64);
    let (mut attempts, mut successes) = (0, 0);
    for c in 0..CLIENTS {
        heap.push(Reverse((0, 1, seq, c)));
        seq += 1;
    }
    while let Some(Reverse((t, phase, _, c))) = heap.pop() {
        if phase == 1 {
            attempts += 1;
            in_flight += 1;
            ticket[c] = overflows;
            if in_flight > CAPACITY {
                overflows += 1;
            }
            heap.push(Reverse((t + SERVICE, 0, seq, c)));
            seq += 1;
            continue;
        }
        in_flight -= 1;
        if overflows == ticket[c] {
            successes += 1;
            continue;
        }
        tries[c] += 1;
        if tries[c] >= max_attempts {
            continue;
        }
        let wait = backoff.wait(tries[c], prev[c], &mut rng);
        prev[c] = wait;
        let at = t + wait.as_nanos() as u64;
        if at < HORIZON {
            heap.push(Reverse((at, 1, seq, c)));
            seq += 1;
        }
    }
    (attempts, successes)
}

fn full_jitter_backoff() -> Backoff {
    Backoff {
        kind: BackoffKind::Exponential,
        base: Duration::from_millis(100),
        multiplier: 2.0,
        cap: Some(Duration::from_secs(2)),
        jitter: Jitter::Full,
    }
}

fn reference_run(trials: u32, backoff: &Backoff, max_attempts: u32) -> (u64, u64) {
    (0..trials).fold((0, 0), |(a, s), i| {
        let (ai, si) = reference_trial(SEED + u64::from(i), backoff, max_attempts);
        (a + ai, s + si)
    })
}

/// Seconds per call of `f`, best of `rounds`.
fn time<T>(rounds: u32, mut f: impl FnMut() -> T) -> f64 {
    (0..rounds)
        .map(|_| {
            let began = Instant::now();
            black_box(f());
            began.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let scenario = overload();
    let load = six_load();
    let jitter = six_clients(FULL_JITTER);
    let immediate = six_clients(IMMEDIATE);
    let backoff = full_jitter_backoff();

    // The reference and the simulator count the same attempts.
    const CHECK: u32 = 2000;
    let r = sim::run(&jitter, &scenario, &load, CHECK, Some(2)).expect("sim");
    let (ref_attempts, ref_ok) = reference_run(CHECK, &backoff, 5);
    let sim_attempts = r.services[0].received_quantiles.map_or(0.0, |q| q.mean) * f64::from(CHECK);
    assert_eq!(
        sim_attempts.round() as u64,
        ref_attempts,
        "same model, same draws"
    );
    println!(
        "check: {CHECK} trials with full jitter: simulator {sim_attempts:.0} attempts, reference {ref_attempts} attempts ({ref_ok} of {} user requests succeeded)",
        6 * CHECK
    );

    const TRIALS: u32 = 1000;
    let mut g = c.benchmark_group("overload_six_clients");
    g.throughput(Throughput::Elements(u64::from(TRIALS)));
    for (name, t) in [("full_jitter", &jitter), ("immediate", &immediate)] {
        for threads in [1, 2] {
            g.bench_function(format!("{name}/{threads}_thread"), |b| {
                b.iter(|| sim::run(t, &scenario, &load, TRIALS, Some(threads)).expect("sim"))
            });
        }
    }
    g.bench_function("reference_full_jitter/1_thread", |b| {
        b.iter(|| reference_run(TRIALS, &backoff, 5))
    });
    g.finish();

    let big = tree(100);
    let brownout = faults::load("brownout").expect("fault");
    let tree_load = tree_load();
    const TREE_TRIALS: u32 = 10;
    let mut g = c.benchmark_group("tree_100_services");
    g.throughput(Throughput::Elements(u64::from(TREE_TRIALS)));
    for threads in [1, 2] {
        g.bench_function(format!("brownout/{threads}_thread"), |b| {
            b.iter(|| {
                sim::run(&big, &brownout, &tree_load, TREE_TRIALS, Some(threads)).expect("sim")
            })
        });
    }
    g.finish();

    // The figures the issue asks for, in plain words.
    println!();
    for (name, t) in [("full jitter", &jitter), ("immediate retries", &immediate)] {
        let r = sim::run(t, &scenario, &load, 20_000, Some(2)).expect("sim");
        let per_trial = attempts_per_trial(&r);
        let secs2 = time(3, || {
            sim::run(t, &scenario, &load, 20_000, Some(2)).expect("sim")
        });
        let secs1 = time(3, || {
            sim::run(t, &scenario, &load, 20_000, Some(1)).expect("sim")
        });
        println!(
            "six-client overload, {name}: 20,000 trials in {:.0} ms on 2 threads ({:.0} trials/s, {:.1} M attempts/s); {:.2} µs per trial on 1 thread ({per_trial:.1} attempts per trial)",
            secs2 * 1e3,
            20_000.0 / secs2,
            20_000.0 * per_trial / secs2 / 1e6,
            secs1 / 20_000.0 * 1e6,
        );
    }
    let sim1 = time(3, || {
        sim::run(&jitter, &scenario, &load, 20_000, Some(1)).expect("sim")
    });
    let ref1 = time(3, || reference_run(20_000, &backoff, 5));
    println!(
        "reference overload model (full jitter): {:.2} µs per trial on 1 thread; the simulator takes {:.1}× the reference's time per trial (topology, fault plan, policy engine, reports included)",
        ref1 / 20_000.0 * 1e6,
        sim1 / ref1
    );
    let r = sim::run(&big, &brownout, &tree_load, 20, Some(2)).expect("sim");
    let per_trial = attempts_per_trial(&r);
    let secs2 = time(3, || {
        sim::run(&big, &brownout, &tree_load, 20, Some(2)).expect("sim")
    });
    println!(
        "100-service tree under a brownout, 100 user requests per trial: {:.1} trials/s on 2 threads, {per_trial:.0} attempts per trial, {:.1} M attempts/s",
        20.0 / secs2,
        20.0 * per_trial / secs2 / 1e6,
    );

    // Servers that queue: 60 s at 2,500 user requests a second into
    // examples/surge.yaml (db serves 1,000/s: collapsed, three attempts per
    // call), one trial; beside it, the same trial with db as a plain
    // service (no queue), to show what the queue itself costs.
    let surge_text = std::fs::read_to_string("examples/surge.yaml").expect("example");
    let queueing = topology::load_str(&surge_text, "surge.yaml", "surge", &Default::default())
        .expect("topology");
    let plain_text = surge_text.replace("    capacity: { workers: 10, queue: 500 }\n", "");
    let plain = topology::load_str(&plain_text, "plain.yaml", "plain", &Default::default())
        .expect("topology");
    let surge_load = LoadSettings::new(
        Some(2500.0),
        None,
        None,
        Some(Duration::from_secs(60)),
        Some(1),
    )
    .expect("load");
    let none = Scenario::none();
    let r = sim::run(&queueing, &none, &surge_load, 1, Some(1)).expect("sim");
    let attempts: u64 = r.services.iter().map(|s| s.received).sum();
    let queued = time(3, || {
        sim::run(&queueing, &none, &surge_load, 1, Some(1)).expect("sim")
    });
    let unqueued = time(3, || {
        sim::run(&plain, &none, &surge_load, 1, Some(1)).expect("sim")
    });
    println!(
        "queueing server, 60 s at 2,500 req/s: {attempts} attempts in {:.0} ms ({:.1} M attempts/s); the same load without the queue {:.0} ms",
        queued * 1e3,
        attempts as f64 / queued / 1e6,
        unqueued * 1e3,
    );
    c.final_summary();
}
