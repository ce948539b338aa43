//! `retrylint report --format markdown`: the review page cut to a PR comment —
//! the verdict, the before/after table (a column per topology when the page
//! has two), the storm in numbers, the top findings, the fixes of findings on
//! changed lines as ```` ```suggestion ```` blocks (with `report --base`) and
//! the mermaid graph, under GitHub's 65,536-character limit for a comment.
//! Past [`MAX_CHARS`], suggestions are left out first, the last first, and
//! then whole sections from the end, each time with a note.

use std::fmt::Write as _;

use crate::formats::check::markdown::{cell, cell_code, code, graph, verdict};
use crate::formats::figures;
use crate::lint::{AmplificationRow, Severity};

/// A figure's heading and how a row shows it.
type Column = (&'static str, fn(&AmplificationRow) -> String);
use crate::review::Review;
use crate::review::suggestions::{Suggestion, Suggestions};

/// A comment stays under this many characters (GitHub's limit is 65,536; the
/// margin holds the truncation note).
pub const MAX_CHARS: usize = 65_000;
/// Rows of the before/after table.
const MAX_ROWS: usize = 40;
/// Findings listed.
const MAX_FINDINGS: usize = 20;

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct ReviewMarkdown;

impl crate::formats::Reporter<Review> for ReviewMarkdown {
    fn render(&self, r: &Review, _: crate::formats::Style<'_>) -> String {
        render(r)
    }
}

pub fn render(r: &Review) -> String {
    let mut sections: Vec<String> = Vec::new();
    let mut head = String::new();
    let _ = writeln!(
        head,
        "## retrylint review: {}\n",
        code(&r.written().check.topology)
    );
    for side in &r.sides {
        if r.sides.len() > 1 {
            let _ = write!(head, "**{}**: ", cell(&side.label));
        }
        // The static verdict and the measured outcome side by side; a
        // simulated collapse is named first, whatever the check says.
        let measured = figures::measured_outcome(side.sim.as_ref(), &r.scenario.name);
        match measured {
            Some((true, text)) => {
                let _ = writeln!(
                    head,
                    "❌ collapses in the simulation ({}) — the check: {}\n",
                    cell(&text),
                    verdict(&side.check)
                );
            }
            Some((false, text)) => {
                let _ = writeln!(head, "{}; {}\n", verdict(&side.check), cell(&text));
            }
            None => {
                let _ = writeln!(head, "{}\n", verdict(&side.check));
            }
        }
    }
    if !r.held_back.is_empty() {
        let _ = writeln!(
            head,
            "<details><summary>{}.</summary>\n",
            cell(&figures::held_back(r.held_back.len()))
        );
        for n in &r.held_back {
            let _ = writeln!(
                head,
                "- {} line {}: {}: {}",
                code(n.code),
                n.line,
                cell(&n.description),
                cell(n.reason.as_deref().unwrap_or(""))
            );
        }
        head.push_str("\n</details>\n\n");
    }
    sections.push(head);
    sections.push(before_after(r));
    sections.push(storm(r));
    sections.push(headroom(r));
    sections.push(findings(r));
    sections.push(observed(r));
    let at = sections.len();
    for side in &r.sides {
        let mut g = String::new();
        graph(&mut g, &side.check);
        if r.sides.len() > 1 {
            g = g.replacen(
                "### Topology\n",
                &format!("### Topology: {}\n", cell(&side.label)),
                1,
            );
        }
        g.push('\n');
        sections.push(g);
    }
    sections.push(format!(
        "\n<sub>retrylint {} · scenario {} · seed {} · `{}`</sub>\n",
        r.version,
        code(&r.scenario.name),
        r.seed,
        r.command.replace('`', "'")
    ));
    if let Some(s) = &r.suggestions {
        let others: usize = sections.iter().map(String::len).sum();
        sections.insert(at, suggestions(s, MAX_CHARS.saturating_sub(others)));
    }
    assemble(sections)
}

/// The suggestions section in at most `room` bytes: as many suggestions as
/// fit, in line order, and a note on those left out.
fn suggestions(s: &Suggestions, room: usize) -> String {
    const NOTE: usize = 300;
    let mut out = String::from("### Suggested changes\n\n");
    if s.items.is_empty() {
        let _ = writeln!(
            out,
            "No finding on the {} lines changed since {} has a fix to suggest.\n",
            s.changed_lines,
            code(&s.base)
        );
        return out;
    }
    let _ = writeln!(
        out,
        "Fixes of findings on lines changed since {}: paste a block into a review comment on the lines named (GitHub applies it as a suggested change). `retrylint check --fix --diff` shows every fix.\n",
        code(&s.base)
    );
    let blocks: Vec<String> = s.items.iter().map(suggestion).collect();
    let mut keep = blocks.len();
    let mut size = out.len() + blocks.iter().map(String::len).sum::<usize>();
    while keep > 0 && size + NOTE > room {
        keep -= 1;
        size -= blocks[keep].len();
    }
    for b in &blocks[..keep] {
        out.push_str(b);
    }
    if keep < blocks.len() {
        let _ = writeln!(
            out,
            "> {} more suggested changes left out to fit a PR comment (the last of {}).\n",
            blocks.len() - keep,
            blocks.len()
        );
    }
    out
}

/// `` `file:14` `` (or `` `file:14-16` ``), what it fixes, and the block.
fn suggestion(s: &Suggestion) -> String {
    let place = if s.end_line == s.line {
        format!("{}:{}", s.file, s.line)
    } else {
        format!("{}:{}-{}", s.file, s.line, s.end_line)
    };
    let what: Vec<String> = s
        .findings
        .iter()
        .map(|f| format!("{} {} (line {}): {}", f.code, f.rule, f.line, f.description))
        .collect();
    format!(
        "{} — {}\n\n{}\n\n",
        code(&place),
        cell(&what.join("; ")),
        super::comments::block(&s.text)
    )
}

/// The sections in order while they fit, then a note saying what was cut.
fn assemble(sections: Vec<String>) -> String {
    const NOTE: usize = 200;
    let mut out = String::new();
    let mut left_out = 0;
    for s in sections {
        if left_out == 0 && out.len() + s.len() + NOTE <= MAX_CHARS {
            out.push_str(&s);
        } else {
            left_out += s.chars().count();
        }
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "\n> Truncated to fit a PR comment: {left_out} more characters left out. `retrylint report` writes the whole review as HTML."
        );
    }
    out
}

fn before_after(r: &Review) -> String {
    let mut out = String::new();
    let two = r.sides.len() > 1;
    out.push_str(if two {
        "### Before / after\n\nAttempts per user request when every call fails, with budgets, and the worst response time.\n\n"
    } else {
        "### Attempts per user request\n\nWhen every call fails, with budgets, and the worst response time.\n\n"
    });
    let figures_: [Column; 3] = [
        ("worst case", figures::worst_case),
        ("with budgets", |row| figures::factor(row.with_budgets)),
        ("worst response", figures::response),
    ];
    let mut header = vec!["service".to_owned()];
    for (name, _) in &figures_ {
        for side in &r.sides {
            header.push(if two {
                format!("{name} ({})", cell(&side.label))
            } else {
                (*name).to_owned()
            });
        }
    }
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(header.len() - 1));
    for row in r.rows.iter().take(MAX_ROWS) {
        let mut cells = vec![cell_code(&row.service)];
        for (_, value) in &figures_ {
            for (k, i) in row.at.iter().enumerate() {
                cells.push(match i.map(|i| &r.sides[k].check.amplification[i]) {
                    Some(a) if !a.reachable => "unreachable".into(),
                    Some(a) => value(a),
                    None => "–".into(),
                });
            }
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let left = r.rows.len().saturating_sub(MAX_ROWS) + r.rows_omitted;
    if left > 0 {
        let _ = writeln!(
            out,
            "\nShowing {} services with the highest worst case; {left} more left out.",
            r.rows.len().min(MAX_ROWS)
        );
    }
    if let Some(side) = r.sides.first() {
        let note = figures::response_note(&side.check);
        let _ = writeln!(out, "\n{}{}.", note[..1].to_uppercase(), &note[1..]);
    }
    out.push('\n');
    out
}

/// The headroom sentence of each side with a recovery map, and the map of
/// the scenario's own surge as a row per side (empty without a map).
fn headroom(r: &Review) -> String {
    let maps: Vec<(&str, &crate::review::recovery::RecoveryMap)> = r
        .sides
        .iter()
        .filter_map(|s| match &s.recovery {
            Some(Ok(m)) => Some((s.label.as_str(), m)),
            _ => None,
        })
        .collect();
    let notes: Vec<(&str, &str)> = r
        .sides
        .iter()
        .filter_map(|s| match &s.recovery {
            Some(Err(why)) => Some((s.label.as_str(), why.as_str())),
            _ => None,
        })
        .collect();
    if maps.is_empty() && notes.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "### Headroom after a surge (simulated)

",
    );
    for (label, m) in &maps {
        let _ = writeln!(out, "- **{}**: {}.", cell(label), cell(m.headroom()));
    }
    for (label, why) in &notes {
        let _ = writeln!(
            out,
            "- **{}**: the recovery map is {}.",
            cell(label),
            cell(why)
        );
    }
    if let Some(h) = maps.iter().find_map(|(_, m)| m.grid_below_boundary()) {
        let _ = writeln!(out, "\n{}", crate::review::recovery::higher_rate_hint(h));
    }
    if let Some((_, first)) = maps.first() {
        let _ = write!(
            out,
            "
Trials recovered at the scenario's own surge, by load:

| |"
        );
        for rate in &first.rates {
            let _ = write!(out, " {rate}/s |");
        }
        let _ = writeln!(
            out,
            "
|---|{}",
            "---:|".repeat(first.rates.len())
        );
        for (label, m) in &maps {
            let _ = write!(out, "| {} |", cell(label));
            for k in &m.rows[m.own].recovered {
                let _ = write!(out, " {k}/{} |", m.trials);
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "\nRule `{}`: recovered when the mean goodput over the run's last half is at least 0.80× its level before the surge.",
            first.rule
        );
    }
    out.push('\n');
    out
}

fn storm(r: &Review) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### The storm in time (simulated)\n\nScenario {}: {} Load {}.\n",
        code(&r.scenario.name),
        cell(&r.scenario.description),
        r.load
    );
    out.push_str(
        "| | trials | user requests | succeeded | p50 | p99 |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for side in &r.sides {
        match &side.sim {
            Some(run) => {
                let e = &run.end_to_end;
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {:.1}% | {} | {} |",
                    cell(&side.label),
                    side.sim_trials,
                    e.requests,
                    100.0 * e.success_ratio(),
                    figures::millis(e.latency_ms.p50),
                    figures::millis(e.latency_ms.p99)
                );
            }
            None => {
                let _ = writeln!(out, "| {} | – | – | – | – | – |", cell(&side.label));
            }
        }
    }
    for side in &r.sides {
        if let Some(n) = &side.sim_note {
            let _ = writeln!(out, "\n{}: {}.", cell(&side.label), cell(n));
        }
    }
    out.push('\n');
    out
}

fn findings(r: &Review) -> String {
    let side = r.written();
    let mut out = String::new();
    if side.check.findings.is_empty() {
        return out;
    }
    out.push_str("### Top findings\n\n| severity | code | service | message | fix |\n|---|---|---|---|---|\n");
    let mut shown = 0;
    for sev in [Severity::Error, Severity::Warning, Severity::Info] {
        for f in side.check.findings.iter().filter(|f| f.severity == sev) {
            if shown == MAX_FINDINGS {
                break;
            }
            shown += 1;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                f.severity.as_str(),
                f.code,
                cell_code(&f.service),
                cell(&f.message),
                cell(&f.help)
            );
        }
    }
    if side.check.findings.len() > shown {
        let _ = writeln!(
            out,
            "\n…and {} more; `retrylint check` lists them all.",
            side.check.findings.len() - shown
        );
    }
    out.push('\n');
    out
}

/// Each call traces or counters saw, beside the worst case its declared
/// layers allow.
fn observed(r: &Review) -> String {
    let mut out = String::new();
    if r.observed.is_empty() {
        return out;
    }
    out.push_str("### Observed against declared\n\nAttempts per call as production showed them, beside the attempts the call's declared layers allow together (RL021 when more were seen, RL022 when a declared retry never showed although the callee failed).\n\n");
    out.push_str("| call | seen in | attempts per call | most on one call | over | declared | finding |\n|---|---|---:|---:|---|---:|---|\n");
    for row in &r.observed {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            cell_code(&format!("{} → {}", row.from, row.to)),
            cell(&row.seen_in),
            row.mean_text(),
            row.most_text(),
            cell(&row.over),
            cell(&row.declared_text()),
            row.findings_text()
        );
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::suggestions::Fixed;

    #[test]
    fn suggestions_past_the_room_are_left_out_last_first_with_a_note() {
        let item = |line| Suggestion {
            file: "t.yaml".into(),
            line,
            end_line: line,
            text: "x".repeat(100),
            findings: vec![Fixed {
                code: "RL004",
                rule: "missing-jitter",
                line,
                description: "add jitter: full".into(),
            }],
        };
        let s = Suggestions {
            base: "b.yaml".into(),
            changed_lines: 5,
            items: (1..=5).map(item).collect(),
        };
        let all = suggestions(&s, usize::MAX);
        assert_eq!(all.matches("```suggestion\n").count(), 5);
        assert!(!all.contains("left out"));
        // One byte short of room for all five and the note: the last goes.
        let four = suggestions(&s, all.len() + 300 - 1);
        assert_eq!(four.matches("```suggestion\n").count(), 4);
        assert!(four.contains("`t.yaml:4`") && !four.contains("`t.yaml:5`"));
        assert!(
            four.contains(
                "> 1 more suggested changes left out to fit a PR comment (the last of 5)."
            )
        );
        let none = suggestions(&s, 0);
        assert_eq!(none.matches("```suggestion").count(), 0);
        assert!(none.contains("> 5 more suggested changes left out"));
    }

    #[test]
    fn sections_past_the_limit_are_left_out_whole() {
        let small = "a\n".to_owned();
        let big = "x".repeat(MAX_CHARS);
        let out = assemble(vec![small.clone(), big, small]);
        assert!(out.starts_with("a\n\n> Truncated"));
        assert!(out.contains(&format!("{} more characters", MAX_CHARS + 2)));
        assert!(out.len() < MAX_CHARS);
    }
}
