//! Invalid input: one located message with the fix, exit code 2, no panic, and
//! bounded time and memory.

use std::path::PathBuf;
use std::time::Duration;

use assert_cmd::Command;

fn write(name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bad_input");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Runs `check` on `yaml` and returns stderr, asserting exit 2 and no panic.
fn rejected(name: &str, yaml: impl AsRef<[u8]>) -> String {
    let path = write(name, yaml);
    let out = Command::cargo_bin("retrylint")
        .unwrap()
        .arg("check")
        .arg(&path)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
    assert!(!stderr.contains("panicked"), "{name} panicked: {stderr}");
    assert!(out.stdout.is_empty(), "{name} printed to stdout");
    stderr
}

/// The first line, with the temp directory stripped: `name.yaml:L:C: …`.
fn first_line(stderr: &str) -> String {
    let line = stderr.lines().next().unwrap_or("");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bad_input");
    line.replace(&format!("{}/", dir.display()), "")
}

#[test]
fn malformed_yaml() {
    let e = rejected(
        "malformed.yaml",
        "version: 1\nservices:\n  web:\n    calls: [ { to: api\n",
    );
    assert!(
        first_line(&e).starts_with("error: malformed.yaml:4:"),
        "{e}"
    );
    assert!(e.contains("invalid YAML"), "{e}");
}

#[test]
fn unknown_key_names_the_nearest_valid_key() {
    let e = rejected(
        "unknown_key.yaml",
        "version: 1\nservices:\n  web:\n    calls:\n      - to: api\n        retry: { max_attempt: 3 }\n  api: {}\n",
    );
    assert_eq!(
        first_line(&e),
        "error: unknown_key.yaml:6:18: unknown key `max_attempt` in a retry policy; did you mean `max_attempts`?"
    );
    let e = rejected("unknown_top.yaml", "version: 1\nservice:\n  web: {}\n");
    assert!(
        first_line(&e).contains("unknown_top.yaml:2:1: unknown key `service`"),
        "{e}"
    );
    assert!(e.contains("did you mean `services`?"), "{e}");
}

#[test]
fn timeout_inside_a_policy_says_where_it_belongs() {
    let e = rejected(
        "policy_timeout.yaml",
        "version: 1\nservices:\n  web: { calls: [ { to: api, retry: { max_attempts: 2, timeout: 1s } } ] }\n  api: {}\n",
    );
    assert!(e.contains("move `timeout:` one level up"), "{e}");
}

#[test]
fn unknown_service_in_to() {
    let e = rejected(
        "unknown_to.yaml",
        "version: 1\nservices:\n  web:\n    calls: [ { to: apx } ]\n  api: {}\n",
    );
    assert_eq!(
        first_line(&e),
        "error: unknown_to.yaml:4:20: `web` calls unknown service `apx`; did you mean `api`?"
    );
}

#[test]
fn unknown_preset() {
    let e = rejected(
        "unknown_preset.yaml",
        "version: 1\nservices:\n  web:\n    calls: [ { to: api, retry: istio-defualt } ]\n  api: {}\n",
    );
    assert_eq!(
        first_line(&e),
        "error: unknown_preset.yaml:4:32: unknown preset `istio-defualt`; did you mean `istio-default`?"
    );
    let e = rejected(
        "unknown_preset_override.yaml",
        "version: 1\nservices:\n  web:\n    calls: [ { to: api, retry: { preset: nope, max_attempts: 2 } } ]\n  api: {}\n",
    );
    assert!(first_line(&e).contains("unknown preset `nope`"), "{e}");
    assert!(e.contains("known presets: "), "{e}");
}

#[test]
fn a_cycle_is_named_whole() {
    let e = rejected(
        "cycle.yaml",
        "version: 1\nservices:\n  edge: { calls: [ { to: api } ] }\n  api: { calls: [ { to: db } ] }\n  db: { calls: [ { to: edge } ] }\n",
    );
    assert!(
        first_line(&e).starts_with(
            "error: cycle.yaml:5:20: cycle in the call graph: edge → api → db → edge;"
        ),
        "{e}"
    );
}

#[test]
fn a_service_calling_itself() {
    let e = rejected(
        "self.yaml",
        "version: 1\nservices:\n  web:\n    calls: [ { to: web } ]\n",
    );
    assert!(
        first_line(&e).starts_with("error: self.yaml:4:20: `web` calls itself"),
        "{e}"
    );
}

#[test]
fn max_attempts_zero_negative_or_absurd() {
    for (name, value) in [
        ("zero.yaml", "0"),
        ("negative.yaml", "-3"),
        ("absurd.yaml", "100000000000"),
        ("huge.yaml", "2147483648"),
        ("word.yaml", "lots"),
    ] {
        let e = rejected(
            name,
            format!(
                "version: 1\nservices:\n  web:\n    calls: [ {{ to: api, retry: {{ max_attempts: {value} }} }} ]\n  api: {{}}\n"
            ),
        );
        assert!(
            first_line(&e).starts_with(&format!("error: {name}:4:48: `max_attempts: {value}`")),
            "{e}"
        );
    }
}

#[test]
fn negative_or_unparsable_durations() {
    for (name, value, says) in [
        ("neg.yaml", "-5ms", "negative"),
        ("word.yaml", "fast", "not a duration"),
        ("unitless.yaml", "250", "has no unit"),
        ("badunit.yaml", "5 parsecs", "unknown unit"),
    ] {
        let e = rejected(
            name,
            format!(
                "version: 1\nservices:\n  web:\n    calls: [ {{ to: api, timeout: {value} }} ]\n  api: {{}}\n"
            ),
        );
        assert!(
            first_line(&e).starts_with(&format!("error: {name}:4:34:")),
            "{e}"
        );
        assert!(e.contains(says), "{name}: {e}");
    }
}

#[test]
fn ratios_outside_zero_to_one() {
    for (name, field) in [
        ("ratio.yaml", "budget: { kind: ratio, ratio: 1.5 }"),
        ("neg_ratio.yaml", "budget: { kind: ratio, ratio: -0.1 }"),
        (
            "jitter_ratio.yaml",
            "backoff: { kind: constant, base: 1ms, jitter: proportional, jitter_ratio: 2 }",
        ),
    ] {
        let e = rejected(
            name,
            format!(
                "version: 1\nservices:\n  web:\n    calls: [ {{ to: api, retry: {{ max_attempts: 2, {field} }} }} ]\n  api: {{}}\n"
            ),
        );
        assert!(e.contains("outside 0..=1"), "{name}: {e}");
        assert!(
            first_line(&e).starts_with(&format!("error: {name}:4:")),
            "{e}"
        );
    }
}

#[test]
fn empty_and_whitespace_files() {
    let e = rejected("empty.yaml", "");
    assert!(
        first_line(&e).starts_with("error: empty.yaml:1:1: the file is empty"),
        "{e}"
    );
    let e = rejected("blank.yaml", "\n   \n# only a comment\n");
    assert!(e.contains("empty") || e.contains("no content"), "{e}");
}

#[test]
fn binary_garbage() {
    let mut bytes = b"version: 1\n".to_vec();
    bytes.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    let e = rejected("garbage.yaml", bytes);
    assert!(first_line(&e).starts_with("error: garbage.yaml:"), "{e}");
    let e = rejected("nul.yaml", b"\0\x01\x02\x03");
    assert!(first_line(&e).starts_with("error: nul.yaml:1:"), "{e}");
}

#[test]
fn a_missing_file() {
    let out = Command::cargo_bin("retrylint")
        .unwrap()
        .args(["check", "no/such/topology.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.starts_with("error: no/such/topology.yaml: no such file"),
        "{e}"
    );
}

#[test]
fn an_alias_bomb_is_refused_quickly() {
    let mut y = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10 {
        let prev = if i == 1 {
            "a".to_owned()
        } else {
            format!("b{}", i - 1)
        };
        y.push_str(&format!(
            "b{i}: &b{i} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
    }
    let e = rejected("bomb.yaml", y);
    assert!(e.contains("alias"), "{e}");
}

#[test]
fn nesting_100000_deep_is_refused_without_overflowing_the_stack() {
    let flow = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let e = rejected("deep_flow.yaml", flow);
    assert!(e.contains("nested deeper than 64"), "{e}");
    let block: String = (0..100_000)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i % 2000)))
        .collect();
    rejected("deep_block.yaml", block);
    let seq = format!("{}x\n", "- ".repeat(100_000));
    let e = rejected("deep_seq.yaml", seq);
    assert!(e.contains("nested deeper than 64"), "{e}");
}

#[test]
fn wrong_types_say_what_was_expected() {
    let e = rejected("types.yaml", "version: 1\nservices:\n  web: [1, 2]\n");
    assert!(
        first_line(&e)
            .contains("types.yaml:3:8: expected a mapping for service `web`, found a list"),
        "{e}"
    );
    let e = rejected(
        "bool.yaml",
        "version: 1\nservices:\n  web: { deadline_propagation: maybe }\n",
    );
    assert!(e.contains("true or false"), "{e}");
    let e = rejected("version.yaml", "version: 2\nservices:\n  web: {}\n");
    assert!(e.contains("unsupported schema version 2"), "{e}");
    let e = rejected("dup.yaml", "version: 1\nservices:\n  web: {}\n  web: {}\n");
    assert!(
        first_line(&e).contains("dup.yaml:4:3: duplicate key `web`"),
        "{e}"
    );
}

#[test]
fn unknown_rule_in_the_lint_section() {
    let e = rejected(
        "lint.yaml",
        "version: 1\nlint:\n  RL999: allow\nservices:\n  web: {}\n",
    );
    assert!(
        first_line(&e).starts_with("error: lint.yaml:3:3: unknown rule `RL999`"),
        "{e}"
    );
}

/// Several services nobody calls are several entries now (tests/entries.rs);
/// what stays bad input is an `entry:` list naming no service.
#[test]
fn an_entry_list_naming_an_unknown_service() {
    let e = rejected(
        "entry.yaml",
        "version: 1\nentry: [a, c]\nservices:\n  a: {}\n  b: {}\n",
    );
    assert!(
        first_line(&e).contains("entry.yaml:2:12: entry `c` is not a service"),
        "{e}"
    );
}

#[test]
fn a_file_over_the_size_limit() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bad_input");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("huge.yaml");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(65 * 1024 * 1024).unwrap();
    let out = Command::cargo_bin("retrylint")
        .unwrap()
        .arg("check")
        .arg(&path)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("larger than the 64 MiB limit"), "{e}");
}

#[test]
fn a_lint_key_spelled_with_dashes_names_the_right_one() {
    let e = rejected(
        "lint_dash.yaml",
        "version: 1\nlint: { fail-on: warning }\nservices:\n  a: {}\n",
    );
    assert_eq!(
        first_line(&e),
        "error: lint_dash.yaml:2:9: unknown `lint:` key `fail-on`; write `fail_on`"
    );
    let e = rejected(
        "lint_dash2.yaml",
        "version: 1\nlint:\n  maxAmplification: 2\nservices:\n  a: {}\n",
    );
    assert!(first_line(&e).ends_with("write `max_amplification`"), "{e}");
}

#[test]
fn common_yaml_slips_come_with_a_fix() {
    let e = rejected("tab.yaml", "version: 1\nservices:\n\ta: {}\n");
    assert!(
        first_line(&e).ends_with("indent with spaces; YAML does not allow tabs there"),
        "{e}"
    );
    let e = rejected("anchor.yaml", "version: 1\nservices:\n  a: *nope\n");
    assert!(first_line(&e).contains("define the anchor"), "{e}");
    let e = rejected(
        "number.yaml",
        "version: 1\nservices:\n  a: { calls: [ { to: 123 } ] }\n",
    );
    assert_eq!(
        first_line(&e),
        "error: number.yaml:3:23: expected a string for `to`, found an integer; quote a value YAML would read as a number or true/false: `\"123\"`"
    );
}

#[test]
fn custom_yaml_tags_are_refused_where_they_are_written() {
    let e = rejected(
        "tag_ref.yaml",
        "version: 1\nservices:\n  web: { calls: [ { to: !Ref ApiService } ] }\n  api: {}\n",
    );
    assert_eq!(
        first_line(&e),
        "error: tag_ref.yaml:3:25: unsupported YAML tag `!Ref`; retrylint reads plain values and resolves no tags (CloudFormation's `!Ref`, `!!python/object`, …): remove the tag and write the value itself"
    );
    let e = rejected(
        "tag_python.yaml",
        "version: 1\nservices:\n  web: !!python/object:os.system { latency: 1ms }\n",
    );
    assert!(
        first_line(&e).starts_with(
            "error: tag_python.yaml:3:8: unsupported YAML tag `!!python/object:os.system`"
        ),
        "{e}"
    );
    // The core schema's own tags are values like any other.
    let path = write(
        "tag_core.yaml",
        "version: !!int 1\nservices:\n  web: { latency: !!str 5ms }\n",
    );
    Command::cargo_bin("retrylint")
        .unwrap()
        .args(["check", "--format", "json"])
        .arg(&path)
        .timeout(Duration::from_secs(20))
        .assert()
        .code(0);
}

#[test]
fn nesting_too_deep_points_at_the_bracket_that_crossed_the_limit() {
    // `a:` is level 1; the 64th `[` (column 67) is level 65.
    let e = rejected("deep_col.yaml", format!("a: {}\n", "[".repeat(100_000)));
    assert_eq!(
        first_line(&e),
        "error: deep_col.yaml:1:67: YAML nested deeper than 64 levels; retrylint files need no deep nesting; a topology is a few levels deep"
    );
    let e = rejected(
        "deep_map.yaml",
        format!("a: {}{}\n", "{b: ".repeat(70), "}".repeat(70)),
    );
    assert!(
        first_line(&e).starts_with("error: deep_map.yaml:1:256: YAML nested deeper than 64 levels"),
        "{e}"
    );
}

#[test]
fn a_key_one_space_short_of_its_siblings_says_where_it_belongs() {
    let e = rejected(
        "indent.yaml",
        "version: 1\nservices:\n  web:\n    latency: 1ms\n   capacity: 4\n",
    );
    assert_eq!(
        first_line(&e),
        "error: indent.yaml:5:4: invalid YAML: while parsing a block mapping, did not find expected key; `capacity` is indented 3 spaces and `latency` above it 4 spaces: keys of one mapping line up, so indent `capacity` by 4 spaces like `latency`"
    );
    let e = rejected(
        "indent_call.yaml",
        "version: 1\nservices:\n  web:\n    calls:\n      - to: api\n       timeout: 1s\n  api: {}\n",
    );
    assert!(
        first_line(&e).starts_with("error: indent_call.yaml:6:8: ")
            && first_line(&e).ends_with("so indent `timeout` by 8 spaces like `to`"),
        "{e}"
    );
}

/// `n` distinct anchors, each used once.
fn anchors(n: usize) -> String {
    let mut y = String::from("version: 1\nservices:\n  web: {}\nx-anchors:\n");
    for i in 0..n {
        y.push_str(&format!("  a{i}: &a{i} {i}\n"));
    }
    y
}

#[test]
fn many_anchors_are_not_an_alias_bomb() {
    // 50,000 distinct anchors are within the limit.
    let path = write("anchors_ok.yaml", anchors(50_000));
    Command::cargo_bin("retrylint")
        .unwrap()
        .args(["check", "--format", "json"])
        .arg(&path)
        .timeout(Duration::from_secs(20))
        .assert()
        .code(0);
    // One more is refused as what it is, with the figures.
    let e = rejected("anchors.yaml", anchors(50_001));
    assert_eq!(
        first_line(&e),
        "error: anchors.yaml:50005:11: YAML refused: 50,001 anchors (`&name`), over the limit of 50,000; share defaults through a few anchors (`x-defaults: &defaults`, `<<: *defaults`) rather than one per value"
    );
    assert!(!e.contains("bomb"), "{e}");
}

#[test]
fn an_alias_bomb_says_so_with_the_figure() {
    let mut y = String::from("a: &a [x,x,x,x,x,x,x,x,x]\n");
    for i in 1..10 {
        let prev = if i == 1 {
            "a".to_owned()
        } else {
            format!("b{}", i - 1)
        };
        y.push_str(&format!(
            "b{i}: &b{i} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
    }
    let e = rejected("bomb_figures.yaml", y);
    assert!(
        first_line(&e).contains(
            "YAML refused: anchored nodes copy more than 1,000,000 events in all, aliases inside anchors included (an alias bomb?)"
        ),
        "{e}"
    );
    // Aliases expanded outside any anchor hit the replay limit instead.
    let mut y = String::from("a: &a [");
    y.push_str(&vec!["x"; 2_000].join(","));
    y.push_str("]\nb: [");
    y.push_str(&vec!["*a"; 1_500].join(","));
    y.push_str("]\n");
    let e = rejected("replay.yaml", y);
    assert!(
        first_line(&e).contains(
            "YAML refused: aliases expand to more than 2,000,000 events (an alias bomb?)"
        ),
        "{e}"
    );
}

#[test]
fn a_ten_thousand_service_cycle_is_one_short_line() {
    let mut y = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..10_000 {
        y.push_str(&format!(
            "  s{i}: {{ calls: [ {{ to: s{} }} ] }}\n",
            (i + 1) % 10_000
        ));
    }
    let e = rejected("cycle10k.yaml", y);
    let first = first_line(&e);
    assert_eq!(
        first,
        "error: cycle10k.yaml:10003:23: cycle in the call graph: s0 → s1 → s2 → s3 → … 9993 more … → s9997 → s9998 → s9999 → s0 (10000 services); calls must form a DAG: remove the call from `s9999` to `s0` or break the cycle elsewhere"
    );
    assert!(e.len() < 1_000, "{} bytes", e.len());
}

#[test]
fn an_empty_service_name_says_what_to_write() {
    let e = rejected("empty_name.yaml", "version: 1\nservices:\n  \"\": {}\n");
    assert_eq!(
        first_line(&e),
        "error: empty_name.yaml:3:3: a service name is empty; name the service, e.g. `api: {}`; calls reach it with `to: api`"
    );
}

#[test]
fn numbers_in_messages_are_the_literals_as_written() {
    let e = rejected(
        "literal_capacity.yaml",
        "version: 1\nservices:\n  web: { capacity: 1e20 }\n",
    );
    assert_eq!(
        first_line(&e),
        "error: literal_capacity.yaml:3:20: `capacity: 1e20` is out of range; it must be between 1 and 4294967295"
    );
    let e = rejected(
        "literal_ratio.yaml",
        "version: 1\nservices:\n  web: { calls: [ { to: api, retry: { max_attempts: 2, budget: { kind: ratio, ratio: 12345678901234567890 } } } ] }\n  api: {}\n",
    );
    assert!(
        first_line(&e).contains("`ratio` is 12345678901234567890, outside 0..=1"),
        "{e}"
    );
    let e = rejected(
        "literal_timeout.yaml",
        "version: 1\nservices:\n  web: { calls: [ { to: api, timeout: 2.50 } ] }\n  api: {}\n",
    );
    assert!(
        first_line(&e).contains("`timeout: 2.50` has no unit; write `timeout: 2.50s`"),
        "{e}"
    );
}

#[test]
fn dropping_expired_work_without_a_deadline_is_refused_at_the_key() {
    let e = rejected(
        "drop-expired.yaml",
        "version: 1\nentry: db\nservices:\n  db:\n    latency: 10ms\n    capacity: { workers: 2, queue: 10, drop_expired: true }\n",
    );
    assert_eq!(
        first_line(&e),
        "error: drop-expired.yaml:6:40: service `db` drops expired work, but no deadline reaches it; add `deadline_propagation: true` to the service (its callers then send their deadline), or remove `drop_expired`"
    );
}
