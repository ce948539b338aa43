//! Attacks on the outputs and on file handling (issue 25), with the inputs
//! under `tests/hostile/` (its README says what each tries).

use crate::common;

use common::run::retrylint;

const FORGED: &str = "tests/hostile/forged-workflow-command.yaml";

/// No control character but the line structure reaches a human format.
fn assert_no_raw_control(out: &str, format: &str) {
    let bad: Vec<char> = out
        .chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect();
    assert!(bad.is_empty(), "{format}: raw control characters {bad:?}");
}

#[test]
fn names_cannot_forge_workflow_commands() {
    let (code, out, err) = retrylint(&["check", FORGED, "--format", "github"]);
    assert_eq!(code, 1, "{err}");
    assert_no_raw_control(&out, "github");
    // Every line is an annotation or the summary; none is forged.
    for line in out.lines() {
        assert!(
            line.starts_with("::error file=tests/hostile/")
                || line.starts_with("::warning file=tests/hostile/")
                || line.starts_with("::notice file=tests/hostile/")
                || line.starts_with("retrylint: "),
            "forged line: {line:?}"
        );
    }
    let summary = out.lines().last().unwrap();
    assert!(
        summary.contains("in shop\\n::error file=evil.yaml,line=1::forged by the name\\r\\n"),
        "{summary}"
    );
}

#[test]
fn names_cannot_drive_the_terminal() {
    for format in ["table", "markdown", "github", "short"] {
        let (code, out, err) = retrylint(&["check", FORGED, "--format", format]);
        assert_eq!(code, 1, "{format}: {err}");
        assert_no_raw_control(&out, format);
        assert!(out.contains("db\\u{1b}[2J\\u{1b}[31m"), "{format}: {out}");
        assert_no_raw_control(&err, format);
    }
    // The machine formats keep the names, escaped by their encoders.
    let (_, out, _) = retrylint(&["check", FORGED, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["amplification"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["service"] == "db\u{1b}[2J\u{1b}[31m")
    );
}

#[test]
fn names_cannot_mention_link_or_show_images_in_a_pr_comment() {
    let (_, out, _) = retrylint(&["check", FORGED, "--format", "markdown"]);
    // GitHub mentions, links and shows images only outside code.
    let prose = outside_code(&out);
    assert!(out.contains("octocat"), "{out}");
    for active in ["@octocat", "](https://", "](http://", "![", "https://evil"] {
        assert!(!prose.contains(active), "{active} in {prose}");
    }
}

/// The markdown's text outside fenced blocks and code spans.
fn outside_code(md: &str) -> String {
    let mut prose = String::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // A code span runs from a backtick run to the next run as long.
        let mut rest = line;
        while let Some(open) = rest.find('`') {
            prose.push_str(&rest[..open]);
            let run = rest[open..].len() - rest[open..].trim_start_matches('`').len();
            let fence = &rest[open..open + run];
            let after = &rest[open + run..];
            match after.find(fence) {
                Some(close) => rest = &after[close + run..],
                None => {
                    rest = after;
                    break;
                }
            }
        }
        prose.push_str(rest);
        prose.push('\n');
    }
    prose
}

/// A scratch directory of its own for `test`, emptied first.
fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A file whose every line is a secret, to see whether any of it is shown.
const SECRET: &str = "aws_access_key_id = AKIASECRETSECRET\n[default: x\n";

#[test]
fn sources_may_not_leave_the_topology_directory() {
    let dir = scratch("sources");
    let outside = dir.join("outside");
    let repo = dir.join("repo");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(outside.join("credentials.yaml"), SECRET).unwrap();
    let abs = outside.join("credentials.yaml");
    for named in [
        "../outside/credentials.yaml".to_owned(),
        abs.display().to_string(),
    ] {
        let topo = repo.join("t.yaml");
        std::fs::write(
            &topo,
            format!("version: 1\nsources: [\"{named}\"]\nservices:\n  a: {{}}\n"),
        )
        .unwrap();
        let (code, out, err) = retrylint(&["check", topo.to_str().unwrap()]);
        assert_eq!(code, 2, "{named}: {out}{err}");
        assert!(
            err.contains("t.yaml:2:") && err.contains("leaves the topology's directory"),
            "{err}"
        );
        assert!(err.contains("--allow-outside"), "{err}");
        assert!(!err.contains("AKIA"), "{err}");
        // Allowed, it is read — and, not being a document, not quoted.
        let (code, _, err) = retrylint(&["check", topo.to_str().unwrap(), "--allow-outside"]);
        assert_eq!(code, 2, "{err}");
        assert!(!err.contains("AKIA"), "{err}");
    }
    // A link in the directory that leads out of it counts as leaving.
    std::os::unix::fs::symlink(&abs, repo.join("link.yaml")).unwrap();
    let topo = repo.join("linked.yaml");
    std::fs::write(
        &topo,
        "version: 1\nsources: [link.yaml]\nservices:\n  a: {}\n",
    )
    .unwrap();
    let (code, _, err) = retrylint(&["check", topo.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("leaves the topology's directory"), "{err}");
}

#[test]
fn walks_do_not_follow_links_out_of_the_directory() {
    let dir = scratch("walk");
    let walked = dir.join("mesh");
    std::fs::create_dir_all(&walked).unwrap();
    std::fs::write(dir.join("secret.yaml"), SECRET).unwrap();
    std::os::unix::fs::symlink(dir.join("secret.yaml"), walked.join("vs.yaml")).unwrap();
    std::fs::write(
        walked.join("topology.yaml"),
        "version: 1\nservices:\n  a: {}\n",
    )
    .unwrap();
    let (_, out, err) = retrylint(&["check", "--from", walked.to_str().unwrap(), "--verbose"]);
    assert!(!err.contains("AKIA") && !out.contains("AKIA"), "{out}{err}");
    assert!(!err.contains("vs.yaml"), "the link was read: {err}");
    // --policies walks its directory the same way.
    let policies = dir.join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::os::unix::fs::symlink(dir.join("secret.yaml"), policies.join("evil.yaml")).unwrap();
    let (code, out, err) = retrylint(&[
        "check",
        "examples/clean.yaml",
        "--policies",
        policies.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("AKIA"), "{err}");
}

#[test]
fn a_topology_that_is_not_a_document_is_not_quoted() {
    let dir = scratch("quote");
    std::fs::write(dir.join("credentials"), SECRET).unwrap();
    std::os::unix::fs::symlink(dir.join("credentials"), dir.join("topology.yaml")).unwrap();
    for path in [dir.join("credentials"), dir.join("topology.yaml")] {
        let (code, _, err) = retrylint(&["check", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(!err.contains("AKIA"), "{}: {err}", path.display());
    }
    // The environment, with its secrets, is never shown either.
    let (code, _, err) = assert_cmd_env_leak();
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("RETRYLINT_HOSTILE_SECRET"), "{err}");
}

fn assert_cmd_env_leak() -> (i32, String, String) {
    let mut cmd = assert_cmd::Command::cargo_bin("retrylint").unwrap();
    cmd.args(["check", "/proc/self/environ"])
        .env("RETRYLINT_HOSTILE_SECRET", "hunter2: [x");
    common::run::output(cmd)
}

#[test]
fn fifos_are_refused_not_opened() {
    let dir = scratch("fifo");
    let fifo = dir.join("topology.yaml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        common::absent::tool_missing("FIFO refusal", "mkfifo", "coreutils");
        return;
    }
    // Each would block forever on open if the FIFO were opened.
    for args in [
        vec!["check", fifo.to_str().unwrap()],
        vec!["check", "--from", fifo.to_str().unwrap()],
        vec![
            "check",
            "examples/clean.yaml",
            "--policies",
            dir.to_str().unwrap(),
        ],
    ] {
        let (code, _, err) = retrylint(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
    let topo = dir.join("t.yaml");
    std::fs::write(
        &topo,
        "version: 1\nsources: [topology.yaml]\nservices:\n  a: {}\n",
    )
    .unwrap();
    let (code, _, err) = retrylint(&["check", topo.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn an_invalid_topology_still_gives_a_valid_sarif_log() {
    let dir = scratch("sarif");
    let topo = dir.join("broken.yaml");
    std::fs::write(&topo, "version: 1\nservices:\n  a: { calls: [nope] }\n").unwrap();
    let (code, out, err) = retrylint(&["check", topo.to_str().unwrap(), "--format", "sarif"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("broken.yaml:3:"), "{err}");
    let log: serde_json::Value = serde_json::from_str(&out).expect("a SARIF log on stdout");
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), 0);
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(invocation["exitCode"], 2);
    let note = &invocation["toolExecutionNotifications"][0];
    assert_eq!(note["level"], "error");
    assert!(
        note["message"]["text"].as_str().unwrap().contains("nope"),
        "{note}"
    );
    let region = &note["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 3);
    assert!(
        run["automationDetails"]["id"]
            .as_str()
            .unwrap()
            .starts_with("retrylint/check/"),
        "{run}"
    );
    // A missing file too: the log has the error, without a place.
    let (code, out, _) = retrylint(&["check", "no/such.yaml", "--format", "sarif"]);
    assert_eq!(code, 2);
    let log: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        log["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("no such file")
    );
}

const INSERTS: &str = "tests/fixtures/fix/RL012-before.yaml";

#[test]
fn fix_keeps_a_crlf_files_line_endings() {
    let dir = scratch("crlf");
    let path = dir.join("t.yaml");
    let crlf = std::fs::read_to_string(INSERTS)
        .unwrap()
        .replace('\n', "\r\n");
    std::fs::write(&path, &crlf).unwrap();
    let (code, _, err) = retrylint(&["check", path.to_str().unwrap(), "--fix", "--exit-zero"]);
    assert_eq!(code, 0, "{err}");
    let fixed = std::fs::read_to_string(&path).unwrap();
    assert_ne!(fixed, crlf, "nothing was fixed: {err}");
    let bare = fixed.replace("\r\n", "").matches('\n').count();
    assert_eq!(bare, 0, "lines ending in LF alone: {fixed:?}");
    assert!(fixed.contains("budget: { kind: ratio"), "{fixed}");
}

#[test]
fn fix_writes_through_a_link_and_says_so() {
    let dir = scratch("link");
    let real = dir.join("real.yaml");
    std::fs::copy(INSERTS, &real).unwrap();
    let link = dir.join("link.yaml");
    std::os::unix::fs::symlink("real.yaml", &link).unwrap();
    let (code, _, err) = retrylint(&["check", link.to_str().unwrap(), "--fix", "--exit-zero"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("budget: { kind: ratio"),
        "the target was left unfixed"
    );
    assert!(err.contains("is a link: its target"), "{err}");
}

#[test]
fn fix_says_what_happens_to_hard_links() {
    let dir = scratch("hard");
    let one = dir.join("one.yaml");
    std::fs::copy(INSERTS, &one).unwrap();
    let other = dir.join("other.yaml");
    std::fs::hard_link(&one, &other).unwrap();
    let (code, _, err) = retrylint(&["check", one.to_str().unwrap(), "--fix", "--exit-zero"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("1 other hard link(s): they keep the old text"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        std::fs::read_to_string(INSERTS).unwrap()
    );
}

#[test]
fn export_refuses_a_directory_that_is_not_empty() {
    let dir = scratch("export");
    std::fs::write(dir.join("kustomization.yaml"), "mine: true\n").unwrap();
    let out = dir.to_str().unwrap();
    let (code, _, err) = retrylint(&["export", "kubernetes", "examples/sidecar.yaml", "-o", out]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not empty (it would replace"), "{err}");
    assert!(err.contains("kustomization.yaml"), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap(),
        "mine: true\n"
    );
    let (code, _, err) = retrylint(&[
        "export",
        "kubernetes",
        "examples/sidecar.yaml",
        "-o",
        out,
        "--force",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(
        std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap(),
        "mine: true\n"
    );
}

#[test]
fn messages_say_what_to_do() {
    let dir = scratch("messages");
    // A 20,000-character key names YAML's 1,024-character limit.
    let long = dir.join("long-key.yaml");
    std::fs::write(
        &long,
        format!(
            "version: 1\nservices:\n  a: {{}}\n  {}: {{}}\n",
            "k".repeat(20_000)
        ),
    )
    .unwrap();
    let (code, _, err) = retrylint(&["check", long.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "long-key.yaml:4:3: a key of 20000 characters: YAML reads a plain key of at most 1024"
        ),
        "{}",
        &err[..err.len().min(400)]
    );
    // `5 ms` and `5ms5ms` are errors, not 5 ms.
    for (written, says) in [
        ("5 ms", "has a space in it"),
        ("5ms5ms", "has `ms` after `ms`; write each unit once"),
    ] {
        let path = dir.join("duration.yaml");
        std::fs::write(
            &path,
            format!("version: 1\nservices:\n  a: {{ calls: [ {{ to: b, timeout: {written} }} ] }}\n  b: {{}}\n"),
        )
        .unwrap();
        let (code, _, err) = retrylint(&["check", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{written}: {err}");
        assert!(
            err.contains("duration.yaml:3:") && err.contains(says),
            "{written}: {err}"
        );
    }
    // A user preset that takes a shipped preset's name says so.
    let policies = dir.join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(
        policies.join("istio-default.yaml"),
        "max_attempts: 2\nbackoff: { kind: constant, base: 25ms, jitter: full }\n",
    )
    .unwrap();
    let (code, _, err) = retrylint(&[
        "check",
        "examples/clean.yaml",
        "--policies",
        policies.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("note: preset `istio-default` from ")
            && err.contains("istio-default.yaml replaces the shipped preset of that name"),
        "{err}"
    );
}

#[test]
fn a_port_clash_names_the_port_and_the_flag() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = scratch("port");
    let peers = dir.join("peers.yaml");
    std::fs::write(&peers, "app: 127.0.0.1:9\n").unwrap();
    for flag in ["--listen", "--admin"] {
        let (code, _, err) = retrylint(&[
            "serve",
            "examples/sidecar.yaml",
            "--service",
            "api",
            "--peers",
            peers.to_str().unwrap(),
            "--token",
            "a-token-of-16-chars",
            flag,
            &format!("127.0.0.1:{port}"),
        ]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(&format!("cannot listen on 127.0.0.1:{port} ({flag})"))
                && err.contains(&format!("name another with {flag}")),
            "{err}"
        );
    }
    drop(taken);
}

#[test]
fn an_allocation_failure_names_the_memory_limit() {
    if std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_err()
    {
        common::absent::tool_missing(
            "an allocation failure names the memory limit",
            "prlimit",
            "apt-get install -y util-linux",
        );
        return;
    }
    // 20,000 services in a chain need a few hundred MiB; 96 MiB of address
    // space is enough to start and read the limit, not to check them.
    let dir = scratch("memory");
    let path = dir.join("chain.yaml");
    let mut yaml = String::from("version: 1\nentry: s0\nservices:\n");
    for i in 0..20_000 {
        yaml.push_str(&format!("  s{i}: {{ calls: [ {{ to: s{} }} ] }}\n", i + 1));
    }
    yaml.push_str("  s20000: {}\n");
    std::fs::write(&path, yaml).unwrap();
    let out = std::process::Command::new("prlimit")
        .arg(format!("--as={}", 96 << 20))
        .arg(env!("CARGO_BIN_EXE_retrylint"))
        .args(["check", path.to_str().unwrap(), "--format", "json"])
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("prlimit runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.starts_with(
            "error: retrylint ran out of memory under the address-space limit (RLIMIT_AS, `ulimit -v`) of 96 MiB.\n  help: raise the limit, or make the run smaller"
        ),
        "{err}"
    );
}
