//! `--format table`, the default on a terminal: every finding as rustc draws a
//! diagnostic (the YAML line, a caret under the culprit, the fix), a one-line
//! summary, then the amplification table (its `with breakers` and `healthy`
//! columns only when some layer has a breaker or some call hedges).
//!
//! Colour goes only into the snippets and the summary, and only when
//! `Style.color`; the table is plain comfy-table UTF-8 so pipes, CI logs and
//! snapshots see the same bytes.

use std::fmt::Write as _;
use std::io::{self, Write};

use annotate_snippets::Level;

use crate::formats::snippet::{self, Annotated, FileLines};
use crate::formats::{Reporter, Style};
use crate::formats::{figures, grid};
use crate::lint::{AmplificationRow, CheckReport, Finding, Severity};

pub struct Table;

impl Reporter<CheckReport> for Table {
    fn render(&self, r: &CheckReport, style: Style<'_>) -> String {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = self.write(r, style, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// The findings as they are drawn, then the summary and the table.
    fn write(&self, r: &CheckReport, style: Style<'_>, out: &mut dyn Write) -> io::Result<()> {
        let lines = FileLines::new(r);
        // One finding at a time through one buffer: a large report's
        // findings are never all held as text at once.
        let mut part = String::new();
        for f in &r.findings {
            part.clear();
            finding(&lines, f, style.color, &mut part);
            part.push_str("\n\n");
            out.write_all(part.as_bytes())?;
        }
        out.write_all(tail(r, style).as_bytes())
    }
}

/// Everything after the findings.
fn tail(r: &CheckReport, style: Style<'_>) -> String {
    let mut out = String::new();
    let summary = figures::summary_line(r);
    let _ = writeln!(out, "{}", paint(&summary, r, style.color));
    out.push('\n');
    let _ = writeln!(
        out,
        "amplification: attempts reaching each service per user request to `{}` when every call fails (limit {})",
        r.entries.join("` or `"),
        figures::limit(r)
    );
    if r.entries.len() > 1 {
        let _ = writeln!(
            out,
            "several entries: each service's row is the worst over them, from the entry its `entry` column names"
        );
    }
    for line in figures::column_notes(r) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str(&amplification(r));
    let _ = writeln!(out, "{}", figures::response_note(r));
    out.push('\n');
    let _ = writeln!(out, "{}", figures::request_line(r));
    out
}

fn level(s: Severity) -> Level<'static> {
    match s {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    }
}

/// One rustc-style block, appended to `out`.
fn finding(lines: &FileLines, f: &Finding, color: bool, out: &mut String) {
    snippet::render_into(
        &Annotated {
            level: level(f.severity),
            code: Some(f.code),
            title: &f.message,
            file: &f.file,
            text: lines.get(&f.file, f.line),
            line: f.line,
            column: f.column,
            label: &f.label,
            help: (!f.help.is_empty()).then_some(f.help.as_str()),
        },
        color,
        out,
    )
}

/// The summary line, bold red when the check fails and green when it passes.
fn paint(line: &str, r: &CheckReport, color: bool) -> String {
    if !color {
        return line.to_owned();
    }
    let code = if r.failed() { "1;31" } else { "1;32" };
    format!("\x1b[{code}m{line}\x1b[0m")
}

/// The amplification table: one row per service, in the topology's order. The
/// note column (over the limit, unreachable) is left out when every row is fine.
fn amplification(r: &CheckReport) -> String {
    let notes: Vec<String> = r.amplification.iter().map(|row| note(r, row)).collect();
    let with_notes = notes.iter().any(|n| !n.is_empty());
    let mut header = vec!["service", "worst case", "with budgets"];
    if r.has_breakers {
        header.push("with breakers");
    }
    if r.has_hedging {
        header.push("healthy");
    }
    header.push("worst response");
    let numeric = header.len() - 1;
    let several = r.entries.len() > 1;
    if several {
        header.push("entry");
    }
    if with_notes {
        header.push("note");
    }
    let rows: Vec<Vec<String>> = r
        .amplification
        .iter()
        .zip(notes)
        .map(|(row, note)| {
            let mut cells = vec![row.service.clone()];
            if row.reachable {
                cells.push(figures::worst_case(row));
                cells.push(figures::factor(row.with_budgets));
                if r.has_breakers {
                    cells.push(figures::factor(row.with_breakers));
                }
                if r.has_hedging {
                    cells.push(figures::factor(row.healthy));
                }
                cells.push(figures::response(row));
            } else {
                cells.extend(std::iter::repeat_n("-".to_owned(), numeric));
            }
            if several {
                let entry = row.entry.as_deref().filter(|_| row.reachable);
                cells.push(entry.unwrap_or("-").to_owned());
            }
            if with_notes {
                cells.push(note);
            }
            cells
        })
        .collect();
    let mut s = grid::draw(&header, &rows, |i| (1..=numeric).contains(&i));
    s.push('\n');
    s
}

fn note(r: &CheckReport, row: &AmplificationRow) -> String {
    // Joined rather than formatted: one per service.
    if !row.reachable {
        ["unreachable from `", &r.entries.join("` or `"), "`"].concat()
    } else if r.over_limit(row) {
        ["over the ", &figures::limit(r), " limit"].concat()
    } else {
        String::new()
    }
}
