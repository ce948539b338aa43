//! The call graph laid out for drawing: services in layers from the entry
//! (longest-path layering, so every call points down), the order within a
//! layer chosen by barycentre sweeps to cut crossings, and coordinates in
//! abstract units the HTML reporter scales. Plain data; the reporter only
//! draws it.
//!
//! Longest-path layering is the textbook first step of Sugiyama's method and
//! is enough here: review topologies have tens of services, and the page
//! refuses to draw past [`MAX_DRAWN`] (a picture of a thousand boxes helps no
//! reviewer; the hottest path is listed instead).

use crate::analysis::Analysis;
use crate::lint::CheckReport;
use crate::topology::Topology;

/// Past this many services the graph is listed, not drawn.
pub const MAX_DRAWN: usize = 80;
/// Past this many calls, likewise.
pub const MAX_DRAWN_CALLS: usize = 200;

/// Node box size and spacing, in SVG user units.
pub const NODE_H: f64 = 46.0;
const ROW_GAP: f64 = 92.0;
const COL_GAP: f64 = 28.0;
const MARGIN: f64 = 16.0;
/// Width per character of a service name at the page's 13 px font, with room.
const CHAR_W: f64 = 7.6;
const MIN_NODE_W: f64 = 96.0;
/// Width per character of an edge label at 11.5 px.
const LABEL_CHAR_W: f64 = 6.4;
/// Names are cut to this many characters in the box (the title keeps all).
pub const MAX_NAME_CHARS: usize = 28;

/// How hot a service runs: its worst-case amplification against the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Heat {
    /// One attempt per user request at most.
    Calm,
    /// Retried, within a third of the limit.
    Warm,
    /// Up to the limit.
    Hot,
    /// Over the limit.
    Over,
    /// Over ten times the limit.
    Storm,
    /// No request reaches it.
    Unreachable,
}

impl Heat {
    pub fn of(worst_case: f64, limit: f64, reachable: bool) -> Heat {
        if !reachable {
            Heat::Unreachable
        } else if worst_case <= 1.0 {
            Heat::Calm
        } else if worst_case * 3.0 <= limit {
            Heat::Warm
        } else if worst_case <= limit {
            Heat::Hot
        } else if worst_case <= limit * 10.0 {
            Heat::Over
        } else {
            Heat::Storm
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Heat::Calm => "calm",
            Heat::Warm => "warm",
            Heat::Hot => "hot",
            Heat::Over => "over",
            Heat::Storm => "storm",
            Heat::Unreachable => "unreachable",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub service: String,
    pub heat: Heat,
    pub entry: bool,
    pub on_hottest_path: bool,
    /// Top-left corner and width.
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub layer: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    /// `app 3 × istio-sidecar 3`, or `no retry`.
    pub label: String,
    /// Attempts per call, all layers multiplied.
    pub attempts: f64,
    /// On the path to the hottest service.
    pub hottest: bool,
    /// On a hot path to some service over the limit.
    pub hot: bool,
    /// The curve: start, two control points, end.
    pub curve: [(f64, f64); 4],
    /// Where the label's centre goes: on the curve, clear of other labels
    /// where a place along it is.
    pub label_at: (f64, f64),
    /// The label's box, about: width and height.
    pub label_size: (f64, f64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// One per service, indexed like the topology's services and the
    /// check's `amplification`.
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub width: f64,
    pub height: f64,
    /// The hottest service, for the caption: its index in `nodes` and in
    /// the check's `amplification` (the page writes its figure).
    pub hottest: Option<usize>,
    /// The hottest service is over the amplification limit: its path is
    /// drawn as a hazard, not only as the busiest.
    pub hottest_over: bool,
}

/// The graph as the page shows it: drawn, or too large and listed.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphView {
    Drawn(Layout),
    TooLarge {
        services: usize,
        calls: usize,
        /// Entry first, down to the hottest service.
        hottest_path: Vec<String>,
        /// The hottest service: its index in the check's `amplification`.
        hottest: Option<usize>,
    },
}

/// The label of call `i` of `s`: each retrying layer with its attempts.
pub fn edge_label(t: &Topology, a: &Analysis, s: usize, i: usize) -> String {
    let call = &t.services[s].calls[i];
    let parts: Vec<String> = call
        .layers
        .iter()
        .zip(&a.layer_attempts[s][i])
        .filter(|(_, la)| la.count > 1)
        .map(|(l, la)| format!("{} {}", l.name, la.count))
        .collect();
    if parts.is_empty() {
        "no retry".into()
    } else {
        parts.join(" × ")
    }
}

/// The calls (caller, index) from the entry to the service with the highest
/// worst case, outermost first; of equals, the last in the file (usually the
/// deepest: where the retries of the path land).
pub fn hottest_path(r: &CheckReport, a: &Analysis) -> (Option<usize>, Vec<(usize, usize)>) {
    let worst = r
        .amplification
        .iter()
        .enumerate()
        .filter(|(_, row)| row.reachable)
        .max_by(|(_, x), (_, y)| x.worst_case.total_cmp(&y.worst_case))
        .map(|(i, _)| i);
    let path = worst.map_or_else(Vec::new, |w| a.hot_path_tail(w, usize::MAX).0);
    (worst, path)
}

pub fn view(t: &Topology, r: &CheckReport, a: &Analysis) -> GraphView {
    let (worst, path) = hottest_path(r, a);
    if t.services.len() > MAX_DRAWN || r.edges.len() > MAX_DRAWN_CALLS {
        let mut names: Vec<String> = path
            .iter()
            .map(|&(s, _)| t.services[s].name.clone())
            .collect();
        if let Some(w) = worst {
            names.push(t.services[w].name.clone());
        }
        return GraphView::TooLarge {
            services: t.services.len(),
            calls: r.edges.len(),
            hottest_path: names,
            hottest: worst,
        };
    }
    GraphView::Drawn(layout(t, r, a, worst, &path))
}

fn layout(
    t: &Topology,
    r: &CheckReport,
    a: &Analysis,
    worst: Option<usize>,
    path: &[(usize, usize)],
) -> Layout {
    let n = t.services.len();
    // Longest path from the roots (the entry, and services nothing calls):
    // `order` has callers before callees.
    let mut layer = vec![0usize; n];
    for &s in &a.order {
        for c in &t.services[s].calls {
            layer[c.to] = layer[c.to].max(layer[s] + 1);
        }
    }
    let depth = layer.iter().max().map_or(1, |m| m + 1);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for &s in &a.order {
        rows[layer[s]].push(s);
    }
    // The entry leads its row.
    if let Some(i) = rows[0].iter().position(|&s| s == t.entry) {
        let e = rows[0].remove(i);
        rows[0].insert(0, e);
    }
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut callees: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (s, svc) in t.services.iter().enumerate() {
        for c in &svc.calls {
            callees[s].push(c.to);
            callers[c.to].push(s);
        }
    }
    barycentre_sweeps(&mut rows, &callers, &callees, n);

    let widths: Vec<f64> = t
        .services
        .iter()
        .map(|s| {
            let chars = s.name.chars().count().min(MAX_NAME_CHARS) as f64;
            (chars * CHAR_W + 24.0).max(MIN_NODE_W)
        })
        .collect();
    let row_width = |row: &[usize]| {
        row.iter().map(|&s| widths[s]).sum::<f64>() + COL_GAP * row.len().saturating_sub(1) as f64
    };
    let width = rows.iter().map(|r| row_width(r)).fold(0.0, f64::max) + 2.0 * MARGIN;
    let mut pos = vec![(0.0, 0.0); n];
    for (l, row) in rows.iter().enumerate() {
        // Each row centred.
        let mut x = (width - row_width(row)) / 2.0;
        let y = MARGIN + l as f64 * (NODE_H + ROW_GAP);
        for &s in row {
            pos[s] = (x, y);
            x += widths[s] + COL_GAP;
        }
    }
    let height = 2.0 * MARGIN + depth as f64 * NODE_H + (depth - 1) as f64 * ROW_GAP;
    let mut on_path = vec![false; n];
    for &(s, _) in path {
        on_path[s] = true;
    }
    if let Some(w) = worst {
        on_path[w] = true;
    }
    let nodes = t
        .services
        .iter()
        .enumerate()
        .map(|(s, svc)| {
            let row = &r.amplification[s];
            Node {
                service: svc.name.clone(),
                heat: Heat::of(row.worst_case, r.max_amplification, row.reachable),
                entry: s == t.entry,
                on_hottest_path: on_path[s] && !path.is_empty(),
                x: pos[s].0,
                y: pos[s].1,
                w: widths[s],
                layer: layer[s],
            }
        })
        .collect();
    let mut edges = Vec::new();
    let mut k = 0;
    for (s, svc) in t.services.iter().enumerate() {
        for (i, c) in svc.calls.iter().enumerate() {
            let row = &r.edges[k];
            k += 1;
            let (x1, y1) = (pos[s].0 + widths[s] / 2.0, pos[s].1 + NODE_H);
            let (x2, y2) = (pos[c.to].0 + widths[c.to] / 2.0, pos[c.to].1);
            let dy = (y2 - y1) / 2.0;
            edges.push(Edge {
                from: s,
                to: c.to,
                label: edge_label(t, a, s, i),
                attempts: row.attempts,
                hottest: path.contains(&(s, i)),
                hot: row.hot,
                curve: [(x1, y1), (x1, y1 + dy), (x2, y2 - dy), (x2, y2)],
                label_at: (0.0, 0.0),
                label_size: (0.0, 0.0),
            });
        }
    }
    place_labels(&mut edges);
    Layout {
        nodes,
        edges,
        width,
        height,
        hottest: worst,
        hottest_over: worst.is_some_and(|w| r.over_limit(&r.amplification[w])),
    }
}

/// The point at `t` of a cubic Bézier curve.
fn bezier(c: &[(f64, f64); 4], t: f64) -> (f64, f64) {
    let u = 1.0 - t;
    let (a, b, cc, d) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
    (
        a * c[0].0 + b * c[1].0 + cc * c[2].0 + d * c[3].0,
        a * c[0].1 + b * c[1].1 + cc * c[2].1 + d * c[3].1,
    )
}

/// Places each label on its curve at the first of a few positions whose box
/// overlaps no label placed before (the middle first); the middle when none
/// is free. Hottest calls first, so theirs keep the middle.
fn place_labels(edges: &mut [Edge]) {
    const TRIES: [f64; 7] = [0.5, 0.35, 0.65, 0.25, 0.75, 0.42, 0.58];
    let size = |label: &str| (label.chars().count() as f64 * LABEL_CHAR_W + 8.0, 15.0);
    let mut order: Vec<usize> = (0..edges.len()).collect();
    order.sort_by_key(|&i| (!edges[i].hottest, !edges[i].hot));
    let mut placed: Vec<(f64, f64, f64, f64)> = Vec::new();
    for i in order {
        let (w, h) = size(&edges[i].label);
        let free = |(x, y): (f64, f64)| {
            placed.iter().all(|&(px, py, pw, ph)| {
                (x - px).abs() * 2.0 >= w + pw || (y - py).abs() * 2.0 >= h + ph
            })
        };
        let at = TRIES
            .iter()
            .map(|&t| bezier(&edges[i].curve, t))
            .find(|&p| free(p))
            .unwrap_or_else(|| bezier(&edges[i].curve, 0.5));
        placed.push((at.0, at.1, w, h));
        edges[i].label_at = at;
        edges[i].label_size = (w, h);
    }
}

/// Reorders each row by the mean position of its neighbours in the row above
/// (sweeping down) then below (sweeping up), four times; ties keep the order.
fn barycentre_sweeps(
    rows: &mut [Vec<usize>],
    callers: &[Vec<usize>],
    callees: &[Vec<usize>],
    n: usize,
) {
    let mut at = vec![0.0f64; n];
    let place = |rows: &[Vec<usize>], at: &mut Vec<f64>| {
        for row in rows {
            for (i, &s) in row.iter().enumerate() {
                at[s] = i as f64;
            }
        }
    };
    place(rows, &mut at);
    for _ in 0..4 {
        for row in rows.iter_mut().skip(1) {
            reorder(row, callers, &at);
            for (i, &s) in row.iter().enumerate() {
                at[s] = i as f64;
            }
        }
        for row in rows.iter_mut().rev().skip(1) {
            reorder(row, callees, &at);
            for (i, &s) in row.iter().enumerate() {
                at[s] = i as f64;
            }
        }
    }
}

fn reorder(row: &mut [usize], neighbours: &[Vec<usize>], at: &[f64]) {
    let mut sorted: Vec<(f64, usize)> = row
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let ns = &neighbours[s];
            let b = if ns.is_empty() {
                i as f64
            } else {
                ns.iter().map(|&x| at[x]).sum::<f64>() / ns.len() as f64
            };
            (b, s)
        })
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (slot, (_, s)) in row.iter_mut().zip(sorted) {
        *slot = s;
    }
}

/// Crossings between consecutive rows, for the tests.
#[cfg(test)]
pub fn crossings(l: &Layout) -> usize {
    let mut count = 0;
    for (i, a) in l.edges.iter().enumerate() {
        for b in &l.edges[i + 1..] {
            let (a0, a1) = (&l.nodes[a.from], &l.nodes[a.to]);
            let (b0, b1) = (&l.nodes[b.from], &l.nodes[b.to]);
            if a0.layer != b0.layer || a1.layer != b1.layer {
                continue;
            }
            if (a0.x - b0.x) * (a1.x - b1.x) < 0.0 {
                count += 1;
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::{self, CliLevels, Config};
    use crate::topology::{self, Presets};

    fn laid_out(yaml: &str) -> Layout {
        let t = topology::load_str(yaml, "t.yaml", "t", &Presets::embedded()).unwrap();
        let r = lint::check(&t, &Config::resolve(&t, &CliLevels::default()).unwrap());
        let a = Analysis::new(&t);
        match view(&t, &r, &a) {
            GraphView::Drawn(l) => l,
            other => panic!("not drawn: {other:?}"),
        }
    }

    #[test]
    fn layers_are_longest_paths_and_calls_point_down() {
        // a → b → c and a → c: c sits below b, not beside it.
        let l = laid_out(
            "version: 1\nentry: a\nservices:\n  a: { calls: [ { to: b }, { to: c } ] }\n  b: { calls: [ { to: c } ] }\n  c: {}\n",
        );
        let layer = |name: &str| l.nodes.iter().find(|n| n.service == name).unwrap().layer;
        assert_eq!((layer("a"), layer("b"), layer("c")), (0, 1, 2));
        for e in &l.edges {
            assert!(l.nodes[e.to].y > l.nodes[e.from].y);
        }
    }

    #[test]
    fn barycentre_removes_the_crossing_of_a_twisted_pair() {
        // Row 1 in file order is left, right; row 2 is p (called by right),
        // q (called by left): as written the two calls cross; sorted not.
        let l = laid_out(
            "version: 1\nentry: a\nservices:\n  a: { calls: [ { to: left }, { to: right } ] }\n  left: { calls: [ { to: q } ] }\n  right: { calls: [ { to: p } ] }\n  p: {}\n  q: {}\n",
        );
        assert_eq!(crossings(&l), 0);
    }

    #[test]
    fn sweeps_untwist_rows_given_crossed() {
        // 0 → 1, 2; 1 → 3; 2 → 4; the last row given as [4, 3]: crossed.
        let callees = vec![vec![1, 2], vec![3], vec![4], vec![], vec![]];
        let mut callers = vec![Vec::new(); 5];
        for (s, cs) in callees.iter().enumerate() {
            for &c in cs {
                callers[c].push(s);
            }
        }
        let mut rows = vec![vec![0], vec![1, 2], vec![4, 3]];
        barycentre_sweeps(&mut rows, &callers, &callees, 5);
        assert_eq!(rows, [vec![0], vec![1, 2], vec![3, 4]]);
    }

    #[test]
    fn labels_name_every_retrying_layer() {
        let l = laid_out(
            "version: 1\nentry: a\nservices:\n  a:\n    calls:\n      - to: b\n        retry: { max_attempts: 3 }\n        via: [ { name: istio, retry: { max_attempts: 3 } } ]\n      - to: c\n  b: {}\n  c: {}\n",
        );
        assert_eq!(l.edges[0].label, "app 3 × istio 3");
        assert_eq!(l.edges[0].attempts, 9.0);
        assert!(l.edges[0].hottest);
        assert_eq!(l.edges[1].label, "no retry");
        assert!(!l.edges[1].hottest);
        // Two labels from one caller: placed apart.
        let (a, b) = (l.edges[0].label_at, l.edges[1].label_at);
        assert!(
            (a.0 - b.0).abs() > 60.0 || (a.1 - b.1).abs() >= 15.0,
            "{a:?} {b:?}"
        );
        assert_eq!(l.hottest.map(|w| l.nodes[w].service.as_str()), Some("b"));
    }

    #[test]
    fn heat_follows_the_limit() {
        assert_eq!(Heat::of(1.0, 10.0, true), Heat::Calm);
        assert_eq!(Heat::of(3.0, 10.0, true), Heat::Warm);
        assert_eq!(Heat::of(9.0, 10.0, true), Heat::Hot);
        assert_eq!(Heat::of(64.0, 10.0, true), Heat::Over);
        assert_eq!(Heat::of(243.0, 10.0, true), Heat::Storm);
        assert_eq!(Heat::of(0.0, 10.0, false), Heat::Unreachable);
    }
}
