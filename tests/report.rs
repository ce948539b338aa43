//! `retrylint report`: the review page of every example (every section,
//! nothing fetched), its figures equal to `check` and `simulate`, the what-if
//! side equal to `check` and `simulate` of the other file, a real chaos run set
//! beside the prediction, bounds on a 1,000-service topology, refusals, the
//! load and target flags in the page and its footer, and the markdown cut as
//! snapshots, GitHub suggestions against a base version included.
//!
//! The browser's view of the same pages is `tests/report_browser.rs`.

use crate::common;
use crate::common::generate;
use crate::common::html;

use std::path::{Path, PathBuf};
use std::time::Duration;

use retrylint::faults;
use retrylint::formats::review::{html as page, markdown as review_markdown};
use retrylint::review::{self, GraphView, Other, Review, Settings};
use retrylint::run::{LoadSettings, RunReport};
use retrylint::sim::{self, SimOptions};

const EXAMPLES: &[&str] = &[
    "aws-five-layers",
    "clean",
    "ecommerce",
    "sidecar",
    "sre-book",
];
const ONE_LAYER: &str = "tests/fixtures/review/sre-book-one-layer.yaml";
const SUGGEST_BASE: &str = "tests/fixtures/review/suggest/base.yaml";
const SUGGEST_HEAD: &str = "tests/fixtures/review/suggest/head.yaml";

/// Reports run simulations and chaos, and take both cores: the surge page
/// takes 40 s alone and about twice that beside another test of the suite
/// (it timed out at 120 s so in CI). Five minutes bounds a runaway.
fn retrylint(args: &[&str]) -> (i32, String, String) {
    common::run::retrylint_within(args, Duration::from_secs(300))
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn settings(trials: u32) -> Settings {
    Settings {
        scenario: faults::load("503-burst").unwrap(),
        scenario_note: None,
        load: LoadSettings::default(),
        trials,
        budget: review::BUDGET,
        threads: Some(2),
        command: "retrylint report test".into(),
    }
}

fn gather(path: &str, other: Option<&str>, s: &Settings) -> Review {
    let t = common::load_file(path);
    let o = other.map(common::load_file);
    review::gather(
        &t,
        o.as_ref().map(|o| Other {
            topology: o,
            label: "other".into(),
        }),
        s,
        None,
    )
    .unwrap()
}

fn assert_complete(html: &str, what: &str) {
    for id in page::SECTIONS {
        assert!(
            html.contains(&format!("id=\"{id}\"")),
            "{what}: no section {id}"
        );
    }
    let fetches = html::remote_fetches(html);
    assert!(fetches.is_empty(), "{what} fetches {fetches:?}");
    assert!(!html.contains("<script"), "{what} has a script");
}

#[test]
fn every_example_gives_a_complete_page_that_fetches_nothing() {
    for name in EXAMPLES {
        let out = scratch(&format!("{name}.html"));
        let (code, _, err) = retrylint(&[
            "report",
            &format!("examples/{name}.yaml"),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(err.contains("wrote "), "{err}");
        let html = std::fs::read_to_string(&out).unwrap();
        assert_complete(&html, name);
        assert!(html.len() < 200_000, "{name}: {} bytes", html.len());
        // The footer reproduces the page.
        assert!(
            html.contains(&format!(
                "retrylint report examples/{name}.yaml --fault 503-burst --seed 42 --trials 20"
            )),
            "{name}"
        );
    }
}

#[test]
fn the_page_states_what_check_and_simulate_compute() {
    let s = settings(20);
    let r = gather("examples/sre-book.yaml", None, &s);
    let t = common::load_file("examples/sre-book.yaml");
    let check = common::check(&t);
    assert_eq!(r.written().check.amplification, check.amplification);
    assert_eq!(r.written().check.findings, check.findings);
    let sim = r.written().sim.as_ref().expect("simulated");
    // The same run `simulate --trials 20` makes, goodput over time added.
    let cli = simulate_json("examples/sre-book.yaml");
    assert_same_run(sim, &cli);
    let html = page::render(&r);
    // db: 4 × 4 × 4 attempts per user action, in the table and on the graph.
    assert!(html.contains("<td class=\"num\">64×</td>"));
    assert!(html.contains("<text class=\"figure\""));
    assert!(html.contains(">app 4</text>"));
    let GraphView::Drawn(layout) = &r.written().graph else {
        panic!("four services are drawn")
    };
    let path: Vec<&str> = layout
        .nodes
        .iter()
        .filter(|n| n.on_hottest_path)
        .map(|n| n.service.as_str())
        .collect();
    assert_eq!(path, ["browser-js", "frontend", "backend", "db"]);
    let hottest = layout.hottest.expect("a hottest service");
    assert_eq!(layout.nodes[hottest].service, "db");
    assert_eq!(
        retrylint::formats::figures::worst_case(&r.written().check.amplification[hottest]),
        "64×"
    );
    assert!(layout.edges.iter().all(|e| e.hottest));
}

fn simulate_json(path: &str) -> RunReport {
    let (code, out, err) = retrylint(&[
        "simulate",
        path,
        "--fault",
        "503-burst",
        "--trials",
        "20",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// Two reports of one simulation: every service's figures and the end-to-end
/// figures equal.
fn assert_same_run(a: &RunReport, b: &RunReport) {
    assert_eq!(a.services, b.services);
    assert_eq!(a.end_to_end, b.end_to_end);
    assert_eq!(a.timeline, b.timeline);
    assert_eq!((a.seed, a.trials), (b.seed, b.trials));
    assert!(a.goodput.is_some(), "the page always has goodput over time");
}

#[test]
fn the_what_if_side_equals_check_and_simulate_of_the_other_file() {
    let s = settings(20);
    let r = gather("examples/sre-book.yaml", Some(ONE_LAYER), &s);
    assert_eq!(r.sides.len(), 2);
    let other = &r.sides[1];
    let t = common::load_file(ONE_LAYER);
    assert_eq!(other.check.amplification, common::check(&t).amplification);
    assert_same_run(other.sim.as_ref().unwrap(), &simulate_json(ONE_LAYER));
    // The library call gives the same run as the CLI's.
    let direct = sim::run_over_time(
        &t,
        &s.scenario,
        &s.load,
        &SimOptions {
            trials: 20,
            ..SimOptions::default()
        },
    )
    .unwrap();
    assert_eq!(other.sim.as_ref().unwrap(), &direct);
    // db: 64× as written, 4× with one retrying layer; one row per service
    // with both.
    let db = r.rows.iter().find(|row| row.service == "db").unwrap();
    let figure = |k: usize| r.sides[k].check.amplification[db.at[k].unwrap()].worst_case;
    assert_eq!((figure(0), figure(1)), (64.0, 4.0));
    // Shared axes: one chart holds both sides.
    let storm = r.storm.as_ref().unwrap();
    let sides: Vec<usize> = storm.attempts.lines.iter().map(|l| l.side).collect();
    assert_eq!(sides, [0, 1]);
    let html = page::render(&r);
    assert_complete(&html, "compare");
    assert!(html.contains("<th class=\"num\">other</th>"));
}

#[test]
fn compare_flag_puts_a_second_topology_beside_the_first() {
    let out = scratch("compare.html");
    let (code, _, err) = retrylint(&[
        "report",
        "examples/sre-book.yaml",
        "--compare",
        ONE_LAYER,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<h3>compare: sre-book-one-layer</h3>"));
    assert!(html.contains(&format!("--compare {ONE_LAYER}")));
}

#[test]
fn a_real_chaos_run_is_set_beside_the_prediction() {
    let run = scratch("chaos-run.json");
    let (code, out, err) = retrylint(&[
        "chaos",
        "examples/sre-book.yaml",
        "--fault",
        "503-burst",
        "--duration",
        "2s",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(&run, &out).unwrap();
    let measured_run: RunReport = serde_json::from_str(&out).unwrap();
    let page_file = scratch("chaos.html");
    let (code, _, err) = retrylint(&[
        "report",
        "examples/sre-book.yaml",
        "--chaos",
        run.to_str().unwrap(),
        "-o",
        page_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&page_file).unwrap();
    assert_complete(&html, "chaos");
    assert!(html.contains("id=\"measured\""));
    // Without --fault, the page simulates the run's scenario with its seed.
    assert!(html.contains("The scenario of the chaos run in"));
    // The library's view: every measured figure the run's own, the simulated
    // column filled (same scenario), the prediction the run's.
    let t = common::load_file("examples/sre-book.yaml");
    let back = review::measured::read(&run).unwrap();
    assert_eq!(back, measured_run);
    let r = review::gather(&t, None, &settings(5), Some(("run.json", &back))).unwrap();
    let m = r.measured.as_ref().unwrap();
    assert_eq!(m.rows.len(), measured_run.services.len());
    for (row, s) in m.rows.iter().zip(&measured_run.services) {
        assert_eq!(row.service, s.service);
        assert_eq!(row.measured, s.amplification.measured);
        assert_eq!(row.predicted, s.amplification.predicted);
        let sim = r
            .written()
            .sim
            .as_ref()
            .unwrap()
            .service(&s.service)
            .unwrap();
        assert_eq!(row.simulated, Some(sim.amplification.measured));
    }
    assert_eq!(m.end_to_end.requests.0, measured_run.end_to_end.requests);
}

#[test]
fn bad_inputs_are_refused_with_their_place_and_exit_2() {
    let bad = scratch("bad-run.json");
    std::fs::write(&bad, "{\n  \"fault\": 3\n}\n").unwrap();
    let (code, _, err) = retrylint(&[
        "report",
        "examples/sre-book.yaml",
        "--chaos",
        bad.to_str().unwrap(),
        "-o",
        "-",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("bad-run.json:2:"), "{err}");
    assert!(err.contains("--format json"), "{err}");
    let (code, _, err) = retrylint(&[
        "report",
        "examples/sre-book.yaml",
        "--fault",
        "no-such-fault",
    ]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = retrylint(&["report", "examples/sre-book.yaml", "--trials", "0"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = retrylint(&[
        "report",
        "examples/sre-book.yaml",
        "-o",
        "/nonexistent-dir/review.html",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot write the report"), "{err}");
    // Suggestions are markdown's; a base that cannot be read is named.
    let (code, _, err) = retrylint(&["report", SUGGEST_HEAD, "--base", SUGGEST_BASE]);
    assert_eq!(code, 2);
    assert!(err.contains("--format markdown"), "{err}");
    let (code, _, err) = retrylint(&[
        "report",
        SUGGEST_HEAD,
        "--format",
        "markdown",
        "--base",
        "/nonexistent-dir/base.yaml",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("/nonexistent-dir/base.yaml: cannot read the base version"),
        "{err}"
    );
    // The load flags are `simulate`'s, refused as `simulate` refuses them.
    let (code, _, err) = retrylint(&[
        "report",
        "examples/sre-book.yaml",
        "--rate",
        "5",
        "--clients",
        "2",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--clients"), "{err}");
    let (code, _, err) = retrylint(&["report", "examples/sre-book.yaml", "--target", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn a_thousand_services_give_a_bounded_page() {
    let text = generate::random_dag(1_000, 3, 7);
    let file = scratch("generated-1000.yaml");
    std::fs::write(&file, &text).unwrap();
    let t = common::load_file(file.to_str().unwrap());
    let mut s = settings(20);
    // A debug build simulates slowly: a smaller budget, the same refusal path.
    s.budget = 200_000;
    let r = review::gather(&t, None, &s, None).unwrap();
    let side = r.written();
    let GraphView::TooLarge {
        services,
        hottest_path,
        ..
    } = &side.graph
    else {
        panic!("1,000 services are listed, not drawn")
    };
    assert_eq!(*services, 1_000);
    assert_eq!(hottest_path.first().map(String::as_str), Some("s0"));
    assert!(side.findings_omitted > 0);
    assert_eq!(r.rows.len(), review::MAX_ROWS);
    assert_eq!(r.rows_omitted, 1_000 - review::MAX_ROWS);
    assert!(side.sim_note.is_some(), "fewer trials, or none, and why");
    let html = page::render(&r);
    assert!(html.len() < 2 << 20, "{} bytes", html.len());
    assert_complete(&html, "generated");
    let md = review_markdown::render(&r);
    assert!(md.len() < review_markdown::MAX_CHARS, "{}", md.len());
}

fn markdown(path: &str, other: Option<&str>) -> String {
    let mut s = settings(20);
    s.command = format!(
        "retrylint report {path}{} --format markdown",
        other.map(|o| format!(" --compare {o}")).unwrap_or_default()
    );
    review_markdown::render(&gather(path, other, &s)).replace(env!("CARGO_PKG_VERSION"), "VERSION")
}

#[test]
fn markdown_sre_book() {
    insta::assert_snapshot!(markdown("examples/sre-book.yaml", None));
}

#[test]
fn markdown_sre_book_beside_one_layer() {
    insta::assert_snapshot!(markdown("examples/sre-book.yaml", Some(ONE_LAYER)));
}

#[test]
fn markdown_from_the_cli_is_the_library_s() {
    let (code, out, err) = retrylint(&["report", "examples/sre-book.yaml", "--format", "markdown"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("## retrylint review: `sre-book`\n"));
    assert!(out.contains("```mermaid\nflowchart LR\n"));
    // Every fix the rules propose for sre-book makes its storm worse in the
    // simulation: the page holds them back, says so, and draws no what-if.
    assert!(
        out.contains("9 fixes held back from the what-if: with them the simulator measured the topology worse than as written"),
        "{out}"
    );
    assert!(!out.contains("with the fixes applied"), "{out}");
    // `check --fix` holds back the same nine and leaves the file alone.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-what-if");
    std::fs::create_dir_all(&dir).unwrap();
    let fixed = dir.join("sre-book.yaml");
    std::fs::copy("examples/sre-book.yaml", &fixed).unwrap();
    let fixed = fixed.to_str().unwrap();
    let (code, _, err) = retrylint(&["check", fixed, "--fix"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.ends_with(&format!("0 fixes made, 9 skipped; {fixed} unchanged\n")),
        "{err}"
    );
    assert_eq!(
        err.matches("because: measured worse than as written")
            .count(),
        9,
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(fixed).unwrap(),
        std::fs::read_to_string("examples/sre-book.yaml").unwrap()
    );
}

#[test]
fn the_what_if_is_the_file_check_fix_writes() {
    // sidecar.yaml has a fix the simulator keeps.
    let (code, out, err) = retrylint(&["report", "examples/sidecar.yaml", "--format", "markdown"]);
    assert_eq!(code, 0, "{err}");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-what-if");
    std::fs::create_dir_all(&dir).unwrap();
    let fixed = dir.join("sidecar.yaml");
    std::fs::copy("examples/sidecar.yaml", &fixed).unwrap();
    let fixed = fixed.to_str().unwrap();
    let (_, _, err) = retrylint(&["check", fixed, "--fix"]);
    assert!(err.contains("1 fix made"), "{err}");
    // The page's what-if side is `check` of that file.
    let written = common::load_file("examples/sidecar.yaml");
    let text = std::fs::read_to_string("examples/sidecar.yaml").unwrap();
    let what_if = retrylint::fix::what_if(
        &text,
        &written.file,
        "sidecar",
        &retrylint::topology::Presets::embedded(),
    )
    .unwrap();
    assert_eq!(
        what_if.judged.run.text,
        std::fs::read_to_string(fixed).unwrap()
    );
    let what_if = what_if.fixed.expect("sidecar has a fix kept");
    // And its storm is `simulate`'s on that file: the same seed and trials,
    // the same run, and the same row in the comment.
    let fixed_run = simulate_json(fixed);
    let r = review::gather(
        &written,
        Some(Other {
            topology: &what_if,
            label: "with the fixes applied".into(),
        }),
        &settings(20),
        None,
    )
    .unwrap();
    assert_same_run(r.sides[1].sim.as_ref().unwrap(), &fixed_run);
    let e = &fixed_run.end_to_end;
    let row = format!(
        "| with the fixes applied | 20 | {} | {:.1}% | {} | {} |",
        e.requests,
        100.0 * e.success_ratio(),
        retrylint::formats::figures::millis(e.latency_ms.p50),
        retrylint::formats::figures::millis(e.latency_ms.p99)
    );
    assert!(out.contains(&row), "{row}\n{out}");
}

/// `report --format markdown --base`, the version replaced.
fn markdown_against_base() -> String {
    let (code, out, err) = retrylint(&[
        "report",
        SUGGEST_HEAD,
        "--format",
        "markdown",
        "--base",
        SUGGEST_BASE,
    ]);
    assert_eq!(code, 0, "{err}");
    out.replace(env!("CARGO_PKG_VERSION"), "VERSION")
}

#[test]
fn markdown_suggestions_against_a_base() {
    insta::assert_snapshot!(markdown_against_base());
}

/// The suggestion blocks of a comment: the lines they name and their text.
fn suggestion_blocks(md: &str) -> Vec<(String, usize, usize, String)> {
    let mut blocks = Vec::new();
    let mut rest = md;
    while let Some(i) = rest.find("```suggestion\n") {
        // The place is the code span on the paragraph before the block.
        let before = &rest[..i];
        let intro = before.trim_end().lines().last().unwrap();
        let place = intro.split('`').nth(1).unwrap();
        let (file, lines) = place.rsplit_once(':').unwrap();
        let (first, last) = match lines.split_once('-') {
            Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
            None => (lines.parse().unwrap(), lines.parse().unwrap()),
        };
        let body_start = i + "```suggestion\n".len();
        let end = rest[body_start..].find("```\n").unwrap();
        blocks.push((
            file.to_owned(),
            first,
            last,
            rest[body_start..body_start + end].to_owned(),
        ));
        rest = &rest[body_start + end + 4..];
    }
    blocks
}

#[test]
fn a_suggestion_applied_to_the_file_removes_its_finding() {
    let md = markdown_against_base();
    let blocks = suggestion_blocks(&md);
    // RL011 on the line the change adds is suggested; RL004 on a line it
    // leaves alone is not, though `check --fix` would fix it.
    assert_eq!(blocks.len(), 1, "{md}");
    let (file, first, last, body) = &blocks[0];
    assert_eq!(file, SUGGEST_HEAD);
    // A key added to the call's mapping: its last line and the new one.
    assert_eq!((*first, *last), (23, 23));
    assert_eq!(body, "      - to: ledger\n        timeout: 120ms\n");
    assert!(
        md.contains(&format!(
            "`{SUGGEST_HEAD}:23` — RL011 missing-timeout (line 23)"
        )),
        "{md}"
    );
    assert!(!md.contains("RL004 missing-jitter (line"), "{md}");
    let head = std::fs::read_to_string(SUGGEST_HEAD).unwrap();
    let json = |path: &str| -> Vec<(String, u64)> {
        let (_, out, err) = retrylint(&["check", path, "--format", "json", "--exit-zero"]);
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["code"].as_str().unwrap().to_owned(),
                    f["line"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let before = json(SUGGEST_HEAD);
    assert!(before.contains(&("RL011".into(), 23)), "{before:?}");
    assert!(before.contains(&("RL004".into(), 16)), "{before:?}");
    // GitHub's "commit suggestion": lines first..=last give way to the body.
    let lines: Vec<&str> = head.lines().collect();
    let mut after: Vec<&str> = lines[..first - 1].to_vec();
    after.extend(body.lines());
    after.extend(&lines[*last..]);
    let mut applied = after.join("\n");
    applied.push('\n');
    let out = scratch("suggested.yaml");
    std::fs::write(&out, &applied).unwrap();
    let after = json(out.to_str().unwrap());
    assert!(
        !after.iter().any(|(code, _)| code == "RL011"),
        "{applied}\n{after:?}"
    );
    // Nothing else changed: the other findings stay where they were.
    let others = |v: &[(String, u64)]| -> Vec<String> {
        v.iter()
            .filter(|(c, _)| c != "RL011")
            .map(|(c, _)| c.clone())
            .collect()
    };
    assert_eq!(others(&after), others(&before));
    assert_eq!(
        applied.lines().count(),
        head.lines().count() + body.lines().count() - (last - first + 1)
    );
}

#[test]
fn without_a_base_there_are_no_suggestions() {
    let (code, out, err) = retrylint(&["report", SUGGEST_HEAD, "--format", "markdown"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("```suggestion"));
    assert!(!out.contains("### Suggested changes"));
    let (_, help, _) = retrylint(&["report", "--help"]);
    assert!(help.contains("without --base, no suggestions"), "{help}");
}

#[test]
fn target_and_load_flags_steer_the_storm_and_the_footer_says_so() {
    let page_of = |name: &str, extra: &[&str]| -> String {
        let out = scratch(name);
        let mut args = vec![
            "report",
            "examples/sre-book.yaml",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = retrylint(&args);
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(&out).unwrap()
    };
    let plain = page_of("target-default.html", &[]);
    // The scenario strikes the leaves: db, the one leaf.
    assert!(plain.contains("Attempts arriving at the fault target (leaves)"));
    assert!(plain.contains("(target <code>leaves</code>)"));
    let struck = |page: &str| -> String {
        let row = page
            .lines()
            .find(|l| l.starts_with("<tr><th>as written</th>"))
            .expect("the storm table");
        row.rsplit("<code>")
            .next()
            .unwrap()
            .split('<')
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(struck(&plain), "db");
    let moved = page_of("target-backend.html", &["--target", "backend"]);
    assert_complete(&moved, "--target backend");
    assert!(
        moved.contains("Attempts arriving at the fault target (backend)"),
        "the storm chart is about backend"
    );
    assert_eq!(struck(&moved), "backend");
    // The footer: the scenario's target and the command that reproduces it.
    assert!(moved.contains("(target <code>backend</code>)"));
    assert!(
        moved.contains("--target moves the fault to `backend`")
            || moved.contains("--target moves the fault to <code>backend</code>")
    );
    assert!(moved.contains(
        "retrylint report examples/sre-book.yaml --fault 503-burst --seed 42 --trials 20 --target backend</pre>"
    ));
    // Closed loop for a shorter horizon, in the page's load line and the command.
    let closed = page_of("clients.html", &["--clients", "4", "--duration", "2s"]);
    assert!(
        closed.contains("Load 4 closed-loop clients for 2 s;"),
        "load line"
    );
    assert!(closed.contains("--trials 20 --clients 4 --duration 2s</pre>"));
}

#[test]
fn a_surge_page_runs_past_the_fault_and_says_whether_goodput_came_back() {
    // The shipped surge strikes from 20 s to 30 s, after the default 5 s
    // run: the page runs 40 s (the fault and 10 s after it), says so, and
    // judges recovery per side.
    let out = scratch("surge.html");
    let page_with = |extra: &[&str]| -> String {
        let mut args = vec!["report", "examples/surge.yaml", "--fault", "surge"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", out.to_str().unwrap()]);
        let (code, _, err) = retrylint(&args);
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(&out).unwrap()
    };
    let page = page_with(&["--trials", "4"]);
    assert_complete(&page, "surge");
    assert!(page.contains("un lasts 40 s to cover the fault and the time after it"));
    assert!(
        page.contains("--trials 4 --duration 40s</pre>"),
        "the command reproduces it"
    );
    assert!(page.contains("<th>after the fault</th>"));
    // At the page's 20 requests a second the surge passes: both sides
    // recover within a second of its end.
    assert_eq!(
        page.matches("<td class=\"recovered\">recovered 1.00 s after</td>")
            .count(),
        2,
        "{}",
        page.lines()
            .filter(|l| l.contains("after the fault") || l.contains("recovered"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Given a duration, the page keeps it.
    let page = page_with(&["--trials", "2", "--duration", "25s"]);
    assert!(!page.contains("un lasts"));
    assert!(page.contains("--duration 25s</pre>"));
}

/// The `<td>` texts of the outlined row of the `k`-th recovery map.
fn own_row(html: &str, k: usize) -> Vec<String> {
    let figure = html
        .split("<figure class=\"recovery\">")
        .nth(k + 1)
        .expect("a recovery map");
    let row = figure
        .split("<tr class=\"own\">")
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .expect("an outlined row");
    row.split("<td")
        .skip(1)
        .filter_map(|c| {
            let text = c.split_once('>')?.1;
            Some(text.split("</td>").next()?.to_owned())
        })
        .collect()
}

#[test]
fn the_recovery_map_is_the_sweep_its_caption_names_and_the_fixes_move_the_boundary() {
    let out = scratch("surge.html");
    let path = out.to_str().unwrap();
    let (code, _, stderr) = retrylint(&[
        "report",
        "examples/surge.yaml",
        "--fault",
        "surge",
        "--rate",
        "300",
        "--trials",
        "1",
        "-o",
        path,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<section id=\"recovery\">"));
    assert!(html.contains("<a href=\"#recovery\">Headroom</a>"));
    // The caption's command, run: its points are the outlined row's cells
    // and its sentence is the page's.
    let command = html
        .split("The outlined row is <code>")
        .nth(1)
        .and_then(|c| c.split("</code>").next())
        .expect("the row's command");
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    assert_eq!(
        args[..4],
        ["simulate", "examples/surge.yaml", "--fault", "surge"]
    );
    let mut with_json = args.clone();
    with_json.extend(["--format", "json"]);
    let (code, stdout, stderr) = retrylint(&with_json);
    assert_eq!(code, 0, "{command}: {stderr}");
    let sweep: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let points: Vec<String> = sweep["sweep"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p.get("bisection").is_none())
        .map(|p| format!("{}/{}", p["recovered_trials"], p["trials"]))
        .collect();
    let written = own_row(&html, 0);
    assert_eq!(written[..points.len()], points[..], "{command}");
    let boundary = sweep["sweep"]["boundary"]["value"]
        .as_f64()
        .expect("the written topology tips over within the grid");
    assert_eq!(written[points.len()], format!("{boundary}/s"));
    let headroom = sweep["headroom"].as_str().unwrap().replace('\'', "&#39;");
    assert!(html.contains(&headroom[1..]), "{headroom}");
    // With the fixes (a retry budget) it tips over later, or not at all
    // within the grid.
    let fixed = own_row(&html, 1);
    let limit = fixed.last().unwrap();
    let later = limit.starts_with("above ")
        || limit
            .trim_end_matches("/s")
            .parse::<f64>()
            .is_ok_and(|b| b > boundary);
    assert!(later, "as written {boundary}/s, with the fixes {limit}");
}

/// The suggestion fixtures' PR comment, and the review `--review-comments`
/// writes to `name` beside it.
fn review_comments(name: &str) -> (String, PathBuf, serde_json::Value) {
    let path = scratch(name);
    let (code, md, err) = retrylint(&[
        "report",
        SUGGEST_HEAD,
        "--format",
        "markdown",
        "--base",
        SUGGEST_BASE,
        "--review-comments",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (md, path, v)
}

#[test]
fn review_comments_carry_the_summarys_suggestions_on_their_lines() {
    let (md, _, v) = review_comments("review-comments.json");
    assert_eq!(v["event"], "COMMENT");
    let comments = v["comments"].as_array().unwrap();
    let blocks = suggestion_blocks(&md.replace(env!("CARGO_PKG_VERSION"), "VERSION"));
    // The same suggestions as the summary, one comment each, on its lines.
    assert_eq!(comments.len(), blocks.len());
    assert_eq!(comments.len(), 1, "{v}");
    let (file, first, last, text) = &blocks[0];
    let c = &comments[0];
    assert_eq!(c["path"].as_str(), Some(file.as_str()));
    assert_eq!(c["line"].as_u64(), Some(*last as u64));
    assert_eq!(first, last);
    assert!(c.get("start_line").is_none(), "{c}");
    let body = c["body"].as_str().unwrap();
    assert!(
        body.starts_with(&format!("<!-- retrylint-suggestion {SUGGEST_HEAD}:23-23 ")),
        "{body}"
    );
    assert!(
        body.ends_with(&format!("```suggestion\n{text}```")),
        "{body}"
    );
    assert!(
        body.contains("**RL011 missing-timeout** (line 23)"),
        "{body}"
    );
}

#[test]
fn review_comments_need_a_base() {
    let (code, _, err) = retrylint(&[
        "report",
        SUGGEST_HEAD,
        "--format",
        "markdown",
        "--review-comments",
        "x.json",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--base"), "{err}");
    assert!(!Path::new("x.json").exists());
}

/// The shipped workflow's filter (examples/ci/retrylint.yml) run by jq on
/// the review `--review-comments` writes: a suggestion whose marker is on
/// the pull request already is not posted again, a new one is, and the
/// review is pinned to the head commit.
#[test]
fn the_shipped_workflow_posts_each_suggestion_once() {
    if std::process::Command::new("jq")
        .arg("--version")
        .output()
        .is_err()
    {
        common::absent::tool_missing(
            "the_shipped_workflow_posts_each_suggestion_once",
            "jq",
            "as root: apt-get install -y jq; .ci/run does this",
        );
        return;
    }
    let workflow = std::fs::read_to_string("examples/ci/retrylint.yml").unwrap();
    let start = "jq --rawfile posted posted.txt --arg sha \"$HEAD_SHA\" '";
    let i = workflow.find(start).expect("the workflow's jq filter") + start.len();
    let filter = &workflow[i..i + workflow[i..].find("' review-comments.json").unwrap()];
    let (_, review, v) = review_comments("workflow-review.json");
    let marker = v["comments"][0]["body"]
        .as_str()
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let posted = scratch("workflow-posted.txt");
    let run = |already: &str| -> serde_json::Value {
        std::fs::write(&posted, already).unwrap();
        let out = std::process::Command::new("jq")
            .args(["--rawfile", "posted"])
            .arg(&posted)
            .args(["--arg", "sha", "abc123", filter])
            .arg(&review)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let first_push = run("");
    assert_eq!(first_push["commit_id"], "abc123");
    assert_eq!(first_push["comments"].as_array().unwrap().len(), 1);
    // Another suggestion's marker on the pull request changes nothing.
    let other = run("<!-- retrylint-suggestion other.yaml:1-1 0000000000000000 -->\n");
    assert_eq!(other["comments"].as_array().unwrap().len(), 1);
    let next_push = run(&format!("{marker}\n"));
    assert_eq!(
        next_push["comments"].as_array().unwrap().len(),
        0,
        "{marker}"
    );
}
