//! The figures as tables: attempts per user request (worst case, with
//! budgets, with breakers), worst response time against the deadline, and a
//! chaos run measured beside the prediction. With two topologies, each figure
//! has a column per topology.

use std::fmt::Write as _;

use super::{capital, esc, ticks};
use crate::lint::AmplificationRow;

/// A figure's heading and how a row shows it.
type Column = (&'static str, fn(&AmplificationRow) -> String);
use crate::formats::figures;
use crate::review::{Measured, Review};

pub(super) fn section(out: &mut String, r: &Review) {
    out.push_str("<section id=\"tables\">\n<h2>Figures</h2>\n");
    let first = &r.written().check;
    let _ = writeln!(
        out,
        "<h3>Attempts per user request</h3>\n<p class=\"note\">Attempts reaching each service per user request to <code>{}</code>: when every call fails (worst case), with every retry budget in its steady state, and with every circuit breaker open under a sustained outage. Limit {}.</p>",
        esc(&first.entry),
        esc(&figures::limit(first))
    );
    for side in &r.sides {
        for line in figures::column_notes(&side.check) {
            let _ = writeln!(out, "<p class=\"note\">{}.</p>", ticks(&capital(&line)));
        }
    }
    let columns: [Column; 3] = [
        ("worst case", figures::worst_case),
        ("with budgets", |row| figures::factor(row.with_budgets)),
        ("with breakers", |row| figures::factor(row.with_breakers)),
    ];
    table(out, r, &columns, |row, limit| {
        row.reachable && row.worst_case > limit
    });
    out.push_str("<h3>Worst response time against the deadline</h3>\n");
    for side in &r.sides {
        let label = if r.sides.len() > 1 {
            format!("{}: ", capital(&side.label))
        } else {
            String::new()
        };
        let line = figures::request_line(&side.check);
        let over = match side.check.deadline {
            Some(d) if side.check.entry_hang.is_none_or(|w| w > d) => " — over the deadline",
            _ => "",
        };
        let line = if label.is_empty() {
            capital(&line)
        } else {
            line
        };
        let _ = writeln!(out, "<p>{}{}{over}.</p>", esc(&label), ticks(&line));
    }
    let columns: [Column; 1] = [("worst response", figures::response)];
    let deadline_ms = first.deadline.map(|d| d.as_secs_f64() * 1e3);
    table(out, r, &columns, |row, _| {
        deadline_ms
            .is_some_and(|d| row.reachable && row.worst_response_if_hang_ms.is_none_or(|w| w > d))
    });
    let _ = writeln!(
        out,
        "<p class=\"note\">{}.</p>",
        ticks(&capital(&figures::response_note(first)))
    );
    if r.rows_omitted > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">Showing the {} services with the highest worst case; {} more are left out.</p>",
            r.rows.len(),
            r.rows_omitted
        );
    }
    out.push_str("</section>\n");
}

/// One row per service, one column per (figure, side); a row is marked when
/// `over` holds on any side.
fn table(
    out: &mut String,
    r: &Review,
    columns: &[Column],
    over: impl Fn(&AmplificationRow, f64) -> bool,
) {
    let two = r.sides.len() > 1;
    out.push_str("<table>\n<tr><th rowspan=\"2\">service</th>");
    for (name, _) in columns {
        if two {
            let _ = write!(
                out,
                "<th class=\"num\" colspan=\"{}\">{}</th>",
                r.sides.len(),
                esc(name)
            );
        } else {
            let _ = write!(out, "<th class=\"num\" rowspan=\"2\">{}</th>", esc(name));
        }
    }
    out.push_str("</tr>\n<tr>");
    if two {
        for _ in columns {
            for side in &r.sides {
                let _ = write!(out, "<th class=\"num\">{}</th>", esc(&side.label));
            }
        }
    }
    out.push_str("</tr>\n");
    for row in &r.rows {
        let cells: Vec<Option<&AmplificationRow>> = row
            .at
            .iter()
            .enumerate()
            .map(|(k, i)| i.map(|i| &r.sides[k].check.amplification[i]))
            .collect();
        let marked = cells
            .iter()
            .enumerate()
            .any(|(k, c)| c.is_some_and(|c| over(c, r.sides[k].check.max_amplification)));
        let class = if marked { " class=\"over\"" } else { "" };
        let _ = write!(
            out,
            "<tr{class}><td><code>{}</code></td>",
            esc(&row.service)
        );
        for (_, value) in columns {
            for c in &cells {
                let text = match c {
                    Some(c) if !c.reachable => "unreachable".to_owned(),
                    Some(c) => value(c),
                    None => "–".to_owned(),
                };
                let _ = write!(out, "<td class=\"num\">{}</td>", esc(&text));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

pub(super) fn measured(out: &mut String, m: &Measured) {
    out.push_str("<section id=\"measured\">\n<h2>Measured beside predicted</h2>\n");
    let _ = writeln!(
        out,
        "<p>The chaos run in <code>{}</code>: topology <code>{}</code>, scenario <code>{}</code>, seed {}. Attempts reaching each service per user request, measured on real servers, simulated in virtual time, and predicted by the static worst case within the run's length.</p>",
        esc(&m.file),
        esc(&m.topology),
        esc(&m.fault),
        m.seed
    );
    for note in &m.notes {
        let _ = writeln!(out, "<p class=\"note\">Note: {}.</p>", ticks(note));
    }
    out.push_str("<table>\n<tr><th>service</th><th class=\"num\">measured</th><th class=\"num\">simulated</th><th class=\"num\">predicted</th><th>fault target</th></tr>\n");
    for row in &m.rows {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&row.service),
            esc(&figures::factor(row.measured)),
            esc(&row.simulated.map_or("–".into(), figures::factor)),
            esc(&figures::factor(row.predicted)),
            if row.fault_target { "yes" } else { "" }
        );
    }
    out.push_str("</table>\n");
    let e = &m.end_to_end;
    let opt = |v: Option<String>| v.unwrap_or_else(|| "–".into());
    out.push_str("<table>\n<tr><th>end to end</th><th class=\"num\">measured</th><th class=\"num\">simulated</th></tr>\n");
    let rows = [
        (
            "user requests",
            e.requests.0.to_string(),
            opt(e.requests.1.map(|v| v.to_string())),
        ),
        (
            "succeeded",
            format!("{:.1}%", 100.0 * e.success.0),
            opt(e.success.1.map(|v| format!("{:.1}%", 100.0 * v))),
        ),
        (
            "p50",
            figures::millis(e.p50_ms.0),
            opt(e.p50_ms.1.map(figures::millis)),
        ),
        (
            "p99",
            figures::millis(e.p99_ms.0),
            opt(e.p99_ms.1.map(figures::millis)),
        ),
    ];
    for (name, a, b) in rows {
        let _ = writeln!(
            out,
            "<tr><th>{name}</th><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&a),
            esc(&b)
        );
    }
    out.push_str("</table>\n</section>\n");
}
