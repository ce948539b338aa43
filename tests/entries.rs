//! Several entry services (#33): `entry:` as a list, every service nobody
//! calls an entry when `entry:` is left out, `check` analysing each entry
//! and reporting each service's worst over them, runs choosing one entry
//! with `--entry`.

use crate::common;

use common::run::retrylint;

/// Writes `text` to `dir/name` in the tests' scratch directory.
fn temp_file(dir: &str, name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("entries")
        .join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Two roots: from `web` (web → api → db, 3 × 3) 9 attempts reach db, from
/// `mobile` (mobile → db, 4) 4. `mobile` alone outlives the 2 s deadline
/// when db hangs (4 × 1 s); `web` stays within it (3 × 100 ms). `ENTRY` is
/// replaced by the file's `entry:` line (or a comment, keeping the lines).
const TWO_ROOTS: &str = "version: 1
ENTRY
deadline: 2s
services:
  web:
    calls:
      - to: api
        timeout: 100ms
        retry: { max_attempts: 3, backoff: { kind: exponential, base: 10ms, cap: 50ms, jitter: full } }
  mobile:
    calls:
      - to: db
        timeout: 1s
        retry: { max_attempts: 4, backoff: { kind: exponential, base: 10ms, cap: 50ms, jitter: full } }
  api:
    calls:
      - to: db
        timeout: 500ms
        retry: { max_attempts: 3, backoff: { kind: exponential, base: 10ms, cap: 50ms, jitter: full } }
  db: {}
";

fn two_roots(dir: &str, entry: &str) -> String {
    temp_file(dir, "two.yaml", &TWO_ROOTS.replace("ENTRY", entry))
        .display()
        .to_string()
}

fn check_json(path: &str) -> serde_json::Value {
    let (code, out, err) = retrylint(&["check", path, "--format", "json"]);
    assert!(code == 0 || code == 1, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn row<'a>(doc: &'a serde_json::Value, service: &str) -> &'a serde_json::Value {
    doc["amplification"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["service"] == service)
        .unwrap()
}

#[test]
fn each_service_shows_its_worst_entry() {
    let doc = check_json(&two_roots("list", "entry: [web, mobile]"));
    assert_eq!(doc["entry"], "web");
    assert_eq!(doc["entries"], serde_json::json!(["web", "mobile"]));
    let db = row(&doc, "db");
    assert_eq!(db["worst_case"], 9.0);
    assert_eq!(db["entry"], "web");
    assert_eq!(row(&doc, "api")["worst_case"], 3.0);
    assert_eq!(row(&doc, "api")["entry"], "web");
    // Reached from its own entry only, and not "unreachable".
    let mobile = row(&doc, "mobile");
    assert_eq!(mobile["entry"], "mobile");
    assert_eq!(mobile["reachable"], true);
    assert_eq!(mobile["worst_case"], 1.0);
}

#[test]
fn the_worst_entry_wins_whichever_comes_first() {
    // mobile's path now amplifies to 16 at db: it wins over web's 9.
    let text = TWO_ROOTS
        .replace("ENTRY", "entry: [web, mobile]")
        .replace("max_attempts: 4,", "max_attempts: 16,");
    let path = temp_file("sixteen", "two.yaml", &text);
    let doc = check_json(&path.display().to_string());
    let db = row(&doc, "db");
    assert_eq!(db["worst_case"], 16.0);
    assert_eq!(db["entry"], "mobile");
    // RL001 (limit 10) from mobile's path, once, naming it.
    let rl001: Vec<_> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "RL001")
        .collect();
    assert_eq!(rl001.len(), 1, "{rl001:#?}");
    assert!(
        rl001[0]["message"].as_str().unwrap().contains("16"),
        "{}",
        rl001[0]["message"]
    );
    assert_eq!(rl001[0]["service"], "db");
}

#[test]
fn the_deadline_is_checked_from_the_second_entry_too() {
    let doc = check_json(&two_roots("deadline", "entry: [web, mobile]"));
    let at_deadline: Vec<_> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "RL007" && f["severity"] == "error")
        .collect();
    assert_eq!(at_deadline.len(), 1, "{at_deadline:#?}");
    let f = at_deadline[0];
    assert_eq!(f["service"], "mobile");
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(3), Some(1))
    );
    assert!(
        f["message"].as_str().unwrap().contains("4.071s"),
        "{}",
        f["message"]
    );
    // A finding both entries give (api → db outlives web → api's timeout
    // whichever entry the analysis starts from) is reported once.
    let outlives = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "RL007" && f["service"] == "api")
        .count();
    assert_eq!(outlives, 1);
}

#[test]
fn a_list_naming_every_root_is_the_same_as_no_entry() {
    // One path and lines of one length: the JSON names places by both.
    let listed = check_json(&two_roots("same", "entry: [web, mobile]"));
    let inferred = check_json(&two_roots("same", "# every root        "));
    assert_eq!(listed["findings"], inferred["findings"]);
    assert_eq!(listed["amplification"], inferred["amplification"]);
    assert_eq!(listed["summary"], inferred["summary"]);
    assert_eq!(inferred["entries"], serde_json::json!(["web", "mobile"]));
}

#[test]
fn one_entry_reports_no_entries_field() {
    let doc = check_json(&two_roots("single", "entry: web"));
    assert_eq!(doc["entry"], "web");
    assert!(doc.get("entries").is_none());
    assert!(row(&doc, "db").get("entry").is_none());
    // mobile is not an entry here: nothing reaches it.
    assert_eq!(row(&doc, "mobile")["reachable"], false);
    assert_eq!(row(&doc, "db")["worst_case"], 9.0);
}

#[test]
fn the_table_names_each_rows_entry() {
    let (code, out, err) = retrylint(&["check", &two_roots("table", "entry: [web, mobile]")]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("per user request to `web` or `mobile`"),
        "{out}"
    );
    assert!(
        out.contains("a user request to `mobile` (the slowest of 2 entries) takes 4.071s"),
        "{out}"
    );
}

#[test]
fn simulate_drives_the_entry_named() {
    let path = two_roots("simulate", "entry: [web, mobile]");
    let run = |entry: &str| {
        let (code, out, err) = retrylint(&[
            "simulate",
            &path,
            "--entry",
            entry,
            "--trials",
            "1",
            "--duration",
            "3s",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    for (entry, db_predicted) in [("web", 9.0), ("mobile", 4.0)] {
        let doc = run(entry);
        assert_eq!(doc["load"]["entry"], entry);
        let services = doc["services"].as_array().unwrap();
        let of = |name: &str| services.iter().find(|s| s["service"] == name).unwrap();
        let other = if entry == "web" { "mobile" } else { "web" };
        // 20/s for 3 s, all to the entry named; none to the other.
        assert_eq!(of(entry)["received"], 60, "{entry}");
        assert_eq!(of(other)["received"], 0, "{entry}");
        assert_eq!(
            of("db")["amplification"]["predicted"],
            db_predicted,
            "{entry}"
        );
    }
}

#[test]
fn a_run_of_several_entries_needs_one_named() {
    let path = two_roots("refused", "entry: [web, mobile]");
    let (code, out, err) = retrylint(&["simulate", &path, "--trials", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("the topology has 2 entry services (web, mobile)")
            && err.contains("--entry NAME"),
        "{err}"
    );
    let (code, _, err) = retrylint(&["simulate", &path, "--entry", "nope", "--trials", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--entry nope: there is no service `nope`; the entries are web, mobile"),
        "{err}"
    );
    let (code, _, err) = retrylint(&["simulate", &path, "--entry", "api", "--trials", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`api` is a service but not an entry"), "{err}");
    let (code, _, err) = retrylint(&["chaos", &path, "--duration", "3s"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`chaos` drives one entry") && err.contains("--entry"),
        "{err}"
    );
    let (code, _, err) = retrylint(&["report", &path, "-o", "-"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--entry NAME"), "{err}");
}

#[test]
fn an_unknown_entry_on_a_single_entry_topology_is_refused() {
    let path = two_roots("single-run", "entry: web");
    let (code, _, err) = retrylint(&["simulate", &path, "--entry", "mobile", "--trials", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`mobile` is a service but not an entry; the entries are web"),
        "{err}"
    );
    let (code, _, err) = retrylint(&[
        "simulate",
        &path,
        "--entry",
        "web",
        "--trials",
        "1",
        "--duration",
        "3s",
    ]);
    assert_eq!(code, 0, "{err}");
}

/// `check` on `text` is refused: (stderr's first line, stderr).
fn refused(name: &str, text: &str) -> (String, String) {
    let path = temp_file("bad", name, text);
    let (code, out, err) = retrylint(&["check", &path.display().to_string()]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    let dir = path.parent().unwrap().display().to_string();
    let first = err
        .lines()
        .next()
        .unwrap_or("")
        .replace(&format!("{dir}/"), "");
    (first, err)
}

#[test]
fn a_bad_entry_list_is_located() {
    let services = "services:\n  web: {}\n  mobile: {}\n";
    let (first, err) = refused(
        "unknown.yaml",
        &format!("version: 1\nentry: [web, mobil]\n{services}"),
    );
    assert_eq!(
        first, "error: unknown.yaml:2:14: entry `mobil` is not a service; did you mean `mobile`?",
        "{err}"
    );
    let (first, err) = refused(
        "twice.yaml",
        &format!("version: 1\nentry:\n  - web\n  - mobile\n  - web\n{services}"),
    );
    assert!(
        first.starts_with("error: twice.yaml:5:5: entry `web` is named twice"),
        "{err}"
    );
    let (first, err) = refused("empty.yaml", &format!("version: 1\nentry: []\n{services}"));
    assert!(
        first.starts_with("error: empty.yaml:2:8: `entry:` is an empty list"),
        "{err}"
    );
    let (first, err) = refused(
        "number.yaml",
        &format!("version: 1\nentry: [web, 3]\n{services}"),
    );
    assert!(
        first.starts_with("error: number.yaml:2:14: expected a string for `entry`"),
        "{err}"
    );
}

#[test]
fn a_list_of_one_is_the_entry_itself() {
    let listed = check_json(&two_roots("one", "entry: [web]"));
    let plain = check_json(&two_roots("one", "entry: web  "));
    assert_eq!(listed["findings"], plain["findings"]);
    assert_eq!(listed["amplification"], plain["amplification"]);
    assert!(listed.get("entries").is_none());
}

#[test]
fn drive_names_its_own_flag_and_export_needs_an_entry() {
    let path = two_roots("drive", "entry: [web, mobile]");
    // `drive`'s --entry is the entry's URL: the service is --entry-service.
    let (code, _, err) = retrylint(&[
        "drive",
        &path,
        "--entry",
        "http://127.0.0.1:9",
        "--requests",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`drive` drives one entry; name it with --entry-service NAME"),
        "{err}"
    );
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("entries/export-out");
    let _ = std::fs::remove_dir_all(&out);
    let (code, _, err) = retrylint(&["export", "compose", &path, "-o", &out.display().to_string()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the topology has 2 entry services (web, mobile): `export` drives one entry; name it with --entry NAME"),
        "{err}"
    );
    assert!(!out.exists());
    // The file is shipped whole; its driver is told the entry it drives.
    let (code, _, err) = retrylint(&[
        "export",
        "compose",
        &path,
        "--entry",
        "mobile",
        "-o",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    let compose = std::fs::read_to_string(out.join("compose.yaml")).unwrap();
    assert!(compose.contains("http://mobile:"), "{compose}");
    assert!(compose.contains("--entry-service"), "{compose}");
}

#[test]
fn import_writes_every_entry() {
    let path = two_roots("import", "# every root");
    let (code, text, err) = retrylint(&["import", &path]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("\nentry: [web, mobile]\n"), "{text}");
    let (code, text, err) = retrylint(&["import", &two_roots("import-one", "entry: web")]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("\nentry: web\n"), "{text}");
}

#[test]
fn thousands_of_entries_are_refused_not_checked_in_quadratic_time() {
    // 2,000 services nobody calls: 2,000 entries, each a whole check.
    let mut text = String::from("version: 1\nservices:\n");
    for i in 0..2000 {
        text.push_str(&format!("  s{i}: {{}}\n"));
    }
    let path = temp_file("flat", "flat.yaml", &text);
    let started = std::time::Instant::now();
    let (code, out, err) = retrylint(&["check", &path.display().to_string()]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("checking each of the 2000 entry services over the topology (2000 services and calls) would visit 4000000 in all, over the limit of 1000000; name the few services that receive user traffic with `entry: [a, b]`, or check one with --entry NAME"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // A few entries over the same services are checked.
    let few = text.replace("services:\n", "entry: [s0, s1, s2]\nservices:\n");
    let path = temp_file("flat", "few.yaml", &few);
    let (code, out, err) = retrylint(&["check", &path.display().to_string(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["entries"], serde_json::json!(["s0", "s1", "s2"]));
    assert_eq!(row(&doc, "s3")["reachable"], false);
}

#[test]
fn check_from_one_entry() {
    let path = two_roots("check-one", "entry: [web, mobile]");
    let (code, out, err) = retrylint(&["check", &path, "--entry", "mobile", "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["entry"], "mobile");
    assert!(doc.get("entries").is_none());
    assert_eq!(row(&doc, "db")["worst_case"], 4.0);
    assert_eq!(row(&doc, "api")["reachable"], false);
    let (code, _, err) = retrylint(&["check", &path, "--entry", "db"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--entry db: `db` is a service but not an entry"),
        "{err}"
    );
    let (code, _, err) = retrylint(&["check", &path, "--entry", "web", "--fix", "--diff"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("leave out --entry"), "{err}");
}
