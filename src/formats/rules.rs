//! `retrylint rules` and `retrylint explain CODE`.

use std::fmt::Write as _;

use crate::lint::Rule;

/// One line per rule: code, name, default level, summary.
pub fn list(rules: &[&Rule]) -> String {
    let width = rules.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for r in rules {
        let _ = writeln!(
            out,
            "{}  {:width$}  {:7}  {}",
            r.code,
            r.name,
            r.default.as_str(),
            r.summary
        );
    }
    out
}

/// A rule's documentation, as written in its source file.
pub fn explain(rule: &Rule) -> String {
    format!(
        "# {} {}\n\nDefault level: {}. {}.\n\n{}",
        rule.code,
        rule.name,
        rule.default.as_str(),
        capitalize(rule.summary),
        doc(rule)
    )
}

/// A rule's doc as Markdown: the doc comment without the space after each `///`.
/// `explain`, SARIF's descriptions and help all print this text.
pub fn doc(rule: &Rule) -> String {
    rule.doc
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
