//! "The storm in time" as chart series: attempts per 100 ms at the fault
//! target, user requests offered and succeeded per 100 ms, and the end-to-end
//! latency distribution — for every topology on the page, on shared axes
//! (one x range, one y range per chart) so the eye compares heights, not
//! scales. The HTML reporter only maps these numbers to pixels.

use crate::run::RunReport;

/// A chart keeps at most this many points per series; longer runs are
/// averaged into wider buckets (the page stays small and the line readable).
pub(crate) const MAX_POINTS: usize = 600;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tick {
    pub value: f64,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    /// Which topology of the page: 0 as written, 1 the other.
    pub side: usize,
    pub(crate) dashed: bool,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub(crate) x_label: String,
    pub(crate) y_label: String,
    pub(crate) x_max: f64,
    pub(crate) y_max: f64,
    pub(crate) x_ticks: Vec<Tick>,
    pub(crate) y_ticks: Vec<Tick>,
    pub lines: Vec<Line>,
    /// The fault's window, in x units (seconds).
    pub window: Option<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bars {
    pub name: String,
    pub side: usize,
    /// One per category.
    pub values: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub(crate) x_label: String,
    pub(crate) y_label: String,
    pub(crate) categories: Vec<String>,
    pub(crate) groups: Vec<Bars>,
    pub(crate) y_max: f64,
    pub(crate) y_ticks: Vec<Tick>,
}

/// The three charts of the storm.
#[derive(Debug, Clone, PartialEq)]
pub struct Storm {
    pub attempts: LineChart,
    pub success: LineChart,
    pub latency: BarChart,
}

/// A simulated run of one side, named for the legend.
pub(crate) struct SideRun<'a> {
    pub name: &'a str,
    pub side: usize,
    pub run: &'a RunReport,
}

/// Step points of per-bucket values, averaged down to at most [`MAX_POINTS`].
fn steps(values: &[u64], bucket_s: f64) -> Vec<(f64, f64)> {
    let group = values.len().div_ceil(MAX_POINTS).max(1);
    let width = bucket_s * group as f64;
    let mut points = Vec::with_capacity(2 * values.len().min(MAX_POINTS) + 2);
    for (i, chunk) in values.chunks(group).enumerate() {
        let v = chunk.iter().sum::<u64>() as f64 / chunk.len() as f64;
        points.push((i as f64 * width, v));
        points.push(((i + 1) as f64 * width, v));
    }
    points
}

/// Round tick steps (1, 2, 5 × 10ⁿ) giving about five ticks up to `max`;
/// returns the ticks and the axis top (the last tick at or above `max`).
pub(crate) fn ticks(max: f64, unit: &str) -> (Vec<Tick>, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil().max(1.0) as usize;
    let ticks = (0..=n)
        .map(|i| {
            let v = i as f64 * step;
            Tick {
                value: v,
                label: format!("{}{unit}", number(v)),
            }
        })
        .collect();
    (ticks, n as f64 * step)
}

/// `0`, `0.5`, `12`, `1.5k`, `2M`, `3.6e294`.
pub fn number(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    };
    let a = v.abs();
    if !a.is_finite() || a >= 1e9 {
        format!("{v:.1e}")
    } else if a >= 1e6 {
        format!("{}M", trim(format!("{:.1}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 10.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        trim(format!("{v:.2}"))
    }
}

/// The storm charts of `runs` (one per side), with the fault's `window` in
/// seconds and the run's `horizon_s`.
pub(crate) fn storm(runs: &[SideRun<'_>], window: Option<(f64, f64)>, horizon_s: f64) -> Storm {
    let bucket_s = |r: &RunReport| r.timeline.bucket_ms.max(1) as f64 / 1e3;
    let target = runs
        .first()
        .map_or(String::new(), |r| r.run.timeline.target.clone());
    let attempt_lines: Vec<Line> = runs
        .iter()
        .map(|r| Line {
            name: r.name.to_owned(),
            side: r.side,
            dashed: false,
            points: steps(&r.run.timeline.attempts, bucket_s(r.run)),
        })
        .collect();
    let mut success_lines = Vec::new();
    for r in runs {
        if let Some(g) = &r.run.goodput {
            let b = g.bucket_ms.max(1) as f64 / 1e3;
            if r.side == 0 {
                success_lines.push(Line {
                    name: "offered".into(),
                    side: r.side,
                    dashed: true,
                    points: steps(&g.offered, b),
                });
            }
            success_lines.push(Line {
                name: format!("succeeded ({})", r.name),
                side: r.side,
                dashed: false,
                points: steps(&g.goodput, b),
            });
        }
    }
    let all = attempt_lines.iter().chain(&success_lines);
    let x_end = all
        .clone()
        .flat_map(|l| l.points.last().map(|p| p.0))
        .fold(horizon_s, f64::max);
    let (x_ticks, x_max) = ticks(x_end, " s");
    let y_of = |lines: &[Line]| {
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .fold(0.0, f64::max)
    };
    let (a_ticks, a_max) = ticks(y_of(&attempt_lines), "");
    let (s_ticks, s_max) = ticks(y_of(&success_lines), "");
    Storm {
        attempts: LineChart {
            title: format!("Attempts arriving at the fault target ({target})"),
            x_label: "time from the start of the run".into(),
            y_label: "attempts per 100 ms (mean per trial)".into(),
            x_max,
            y_max: a_max,
            x_ticks: x_ticks.clone(),
            y_ticks: a_ticks,
            lines: attempt_lines,
            window,
        },
        success: LineChart {
            title: "User requests succeeding over time".into(),
            x_label: "time from the start of the run".into(),
            y_label: "user requests per 100 ms (mean per trial)".into(),
            x_max,
            y_max: s_max,
            x_ticks,
            y_ticks: s_ticks,
            lines: success_lines,
            window,
        },
        latency: latency(runs),
    }
}

/// The end-to-end latency histograms as shares of each run's user requests,
/// over the union of their (doubling) buckets.
fn latency(runs: &[SideRun<'_>]) -> BarChart {
    let mut bounds: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.run.end_to_end.histogram.iter().map(|b| b.le_ms))
        .collect();
    bounds.sort_by(f64::total_cmp);
    bounds.dedup();
    let groups: Vec<Bars> = runs
        .iter()
        .map(|r| {
            let h = &r.run.end_to_end.histogram;
            let total = h.iter().map(|b| b.count).sum::<u64>().max(1) as f64;
            Bars {
                name: r.name.to_owned(),
                side: r.side,
                values: bounds
                    .iter()
                    .map(|le| {
                        h.iter()
                            .find(|b| b.le_ms == *le)
                            .map_or(0.0, |b| 100.0 * b.count as f64 / total)
                    })
                    .collect(),
            }
        })
        .collect();
    let top = groups
        .iter()
        .flat_map(|g| g.values.iter().copied())
        .fold(0.0, f64::max);
    let (y_ticks, y_max) = ticks(top, "%");
    BarChart {
        title: "End-to-end latency of user requests".into(),
        x_label: "latency, up to (ms)".into(),
        y_label: "share of user requests".into(),
        categories: bounds.iter().map(|&b| format!("≤{}", number(b))).collect(),
        groups,
        y_max,
        y_ticks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Bucket, Timeline};

    #[test]
    fn ticks_are_round_and_cover_the_max() {
        let (t, top) = ticks(47.0, "");
        let labels: Vec<&str> = t.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "10", "20", "30", "40", "50"]);
        assert_eq!(top, 50.0);
        let (t, top) = ticks(0.0, " s");
        assert_eq!((t.len(), top), (6, 1.0));
        assert_eq!(t[1].label, "0.2 s");
        assert_eq!(ticks(6400.0, "").1, 8000.0);
        assert_eq!(number(15_000.0), "15k");
        assert_eq!(number(2_500_000.0), "2.5M");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(3.58e294), "3.6e294");
    }

    #[test]
    fn sides_share_axes_and_long_runs_are_averaged() {
        let a = RunReport {
            timeline: Timeline {
                target: "db".into(),
                bucket_ms: 100,
                attempts: vec![10, 30, 20],
            },
            end_to_end: crate::run::EndToEnd {
                histogram: vec![
                    Bucket {
                        le_ms: 1.0,
                        count: 3,
                    },
                    Bucket {
                        le_ms: 2.0,
                        count: 1,
                    },
                ],
                ..Default::default()
            },
            ..Default::default()
        };
        let mut b = a.clone();
        b.timeline.attempts = vec![5; 2 * MAX_POINTS + 1];
        b.end_to_end.histogram = vec![Bucket {
            le_ms: 4.0,
            count: 2,
        }];
        let s = storm(
            &[
                SideRun {
                    name: "as written",
                    side: 0,
                    run: &a,
                },
                SideRun {
                    name: "other",
                    side: 1,
                    run: &b,
                },
            ],
            Some((1.0, 3.0)),
            5.0,
        );
        assert_eq!(s.attempts.y_max, 30.0);
        assert_eq!(s.attempts.lines[0].points[2], (0.1, 30.0));
        // 1201 buckets averaged three at a time: 401 steps of 0.3 s.
        assert_eq!(s.attempts.lines[1].points.len(), 2 * 401);
        assert!(s.attempts.x_max >= 120.0);
        assert_eq!(s.latency.categories, ["≤1", "≤2", "≤4"]);
        assert_eq!(s.latency.groups[0].values, [75.0, 25.0, 0.0]);
        assert_eq!(s.latency.groups[1].values, [0.0, 0.0, 100.0]);
        assert_eq!(s.latency.y_max, 100.0);
    }
}
