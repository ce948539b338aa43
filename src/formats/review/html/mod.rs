//! `retrylint report`: the architecture review as one self-contained HTML
//! page. Everything is inline — the stylesheet, the SVG drawings, no script —
//! and nothing is fetched: it reads the same offline, attached to a ticket or
//! printed. System fonts only; colours from CSS variables, so the page and
//! its drawings follow `prefers-color-scheme: dark`, and print in light.
//!
//! Charts are plain SVG written here rather than plotters' SVG backend: the
//! drawings are styled by the page's CSS classes (one set of colours for
//! light, dark and print), their text uses the page's system fonts instead of
//! a font plotters names, and the output stays small and byte-for-byte stable
//! for tests. Three chart shapes (step lines, grouped bars) did not need a
//! plotting library.
//!
//! Formats only: every figure, layout and series comes from
//! [`crate::review::Review`].

mod charts;
mod findings;
mod graph;
mod observed;
mod recovery;
mod tables;

use std::fmt::Write as _;

use crate::formats::figures;
use crate::lint::Severity;
use crate::review::{Review, Side};

const STYLE: &str = include_str!("style.css");

/// The ids of the page's sections, in order (tests look for them).
pub const SECTIONS: &[&str] = &[
    "verdict",
    "graph",
    "tables",
    "storm",
    "findings",
    "reproduce",
];

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct ReviewHtml;

impl crate::formats::Reporter<Review> for ReviewHtml {
    fn render(&self, r: &Review, _: crate::formats::Style<'_>) -> String {
        render(r)
    }
}

/// The page.
pub fn render(r: &Review) -> String {
    let mut out = String::with_capacity(64 << 10);
    let name = &r.written().check.topology;
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"retrylint {}\">\n<title>Retry review: {}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        r.version,
        esc(name)
    );
    let _ = writeln!(
        out,
        "<header>\n<h1>Retry review: <code>{}</code></h1>",
        esc(name)
    );
    let _ = writeln!(
        out,
        "<p class=\"note\">{} · entry <code>{}</code> · scenario <code>{}</code> · retrylint {}</p>",
        esc(&r.written().check.file),
        esc(&r.written().check.entry),
        esc(&r.scenario.name),
        esc(r.version)
    );
    out.push_str("<nav><a href=\"#verdict\">Verdict</a><a href=\"#graph\">Call graph</a><a href=\"#tables\">Figures</a><a href=\"#storm\">The storm in time</a>");
    if r.sides.iter().any(|s| s.recovery.is_some()) {
        out.push_str("<a href=\"#recovery\">Headroom</a>");
    }
    if r.measured.is_some() {
        out.push_str("<a href=\"#measured\">Measured</a>");
    }
    if !r.observed.is_empty() {
        out.push_str("<a href=\"#observed\">Observed</a>");
    }
    out.push_str(
        "<a href=\"#findings\">Findings</a><a href=\"#reproduce\">Reproduce</a></nav>\n</header>\n",
    );
    verdict(&mut out, r);
    graph::section(&mut out, r);
    tables::section(&mut out, r);
    charts::section(&mut out, r);
    recovery::section(&mut out, r);
    if let Some(m) = &r.measured {
        tables::measured(&mut out, m);
    }
    observed::section(&mut out, r);
    // The long list last: the overview first, the details after it.
    findings::section(&mut out, r);
    footer(&mut out, r);
    out.push_str("</body>\n</html>\n");
    out
}

fn verdict(out: &mut String, r: &Review) {
    out.push_str("<section id=\"verdict\">\n<h2>Verdict</h2>\n");
    for side in &r.sides {
        verdict_line(out, side, r.sides.len() > 1, &r.scenario.name);
    }
    if !r.held_back.is_empty() {
        let _ = writeln!(
            out,
            "<details class=\"held-back\"><summary>{}.</summary><ul>",
            ticks(&capital(&figures::held_back(r.held_back.len())))
        );
        for n in &r.held_back {
            let _ = writeln!(
                out,
                "<li><code>{}</code> line {}: {}: {}</li>",
                esc(n.code),
                n.line,
                esc(&n.description),
                esc(n.reason.as_deref().unwrap_or(""))
            );
        }
        out.push_str("</ul></details>\n");
    }
    out.push_str("</section>\n");
}

/// The static verdict and the measured outcome side by side; the worse of
/// the two names the line: a topology whose check passes but whose
/// simulated storm collapses does not read as passing.
fn verdict_line(out: &mut String, side: &Side, labelled: bool, scenario: &str) {
    let c = &side.check;
    let failed = c.failed();
    let measured = figures::measured_outcome(side.sim.as_ref(), scenario);
    let collapsed = measured.as_ref().is_some_and(|(collapsed, _)| *collapsed);
    let (class, mark) = match (failed, collapsed) {
        (true, _) => ("fail", "✗ fails"),
        (false, true) => ("fail", "✗ collapses in the simulation; the check passes"),
        (false, false) => ("pass", "✓ passes"),
    };
    let label = if labelled {
        format!("<strong>{}</strong>: ", esc(&side.label))
    } else {
        String::new()
    };
    let worst = figures::worst_service(c)
        .map(|row| {
            format!(
                "; worst case <strong>{}</strong> at <code>{}</code> (limit {})",
                esc(&figures::worst_case(row)),
                esc(&row.service),
                esc(&figures::limit(c))
            )
        })
        .unwrap_or_default();
    let measured = measured
        .map(|(_, text)| format!("; {}", esc(&text)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<p class=\"verdict {class}\">{label}<span class=\"mark\">{mark}</span> at --fail-on {}: {}{worst}{measured}.</p>",
        c.fail_on.as_str(),
        esc(&if c.findings.is_empty() {
            "no findings".to_owned()
        } else {
            figures::counts(&c.summary)
        }),
    );
    out.push_str("<ul class=\"counts\">");
    for (sev, n) in [
        (Severity::Error, c.summary.errors),
        (Severity::Warning, c.summary.warnings),
        (Severity::Info, c.summary.infos),
    ] {
        let word = sev.as_str();
        let plural = if n == 1 { "" } else { "s" };
        let _ = write!(
            out,
            "<li class=\"sev-{word}\"><span class=\"n\">{n}</span> {word}{plural}</li>"
        );
    }
    out.push_str("</ul>\n");
    let line = figures::request_line(c);
    let _ = writeln!(out, "<p>{}.</p>", ticks(&capital(&line)));
}

fn footer(out: &mut String, r: &Review) {
    out.push_str("<footer id=\"reproduce\">\n<h2>Reproduce</h2>\n");
    let _ = writeln!(
        out,
        "<p>Scenario <code>{}</code> (target <code>{}</code>): {}</p>",
        esc(&r.scenario.name),
        esc(&r.scenario.target),
        esc(&r.scenario.description)
    );
    if let Some(n) = &r.scenario.note {
        let _ = writeln!(out, "<p class=\"note\">{}.</p>", ticks(&capital(n)));
    }
    let trials: Vec<String> = r
        .sides
        .iter()
        .map(|s| {
            if r.sides.len() > 1 {
                format!("{} {}", s.sim_trials, s.label)
            } else {
                s.sim_trials.to_string()
            }
        })
        .collect();
    let _ = writeln!(
        out,
        "<p>Load {}; seed {} (trial i uses seed + i); trials {}; retrylint {}.</p>",
        esc(&r.load),
        r.seed,
        esc(&trials.join(", ")),
        esc(r.version)
    );
    let _ = writeln!(out, "<pre>{}</pre>\n</footer>", esc(&r.command));
}

/// `s` with its first letter in capitals.
pub(crate) fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Text safe in HTML content and in quoted attributes.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Escaped text with `code spans` as `<code>` (messages and fixes write
/// names and YAML in backticks).
pub(crate) fn ticks(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    let mut open = false;
    let parts: Vec<&str> = s.split('`').collect();
    // An odd number of backticks leaves the last one as it is.
    let paired = parts.len() % 2 == 1;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            if paired {
                out.push_str(if open { "</code>" } else { "<code>" });
                open = !open;
            } else {
                out.push('`');
            }
        }
        out.push_str(&esc(part));
    }
    out
}

/// A coordinate, short: one decimal, no trailing zero.
pub(crate) fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything_that_could_open_markup() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(n(12.04), "12");
        assert_eq!(n(12.06), "12.1");
        assert_eq!(capital("éa"), "Éa");
        assert_eq!(ticks("set `a<b` here"), "set <code>a&lt;b</code> here");
        assert_eq!(ticks("one ` tick"), "one ` tick");
    }
}
