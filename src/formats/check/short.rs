//! `--format short`: one line per finding, for logs — where it is, how bad,
//! which rule, the route from the entry down to it (the hottest path the
//! amplification figure follows), what is wrong and the fix; then a summary
//! line. Like `gcc`'s and `ruff --output-format concise`'s lines, so editors
//! and log tools that read `file:line:column:` find the place.
//!
//! `examples/seed-002-deadline.yaml:26:9: warning[RL007] frontend → api → db: api → db: 2s timeout × 3 attempts … — fix: lower the timeout …`

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use crate::formats::figures;
use crate::formats::{Reporter, Style};
use crate::lint::{CheckReport, Finding};

pub struct Short;

impl Reporter<CheckReport> for Short {
    fn render(&self, r: &CheckReport, style: Style<'_>) -> String {
        let mut out = Vec::new();
        let _ = self.write(r, style, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Written as it goes: a large topology has tens of thousands of lines.
    fn write(&self, r: &CheckReport, _: Style<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        let routes = Routes::new(r);
        let mut line = String::new();
        for f in &r.findings {
            line.clear();
            finding_line(&mut line, f, &routes);
            out.write_all(line.as_bytes())?;
        }
        let counts = figures::counts(&r.summary);
        writeln!(
            out,
            "retrylint: {} in {}; {}",
            if counts.is_empty() {
                "no findings"
            } else {
                &counts
            },
            r.topology,
            figures::gate(r)
        )?;
        out.flush()
    }
}

/// `file:line:column: severity[CODE] route: message — fix: help`.
fn finding_line(line: &mut String, f: &Finding, routes: &Routes) {
    let _ = write!(
        line,
        "{}:{}:{}: {}[{}] ",
        f.file,
        f.line,
        f.column,
        f.severity.as_str(),
        f.code
    );
    // A call's finding ends at its callee; one about another service (RL001
    // blames a caller's layer for the amplified service) at that service.
    match &f.call {
        Some(c) if c.from == f.service => {
            routes.write(line, &c.from);
            line.push_str(" → ");
            line.push_str(&c.to);
        }
        _ => routes.write(line, &f.service),
    }
    line.push_str(": ");
    // One line whatever a message holds.
    line.push_str(&f.message.replace(['\n', '\r'], " "));
    if !f.help.is_empty() {
        line.push_str(" — fix: ");
        line.push_str(&f.help.replace(['\n', '\r'], " "));
    }
    line.push('\n');
}

/// The route from the entry to each service, along `CheckReport::hot_caller`.
struct Routes<'r> {
    names: Vec<&'r str>,
    index: HashMap<&'r str, usize>,
    caller: &'r [Option<usize>],
}

impl<'r> Routes<'r> {
    fn new(r: &'r CheckReport) -> Self {
        let names: Vec<&str> = r.amplification.iter().map(|a| a.service.as_str()).collect();
        let index = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        Routes {
            names,
            index,
            caller: &r.hot_caller,
        }
    }

    /// `frontend → api`, outermost first; the name alone for a service the
    /// entry does not reach. The hot paths form a tree (a caller comes
    /// before its callees in topological order), so the walk ends; it is
    /// bounded by the number of services all the same.
    fn write(&self, line: &mut String, service: &str) {
        let Some(&s) = self.index.get(service) else {
            line.push_str(service);
            return;
        };
        let mut route = vec![s];
        let mut at = s;
        while let Some(Some(c)) = self.caller.get(at) {
            if route.len() > self.names.len() {
                break;
            }
            route.push(*c);
            at = *c;
        }
        for (k, s) in route.iter().rev().enumerate() {
            if k > 0 {
                line.push_str(" → ");
            }
            line.push_str(self.names[*s]);
        }
    }
}
