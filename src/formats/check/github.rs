//! `--format github`: GitHub Actions workflow commands, one annotation per
//! finding on the YAML line that causes it, then a plain summary line.
//!
//! `::error file=topology.yaml,line=59,col=13,endColumn=19,title=RL003 non-idempotent-retry::MESSAGE — fix: HELP`
//!
//! Escaping follows the runner's rules: in the message `%`, CR and LF are
//! percent-encoded; in properties also `:` and `,`, which would end them.

use std::fmt::Write as _;

use crate::formats::figures;
use crate::formats::snippet::{self, FileLines};
use crate::formats::{Reporter, Style};
use crate::lint::{CheckReport, Severity};

pub struct Github;

impl Reporter<CheckReport> for Github {
    fn render(&self, r: &CheckReport, _: Style<'_>) -> String {
        let mut out = String::new();
        let lines = FileLines::new(r);
        for f in &r.findings {
            let command = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            let line = f.line.max(1);
            let (col, end) = snippet::columns(lines.get(&f.file, line), f.column);
            let mut message = f.message.clone();
            if !f.help.is_empty() {
                message.push_str(" — fix: ");
                message.push_str(&f.help);
            }
            let _ = writeln!(
                out,
                "::{command} file={},line={line},col={col},endColumn={end},title={}::{}",
                property(&f.file.replace('\\', "/")),
                property(&format!("{} {}", f.code, f.rule)),
                data(&message)
            );
        }
        let worst = figures::worst_service(r)
            .map(|row| {
                format!(
                    " — worst case {} at {}",
                    figures::worst_case(row),
                    row.service
                )
            })
            .unwrap_or_default();
        let counts = figures::counts(&r.summary);
        let _ = writeln!(
            out,
            "retrylint: {} in {}{worst}; {}",
            if counts.is_empty() {
                "no findings"
            } else {
                &counts
            },
            r.topology,
            figures::gate(r)
        );
        out
    }
}

/// A command's message.
pub fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A command's property value.
pub fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_escapes_percent_and_line_breaks_only() {
        assert_eq!(data("100% a:b, c\r\nd"), "100%25 a:b, c%0D%0Ad");
        // `%` first, so an escape in the input is not decoded by the runner.
        assert_eq!(data("%0A"), "%250A");
    }

    #[test]
    fn properties_also_escape_colon_and_comma() {
        assert_eq!(property("C:\\a,b.yaml"), "C%3A\\a%2Cb.yaml");
        assert_eq!(property("50%\n"), "50%25%0A");
        assert_eq!(
            property("RL003 non-idempotent-retry"),
            "RL003 non-idempotent-retry"
        );
    }
}
