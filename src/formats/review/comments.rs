//! The suggestions as one GitHub pull-request review: the JSON body of
//! `POST /repos/{owner}/{repo}/pulls/{number}/reviews`, one comment per
//! suggestion on the lines it rewrites, each holding its ```` ```suggestion ````
//! block. GitHub renders a suggestion (with its "Commit suggestion" button)
//! only in a review comment on lines of the diff; in the summary comment a
//! reviewer has to paste it. [`suggest`](crate::review::suggestions::suggest)
//! already keeps to the lines the diff shows.
//!
//! Each comment's first line is a marker naming the place and a digest of
//! the suggestion, so a workflow that runs on every push can leave out the
//! comments it posted before instead of repeating them.

use serde::Serialize;

use crate::formats::check::markdown::{cell, code};
use crate::review::suggestions::{Suggestion, Suggestions};

/// The start of every comment's marker line.
pub(crate) const MARKER: &str = "<!-- retrylint-suggestion ";

#[derive(Serialize)]
struct Review<'a> {
    event: &'static str,
    body: String,
    comments: Vec<Comment<'a>>,
}

#[derive(Serialize)]
struct Comment<'a> {
    path: &'a str,
    body: String,
    line: u32,
    side: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_side: Option<&'static str>,
}

pub fn render(s: &Suggestions) -> String {
    let review = Review {
        // A comment, not an approval or a request for changes: the gate is
        // the check's exit code.
        event: "COMMENT",
        body: format!(
            "retrylint: {} suggested {} on lines changed since {}.",
            s.items.len(),
            if s.items.len() == 1 {
                "change"
            } else {
                "changes"
            },
            code(&s.base)
        ),
        comments: s.items.iter().map(comment).collect(),
    };
    let mut out = serde_json::to_string_pretty(&review).expect("plain data serialises");
    out.push('\n');
    out
}

fn comment(s: &Suggestion) -> Comment<'_> {
    let what: Vec<String> = s
        .findings
        .iter()
        .map(|f| {
            format!(
                "**{} {}** (line {}): {}",
                f.code,
                f.rule,
                f.line,
                cell(&f.description)
            )
        })
        .collect();
    let body = format!(
        "{MARKER}{}:{}-{} {:016x} -->\n{}\n\n{}",
        crate::visible::name(&s.file).replace("--", "-\u{2060}-"),
        s.line,
        s.end_line,
        digest(s),
        what.join("\n"),
        block(&s.text)
    );
    let multi = s.end_line > s.line;
    Comment {
        path: &s.file,
        body,
        line: s.end_line,
        side: "RIGHT",
        start_line: multi.then_some(s.line),
        start_side: multi.then_some("RIGHT"),
    }
}

/// A ```` ```suggestion ```` block of `text` (empty: the lines are removed),
/// fenced longer than any run of backticks in it.
pub fn block(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = if text.is_empty() {
        String::new()
    } else {
        format!("{text}\n")
    };
    format!("{fence}suggestion\n{body}{fence}")
}

/// FNV-1a over what the comment says: the same suggestion on a later push
/// has the same marker; a changed one, a new marker.
fn digest(s: &Suggestion) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    eat(s.text.as_bytes());
    for f in &s.findings {
        eat(f.code.as_bytes());
        eat(f.description.as_bytes());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::suggestions::Fixed;

    fn suggestion(line: u32, end_line: u32, text: &str) -> Suggestion {
        Suggestion {
            file: "topology.yaml".into(),
            line,
            end_line,
            text: text.into(),
            findings: vec![Fixed {
                code: "RL011",
                rule: "missing-timeout",
                line,
                description: "set timeout: 120ms on api → ledger".into(),
            }],
        }
    }

    #[test]
    fn one_line_and_several_lines_as_github_takes_them() {
        let s = Suggestions {
            base: "base.yaml".into(),
            changed_lines: 2,
            items: vec![
                suggestion(22, 22, "      - to: ledger\n        timeout: 120ms"),
                suggestion(14, 16, ""),
            ],
        };
        let v: serde_json::Value = serde_json::from_str(&render(&s)).unwrap();
        assert_eq!(v["event"], "COMMENT");
        assert_eq!(
            v["body"],
            "retrylint: 2 suggested changes on lines changed since `base.yaml`."
        );
        let c = &v["comments"];
        assert_eq!(c[0]["path"], "topology.yaml");
        assert_eq!(c[0]["line"], 22);
        assert_eq!(c[0]["side"], "RIGHT");
        assert!(c[0].get("start_line").is_none());
        assert_eq!(
            (c[1]["start_line"].clone(), c[1]["line"].clone()),
            (14.into(), 16.into())
        );
        assert_eq!(c[1]["start_side"], "RIGHT");
        let body = c[0]["body"].as_str().unwrap();
        assert!(
            body.starts_with("<!-- retrylint-suggestion topology.yaml:22-22 "),
            "{body}"
        );
        assert!(
            body.contains(
                "**RL011 missing-timeout** (line 22): set timeout: 120ms on api → ledger"
            )
        );
        assert!(
            body.ends_with("```suggestion\n      - to: ledger\n        timeout: 120ms\n```"),
            "{body}"
        );
        // Removing lines is an empty block.
        assert!(
            c[1]["body"]
                .as_str()
                .unwrap()
                .ends_with("```suggestion\n```")
        );
    }

    #[test]
    fn the_marker_changes_with_the_suggestion_and_only_then() {
        let a = comment(&suggestion(5, 5, "x: 1")).body;
        let again = comment(&suggestion(5, 5, "x: 1")).body;
        let other = comment(&suggestion(5, 5, "x: 2")).body;
        let first = |b: &str| b.lines().next().unwrap().to_owned();
        assert_eq!(first(&a), first(&again));
        assert_ne!(first(&a), first(&other));
    }

    #[test]
    fn a_block_is_fenced_past_the_backticks_it_holds() {
        assert_eq!(block("a ``` b"), "````suggestion\na ``` b\n````");
        assert_eq!(block("plain"), "```suggestion\nplain\n```");
    }

    #[test]
    fn no_suggestions_is_a_review_with_no_comments() {
        let s = Suggestions {
            base: "base.yaml".into(),
            changed_lines: 0,
            items: vec![],
        };
        let v: serde_json::Value = serde_json::from_str(&render(&s)).unwrap();
        assert_eq!(v["comments"].as_array().unwrap().len(), 0);
    }
}
