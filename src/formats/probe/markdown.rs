//! A probe as Markdown, for a pull-request comment or an SDK review: the
//! verdict of the gate first, then the measured policy with its evidence,
//! the YAML to paste, the nearest preset, the findings, and the scenarios
//! in a collapsed block.

use std::fmt::Write as _;

use super::table::{
    expectation_line, policy_rows, preset_line, scenario_attempts, scenario_exits, scenario_waits,
};
use crate::probe::ProbeReport;

fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct ProbeMarkdown;

impl crate::formats::Reporter<ProbeReport> for ProbeMarkdown {
    fn render(&self, r: &ProbeReport, _: crate::formats::Style<'_>) -> String {
        render(r)
    }
}

pub fn render(r: &ProbeReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### retrylint probe: `{}`\n",
        escape(&r.command.join(" "))
    );
    if let Some(e) = &r.expectation {
        let _ = writeln!(out, "**{}**\n", escape(&expectation_line(e)));
        for d in &e.differences {
            let _ = writeln!(
                out,
                "- `{}`: measured {}, declared {}",
                d.field,
                escape(&d.measured),
                escape(&d.declared)
            );
        }
        if !e.differences.is_empty() {
            let _ = writeln!(out);
        }
    }
    let _ = writeln!(
        out,
        "| measured | value | confidence | evidence |\n|---|---|---|---|"
    );
    for row in policy_rows(r) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            escape(&row.field),
            escape(&row.value),
            row.confidence,
            escape(&row.evidence)
        );
    }
    let _ = writeln!(out, "\n```yaml\n{}```\n", r.snippet);
    if let Some(p) = &r.nearest_preset {
        let _ = writeln!(out, "{}\n", escape(&preset_line(p)));
    }
    if r.findings.is_empty() {
        let _ = writeln!(out, "Rules: {}.\n", escape(&r.no_finding_text()));
    } else {
        let _ = writeln!(
            out,
            "| rule | severity | finding | fix |\n|---|---|---|---|"
        );
        for f in &r.findings {
            let _ = writeln!(
                out,
                "| {} {} | {} | {} | {} |",
                f.code,
                f.rule,
                f.severity.as_str(),
                escape(&f.message),
                escape(&f.help)
            );
        }
        let _ = writeln!(out);
    }
    for n in &r.policy.notes {
        let _ = writeln!(out, "> {}", escape(n));
    }
    if !r.policy.notes.is_empty() {
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "<details><summary>{} scenarios × {} runs</summary>\n\n| scenario | attempts | median waits (ms) | client |\n|---|---|---|---|",
        r.scenarios.len(),
        r.runs
    );
    for s in &r.scenarios {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            escape(&s.name),
            scenario_attempts(s, s.name == "refused"),
            scenario_waits(s),
            escape(&scenario_exits(s))
        );
    }
    let _ = writeln!(out, "\n</details>");
    out
}
