//! The per-try timeout: how long the client held a hanging attempt before it
//! gave up on it, never attempt and wait together.

use super::*;

pub(super) fn timeout(
    records: &[(Scenario, ScenarioRecord)],
    bound: Duration,
) -> (Field<f64>, bool) {
    let Some((_, r)) = records
        .iter()
        .find(|(s, _)| s.outcome() == Some(Outcome::Timeout))
    else {
        return (Field::unknown("the hang scenario did not run"), false);
    };
    let bound = r.bound_ms.map_or(bound, |ms| {
        Duration::from_secs_f64(ms.max(0.0) / 1e3).min(bound)
    });
    let mut gave_up: Vec<f64> = Vec::new();
    let mut hung_to_the_end = 0;
    for run in &r.runs {
        for a in &run.arrivals {
            match own_hold(run, a) {
                Some(held) => gave_up.push(held),
                None => hung_to_the_end += 1,
            }
        }
    }
    if gave_up.is_empty() {
        if hung_to_the_end == 0 {
            return (
                Field::unknown("the client sent no request in the hang scenario"),
                true,
            );
        }
        return (
            Field {
                value: None,
                confidence: Confidence::Medium,
                evidence: format!(
                    "no per-attempt timeout within {}: every hanging attempt was held until the run was cut",
                    crate::input::duration::format(bound)
                ),
            },
            true,
        );
    }
    // The client stops waiting on an attempt after its timeout, but may
    // hold the connection through its backoff and close it only to retry;
    // after the last attempt there is nothing to wait for, so that hold is
    // the timeout itself. Each run's shortest hold bounds it too.
    let mut last = last_holds(r);
    let (mut holds, from) = if last.is_empty() {
        let shortest: Vec<f64> = r
            .runs
            .iter()
            .filter_map(|run| {
                run.arrivals
                    .iter()
                    .filter_map(|a| own_hold(run, a))
                    .min_by(f64::total_cmp)
            })
            .collect();
        (shortest, "each run's shortest hold")
    } else {
        (std::mem::take(&mut last), "the last attempt of each run")
    };
    holds.sort_by(f64::total_cmp);
    gave_up.sort_by(f64::total_cmp);
    let median = holds[holds.len() / 2];
    let (lo, hi) = (holds[0], holds[holds.len() - 1]);
    let tight = hi - lo <= 0.1 * median + 10.0;
    let confidence = if tight && holds.len() >= 2 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    let list: Vec<String> = holds.iter().take(8).map(|x| fmt_ms(*x)).collect();
    let longer = gave_up
        .last()
        .filter(|&&g| g > hi + 0.1 * hi + 10.0)
        .map(|g| {
            format!(
                "; earlier attempts were held up to {} ms, the client keeping the connection through its wait",
                fmt_ms(*g)
            )
        })
        .unwrap_or_default();
    (
        Field::known(
            median,
            confidence,
            format!(
                "the client gave up on hanging attempts after {} ms ({from}){}{longer}",
                list.join("/"),
                if holds.len() > 8 { "/…" } else { "" }
            ),
        ),
        true,
    )
}
