//! The cost of `retrylint report` on the 1,000-service generated topology:
//! loading, every rule, the layout, the simulation within the page's budget
//! and the HTML, end to end — beside `check` (load + every rule) on the same
//! text, the baseline the report's cost is stated against.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use retrylint::faults;
use retrylint::lint::{self, CliLevels, Config};
use retrylint::report::html;
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

fn bench(c: &mut Criterion) {
    let presets = Presets::embedded();
    let text = generate::random_dag(1_000, 3, 7);
    let bytes = report(&text, &presets);
    eprintln!("report of 1,000 services: {bytes} bytes of HTML");
    let mut group = c.benchmark_group("report");
    group.sample_size(10);
    group.bench_function("check/1000", |b| {
        b.iter(|| check(black_box(&text), &presets))
    });
    group.bench_function("report-html/1000", |b| {
        b.iter(|| report(black_box(&text), &presets))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
