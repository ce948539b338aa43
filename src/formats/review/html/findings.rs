//! Findings by service: each with its YAML lines, the message and the fix.

use std::fmt::Write as _;

use super::{esc, ticks};
use crate::review::Review;
use crate::review::findings::Snippet;

pub(super) fn section(out: &mut String, r: &Review) {
    out.push_str("<section id=\"findings\">\n<h2>Findings</h2>\n");
    for side in &r.sides {
        if r.sides.len() > 1 {
            let _ = writeln!(out, "<h3>{}</h3>", esc(&super::capital(&side.label)));
        }
        if side.findings.is_empty() {
            out.push_str("<p>No findings.</p>\n");
            continue;
        }
        for g in &side.findings {
            let _ = writeln!(
                out,
                "<div class=\"service-findings\">\n<h3><code>{}</code> <span class=\"sev-{}\">{} finding{}</span></h3>",
                esc(&g.service),
                g.worst.as_str(),
                g.findings.len(),
                if g.findings.len() == 1 { "" } else { "s" }
            );
            for s in &g.findings {
                let f = &s.finding;
                let _ = writeln!(
                    out,
                    "<div class=\"finding\"><div class=\"head\"><span class=\"sev-{sev}\">{sev}</span> <span class=\"code-id\">{}</span> {} — {}</div>",
                    esc(f.code),
                    esc(f.rule),
                    ticks(&f.message),
                    sev = f.severity.as_str(),
                );
                snippet(out, &f.file, &s.snippet);
                let _ = writeln!(out, "<div class=\"fix\">{}</div></div>", ticks(&f.help));
            }
            out.push_str("</div>\n");
        }
        if side.findings_omitted > 0 {
            let _ = writeln!(
                out,
                "<p class=\"note\">…and {} more findings; <code>retrylint check</code> lists them all.</p>",
                side.findings_omitted
            );
        }
    }
    out.push_str("</section>\n");
}

fn snippet(out: &mut String, file: &str, s: &Snippet) {
    if s.lines.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<pre class=\"snippet\" title=\"{}:{}:{}\">",
        esc(file),
        s.line,
        s.column
    );
    for (line, text) in &s.lines {
        let at = if *line == s.line { " at" } else { "" };
        let _ = write!(
            out,
            "<span class=\"l{at}\"><span class=\"n\">{line}</span>{}</span>",
            esc(text)
        );
    }
    out.push_str("</pre>\n");
}
