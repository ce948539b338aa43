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

use crate::lint::CheckReport;
use crate::prediction::Analysis;
use crate::topology::Topology;

/// Past this many services the graph is listed, not drawn.
pub(crate) const MAX_DRAWN: usize = 80;
/// Past this many calls, likewise.
pub(crate) const MAX_DRAWN_CALLS: usize = 200;

/// Node box size and spacing, in SVG user units.
pub(crate) const NODE_H: f64 = 46.0;
const ROW_GAP: f64 = 92.0;
const COL_GAP: f64 = 28.0;
const MARGIN: f64 = 16.0;
/// Width per character of a service name at the page's 13 px font, with room.
const CHAR_W: f64 = 7.6;
const MIN_NODE_W: f64 = 96.0;
/// Width per character of a service's figure at 12 px (digits, wide).
const FIGURE_CHAR_W: f64 = 8.0;
/// Width per character of an edge label at 11.5 px, and bold (the hottest
/// path's). Measured in chromium: `app 3 × envoy-sidecar 2` in bold is
/// 156 px, `app 4294967295` 108 px.
const LABEL_CHAR_W: f64 = 7.0;
const BOLD_LABEL_CHAR_W: f64 = 7.8;
/// Clear space kept around each label, so two labels read as two.
const LABEL_PAD: f64 = 4.0;
/// Rounds of growing crowded bands, and by how much each round.
const MAX_GROW_ROUNDS: usize = 5;
const GROW_STEP: f64 = 30.0;
/// Names are cut to this many characters in the box (the title keeps all).
pub(crate) const MAX_NAME_CHARS: usize = 28;

/// How hot a service runs: its worst-case amplification against the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Heat {
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
    pub(crate) fn of(worst_case: f64, limit: f64, reachable: bool) -> Heat {
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

    pub(crate) fn as_str(self) -> &'static str {
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
    pub(crate) heat: Heat,
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
    pub(crate) curve: [(f64, f64); 4],
    /// Where the label's centre goes: on the curve, clear of other labels
    /// where a place along it is.
    pub(crate) label_at: (f64, f64),
    /// The label's box, about: width and height.
    pub(crate) label_size: (f64, f64),
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
    pub(crate) hottest_over: bool,
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
pub(crate) fn edge_label(t: &Topology, a: &Analysis, s: usize, i: usize) -> String {
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

    // A box holds its name and its figure (`18446744065119617025×` is
    // wider than most names).
    let widths: Vec<f64> = t
        .services
        .iter()
        .zip(&r.amplification)
        .map(|(s, row)| {
            let name = s.name.chars().count().min(MAX_NAME_CHARS) as f64 * CHAR_W;
            let figure = if row.reachable {
                row.worst_case_text().chars().count()
            } else {
                "unreachable".len()
            } as f64
                * FIGURE_CHAR_W;
            (name.max(figure) + 24.0).max(MIN_NODE_W)
        })
        .collect();
    let row_width = |row: &[usize]| {
        row.iter().map(|&s| widths[s]).sum::<f64>() + COL_GAP * row.len().saturating_sub(1) as f64
    };
    let nodes_width = rows.iter().map(|r| row_width(r)).fold(0.0, f64::max);
    // The gap under each row grows where its labels could not be placed
    // apart: a crowded band gets taller, so the curves through it spread
    // and their labels find room. A few rounds settle every shipped
    // example; past them the last placement stands.
    let mut gaps = vec![ROW_GAP; depth.saturating_sub(1)];
    let (mut pos, mut edges) = (Vec::new(), Vec::new());
    for _ in 0..MAX_GROW_ROUNDS {
        pos = vec![(0.0, 0.0); n];
        let mut y = MARGIN;
        for (l, row) in rows.iter().enumerate() {
            // Each row centred.
            let mut x = MARGIN + (nodes_width - row_width(row)) / 2.0;
            for &s in row {
                pos[s] = (x, y);
                x += widths[s] + COL_GAP;
            }
            y += NODE_H + gaps.get(l).copied().unwrap_or(0.0);
        }
        edges = curves(t, r, a, path, &pos, &widths);
        let boxes: Vec<_> = (0..n)
            .map(|s| {
                let (x, y) = pos[s];
                (x + widths[s] / 2.0, y + NODE_H / 2.0, widths[s], NODE_H)
            })
            .collect();
        let crowded = place_labels(&mut edges, boxes);
        if crowded.is_empty() {
            break;
        }
        let bands = gaps.len();
        for y in crowded {
            // The band the label sits in: the gap under the row above it.
            let mut top = MARGIN;
            for (l, g) in gaps.iter_mut().enumerate() {
                let bottom = top + NODE_H + *g;
                if y < bottom || l + 1 == bands {
                    *g += GROW_STEP;
                    break;
                }
                top = bottom;
            }
        }
    }
    // The box holds every label as well as every node: a label wider than
    // its column (one service per row, `app 3 × istio-sidecar 3`) widens
    // the picture instead of being cut at its edge.
    let left = edges
        .iter()
        .map(|e| e.label_at.0 - e.label_size.0 / 2.0)
        .fold(MARGIN, f64::min);
    let right = edges
        .iter()
        .map(|e| e.label_at.0 + e.label_size.0 / 2.0)
        .fold(MARGIN + nodes_width, f64::max);
    let shift = MARGIN - left;
    for p in &mut pos {
        p.0 += shift;
    }
    for e in &mut edges {
        for c in &mut e.curve {
            c.0 += shift;
        }
        e.label_at.0 += shift;
    }
    let width = right + shift + MARGIN;
    let height = 2.0 * MARGIN + depth as f64 * NODE_H + gaps.iter().sum::<f64>();
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
    Layout {
        nodes,
        edges,
        width,
        height,
        hottest: worst,
        hottest_over: worst.is_some_and(|w| r.over_limit(&r.amplification[w])),
    }
}

/// Every call as a curve from the bottom of its caller to the top of its
/// callee; labels not placed yet.
fn curves(
    t: &Topology,
    r: &CheckReport,
    a: &Analysis,
    path: &[(usize, usize)],
    pos: &[(f64, f64)],
    widths: &[f64],
) -> Vec<Edge> {
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
    edges
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
/// overlaps no service and no label placed before (the middle first); the
/// middle when none is free. Hottest calls first, so theirs keep the
/// middle. `boxes` are the services' boxes, centre and size. Returns the
/// heights of the labels that found no free place.
fn place_labels(edges: &mut [Edge], boxes: Vec<(f64, f64, f64, f64)>) -> Vec<f64> {
    const TRIES: [f64; 7] = [0.5, 0.35, 0.65, 0.25, 0.75, 0.42, 0.58];
    let size = |e: &Edge| {
        let per_char = if e.hottest {
            BOLD_LABEL_CHAR_W
        } else {
            LABEL_CHAR_W
        };
        (e.label.chars().count() as f64 * per_char + 8.0, 15.0)
    };
    let mut order: Vec<usize> = (0..edges.len()).collect();
    order.sort_by_key(|&i| (!edges[i].hottest, !edges[i].hot));
    let mut placed = boxes;
    let mut crowded = Vec::new();
    for i in order {
        let (w, h) = size(&edges[i]);
        let free = |(x, y): (f64, f64)| {
            placed.iter().all(|&(px, py, pw, ph)| {
                (x - px).abs() * 2.0 >= w + pw + 2.0 * LABEL_PAD
                    || (y - py).abs() * 2.0 >= h + ph + 2.0 * LABEL_PAD
            })
        };
        let at = TRIES
            .iter()
            .map(|&t| bezier(&edges[i].curve, t))
            .find(|&p| free(p))
            .unwrap_or_else(|| {
                let middle = bezier(&edges[i].curve, 0.5);
                crowded.push(middle.1);
                middle
            });
        placed.push((at.0, at.1, w, h));
        edges[i].label_at = at;
        edges[i].label_size = (w, h);
    }
    crowded
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
pub(crate) fn crossings(l: &Layout) -> usize {
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

    /// Every label's box inside the picture, clear of every service and of
    /// every other label, by the layout's own size estimates (the browser
    /// test measures the drawn text).
    fn assert_labels_fit(l: &Layout) {
        let boxes: Vec<(f64, f64, f64, f64)> = l
            .edges
            .iter()
            .map(|e| {
                let (w, h) = e.label_size;
                (e.label_at.0 - w / 2.0, e.label_at.1 - h / 2.0, w, h)
            })
            .collect();
        for (i, &(x, y, w, h)) in boxes.iter().enumerate() {
            let e = &l.edges[i];
            assert!(
                x >= 0.0 && y >= 0.0 && x + w <= l.width && y + h <= l.height,
                "label {:?} at {x},{y} {w}×{h} leaves the {}×{} picture",
                e.label,
                l.width,
                l.height
            );
            for n in &l.nodes {
                let apart = x + w <= n.x || n.x + n.w <= x || y + h <= n.y || n.y + NODE_H <= y;
                assert!(apart, "label {:?} on service {}", e.label, n.service);
            }
            for (j, &(x2, y2, w2, h2)) in boxes.iter().enumerate().skip(i + 1) {
                let apart = x + w <= x2 || x2 + w2 <= x || y + h <= y2 || y2 + h2 <= y;
                assert!(
                    apart,
                    "labels {:?} and {:?} overlap",
                    e.label, l.edges[j].label
                );
            }
        }
    }

    #[test]
    fn a_label_wider_than_its_column_widens_the_picture() {
        // One service per row: the nodes alone make a 128-unit picture, and
        // `app 3 × istio-sidecar 3` is wider than that.
        let l = laid_out(
            "version: 1\nentry: web\nservices:\n  web:\n    calls:\n      - to: api\n        retry: { max_attempts: 3 }\n        via: [ { name: istio-sidecar, retry: { max_attempts: 3 } } ]\n  api: {}\n",
        );
        assert!(l.width > 128.0, "{}", l.width);
        assert_labels_fit(&l);
        // Centred: the call still runs down the middle of the picture.
        let e = &l.edges[0];
        assert!((e.curve[0].0 - l.width / 2.0).abs() < 1.0, "{:?}", e.curve);
    }

    #[test]
    fn a_crowded_band_grows_until_its_labels_fit() {
        // Six callers each calling both of two callees with retries: twelve
        // labels in one band, more than its first height holds.
        let mut yaml = String::from("version: 1\nentry: a\nservices:\n  a:\n    calls:\n");
        for i in 0..6 {
            yaml.push_str(&format!("      - to: b{i}\n"));
        }
        for i in 0..6 {
            yaml.push_str(&format!("  b{i}:\n    calls:\n"));
            for c in ["p", "q"] {
                yaml.push_str(&format!(
                    "      - to: {c}\n        retry: {{ max_attempts: {} }}\n",
                    i + 2
                ));
            }
        }
        yaml.push_str("  p: {}\n  q: {}\n");
        let l = laid_out(&yaml);
        assert_labels_fit(&l);
        let gap = l.nodes.iter().find(|n| n.service == "p").unwrap().y
            - l.nodes.iter().find(|n| n.service == "b0").unwrap().y
            - NODE_H;
        assert!(gap > ROW_GAP, "the band stayed {gap} high");
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
