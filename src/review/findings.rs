//! Findings grouped by service for the page, worst service first, each with
//! the YAML lines around it. Bounded: a generated topology can have thousands
//! of findings, and the page shows the first [`MAX_FINDINGS`] (errors first).

use crate::input::lines::Lines;
use crate::lint::{CheckReport, Finding, Severity};

/// The most findings the page shows; the rest are counted.
pub(crate) const MAX_FINDINGS: usize = 150;
/// Lines of YAML shown before the finding's line.
const BEFORE: u32 = 2;
/// And after it.
const AFTER: u32 = 1;

/// A few numbered lines of the topology, the finding's marked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snippet {
    /// (line number, text) in order.
    pub lines: Vec<(u32, String)>,
    /// The line the finding is on.
    pub line: u32,
    /// 1-based column of the culprit, in characters.
    pub column: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shown {
    pub finding: Finding,
    pub snippet: Snippet,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServiceFindings {
    pub service: String,
    pub worst: Severity,
    pub findings: Vec<Shown>,
}

/// The findings by service, the first `MAX_FINDINGS` by severity; and how
/// many were left out.
pub(crate) fn group(r: &CheckReport) -> (Vec<ServiceFindings>, usize) {
    let mut order: Vec<&Finding> = r.findings.iter().collect();
    // Stable: file order within a severity.
    order.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let omitted = order.len().saturating_sub(MAX_FINDINGS);
    order.truncate(MAX_FINDINGS);
    let lines = Lines::new(&r.source);
    let mut groups: Vec<ServiceFindings> = Vec::new();
    for f in order {
        let shown = Shown {
            finding: f.clone(),
            snippet: snippet(&lines, f.line, f.column),
        };
        match groups.iter_mut().find(|g| g.service == f.service) {
            Some(g) => {
                g.worst = g.worst.max(f.severity);
                g.findings.push(shown);
            }
            None => groups.push(ServiceFindings {
                service: f.service.clone(),
                worst: f.severity,
                findings: vec![shown],
            }),
        }
    }
    for g in &mut groups {
        g.findings
            .sort_by_key(|s| (s.finding.line, s.finding.column));
    }
    // Worst first; among equals, the first in the file.
    groups.sort_by_key(|g| {
        (
            std::cmp::Reverse(g.worst),
            g.findings.first().map_or(0, |s| s.finding.line),
        )
    });
    (groups, omitted)
}

fn snippet(lines: &Lines<'_>, line: u32, column: u32) -> Snippet {
    if line == 0 {
        return Snippet {
            lines: Vec::new(),
            line,
            column,
        };
    }
    let first = line.saturating_sub(BEFORE).max(1);
    let shown = (first..=line + AFTER)
        .map(|n| (n, lines.get(n).to_owned()))
        // Past the end of the file: nothing to show.
        .filter(|(n, text)| *n <= line || !text.is_empty())
        .collect();
    Snippet {
        lines: shown,
        line,
        column,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_hold_the_line_and_its_neighbours() {
        let text = "a: 1\nb: 2\nc: 3\nd: 4\n";
        let s = snippet(&Lines::new(text), 3, 1);
        assert_eq!(
            s.lines,
            [
                (1, "a: 1".to_owned()),
                (2, "b: 2".to_owned()),
                (3, "c: 3".to_owned()),
                (4, "d: 4".to_owned())
            ]
        );
        let s = snippet(&Lines::new(text), 4, 1);
        assert_eq!(s.lines.first().unwrap().0, 2);
        assert_eq!(s.lines.last().unwrap().0, 4);
    }
}
