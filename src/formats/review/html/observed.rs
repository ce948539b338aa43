//! Observed beside declared: each call traces or a proxy's counters saw,
//! its attempts per call beside the worst case its declared layers allow.

use std::fmt::Write as _;

use super::esc;
use crate::review::Review;

pub(super) fn section(out: &mut String, r: &Review) {
    if r.observed.is_empty() {
        return;
    }
    out.push_str("<section id=\"observed\">\n<h2>Observed against declared</h2>\n");
    out.push_str("<p>Attempts per call as production showed them, beside the attempts the call's declared layers allow together. RL021 when more were seen than the layers allow (a retry layer nobody declared), RL022 when a declared retry never showed although the callee failed; the findings are listed below.</p>\n");
    out.push_str("<table>\n<tr><th>call</th><th>seen in</th><th class=\"num\">attempts per call</th><th class=\"num\">most on one call</th><th>over</th><th class=\"num\">declared</th><th>finding</th></tr>\n");
    for row in &r.observed {
        let class = if row.findings.contains(&"RL021") {
            " class=\"over\""
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<tr{class}><td><code>{}</code> → <code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&row.from),
            esc(&row.to),
            esc(&row.seen_in),
            esc(&row.mean_text()),
            esc(&row.most_text()),
            esc(&row.over),
            esc(&row.declared_text()),
            esc(&row.findings_text()),
        );
    }
    out.push_str("</table>\n</section>\n");
}
