//! The cost of `retrylint report` on 1,000 services: loading, every rule, the
//! layout, the simulation within the page's budget and the HTML, end to end —
//! beside `check` (load + every rule) on the same text, the baseline the
//! report's cost is stated against.
//!
//! Two topologies. The generated random DAG of the other benches (every
//! service calls ~3 later ones) has astronomically many call paths, so one
//! user request would make ~10²⁹⁴ attempts: the page's estimate refuses its
//! simulation at once, as `simulate` does, and the report costs the rest. A
//! 1,000-service tree (each service calls up to 3 children in parallel, 2
//! attempts with a 10 % budget) is simulated: ~1,000 attempts per user
//! request, the trials cut to the page's 3 million attempts.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use retrylint::formats::review::html;
use retrylint::lint::{self, CliLevels, Config};
use retrylint::review::{self, Settings};
use retrylint::run::LoadSettings;
use retrylint::topology::{self, Presets};

#[path = "../tests/common/generate.rs"]
mod generate;

fn check(text: &str, presets: &Presets) -> usize {
    let t = topology::load_str(text, "bench.yaml", "bench", presets).expect("valid");
    let config = Config::resolve(&t, &CliLevels::default()).expect("levels");
    lint::check(&t, &config).findings.len()
}

fn report(text: &str, presets: &Presets) -> usize {
    let t = topology::load_str(text, "bench.yaml", "bench", presets).expect("valid");
    let (scenario, note) = review::default_scenario(&t);
    let settings = Settings {
        scenario,
        scenario_note: Some(note),
        load: LoadSettings::default(),
        trials: review::DEFAULT_TRIALS,
        budget: review::BUDGET,
        threads: None,
        command: "retrylint report bench.yaml".into(),
    };
    let page = review::gather(&t, None, &settings, None).expect("gathered");
    html::render(&page).len()
}

/// A tree of `n` services: `s{i}` calls `s{3i+1}`..`s{3i+3}` in parallel.
fn tree(n: usize) -> String {
    let mut y = String::from("version: 1\nname: tree\nentry: s0\nservices:\n");
    for i in 0..n {
        y.push_str(&format!(
            "  s{i}:\n    latency: {{ p50: 2ms, p99: 20ms }}\n"
        ));
        let children: Vec<usize> = (3 * i + 1..=3 * i + 3).filter(|&c| c < n).collect();
        if !children.is_empty() {
            y.push_str("    calls:\n");
        }
        for c in children {
            y.push_str(&format!(
                "      - {{ to: s{c}, parallel: true, timeout: 300ms, retry: {{ max_attempts: 2, backoff: {{ kind: exponential, base: 10ms, cap: 100ms, jitter: full }}, budget: {{ kind: ratio, ratio: 0.1, min_per_second: 10 }} }} }}\n"
            ));
        }
    }
    y
}

fn bench(c: &mut Criterion) {
    let presets = Presets::embedded();
    let mut group = c.benchmark_group("report");
    group.sample_size(10);
    for (name, text) in [
        ("generated-1000", generate::random_dag(1_000, 3, 7)),
        ("tree-1000", tree(1_000)),
    ] {
        let bytes = report(&text, &presets);
        eprintln!("report of {name}: {bytes} bytes of HTML");
        group.bench_function(format!("check/{name}"), |b| {
            b.iter(|| check(black_box(&text), &presets))
        });
        group.bench_function(format!("report-html/{name}"), |b| {
            b.iter(|| report(black_box(&text), &presets))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
