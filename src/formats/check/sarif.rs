//! `--format sarif`: SARIF 2.1.0 for code-scanning UIs (GitHub code scanning,
//! Azure DevOps, IDE viewers), built by hand with serde_json — the format is
//! small and a SARIF crate would pull a code generator for it.
//!
//! What GitHub reads: `tool.driver.rules[]` (id, short and full description,
//! help, default level), and per result `ruleId`, `ruleIndex`, `level`,
//! `message.text`, one `physicalLocation` (relative uri, region with start and
//! end line and column) and `partialFingerprints.primaryLocationLineHash`, which
//! keeps an alert the same alert while unrelated lines move, plus
//! `retrylintFinding/v1`, a hash of what the finding is about (rule, service,
//! call, layer) that no edit elsewhere in the file can change.
//!
//! `runs[].automationDetails.id` is `retrylint/check/<file>/`: GitHub keeps the
//! alerts of each category apart, so uploads for several topologies in one
//! repository do not close each other's alerts.
//!
//! An input `check` cannot read still gives a valid log ([`invalid_input`]):
//! no results, and the located error in
//! `invocations[].toolExecutionNotifications`, so code scanning shows it
//! instead of failing on an empty file.
//!
//! A finding with a fix (`crate::fix`) gets SARIF's standard `fixes`: one fix
//! with its description and an `artifactChanges` entry whose `replacements`
//! are the edits (`deletedRegion` by line/column and by byte offset, empty for
//! an insertion, and `insertedContent`). A refused fix is left out.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::{Value, json};

use crate::formats::rules::doc;
use crate::formats::snippet::{self, FileLines};
use crate::formats::{Reporter, Style};
use crate::lint::{CheckReport, Finding, RULES, Severity, rules::find_rule};

pub struct Sarif;

pub(crate) const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

impl Reporter<CheckReport> for Sarif {
    fn render(&self, r: &CheckReport, style: Style<'_>) -> String {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = self.write(r, style, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// The log as `serde_json::to_string_pretty` prints it (keys sorted, two
    /// spaces a level), one result at a time: a 10,000-service chain's tens of
    /// MB of results never sit in memory at once.
    fn write(&self, r: &CheckReport, _: Style<'_>, out: &mut dyn Write) -> io::Result<()> {
        let pretty = |v: &Value, indent: &str| {
            serde_json::to_string_pretty(v)
                .unwrap_or_default()
                .replace('\n', &format!("\n{indent}"))
        };
        let schema = serde_json::to_string(SCHEMA).unwrap_or_default();
        write!(
            out,
            "{{\n  \"$schema\": {schema},\n  \"runs\": [\n    {{\n      \"automationDetails\": {},\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": [",
            pretty(&automation(&r.file), "      ")
        )?;
        let indent = " ".repeat(8);
        let mut first = true;
        for result in results(r) {
            out.write_all(if first { b"\n" } else { b",\n" })?;
            first = false;
            write!(out, "{indent}{}", pretty(&result, &indent))?;
        }
        if !first {
            out.write_all(b"\n      ")?;
        }
        write!(
            out,
            "],\n      \"tool\": {}\n    }}\n  ],\n  \"version\": \"2.1.0\"\n}}\n",
            pretty(&json!({ "driver": driver() }), "      ")
        )
    }
}

/// The whole SARIF log of one `check`, as one value (`write` streams the same).
pub fn log(r: &CheckReport) -> Value {
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "automationDetails": automation(&r.file),
            "tool": { "driver": driver() },
            "columnKind": "unicodeCodePoints",
            "results": results(r).collect::<Vec<_>>(),
        }],
    })
}

/// The log of a `check` that could not read its input: a run with no results
/// whose invocation failed, its notification carrying the error's message,
/// fix and place (when the error has one).
pub fn invalid_input(file: &str, line: Option<(u32, u32)>, message: &str) -> Value {
    let mut notification = json!({
        "level": "error",
        "message": { "text": message },
        "descriptor": { "id": "invalid-input" },
    });
    if !file.is_empty() {
        let mut location = json!({ "artifactLocation": { "uri": uri(file) } });
        if let Some((line, column)) = line.filter(|(l, _)| *l > 0) {
            location["region"] = json!({ "startLine": line, "startColumn": column.max(1) });
        }
        notification["locations"] = json!([{ "physicalLocation": location }]);
    }
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "automationDetails": automation(file),
            "tool": { "driver": driver() },
            "columnKind": "unicodeCodePoints",
            "invocations": [{
                "executionSuccessful": false,
                "exitCode": 2,
                "toolExecutionNotifications": [notification],
            }],
            "results": [],
        }],
    })
}

/// `automationDetails`: one category per topology file.
fn automation(file: &str) -> Value {
    let file = if file.is_empty() { "stdin" } else { file };
    json!({ "id": format!("retrylint/check/{}/", uri(file)) })
}

/// `tool.driver`: retrylint and every rule's documentation.
fn driver() -> Value {
    let mut driver = json!({
        "name": "retrylint",
        "version": env!("CARGO_PKG_VERSION"),
        "semanticVersion": env!("CARGO_PKG_VERSION"),
        "rules": RULES.iter().map(|rule| {
            let doc = doc(rule);
            json!({
                "id": rule.code,
                "name": rule.name,
                "shortDescription": { "text": rule.summary },
                "fullDescription": { "text": doc },
                "help": { "text": doc, "markdown": doc },
                "defaultConfiguration": { "level": level(rule.default) },
            })
        }).collect::<Vec<_>>(),
    });
    let repository = env!("CARGO_PKG_REPOSITORY");
    if !repository.is_empty() {
        driver["informationUri"] = json!(repository);
    }
    driver
}

/// One result per finding, made as they are asked for.
fn results(r: &CheckReport) -> impl Iterator<Item = Value> + '_ {
    let lines = FileLines::new(r);
    let mut seen = HashMap::new();
    r.findings.iter().map(move |f| {
        let text = lines.get(&f.file, f.line.max(1));
        let hash = line_hash(text, f.code);
        let n = seen.entry((0, hash)).or_insert(0u32);
        *n += 1;
        let line_print = format!("{hash:016x}:{n}");
        let about = finding_hash(f);
        let n = seen.entry((1, about)).or_insert(0u32);
        *n += 1;
        result(f, text, &line_print, &format!("{about:016x}:{n}"))
    })
}

/// The hash of what a finding is about, independent of where it sits.
pub(crate) fn finding_hash(f: &Finding) -> u64 {
    let mut bytes = Vec::new();
    let (from, to) = f
        .call
        .as_ref()
        .map_or(("", ""), |c| (c.from.as_str(), c.to.as_str()));
    for part in [
        f.code,
        &f.file,
        &f.service,
        from,
        to,
        f.layer.as_deref().unwrap_or(""),
    ] {
        bytes.extend_from_slice(part.as_bytes());
        bytes.push(0);
    }
    fnv1a64(&bytes)
}

/// One result; `text` is the finding's source line.
fn result(f: &Finding, text: &str, fingerprint: &str, about: &str) -> Value {
    let line = f.line.max(1);
    let (start, end) = snippet::columns(text, f.column);
    let mut message = f.message.clone();
    if !f.help.is_empty() {
        message.push_str(" — fix: ");
        message.push_str(&f.help);
    }
    let mut properties = json!({ "service": f.service });
    if let Some(call) = &f.call {
        properties["call"] = json!({ "from": call.from, "to": call.to });
    }
    if let Some(layer) = &f.layer {
        properties["layer"] = json!(layer);
    }
    let mut result = json!({
        "ruleId": f.code,
        "ruleIndex": find_rule(f.code).unwrap_or(0),
        "level": level(f.severity),
        "message": { "text": message },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": { "uri": uri(&f.file) },
                "region": {
                    "startLine": line,
                    "startColumn": start,
                    "endLine": line,
                    "endColumn": end,
                },
            },
        }],
        "partialFingerprints": {
            "primaryLocationLineHash": fingerprint,
            "retrylintFinding/v1": about,
        },
        "properties": properties,
    });
    if let Some(fix) = f
        .fix
        .as_ref()
        .filter(|x| x.refused.is_none() && !x.edits.is_empty())
    {
        result["fixes"] = json!([fix_value(fix)]);
    }
    result
}

/// SARIF's `fix`: one artifact change per file, a replacement per edit, each
/// region given both by line and column and by byte offset.
fn fix_value(fix: &crate::lint::Fix) -> Value {
    let mut changes: Vec<(String, Vec<Value>)> = Vec::new();
    for e in &fix.edits {
        let replacement = json!({
            "deletedRegion": {
                "startLine": e.line,
                "startColumn": e.column,
                "endLine": e.end_line,
                "endColumn": e.end_column,
                "byteOffset": e.start,
                "byteLength": e.end - e.start,
            },
            "insertedContent": { "text": e.text },
        });
        match changes.iter_mut().find(|(file, _)| *file == e.file) {
            Some((_, r)) => r.push(replacement),
            None => changes.push((e.file.clone(), vec![replacement])),
        }
    }
    json!({
        "description": { "text": fix.description },
        "artifactChanges": changes
            .into_iter()
            .map(|(file, replacements)| json!({
                "artifactLocation": { "uri": uri(&file) },
                "replacements": replacements,
            }))
            .collect::<Vec<_>>(),
    })
}

/// SARIF's level names.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The file as given, as a relative URI reference: forward slashes, no `./`,
/// and anything outside RFC 3986's path characters percent-encoded.
pub fn uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let path = path.trim_start_matches("./");
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// FNV-1a, 64 bits: a fixed, documented hash, so a fingerprint is the same
/// across runs, machines and Rust versions (std's hashers promise none of that).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The hash of a finding's place: its source line without surrounding white
/// space (so re-indenting or moving the line keeps it), then the rule code.
pub(crate) fn line_hash(line: &str, code: &str) -> u64 {
    let mut bytes = line.trim().as_bytes().to_vec();
    bytes.push(0);
    bytes.extend_from_slice(code.as_bytes());
    fnv1a64(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        // From the FNV reference (Fowler, Noll, Vo), 64-bit FNV-1a.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn fingerprints_are_stable_and_ignore_indentation() {
        // Pinned (and checked with an independent FNV-1a): a change here would
        // open every alert anew for every user.
        assert_eq!(
            line_hash("retry: istio-default", "RL003"),
            0x5f53758b89c318be
        );
        assert_eq!(
            line_hash("      retry: istio-default  ", "RL003"),
            line_hash("retry: istio-default", "RL003")
        );
        assert_ne!(
            line_hash("retry: istio-default", "RL003"),
            line_hash("retry: istio-default", "RL010")
        );
    }

    #[test]
    fn the_streamed_log_is_the_pretty_printed_value() {
        let presets = crate::topology::Presets::embedded();
        for text in [
            "version: 1\nservices:\n  a: {}\n",
            "version: 1\nservices:\n  a: { calls: [ { to: b, retry: { max_attempts: 9 } } ] }\n  b: { calls: [ { to: c, retry: { max_attempts: 9 } } ] }\n  c: {}\n",
        ] {
            let t = crate::topology::load_str(text, "t.yaml", "t", &presets).unwrap();
            let config =
                crate::lint::Config::resolve(&t, &crate::lint::CliLevels::default()).unwrap();
            let r = crate::fix::check(&t, &config);
            let mut whole = serde_json::to_string_pretty(&log(&r)).unwrap();
            whole.push('\n');
            assert_eq!(Sarif.render(&r, Style::default()), whole);
        }
    }

    #[test]
    fn uris_are_relative_references() {
        assert_eq!(uri("examples/ecommerce.yaml"), "examples/ecommerce.yaml");
        assert_eq!(uri("./deploy\\prod topo.yaml"), "deploy/prod%20topo.yaml");
        assert_eq!(uri("ü#1.yaml"), "%C3%BC%231.yaml");
    }
}
