//! The cost of `check`: loading (parse, schema, graph) and analysis with every
//! rule, on generated random DAGs of 1,000 and 10,000 services (~3 calls each)
//! and on a ladder of 64 diamonds (2⁶⁴ paths). Parsing alone is measured beside
//! it as the baseline the rest is compared with, and again on the same text
//! with an anchor that keeps it from being read in two halves (`uncut`).
//! `load+check` is what the table, GitHub and markdown formats pay;
//! `load+check+fixes` adds resolving every finding's fix on the loader's
//! located tree (JSON, SARIF). `fix-doc` is reading a text into a fix document
//! from scratch, `fix-plan` choosing the edits, and `fix-diff` the unified
//! diff of `--fix --diff` (beside similar's default Myers diff, on 1,000
//! services). `process` runs the built `retrylint check` on the 10,000-service
//! file, whole (start, read, load, check, print to /dev/null, exit), as a user
//! or CI pays it.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

use retrylint::lint::{self, CliLevels, Config};
use retrylint::topology::{self, Presets};

// The binary's allocator, so that the figures in-process are the ones it pays.
#[global_allocator]
static ALLOCATOR: retrylint_alloc::NamedLimit = retrylint_alloc::NamedLimit;

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

/// Load and check `text`; with `fixes`, every finding's fix resolved as the
/// JSON and SARIF formats ask (the table, GitHub and markdown do not).
fn check_text(text: &str, presets: &Presets, fixes: bool) -> usize {
    let t = topology::load_str(text, "bench.yaml", "bench", presets).expect("valid");
    let mut config = Config::resolve(&t, &CliLevels::default()).expect("levels");
    config.resolve_fixes = fixes;
    lint::check(&t, &config).findings.len()
}

/// `n` VirtualServices, one file each, and an OTLP/JSON trace of about
/// `spans` spans over a random DAG of `n` services (a tree that reaches every
/// service, plus extra calls down the order), written under `dir`.
fn mesh_and_traces(dir: &std::path::Path, n: usize, spans: usize) -> Vec<std::path::PathBuf> {
    use rand::{RngExt, SeedableRng};
    type StdRng = retrylint::policy::Rng;
    let _ = std::fs::remove_dir_all(dir);
    let vs = dir.join("mesh");
    std::fs::create_dir_all(&vs).expect("dir");
    for i in 0..n {
        let text = format!(
            "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: s{i}\n  namespace: shop\nspec:\n  hosts: [s{i}]\n  http:\n  - match: [{{ method: {{ exact: POST }} }}]\n    route: [{{ destination: {{ host: s{i}.shop.svc.cluster.local }} }}]\n    retries: {{ attempts: 0 }}\n  - route:\n    - destination: {{ host: s{i}.shop.svc.cluster.local, subset: v1 }}\n    timeout: 2s\n    retries:\n      attempts: 2\n      perTryTimeout: 500ms\n      retryOn: gateway-error,connect-failure,refused-stream\n"
        );
        std::fs::write(vs.join(format!("s{i}.yaml")), text).expect("write");
    }
    let mut rng = StdRng::seed_from_u64(7);
    let edges = spans / 3;
    let mut out = String::from("{\"resourceSpans\":[");
    let mut by_service: Vec<Vec<String>> = vec![Vec::new(); n];
    for e in 0..edges {
        let to = if e + 1 < n {
            e + 1
        } else {
            rng.random_range(1..n)
        };
        let from = rng.random_range(0..to);
        let trace = format!("{e:032x}");
        let (root, client, server) = (
            format!("{:016x}", 3 * e),
            format!("{:016x}", 3 * e + 1),
            format!("{:016x}", 3 * e + 2),
        );
        let span = |id: &str, parent: &str, kind: u8, ms: u64| {
            format!(
                "{{\"traceId\":\"{trace}\",\"spanId\":\"{id}\",\"parentSpanId\":\"{parent}\",\"kind\":{kind},\"startTimeUnixNano\":\"1000000000\",\"endTimeUnixNano\":\"{}\",\"attributes\":[{{\"key\":\"http.request.method\",\"value\":{{\"stringValue\":\"GET\"}}}}]}}",
                1_000_000_000 + ms * 1_000_000
            )
        };
        by_service[from].push(span(&root, "", 2, 12));
        by_service[from].push(span(&client, &root, 3, 10));
        by_service[to].push(span(&server, &client, 2, 10));
    }
    for (i, spans) in by_service.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"resource\":{{\"attributes\":[{{\"key\":\"service.name\",\"value\":{{\"stringValue\":\"s{i}\"}}}}]}},\"scopeSpans\":[{{\"spans\":[{}]}}]}}",
            spans.join(",")
        ));
    }
    out.push_str("]}\n");
    let trace = dir.join("traces.json");
    std::fs::write(&trace, out).expect("write");
    vec![vs, trace]
}

fn check_from(from: &[std::path::PathBuf], presets: &Presets) -> usize {
    let m = topology::load_with_sources(None, from, Default::default(), presets).expect("valid");
    let config = Config::resolve(&m.topology, &CliLevels::default()).expect("levels");
    lint::check(&m.topology, &config).findings.len()
}

/// `retrylint check FILE --format FORMAT`, output to /dev/null.
fn run_check(file: &std::path::Path, format: &str) {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_retrylint"))
        .arg("check")
        .arg(file)
        .args(["--format", format])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run retrylint");
    // Findings: exit 1. Anything else means the run did not do the work.
    assert_eq!(status.code(), Some(1), "{status}");
}

fn bench(c: &mut Criterion) {
    let presets = Presets::embedded();
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    for n in [1_000usize, 10_000] {
        let text = generate::random_dag(n, 3, 7);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("yaml-parse-only", n), &text, |b, t| {
            b.iter(|| retrylint::input::yaml::parse(black_box(t)).expect("yaml"))
        });
        // The same file, but an anchor in its last service keeps `services:`
        // from being cut in two halves (from 1 MB on, a file is read in two).
        let uncut = format!("{text}    x-note: &note 1\n");
        group.bench_with_input(BenchmarkId::new("yaml-parse-uncut", n), &uncut, |b, t| {
            b.iter(|| retrylint::input::yaml::parse(black_box(t)).expect("yaml"))
        });
        group.bench_with_input(BenchmarkId::new("load+check", n), &text, |b, t| {
            b.iter(|| check_text(black_box(t), &presets, false))
        });
        group.bench_with_input(BenchmarkId::new("load+check+fixes", n), &text, |b, t| {
            b.iter(|| check_text(black_box(t), &presets, true))
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
        // `--fix --diff`: the unified diff of the file and its fixed text.
        let fixed = retrylint::fix::fix_text(
            &text,
            "bench.yaml",
            "bench",
            &presets,
            &CliLevels::default(),
        )
        .expect("fixes")
        .text;
        group.bench_with_input(BenchmarkId::new("fix-diff", n), &fixed, |b, f| {
            b.iter(|| retrylint::fix::unified("bench.yaml", black_box(&text), f).len())
        });
        // Its baseline: similar's default (Myers) diff, which took 11-14 s on
        // the 10,000-service file, so it is timed on 1,000 only.
        if n == 1_000 {
            group.bench_with_input(BenchmarkId::new("fix-diff-myers", n), &fixed, |b, f| {
                b.iter(|| {
                    similar::TextDiff::from_lines(black_box(text.as_str()), f.as_str())
                        .unified_diff()
                        .context_radius(3)
                        .header("bench.yaml", "bench.yaml")
                        .to_string()
                        .len()
                })
            });
        }
    }
    // The whole process, table and JSON, on the 10,000-service file.
    let file = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-10000.yaml");
    std::fs::write(&file, generate::random_dag(10_000, 3, 7)).expect("write");
    for format in ["table", "json"] {
        group.bench_function(
            BenchmarkId::new("process", format!("10000/{format}")),
            |b| b.iter(|| run_check(&file, format)),
        );
    }
    let text = ladder(64);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("load+check/diamond-ladder-64", |b| {
        b.iter(|| check_text(black_box(&text), &presets, false))
    });
    // `check --from`: 1,000 VirtualServices (a directory walked) and a
    // 10,000-span OTLP trace, against the same-sized hand topology above.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-sources");
    let from = mesh_and_traces(&dir, 1_000, 10_000);
    group.throughput(Throughput::Elements(1_000));
    group.bench_function("check-from/1000-virtualservices+10000-spans", |b| {
        b.iter(|| check_from(black_box(&from), &presets))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
