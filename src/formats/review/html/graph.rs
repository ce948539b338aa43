//! The call graph as SVG, from the layout in `review::layout`: boxes coloured
//! by worst-case amplification, every call labelled with its retrying layers,
//! the hottest path drawn thick.

use std::fmt::Write as _;

use super::{esc, n};
use crate::formats::figures;
use crate::lint::CheckReport;
use crate::review::layout::{Layout, MAX_NAME_CHARS, NODE_H};
use crate::review::{GraphView, Review};

pub(super) fn section(out: &mut String, r: &Review) {
    out.push_str("<section id=\"graph\">\n<h2>Call graph</h2>\n");
    out.push_str("<p class=\"note\">Services in layers from the entry (top), each call labelled with the attempts of every layer that retries it (<code>app 3 × istio 3</code>: 9 attempts per call). Boxes are coloured by worst-case amplification; the thick line is the hottest path, red when it ends over the limit.</p>\n");
    let one = if r.sides.len() == 1 { " one" } else { "" };
    let _ = writeln!(out, "<div class=\"sides{one}\">");
    for (k, side) in r.sides.iter().enumerate() {
        out.push_str("<figure>\n");
        if r.sides.len() > 1 {
            let _ = writeln!(out, "<h3>{}</h3>", esc(&side.label));
        }
        match &side.graph {
            GraphView::Drawn(l) => {
                svg(out, l, k, &side.check);
                if let Some(w) = l.hottest {
                    let _ = writeln!(
                        out,
                        "<figcaption>Hottest service: <code>{}</code> at {} attempts per user request when everything fails.</figcaption>",
                        esc(&l.nodes[w].service),
                        esc(&figures::worst_case(&side.check.amplification[w]))
                    );
                }
            }
            GraphView::TooLarge {
                services,
                calls,
                hottest_path,
                hottest,
            } => {
                let hottest_figure = hottest
                    .map(|w| figures::worst_case(&side.check.amplification[w]))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "<p>{services} services and {calls} calls: too many to draw legibly. The hottest path ({} hops, {} at its end):</p>",
                    hottest_path.len().saturating_sub(1),
                    esc(&hottest_figure)
                );
                let path: Vec<String> = hottest_path
                    .iter()
                    .map(|s| format!("<code>{}</code>", esc(s)))
                    .collect();
                let _ = writeln!(out, "<p>{}</p>", path.join(" → "));
            }
        }
        out.push_str("</figure>\n");
    }
    out.push_str("</div>\n");
    if !r
        .sides
        .iter()
        .any(|s| matches!(s.graph, GraphView::Drawn(_)))
    {
        out.push_str("</section>\n");
        return;
    }
    out.push_str("<ul class=\"legend\"><li><span class=\"swatch calm\"></span>1× (no retries reach it)</li><li><span class=\"swatch warm\"></span>up to a third of the limit</li><li><span class=\"swatch hot\"></span>up to the limit</li><li><span class=\"swatch over\"></span>over the limit</li><li><span class=\"swatch storm\"></span>over 10× the limit</li><li><span class=\"swatch unreachable\"></span>unreachable</li><li><span class=\"swatch hotpath\"></span>hottest path over the limit (thinner: the path to another service over it)</li><li><span class=\"swatch hotpath within\"></span>hottest path within the limit</li></ul>\n");
    out.push_str("</section>\n");
}

fn svg(out: &mut String, l: &Layout, side: usize, check: &CheckReport) {
    let name = &check.topology;
    let _ = writeln!(
        out,
        "<svg class=\"graph\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"call graph of {}\">",
        esc(name),
        w = n(l.width),
        h = n(l.height)
    );
    let _ = writeln!(
        out,
        "<defs><marker id=\"a{side}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"10\" markerHeight=\"10\" orient=\"auto-start-reverse\"><path class=\"arrow\" d=\"M0,0 L10,5 L0,10 z\"/></marker><marker id=\"h{side}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"13\" markerHeight=\"13\" orient=\"auto-start-reverse\"><path class=\"arrow hot\" d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>"
    );
    // Edges under the boxes, the hottest last so they draw on top; labels
    // after every line, so no line crosses a label.
    let mut order: Vec<usize> = (0..l.edges.len()).collect();
    order.sort_by_key(|&i| (l.edges[i].hottest, l.edges[i].hot));
    let mut labels = String::new();
    for &i in &order {
        let e = &l.edges[i];
        let (a, b) = (&l.nodes[e.from], &l.nodes[e.to]);
        let [p0, p1, p2, p3] = e.curve;
        let class = if e.hottest && l.hottest_over {
            "edge hottest"
        } else if e.hottest {
            "edge hottest within"
        } else if e.hot {
            "edge hot"
        } else {
            "edge"
        };
        let marker = if e.hot || (e.hottest && l.hottest_over) {
            'h'
        } else {
            'a'
        };
        let _ = writeln!(
            out,
            "<g class=\"{class}\"><title>{} → {}: {}</title><path d=\"M{},{} C{},{} {},{} {},{}\" marker-end=\"url(#{marker}{side})\"/></g>",
            esc(&a.service),
            esc(&b.service),
            esc(&e.label),
            n(p0.0),
            n(p0.1),
            n(p1.0),
            n(p1.1),
            n(p2.0),
            n(p2.1),
            n(p3.0),
            n(p3.1)
        );
        let (w, h) = e.label_size;
        let _ = writeln!(
            labels,
            "<g class=\"{class}\"><rect class=\"label-bg\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>",
            n(e.label_at.0 - w / 2.0),
            n(e.label_at.1 - h / 2.0),
            n(w),
            n(h),
            n(e.label_at.0),
            n(e.label_at.1 + 4.0),
            esc(&e.label)
        );
    }
    out.push_str(&labels);
    for (node, row) in l.nodes.iter().zip(&check.amplification) {
        // The worst case as the tables print it (`64×`).
        let figure = if row.reachable {
            figures::worst_case(row)
        } else {
            "unreachable".into()
        };
        let mut class = format!("node heat-{}", node.heat.as_str());
        if node.entry {
            class.push_str(" entry");
        }
        if node.on_hottest_path {
            class.push_str(" path");
        }
        let shown: String = if node.service.chars().count() > MAX_NAME_CHARS {
            let cut: String = node.service.chars().take(MAX_NAME_CHARS - 1).collect();
            format!("{cut}…")
        } else {
            node.service.clone()
        };
        let cx = node.x + node.w / 2.0;
        let entry = if node.entry { " (entry)" } else { "" };
        let _ = writeln!(
            out,
            "<g class=\"{class}\"><title>{}{entry}: {} attempts per user request at worst</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\"/><text class=\"name\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text><text class=\"figure\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>",
            esc(&node.service),
            esc(&figure),
            n(node.x),
            n(node.y),
            n(node.w),
            n(NODE_H),
            n(cx),
            n(node.y + 19.0),
            esc(&shown),
            n(cx),
            n(node.y + 36.0),
            esc(&figure)
        );
    }
    out.push_str("</svg>\n");
}
