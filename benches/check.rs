//! The cost of `check`: loading (parse, schema, graph) and analysis with every
//! rule, on generated random DAGs of 1,000 and 10,000 services (~3 calls each)
//! and on a ladder of 64 diamonds (2⁶⁴ paths). Parsing alone is measured beside
//! it as the baseline the rest is compared with. `fix-doc` is what findings'
//! fixes add to `check` (the file read again into a located tree, once, when
//! some finding proposes a fix), and `fix-plan` choosing the edits.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

use retrylint::lint::{self, CliLevels, Config};
use retrylint::topology::{self, Presets};

#[path = "../tests/common/generate.rs"]
mod generate;

fn ladder(n: usize) -> String {
    let mut y = String::from("version: 1\nentry: d0\nservices:\n");
    for i in 0..n {
        let j = i + 1;
        y.push_str(&format!(
            "  d{i}: {{ calls: [ {{ to: l{i}, timeout: 1s, retry: {{ max_attempts: 2 }} }}, {{ to: r{i}, timeout: 1s }} ] }}\n  l{i}: {{ calls: [ {{ to: d{j}, timeout: 1s }} ] }}\n  r{i}: {{ calls: [ {{ to: d{j}, timeout: 1s }} ] }}\n"
        ));
    }
    y.push_str(&format!("  d{n}: {{}}\n"));
    y
}

fn check_text(text: &str, presets: &Presets) -> usize {
    let t = topology::load_str(text, "bench.yaml", "bench", presets).expect("valid");
    let config = Config::resolve(&t, &CliLevels::default()).expect("levels");
    lint::check(&t, &config).findings.len()
}

fn bench(c: &mut Criterion) {
    let presets = Presets::embedded();
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    for n in [1_000usize, 10_000] {
        let text = generate::random_dag(n, 3, 7);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("yaml-parse-only", n), &text, |b, t| {
            b.iter(|| retrylint::source::yaml::parse(black_box(t)).expect("yaml"))
        });
        group.bench_with_input(BenchmarkId::new("load+check", n), &text, |b, t| {
            b.iter(|| check_text(black_box(t), &presets))
        });
        group.bench_with_input(BenchmarkId::new("fix-doc", n), &text, |b, t| {
            b.iter(|| retrylint::fix::Doc::new(black_box(t), "bench.yaml").is_some())
        });
        let t = topology::load_str(&text, "bench.yaml", "bench", &presets).expect("valid");
        let config = Config::resolve(&t, &CliLevels::default()).expect("levels");
        let findings = lint::check(&t, &config).findings;
        group.bench_with_input(BenchmarkId::new("fix-plan", n), &findings, |b, f| {
            b.iter(|| retrylint::fix::plan(black_box(f)).edits.len())
        });
        group.bench_with_input(BenchmarkId::new("analysis-only", n), &t, |b, t| {
            b.iter(|| lint::Analysis::new(black_box(t)))
        });
    }
    let text = ladder(64);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("load+check/diamond-ladder-64", |b| {
        b.iter(|| check_text(black_box(&text), &presets))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
