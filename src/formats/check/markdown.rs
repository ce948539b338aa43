//! `--format markdown`: a PR comment. A one-line verdict, the findings table,
//! the amplification table and a mermaid graph of the topology with each call's
//! attempts on its edge, hot paths drawn thick and red, services over the limit
//! filled red. Findings are grouped errors first; the groups after the first
//! and a long amplification table fold into `<details>`, so the comment opens
//! on what fails the build. Each location links to its line when the caller
//! knows where the file is on the web ([`Style::link_base`]); otherwise no
//! links, no images, nothing fetched.
//!
//! GitHub refuses comments over 65,536 characters, so a large topology's tables
//! are cut (the worst rows kept, the rest counted) and its graph left out.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::formats::figures;
use crate::formats::{Reporter, Style};
use crate::lint::{AmplificationRow, CheckReport, EdgeRow, Severity};

pub struct Markdown;

/// At most this many findings rows; the rest are counted.
const MAX_FINDINGS: usize = 100;
/// At most this many amplification rows; beyond, the worst are shown.
const MAX_SERVICES: usize = 50;
/// Beyond these a graph in a PR comment is unreadable (mermaid shrinks it to
/// fit the column): the comment says so and the review page draws it.
const MAX_GRAPH_NODES: usize = 30;
const MAX_GRAPH_EDGES: usize = 60;
/// An amplification table longer than this folds into `<details>`.
const OPEN_SERVICES: usize = 12;

impl Reporter<CheckReport> for Markdown {
    fn render(&self, r: &CheckReport, style: Style<'_>) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}\n", verdict(r));
        findings(&mut out, r, style.link_base);
        amplification(&mut out, r);
        graph(&mut out, r);
        out
    }
}

/// `❌ **retrylint**: 11 errors, 26 warnings in `checkout` — worst case 486× at `db``.
pub(crate) fn verdict(r: &CheckReport) -> String {
    let s = &r.summary;
    let (mark, counts) = if r.failed() {
        let mut c = figures::counts(s);
        if r.fail_on != Severity::Error {
            let _ = write!(c, " ({})", figures::gate(r));
        }
        ("❌", c)
    } else if s.warnings + s.infos == 0 {
        ("✅", "no findings".to_owned())
    } else {
        ("✅", format!("no errors, {}", figures::counts(s)))
    };
    let worst = figures::worst_service(r)
        .map(|row| {
            format!(
                " — worst case {} at {}",
                figures::worst_case(row),
                code(&row.service)
            )
        })
        .unwrap_or_default();
    format!(
        "{mark} **retrylint**: {counts} in {}{worst}",
        code(&r.topology)
    )
}

fn findings(out: &mut String, r: &CheckReport, link_base: Option<&str>) {
    if r.findings.is_empty() {
        return;
    }
    out.push_str("### Findings\n\n");
    let mut shown = 0;
    let mut first = true;
    for (sev, icon, word) in [
        (Severity::Error, "🔴", "errors"),
        (Severity::Warning, "🟡", "warnings"),
        (Severity::Info, "🔵", "infos"),
    ] {
        let group: Vec<_> = r.findings.iter().filter(|f| f.severity == sev).collect();
        if group.is_empty() || shown == MAX_FINDINGS {
            continue;
        }
        // The first group open: it is what fails (or would fail) the gate.
        let folded = !first;
        first = false;
        if folded {
            let _ = writeln!(
                out,
                "<details><summary>{} {}</summary>\n",
                group.len(),
                if group.len() == 1 {
                    word.trim_end_matches('s')
                } else {
                    word
                }
            );
        }
        out.push_str("| severity | code | rule | location | message | fix |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        for f in group.iter().take(MAX_FINDINGS - shown) {
            shown += 1;
            let _ = writeln!(
                out,
                "| {icon} {} | {} | {} | {} | {} | {} |",
                f.severity.as_str(),
                f.code,
                f.rule,
                location(&f.file, f.line, link_base),
                cell(&f.message),
                cell(&f.help)
            );
        }
        out.push('\n');
        if folded {
            out.push_str("</details>\n\n");
        }
    }
    if r.findings.len() > shown {
        let _ = writeln!(
            out,
            "…and {} more findings; `retrylint check` lists them all.\n",
            r.findings.len() - shown
        );
    }
}

/// `file:line` as code, linked to the line under `link_base` when the path
/// is one inside the repository (relative, not climbing out of it).
pub(crate) fn location(file: &str, line: u32, link_base: Option<&str>) -> String {
    let path = file.replace('\\', "/");
    let path = path.strip_prefix("./").unwrap_or(&path);
    let text = cell_code(&format!("{path}:{line}"));
    let inside = !path.starts_with('/')
        && !path.contains(':')
        && !path.split('/').any(|p| p == "..")
        && !path.is_empty();
    match link_base {
        Some(base) if inside => {
            let encoded: String = path
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'/' | b'~' => {
                        (b as char).to_string()
                    }
                    b => format!("%{b:02X}"),
                })
                .collect();
            format!("[{text}]({}/{encoded}#L{line})", base.trim_end_matches('/'))
        }
        _ => text,
    }
}

fn amplification(out: &mut String, r: &CheckReport) {
    let _ = writeln!(
        out,
        "### Amplification\n\nAttempts reaching each service per user request to {} when every call fails (limit {}).\n",
        entries_text(r),
        figures::limit(r)
    );
    if r.entries.len() > 1 {
        let _ = writeln!(
            out,
            "Several entries: each service's row is the worst over them, from the entry named beside it.\n"
        );
    }
    let notes = figures::column_notes(r);
    if !notes.is_empty() {
        for line in notes {
            let _ = writeln!(out, "- {}{}.", line[..1].to_uppercase(), &line[1..]);
        }
        out.push('\n');
    }
    let mut rows: Vec<&AmplificationRow> = r.amplification.iter().collect();
    if rows.len() > MAX_SERVICES {
        rows.sort_by(|a, b| b.worst_case.total_cmp(&a.worst_case));
        rows.truncate(MAX_SERVICES);
    }
    let with_notes = rows.iter().any(|row| !row.reachable || r.over_limit(row));
    let mut header = vec!["service", "worst case", "with budgets"];
    if r.has_breakers {
        header.push("with breakers");
    }
    if r.has_hedging {
        header.push("healthy");
    }
    header.push("worst response");
    let numeric = header.len() - 1;
    let folded = rows.len() > OPEN_SERVICES;
    if folded {
        let _ = writeln!(
            out,
            "<details><summary>{} services, the highest worst case first</summary>\n",
            rows.len()
        );
        rows.sort_by(|a, b| b.worst_case.total_cmp(&a.worst_case));
    }
    let notes_cell = if with_notes { " |" } else { "" };
    let _ = writeln!(out, "| {} |{notes_cell}", header.join(" | "));
    let mut rule = vec!["---"];
    rule.extend(std::iter::repeat_n("---:", numeric));
    if with_notes {
        rule.push("---");
    }
    let _ = writeln!(out, "|{}|", rule.join("|"));
    for row in &rows {
        let cells = if !row.reachable {
            format!(
                "| {} |{} unreachable from {} |",
                cell_code(&row.service),
                " – |".repeat(numeric),
                entries_text(r).replace('|', "\\|")
            )
        } else {
            let over = r.over_limit(row);
            let b = if over { "**" } else { "" };
            let from = match (&row.entry, r.entries.len() > 1) {
                (Some(e), true) => [" (from ", &cell_code(e), ")"].concat(),
                _ => String::new(),
            };
            let mut line = format!(
                "| {b}{}{b}{from} | {b}{}{b} | {} |",
                cell_code(&row.service),
                figures::worst_case(row),
                figures::factor(row.with_budgets),
            );
            if r.has_breakers {
                let _ = write!(line, " {} |", figures::factor(row.with_breakers));
            }
            if r.has_hedging {
                let _ = write!(line, " {} |", figures::factor(row.healthy));
            }
            let _ = write!(line, " {} |", figures::response(row));
            if over {
                let _ = write!(line, " 🔥 over the {} limit |", figures::limit(r));
            } else if with_notes {
                line.push_str("  |");
            }
            line
        };
        out.push_str(&cells);
        out.push('\n');
    }
    if folded {
        out.push_str("\n</details>\n");
    }
    if r.amplification.len() > rows.len() {
        let _ = writeln!(
            out,
            "\nShowing the {} services with the highest worst case, of {}.",
            rows.len(),
            r.amplification.len()
        );
    }
    // Prose that names services: escaped as a cell is, so that a name
    // cannot mention, link or show an image.
    let note = cell(&figures::response_note(r));
    let _ = writeln!(out, "\n{}{}.", note[..1].to_uppercase(), &note[1..]);
    let line = cell(&figures::request_line(r));
    let _ = writeln!(out, "\n{}{}.\n", line[..1].to_uppercase(), &line[1..]);
}

/// The topology as a mermaid flowchart.
pub(crate) fn graph(out: &mut String, r: &CheckReport) {
    out.push_str("### Topology\n\n");
    if r.amplification.len() > MAX_GRAPH_NODES || r.edges.len() > MAX_GRAPH_EDGES {
        let _ = writeln!(
            out,
            "{} services and {} calls: too many to draw legibly in a comment; `retrylint report` draws the graph.",
            r.amplification.len(),
            r.edges.len()
        );
        return;
    }
    let ids: HashMap<&str, String> = r
        .amplification
        .iter()
        .enumerate()
        .map(|(i, row)| (row.service.as_str(), node_id(i, &row.service)))
        .collect();
    let id = |name: &str| {
        ids.get(name)
            .cloned()
            .unwrap_or_else(|| node_id(usize::MAX, name))
    };
    out.push_str("```mermaid\nflowchart LR\n");
    out.push_str("    user((\"user\"))\n");
    for row in &r.amplification {
        let figure = if row.reachable {
            figures::worst_case(row)
        } else {
            "unreachable".into()
        };
        let _ = writeln!(
            out,
            "    {}[\"{}<br/>{}\"]",
            id(&row.service),
            label(&row.service),
            label(&figure)
        );
    }
    // Link 0 is the user's; calls follow in order, for `linkStyle`.
    if let Some(entry) = r.amplification.iter().find(|row| row.service == r.entry) {
        let _ = writeln!(
            out,
            "    user -->|\"{}\"| {}",
            label(&figures::worst_case(entry)),
            id(&r.entry)
        );
    }
    let mut hot = Vec::new();
    for (i, e) in r.edges.iter().enumerate() {
        let arrow = if e.hot {
            hot.push((i + 1).to_string());
            "==>"
        } else {
            "-->"
        };
        let _ = writeln!(
            out,
            "    {} {arrow}|\"{}\"| {}",
            id(&e.from),
            label(&edge_label(e)),
            id(&e.to)
        );
    }
    // The other entries' users after the calls, so that the calls keep
    // their link numbers.
    for other in r.entries.iter().skip(1) {
        if let Some(row) = r.amplification.iter().find(|row| &row.service == other) {
            let _ = writeln!(
                out,
                "    user -->|\"{}\"| {}",
                label(&figures::worst_case(row)),
                id(other)
            );
        }
    }
    let over: Vec<String> = r
        .amplification
        .iter()
        .filter(|row| r.over_limit(row))
        .map(|row| id(&row.service))
        .collect();
    let unreachable: Vec<String> = r
        .amplification
        .iter()
        .filter(|row| !row.reachable)
        .map(|row| id(&row.service))
        .collect();
    for (class, style, nodes) in [
        (
            "over",
            "fill:#ffebe9,stroke:#cf222e,stroke-width:2px,color:#82071e",
            &over,
        ),
        (
            "unreachable",
            "fill:#f6f8fa,stroke:#8c959f,stroke-dasharray:4 4,color:#57606a",
            &unreachable,
        ),
    ] {
        if !nodes.is_empty() {
            let _ = writeln!(out, "    classDef {class} {style}");
            let _ = writeln!(out, "    class {} {class}", nodes.join(","));
        }
    }
    if !hot.is_empty() {
        let _ = writeln!(
            out,
            "    linkStyle {} stroke:#cf222e,stroke-width:3px",
            hot.join(",")
        );
    }
    out.push_str("```\n\n");
    out.push_str("Edge labels: attempts per call, with the retrying layers when they are not just the app's.");
    if !hot.is_empty() || !over.is_empty() {
        let _ = write!(
            out,
            " Thick red arrows: the hottest path to each service over the {} limit; red boxes: those services.",
            figures::limit(r)
        );
    }
    if !unreachable.is_empty() {
        out.push_str(" Dashed boxes: services no request reaches.");
    }
    out.push('\n');
}

/// `3×`, `3× (istio-sidecar)`, `9× (app × istio-sidecar)`.
fn edge_label(e: &EdgeRow) -> String {
    let attempts = figures::factor(e.attempts);
    if e.retrying_layers.is_empty() || e.retrying_layers == ["app"] {
        attempts
    } else {
        format!("{attempts} ({})", e.retrying_layers.join(" × "))
    }
}

/// A mermaid node id: unique by position, readable by name, and only
/// `[A-Za-z0-9_]` (service names may hold `-`, `.`, or words mermaid reserves,
/// like `end`).
fn node_id(index: usize, name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(32)
        .collect();
    format!("s{index}_{clean}")
}

/// Text inside a quoted mermaid label: mermaid's `#name;` entities for what
/// would end the label, open HTML, or close the markdown fence.
fn label(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => s.push_str("#35;"),
            '"' => s.push_str("#quot;"),
            '<' => s.push_str("#lt;"),
            '>' => s.push_str("#gt;"),
            '`' => s.push_str("#96;"),
            '\n' | '\r' => s.push(' '),
            c => s.push(c),
        }
    }
    s
}

/// Text in a table cell: a pipe or a newline would end the cell, `<` could open
/// HTML, and a backslash could un-escape a pipe. Names a topology gives reach
/// messages, and a PR comment is read by GitHub: `[` cannot open a link or an
/// image, and a word joiner (U+2060, invisible) after `@`, in `://` and after
/// `www` keeps a name from mentioning a user or becoming a link. GitHub finds
/// mentions in the rendered text, so a backslash before `@` would not do.
pub(crate) fn cell(text: &str) -> String {
    crate::visible::text(text)
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('[', "\\[")
        .replace(']', "\\]")
        .replace('@', "@\u{2060}")
        .replace("://", ":\u{2060}//")
        .replace("www.", "www\u{2060}.")
        .replace("\r\n", "<br>")
        .replace(['\n', '\r'], "<br>")
}

/// A code span holding any text: a fence longer than any run of backticks in it.
pub(crate) fn code(text: &str) -> String {
    let text = crate::visible::name(&text.replace(['\n', '\r'], " ")).into_owned();
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A code span in a table cell: a pipe is escaped even inside the span.
/// The entries as code, `web` or `web` or `mobile`.
fn entries_text(r: &CheckReport) -> String {
    let codes: Vec<String> = r.entries.iter().map(|e| code(e)).collect();
    codes.join(" or ")
}

pub(crate) fn cell_code(text: &str) -> String {
    code(&text.replace('|', "\\|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table() {
        assert_eq!(cell("a | b\nc"), "a \\| b<br>c");
        assert_eq!(cell("x\\|y"), "x\\\\\\|y");
        assert_eq!(cell("<img>"), "&lt;img>");
    }

    #[test]
    fn cells_cannot_mention_link_or_show_an_image() {
        assert_eq!(cell("@octocat"), "@\u{2060}octocat");
        assert_eq!(
            cell("![x](https://evil.example/i.png)"),
            "!\\[x\\](https:\u{2060}//evil.example/i.png)"
        );
        assert_eq!(cell("www.evil.example"), "www\u{2060}.evil.example");
    }

    #[test]
    fn node_ids_are_safe_and_unique() {
        assert_eq!(node_id(0, "end"), "s0_end");
        assert_eq!(node_id(3, "payments-v2.prod"), "s3_payments_v2_prod");
        assert_ne!(node_id(1, "a-b"), node_id(2, "a.b"));
    }

    #[test]
    fn labels_and_code_spans_escape() {
        assert_eq!(
            label("say \"hi\" <b>#1"),
            "say #quot;hi#quot; #lt;b#gt;#35;1"
        );
        assert_eq!(code("web"), "`web`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`a"), "`` `a ``");
        assert_eq!(cell_code("a|b"), "`a\\|b`");
    }
}
