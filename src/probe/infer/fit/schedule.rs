//! The simplest schedule (constant, linear, exponential, with a cap) that
//! reproduces the nominal waits b_1..b_K.

use super::*;

/// One candidate explanation of b_1..b_K.
#[derive(Debug, Clone)]
struct Model {
    kind: BackoffKind,
    base: f64,
    multiplier: Option<f64>,
    cap: Option<f64>,
    /// 0 constant, 1 linear or exponential, 2 with a cap.
    complexity: u8,
    /// The multiplier is assumed, not seen.
    assumed_multiplier: bool,
}

impl Model {
    fn predict(&self, k: usize) -> f64 {
        let raw = match self.kind {
            BackoffKind::None => 0.0,
            BackoffKind::Constant => self.base,
            BackoffKind::Linear => self.base * k as f64,
            BackoffKind::Exponential => {
                self.base * self.multiplier.unwrap_or(2.0).powi(k as i32 - 1)
            }
        };
        self.cap.map_or(raw, |c| raw.min(c))
    }

    /// The largest relative miss over the schedule, `b[0]` being retry
    /// `first_k`.
    fn error(&self, b: &[f64], first_k: usize) -> f64 {
        b.iter()
            .enumerate()
            .map(|(i, &x)| {
                let p = self.predict(first_k + i);
                ((p - x).abs() - NOISE_MS).max(0.0) / x.max(p).max(1.0)
            })
            .fold(0.0, f64::max)
    }

    fn describe(&self) -> String {
        let mut s = match self.kind {
            BackoffKind::None => "no wait".to_owned(),
            BackoffKind::Constant => format!("constant {} ms", fmt_ms(self.base)),
            BackoffKind::Linear => format!("linear from {} ms", fmt_ms(self.base)),
            BackoffKind::Exponential => format!(
                "exponential from {} ms ×{}",
                fmt_ms(self.base),
                self.multiplier
                    .map_or("?".to_owned(), |m| format!("{m:.2}"))
            ),
        };
        if let Some(c) = self.cap {
            s += &format!(" capped at {} ms", fmt_ms(c));
        }
        s
    }
}

pub(super) struct Schedule {
    pub(super) kind: BackoffKind,
    pub(super) base: f64,
    pub(super) multiplier: Option<f64>,
    pub(super) cap: Option<f64>,
    /// Whether a model reproduces the waits within the tolerance.
    pub(super) explained: bool,
    pub(super) confidence: Confidence,
    pub(super) why: String,
    pub(super) alternatives: Vec<Alternative>,
}

/// Least squares of ln b_k = ln base + (k-1) ln m over `b` (k from
/// `first_k`).
fn exponential_fit(b: &[f64], first_k: usize) -> (f64, f64) {
    let n = b.len() as f64;
    let xs: Vec<f64> = (0..b.len()).map(|i| (i + first_k - 1) as f64).collect();
    let ys: Vec<f64> = b.iter().map(|x| x.max(0.001).ln()).collect();
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    ((my - slope * mx).exp(), slope.exp())
}

/// Least squares of b_k = base · k through the origin (k from `first_k`).
fn linear_fit(b: &[f64], first_k: usize) -> f64 {
    let num: f64 = b
        .iter()
        .enumerate()
        .map(|(i, x)| (i + first_k) as f64 * x)
        .sum();
    let den: f64 = (first_k..first_k + b.len()).map(|k| (k * k) as f64).sum();
    num / den
}

fn round_multiplier(m: f64) -> f64 {
    (m * 100.0).round() / 100.0
}

/// The simplest schedule that reproduces `b`, whose first entry is the
/// nominal wait before retry `first_k`.
pub(super) fn fit_schedule(b: &[f64], first_k: usize, jittered: bool) -> Schedule {
    let tol = if jittered { 0.2 } else { 0.12 };
    if !jittered && b.iter().all(|&x| x < NOISE_MS) {
        return Schedule {
            kind: BackoffKind::None,
            base: 0.0,
            multiplier: None,
            cap: None,
            explained: true,
            confidence: Confidence::High,
            why: "every retry is sent at once".into(),
            alternatives: Vec::new(),
        };
    }
    let fitting = fitting(candidates(b, first_k, tol), b, first_k, tol);
    let Some((chosen, _)) = fitting.first().cloned() else {
        // Nothing simple reproduces the waits: report the first wait as a
        // constant and say so.
        return Schedule {
            kind: BackoffKind::Constant,
            base: b[0],
            multiplier: None,
            cap: None,
            explained: false,
            confidence: Confidence::Low,
            why: "unknown: no constant, linear or exponential schedule (capped or not) reproduces these waits within the noise".into(),
            alternatives: Vec::new(),
        };
    };
    chosen_schedule(&chosen, &fitting, b)
}

/// Every schedule worth trying on `b`: constant at the median; exponential
/// and linear by least squares; and each of them capped from every retry
/// on whose tail is level.
fn candidates(b: &[f64], first_k: usize, tol: f64) -> Vec<Model> {
    let median = {
        let mut s = b.to_vec();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let mut candidates = vec![Model {
        kind: BackoffKind::Constant,
        base: median,
        multiplier: None,
        cap: None,
        complexity: 0,
        assumed_multiplier: false,
    }];
    if b.len() < 2 {
        return candidates;
    }
    let (base, m) = exponential_fit(b, first_k);
    if m >= 1.15 {
        candidates.push(Model {
            kind: BackoffKind::Exponential,
            base,
            multiplier: Some(round_multiplier(m)),
            cap: None,
            complexity: 1,
            assumed_multiplier: false,
        });
    }
    candidates.push(Model {
        kind: BackoffKind::Linear,
        base: linear_fit(b, first_k),
        multiplier: None,
        cap: None,
        complexity: 1,
        assumed_multiplier: false,
    });
    let last_k = first_k + b.len() - 1;
    for c in first_k + 1..=last_k {
        candidates.extend(capped_from(b, first_k, c, tol));
    }
    candidates
}

/// The capped schedules with the cap reached at retry `c`: b_c..b_K level,
/// the prefix growing into it, and the growth clipped within the waits
/// seen.
fn capped_from(b: &[f64], first_k: usize, c: usize, tol: f64) -> Vec<Model> {
    let last_k = first_k + b.len() - 1;
    let tail = &b[c - first_k..];
    let cap = tail.iter().sum::<f64>() / tail.len() as f64;
    // Level, as waits at a cap are: a tail that still grows is not at the
    // cap (tenacity's 103/203/403/503/503 ms is capped at 503 from retry
    // 4, not at 470 from retry 3).
    let (lo, hi) = tail
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    if hi - lo > tol * cap {
        return Vec::new();
    }
    let prefix = &b[..c - first_k];
    let (base, m, assumed) = if prefix.len() >= 2 {
        let (base, m) = exponential_fit(prefix, first_k);
        (base, m, false)
    } else {
        (prefix[0] / 2f64.powi(first_k as i32 - 1), 2.0, true)
    };
    if cap < prefix[prefix.len() - 1] * (1.0 + tol) {
        return Vec::new();
    }
    let mut out = Vec::new();
    // The cap must clip the schedule within the waits seen (tenacity
    // reaches its cap exactly at a retry, and clips the next).
    if m >= 1.15 && base * m.powi(last_k as i32 - 1) > cap * (1.0 + tol / 2.0) {
        out.push(Model {
            kind: BackoffKind::Exponential,
            base,
            multiplier: Some(round_multiplier(m)),
            cap: Some(cap),
            complexity: 2,
            assumed_multiplier: assumed,
        });
    }
    let lin = if prefix.len() >= 2 {
        linear_fit(prefix, first_k)
    } else {
        prefix[0] / first_k as f64
    };
    if lin * last_k as f64 > cap * (1.0 + tol / 2.0) {
        out.push(Model {
            kind: BackoffKind::Linear,
            base: lin,
            multiplier: None,
            cap: Some(cap),
            complexity: 2,
            assumed_multiplier: false,
        });
    }
    out
}

/// The candidates that reproduce `b` within `tol`, each once, with their
/// miss, best first: simplest first; among equals the smaller miss,
/// exponential before linear when both reproduce the waits (it is the
/// common choice).
fn fitting(candidates: Vec<Model>, b: &[f64], first_k: usize, tol: f64) -> Vec<(Model, f64)> {
    let mut fitting: Vec<(Model, f64)> = candidates
        .into_iter()
        .map(|m| {
            let e = m.error(b, first_k);
            (m, e)
        })
        .filter(|(_, e)| *e <= tol)
        .collect();
    // The same schedule found from two cap positions is one reading.
    let mut seen: Vec<String> = Vec::new();
    fitting.retain(|(m, _)| {
        let text = m.describe();
        let new = !seen.contains(&text);
        seen.push(text);
        new
    });
    fitting.sort_by(|(a, ea), (b, eb)| {
        a.complexity.cmp(&b.complexity).then_with(|| {
            let close = (ea - eb).abs() <= tol / 2.0;
            if close {
                (a.kind != BackoffKind::Exponential)
                    .cmp(&(b.kind != BackoffKind::Exponential))
                    .then(ea.total_cmp(eb))
            } else {
                ea.total_cmp(eb)
            }
        })
    });
    fitting
}

/// The schedule `chosen` (the first of `fitting`) says, with the other
/// fits named and a confidence that only a rival as simple, one or two
/// waits, or an assumed multiplier lowers.
fn chosen_schedule(chosen: &Model, fitting: &[(Model, f64)], b: &[f64]) -> Schedule {
    let k = b.len();
    // Every other fit is named; only a fit as simple as the chosen one
    // makes the choice a guess (a cap that growth explains as well is
    // merely possible).
    let alternatives: Vec<Alternative> = fitting
        .iter()
        .skip(1)
        .map(|(m, _)| Alternative {
            kind: m.kind,
            base_ms: m.base,
            multiplier: m.multiplier,
            cap_ms: m.cap,
            text: m.describe(),
        })
        .collect();
    let rival = fitting
        .iter()
        .skip(1)
        .any(|(m, _)| m.complexity <= chosen.complexity);
    let confidence = if k == 1 || rival || chosen.assumed_multiplier {
        Confidence::Low
    } else if k == 2 {
        Confidence::Medium
    } else {
        Confidence::High
    };
    let mut why = format!("fits {}", chosen.describe());
    if k == 1 {
        why += "; one wait only, so constant, linear and exponential agree on it";
    }
    if chosen.assumed_multiplier {
        why +=
            "; the cap is reached at the second retry, so the multiplier is not seen (2 assumed)";
    }
    if chosen.cap.is_none() && chosen.kind != BackoffKind::Constant {
        why += &format!(
            "; no cap reached within {k} waits (longest {} ms): a cap, if any, lies above",
            fmt_ms(b[k - 1])
        );
    }
    Schedule {
        kind: chosen.kind,
        base: chosen.base,
        multiplier: chosen.multiplier,
        cap: chosen.cap,
        explained: true,
        confidence,
        why,
        alternatives,
    }
}
