//! docs/rules.md is the output of `retrylint rules --format markdown`: the
//! rules' own doc comments, so the page cannot drift from `explain`.

use std::process::Command;

#[test]
fn docs_rules_md_is_the_generated_page() {
    let out = Command::new(env!("CARGO_BIN_EXE_retrylint"))
        .args(["rules", "--format", "markdown"])
        .output()
        .expect("run retrylint");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let generated = String::from_utf8(out.stdout).expect("UTF-8");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rules.md");
    let committed = std::fs::read_to_string(path).expect("docs/rules.md");
    assert!(
        committed == generated,
        "docs/rules.md is out of date with the rules' doc comments; regenerate it:\n    \
         cargo run --quiet -- rules --format markdown > docs/rules.md"
    );
    // Every rule has its section, so the page is not the empty output of a
    // broken command written back.
    for rule in retrylint::lint::RULES {
        let heading = format!("\n## {} {}\n", rule.code, rule.name);
        assert!(
            generated.contains(&heading),
            "no `{}` section",
            heading.trim()
        );
    }
}
