//! "The storm in time": the series of `review::series` drawn as SVG charts —
//! step lines over time with the fault's window shaded, and grouped bars for
//! the latency distribution. Every side on the same axes.

use std::fmt::Write as _;

use super::{esc, n};
use crate::review::Review;
use crate::review::series::{BarChart, LineChart};

const W: f64 = 600.0;
const H: f64 = 270.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 44.0;

pub(super) fn section(out: &mut String, r: &Review) {
    out.push_str("<section id=\"storm\">\n<h2>The storm in time</h2>\n");
    let _ = writeln!(
        out,
        "<p>Simulated in virtual time: scenario <code>{}</code> — {} Load: {}, seed {}.</p>",
        esc(&r.scenario.name),
        esc(&r.scenario.description),
        esc(&r.load),
        r.seed
    );
    for side in &r.sides {
        if let Some(note) = &side.sim_note {
            let _ = writeln!(
                out,
                "<p class=\"note\">{}: {}.</p>",
                esc(&super::capital(&side.label)),
                esc(note)
            );
        }
    }
    let Some(storm) = &r.storm else {
        out.push_str("<p>No simulation to draw.</p>\n</section>\n");
        return;
    };
    out.push_str("<ul class=\"legend\">");
    for (k, side) in r.sides.iter().enumerate() {
        if side.sim.is_some() {
            let _ = write!(
                out,
                "<li><span class=\"swatch line{k}\"></span>{}</li>",
                esc(&side.label)
            );
        }
    }
    out.push_str("<li><span class=\"swatch offered\"></span>offered</li><li><span class=\"swatch window\"></span>fault in force</li></ul>\n");
    out.push_str("<div class=\"sides\">\n");
    line_chart(out, &storm.attempts, "attempts");
    line_chart(out, &storm.success, "success");
    bar_chart(out, &storm.latency, "latency");
    out.push_str("</div>\n");
    // Whether goodput came back once the fault ended, where the run judged it
    // (a fault window with time before it to take the baseline from).
    let verdict = |run: &crate::run::RunReport| {
        run.goodput
            .as_ref()
            .and_then(|g| g.verdict.as_ref())
            .cloned()
    };
    let judged = r
        .sides
        .iter()
        .any(|s| s.sim.as_ref().and_then(verdict).is_some());
    let _ = writeln!(
        out,
        "<table>\n<tr><th></th><th class=\"num\">user requests</th><th class=\"num\">succeeded</th><th class=\"num\">p50</th><th class=\"num\">p99</th><th class=\"num\">at the fault target, per user request</th>{}</tr>",
        if judged {
            "<th>after the fault</th>"
        } else {
            ""
        }
    );
    for side in &r.sides {
        let Some(run) = &side.sim else { continue };
        let e = &run.end_to_end;
        let target: Vec<String> = run
            .services
            .iter()
            .filter(|s| s.fault_target)
            .map(|s| {
                format!(
                    "<code>{}</code> {}",
                    esc(&s.service),
                    esc(&crate::formats::figures::factor(s.amplification.measured))
                )
            })
            .take(5)
            .collect();
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td class=\"num\">{}</td><td class=\"num\">{:.1}%</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}</tr>",
            esc(&side.label),
            e.requests,
            100.0 * e.success_ratio(),
            esc(&crate::formats::figures::millis(e.latency_ms.p50)),
            esc(&crate::formats::figures::millis(e.latency_ms.p99)),
            target.join(", "),
            if judged {
                let v = verdict(run);
                let class = match v.as_ref().map(|v| v.recovered_at_ms.is_some()) {
                    Some(true) => " class=\"recovered\"",
                    Some(false) => " class=\"collapsed\"",
                    None => "",
                };
                format!(
                    "<td{class}>{}</td>",
                    esc(&crate::formats::compare::table::verdict(v.as_ref()))
                )
            } else {
                String::new()
            }
        );
    }
    out.push_str("</table>\n<p class=\"note\">Medians over the trials; latency from the intended send time to the final answer, client-layer retries included.</p>\n</section>\n");
}

fn plot_w() -> f64 {
    W - LEFT - RIGHT
}

fn plot_h() -> f64 {
    H - TOP - BOTTOM
}

fn open(out: &mut String, id: &str, title: &str) {
    let _ = writeln!(
        out,
        "<figure><svg class=\"chart\" id=\"chart-{id}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">",
        n(W),
        n(H),
        n(W),
        n(H),
        esc(title)
    );
    let _ = writeln!(
        out,
        "<text class=\"title\" x=\"{}\" y=\"18\">{}</text>",
        n(LEFT),
        esc(title)
    );
}

/// The y axis: grid lines and labels.
fn y_axis(out: &mut String, ticks: &[crate::review::series::Tick], y_max: f64, label: &str) {
    out.push_str("<g class=\"grid\">");
    for t in ticks {
        let y = TOP + plot_h() * (1.0 - t.value / y_max);
        let _ = write!(
            out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            n(LEFT),
            n(y),
            n(LEFT + plot_w()),
            n(y)
        );
    }
    out.push_str("</g>\n<g class=\"tick\">");
    for t in ticks {
        let y = TOP + plot_h() * (1.0 - t.value / y_max);
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            n(LEFT - 6.0),
            n(y + 4.0),
            esc(&t.label)
        );
    }
    out.push_str("</g>\n");
    let _ = writeln!(
        out,
        "<text class=\"label\" transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        n(TOP + plot_h() / 2.0),
        esc(label)
    );
}

fn line_chart(out: &mut String, c: &LineChart, id: &str) {
    open(out, id, &c.title);
    let x = |v: f64| LEFT + plot_w() * v / c.x_max;
    let y = |v: f64| TOP + plot_h() * (1.0 - v / c.y_max);
    if let Some((a, b)) = c.window {
        let (xa, xb) = (x(a.min(c.x_max)), x(b.min(c.x_max)));
        let _ = writeln!(
            out,
            "<rect class=\"window\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/><text class=\"window-label\" x=\"{}\" y=\"{}\">fault</text>",
            n(xa),
            n(TOP),
            n((xb - xa).max(0.0)),
            n(plot_h()),
            n(xa + 4.0),
            n(TOP + 12.0)
        );
    }
    y_axis(out, &c.y_ticks, c.y_max, &c.y_label);
    x_axis(
        out,
        c.x_ticks.iter().map(|t| (x(t.value), t.label.as_str())),
        &c.x_label,
    );
    for line in &c.lines {
        let class = if line.dashed {
            "series dashed".to_owned()
        } else {
            format!("series s{}", line.side)
        };
        let mut points = String::with_capacity(line.points.len() * 12);
        for (i, &(px, py)) in line.points.iter().enumerate() {
            if i > 0 {
                points.push(' ');
            }
            let _ = write!(points, "{},{}", n(x(px)), n(y(py)));
        }
        let _ = writeln!(
            out,
            "<polyline class=\"{class}\" points=\"{points}\"><title>{}</title></polyline>",
            esc(&line.name)
        );
    }
    out.push_str("</svg></figure>\n");
}

/// The x axis: tick labels at their positions, both axis lines, the label.
fn x_axis<'a>(out: &mut String, ticks: impl Iterator<Item = (f64, &'a str)>, label: &str) {
    out.push_str("<g class=\"tick\">");
    for (x, text) in ticks {
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            n(x),
            n(TOP + plot_h() + 16.0),
            esc(text)
        );
    }
    out.push_str("</g>\n");
    let _ = writeln!(
        out,
        "<g class=\"axis\"><line x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/><line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b}\"/></g>",
        l = n(LEFT),
        r = n(LEFT + plot_w()),
        t = n(TOP),
        b = n(TOP + plot_h())
    );
    let _ = writeln!(
        out,
        "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        n(LEFT + plot_w() / 2.0),
        n(H - 8.0),
        esc(label)
    );
}

fn bar_chart(out: &mut String, c: &BarChart, id: &str) {
    open(out, id, &c.title);
    y_axis(out, &c.y_ticks, c.y_max, &c.y_label);
    let cats = c.categories.len().max(1) as f64;
    let slot = plot_w() / cats;
    let groups = c.groups.len().max(1) as f64;
    let bar = (slot * 0.8 / groups).max(0.5);
    let y = |v: f64| TOP + plot_h() * (1.0 - v / c.y_max);
    for (gi, g) in c.groups.iter().enumerate() {
        let _ = write!(out, "<g class=\"bars\"><title>{}</title>", esc(&g.name));
        for (i, &v) in g.values.iter().enumerate() {
            if v <= 0.0 {
                continue;
            }
            let x0 = LEFT + slot * i as f64 + slot * 0.1 + bar * gi as f64;
            let _ = write!(
                out,
                "<rect class=\"bar s{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{} {}: {:.1}%</title></rect>",
                g.side,
                n(x0),
                n(y(v)),
                n(bar),
                n(TOP + plot_h() - y(v)),
                esc(&g.name),
                esc(&c.categories[i]),
                v
            );
        }
        out.push_str("</g>\n");
    }
    // Every label when they fit, else every other (or fewer).
    let every = ((c.categories.len() as f64 * 34.0) / plot_w())
        .ceil()
        .max(1.0) as usize;
    x_axis(
        out,
        c.categories
            .iter()
            .enumerate()
            .filter(|(i, _)| i % every == 0)
            .map(|(i, cat)| (LEFT + slot * (i as f64 + 0.5), cat.as_str())),
        &c.x_label,
    );
    out.push_str("</svg></figure>\n");
}
