//! The waits before each retry, per cause (status, reset, hang), the timing
//! noise of this machine they are judged against, and what the fits per cause
//! say of each other.

use super::*;

/// Every wait before retry k after `cause`, pooled over its scenarios and
/// their runs, for the first [`fit::MAX_FITTED_RETRIES`] retries; how many
/// waits came after those (not fitted); and the scenarios read.
pub(super) fn waits_by_retry(
    records: &[(Scenario, ScenarioRecord)],
    cause: Cause,
    hold_ms: Option<f64>,
) -> (Vec<Vec<f64>>, usize, Vec<String>) {
    let mut by: Vec<Vec<f64>> = Vec::new();
    let mut unfitted = 0;
    let mut scenarios = Vec::new();
    let apart = own_schedules(records, hold_ms);
    for (s, r) in records {
        if Cause::of(s) != Some(cause) || s.refuses() || apart.contains(&s.name) {
            continue;
        }
        let mut any = false;
        for run in &r.runs {
            for (i, w) in waits_of(run, cause == Cause::Timeout, hold_ms)
                .into_iter()
                .enumerate()
            {
                let Some(w) = w else { continue };
                any = true;
                if i >= fit::MAX_FITTED_RETRIES {
                    unfitted += 1;
                    continue;
                }
                if by.len() <= i {
                    by.resize(i + 1, Vec::new());
                }
                by[i].push(w);
            }
        }
        if any {
            scenarios.push(s.name.to_owned());
        }
    }
    (by, unfitted, scenarios)
}

/// The status scenarios whose first waits follow a schedule of their own
/// (boto3 backs off from 1 s after a 429, a throttling error, and from
/// 50 ms after a 5xx): pooled with the others they would make one schedule
/// that is neither. A scenario is apart when its median first wait is more
/// than twice the median of the status scenarios' medians (or under half).
pub(super) fn own_schedules(
    records: &[(Scenario, ScenarioRecord)],
    hold_ms: Option<f64>,
) -> Vec<&'static str> {
    let medians: Vec<(&'static str, f64)> = records
        .iter()
        .filter(|(s, _)| Cause::of(s) == Some(Cause::Status))
        .filter_map(|(s, r)| {
            let mut firsts: Vec<f64> = r
                .runs
                .iter()
                .filter_map(|run| waits_of(run, false, hold_ms).first().copied().flatten())
                .collect();
            if firsts.len() < 2 {
                return None;
            }
            firsts.sort_by(f64::total_cmp);
            Some((s.name, firsts[firsts.len() / 2]))
        })
        .collect();
    if medians.len() < 3 {
        return Vec::new();
    }
    let mut ms: Vec<f64> = medians.iter().map(|(_, m)| *m).collect();
    ms.sort_by(f64::total_cmp);
    let mid = if ms.len() % 2 == 1 {
        ms[ms.len() / 2]
    } else {
        (ms[ms.len() / 2 - 1] + ms[ms.len() / 2]) / 2.0
    };
    if mid < 5.0 {
        return Vec::new();
    }
    medians
        .into_iter()
        .filter(|(_, m)| *m > 2.0 * mid + 5.0 || *m < 0.5 * mid - 5.0)
        .map(|(n, _)| n)
        .collect()
}

/// A run's waits. After a hanging attempt the wait runs from the moment
/// the client gave up on it — arrival plus its per-attempt timeout — since
/// some clients (urllib3) keep the connection open through the wait and
/// close it only to retry; `None` where that moment is unknown.
fn waits_of(run: &RunRecord, hangs: bool, hold_ms: Option<f64>) -> Vec<Option<f64>> {
    if !hangs {
        return run.waits_ms().into_iter().map(Some).collect();
    }
    run.arrivals
        .windows(2)
        .map(|w| {
            let gave_up = match (hold_ms, w[0].hung_up_ms) {
                (Some(t), Some(h)) => Some(h.min(w[0].at_ms + t)),
                (None, Some(h)) => Some(h),
                (_, None) => None,
            }?;
            Some((w[1].at_ms - gave_up).max(0.0))
        })
        .collect()
}

/// The timing noise of this client on this machine: the spread of the
/// waits that draw nothing — the wait after an honoured Retry-After, and
/// how long the client held the last hanging attempt of each run.
pub(super) fn noise_floor(records: &[(Scenario, ScenarioRecord)], hold_ms: Option<f64>) -> f64 {
    let mut spreads: Vec<f64> = Vec::new();
    let spread = |xs: &mut Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        (xs.len() >= 3).then(|| xs[xs.len() - 2] - xs[1].min(xs[xs.len() - 2]))
    };
    for (s, r) in records {
        match s.purpose {
            Purpose::RetryAfter { after, .. } => {
                let ra = after.as_secs_f64() * 1e3;
                let mut firsts: Vec<f64> = r
                    .runs
                    .iter()
                    .filter(|r| r.arrivals.len() >= 2)
                    .map(|r| r.waits_ms()[0])
                    .filter(|w| (w - ra).abs() <= 0.1 * ra)
                    .collect();
                spreads.extend(spread(&mut firsts));
            }
            Purpose::Every(Outcome::Timeout) if hold_ms.is_some() => {
                let mut held = last_holds(r);
                spreads.extend(spread(&mut held));
            }
            _ => {}
        }
    }
    spreads.into_iter().fold(0.0, f64::max).min(50.0)
}

/// How long the client held the last attempt of each run that it ended
/// itself: after the last attempt there is no wait to hold it through.
pub(super) fn last_holds(r: &ScenarioRecord) -> Vec<f64> {
    r.runs
        .iter()
        .filter(|run| run.exit != Exit::TimedOut)
        .filter_map(|run| run.arrivals.last())
        .filter_map(|a| Some(a.hung_up_ms? - a.at_ms))
        .collect()
}

/// Says so where the waits after one cause follow another schedule than
/// the first cause's.
pub(super) fn cause_differences(by_cause: &[CauseBackoff], noise_ms: f64, notes: &mut Vec<String>) {
    let Some(first) = by_cause.first() else {
        return;
    };
    let medians =
        |c: &CauseBackoff| -> Vec<f64> { c.fit.per_retry.iter().map(|s| s.median_ms).collect() };
    let shown = |c: &CauseBackoff| -> String {
        let list: Vec<String> = medians(c).iter().map(|m| fmt_ms(*m)).collect();
        format!("after a {} {} ms", c.cause.as_str(), list.join("/"))
    };
    for other in &by_cause[1..] {
        let (a, b) = (medians(first), medians(other));
        let differs = a.iter().zip(&b).any(|(x, y)| {
            (x - y).abs() > 2.0 * (noise_ms.max(4.0) + 0.1 * x.max(*y)) + fit::IMMEDIATE_MS
        });
        if differs {
            notes.push(format!(
                "the waits differ by cause: {}, {}; the snippet carries the first (each is fitted apart under backoff_by_cause)",
                shown(first),
                shown(other)
            ));
        }
    }
}

fn is_hang(run: &RunRecord) -> bool {
    run.arrivals.iter().any(|a| a.hung_up_ms.is_some())
}

/// Says so when 429 backs off on another schedule than the 5xx failures
/// (AWS SDKs use a longer base for throttling).
pub(super) fn throttling_note(
    records: &[(Scenario, ScenarioRecord)],
    f: &BackoffFit,
    hold_ms: Option<f64>,
    notes: &mut Vec<String>,
) {
    let Some(pooled) = f.per_retry.first().map(|s| s.median_ms) else {
        return;
    };
    for (s, r) in failing_every_time(records) {
        let mut firsts: Vec<f64> = r
            .runs
            .iter()
            .filter(|_| Cause::of(s) == Some(Cause::Status))
            .filter_map(|run| waits_of(run, false, hold_ms).first().copied().flatten())
            .collect();
        if firsts.len() < 2 || pooled < 5.0 {
            continue;
        }
        firsts.sort_by(f64::total_cmp);
        let m = firsts[firsts.len() / 2];
        if m > 2.0 * pooled + 5.0 || m < 0.5 * pooled - 5.0 {
            notes.push(format!(
                "`{}` waits {} ms before its first retry against {} ms overall: this outcome backs off on a schedule of its own, left out of the status fit",
                s.name,
                fmt_ms(m),
                fmt_ms(pooled)
            ));
        }
    }
}

/// The mean and longest wait before retry k under the fit.
pub(super) fn expected_wait(f: &BackoffFit, k: usize) -> (f64, f64) {
    let b = f
        .nominal_ms
        .get(k)
        .or(f.nominal_ms.last())
        .copied()
        .unwrap_or(0.0);
    match f.jitter {
        Jitter::None => (b, b),
        Jitter::Full => (b / 2.0, b),
        Jitter::Equal => (0.75 * b, b),
        Jitter::Proportional { ratio } => (b, b * (1.0 + ratio)),
        Jitter::Decorrelated => (2.0 * f.base_ms, 3.0 * f.base_ms.max(b)),
    }
}

/// The time a run takes besides its waits: start-up and exit.
pub(super) fn overhead_ms(records: &[(Scenario, ScenarioRecord)]) -> Option<f64> {
    let mut xs: Vec<f64> = failing_every_time(records)
        .flat_map(|(_, r)| &r.runs)
        .filter(|r| r.exit != Exit::TimedOut && !r.arrivals.is_empty() && !is_hang(r))
        .map(|r| {
            let waits: f64 = r.waits_ms().iter().sum();
            (r.elapsed_ms - waits).max(0.0)
        })
        .collect();
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    Some(xs[xs.len() / 2])
}

/// How much the client's start-up and exit time varies across runs.
pub(super) fn overhead_spread(records: &[(Scenario, ScenarioRecord)]) -> f64 {
    let xs: Vec<f64> = failing_every_time(records)
        .flat_map(|(_, r)| &r.runs)
        .filter(|r| r.exit != Exit::TimedOut && !r.arrivals.is_empty() && !is_hang(r))
        .map(|r| (r.elapsed_ms - r.waits_ms().iter().sum::<f64>()).max(0.0))
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, 0.0_f64), |(a, b), &x| (a.min(x), b.max(x)));
    if xs.len() < 2 { 0.0 } else { hi - lo }
}
