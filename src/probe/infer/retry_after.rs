//! Whether the client honours `Retry-After`: its waits after a 429 or 503
//! that asks for one, against its own schedule.

use super::*;

pub(super) fn retry_after(
    records: &[(Scenario, ScenarioRecord)],
    f: Option<&BackoffFit>,
) -> Field<bool> {
    let mut seen: Vec<(String, Option<bool>, String)> = Vec::new();
    for (s, r) in records {
        let Purpose::RetryAfter { status, after } = s.purpose else {
            continue;
        };
        let ra = after.as_secs_f64() * 1e3;
        let firsts = first_waits(r);
        if firsts.is_empty() {
            seen.push((
                s.name.to_owned(),
                None,
                not_retried_after(records, r, status, after),
            ));
            continue;
        }
        let w = firsts[firsts.len() / 2];
        let own = f.map(|f| expected_wait(f, 0).1);
        let waited = format!(
            "waited {} ms after {status} with Retry-After {}",
            fmt_ms(w),
            crate::input::duration::format(after)
        );
        let verdict = if own.is_some_and(|o| o >= 0.8 * ra) {
            (
                None,
                format!(
                    "{waited}, but its own first wait ({} ms) is as long",
                    fmt_ms(own.unwrap_or(0.0))
                ),
            )
        } else if w >= 0.9 * ra {
            (Some(true), waited)
        } else if w < 0.6 * ra {
            (Some(false), format!("{waited} (its own backoff)"))
        } else {
            (
                None,
                format!("{waited}: neither its own backoff nor the header's"),
            )
        };
        seen.push((s.name.to_owned(), verdict.0, verdict.1));
    }
    if seen.is_empty() {
        return Field::unknown("no Retry-After scenario ran");
    }
    let evidence = seen
        .iter()
        .map(|(n, _, e)| format!("{n}: {e}"))
        .collect::<Vec<_>>()
        .join("; ");
    let known: Vec<bool> = seen.iter().filter_map(|(_, v, _)| *v).collect();
    match known.as_slice() {
        [] => Field::unknown(evidence),
        ks if ks.iter().all(|&k| k == ks[0]) => {
            let c = if ks.len() >= 2 {
                Confidence::High
            } else {
                Confidence::Medium
            };
            Field::known(ks[0], c, evidence)
        }
        // Honoured for one status and not the other: the policy has one
        // flag, and ignoring it anywhere is the hazard RL010 is about.
        _ => Field::known(
            false,
            Confidence::Medium,
            format!("{evidence} (honoured for one status only)"),
        ),
    }
}

/// The first wait of each run that retried, shortest first.
fn first_waits(r: &ScenarioRecord) -> Vec<f64> {
    let mut firsts: Vec<f64> = r
        .runs
        .iter()
        .filter(|r| r.arrivals.len() >= 2)
        .map(|r| r.waits_ms()[0])
        .collect();
    firsts.sort_by(f64::total_cmp);
    firsts
}

/// Whether the client honours AWS's `x-amz-retry-after` (milliseconds):
/// its wait after a throttling error carrying one, against its own wait
/// after a throttling error without (`throttled`, the `aws-throttling`
/// fit); `None` when the scenario did not run.
pub(super) fn amz_retry_after(
    records: &[(Scenario, ScenarioRecord)],
    throttled: Option<&BackoffFit>,
) -> Option<Field<bool>> {
    let (s, r) = records
        .iter()
        .find(|(s, _)| matches!(s.purpose, Purpose::ThrottledRetryAfter { .. }))?;
    let Purpose::ThrottledRetryAfter { after } = s.purpose else {
        return None;
    };
    let ra = after.as_secs_f64() * 1e3;
    let firsts = first_waits(r);
    if firsts.is_empty() {
        return Some(Field::unknown(format!(
            "{}: the throttling error with x-amz-retry-after was not retried",
            s.name
        )));
    }
    let w = firsts[firsts.len() / 2];
    let (lo, hi) = (firsts[0], firsts[firsts.len() - 1]);
    let waited = format!(
        "{}: waited {} ms (median; {}–{} ms over {} run(s)) after x-amz-retry-after: {}",
        s.name,
        fmt_ms(w),
        fmt_ms(lo),
        fmt_ms(hi),
        firsts.len(),
        after.as_millis()
    );
    let Some(own) = throttled.map(|f| expected_wait(f, 0).1) else {
        return Some(Field::unknown(format!(
            "{waited}; without the aws-throttling scenario its own wait after throttling is not known"
        )));
    };
    let c = if firsts.len() >= 2 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    Some(if own >= 0.8 * ra {
        Field::unknown(format!(
            "{waited}, but its own first wait after throttling ({} ms) is as long",
            fmt_ms(own)
        ))
    } else if lo >= 0.9 * ra {
        Field::known(true, c, waited)
    } else if hi < 0.6 * ra {
        Field::known(false, c, format!("{waited} (its own backoff)"))
    } else {
        Field::unknown(format!(
            "{waited}: neither its own backoff nor the header's throughout"
        ))
    })
}

/// Why a status with Retry-After was not retried: when the same status
/// without it is, the client did not refuse the status but the wait — it
/// gave up before the header's time, so a limit on the whole call (a timeout
/// budget the retries share, or a cap on Retry-After) is shorter.
fn not_retried_after(
    records: &[(Scenario, ScenarioRecord)],
    r: &ScenarioRecord,
    status: u16,
    after: Duration,
) -> String {
    let plain_retried = records.iter().any(|(s, rec)| {
        s.purpose == Purpose::Every(Outcome::Status(status))
            && rec.runs.iter().any(|run| run.arrivals.len() >= 2)
    });
    if !plain_retried {
        return format!("{status} is not retried");
    }
    let mut gave_up: Vec<f64> = r
        .runs
        .iter()
        .filter(|run| run.exit != Exit::TimedOut)
        .filter_map(|run| Some(run.elapsed_ms - run.arrivals.first()?.at_ms))
        .collect();
    gave_up.sort_by(f64::total_cmp);
    let when = gave_up
        .get(gave_up.len() / 2)
        .map(|g| format!(", ending {} ms after the answer", fmt_ms(*g)))
        .unwrap_or_default();
    format!(
        "{status} with Retry-After {} was not retried although a plain {status} is{when}: the client gives up rather than wait that long — a limit on the whole call (a timeout shared by the attempts, or a cap on Retry-After) shorter than the header, so whether it honours Retry-After is not seen",
        crate::input::duration::format(after)
    )
}

/// How long the client held a hanging attempt before it hung up; `None`
/// when it never did, or when the hang-up was the probe's own kill at the
/// run's bound (an attempt cut then says nothing of the client's timeout:
/// curl's second attempt, cut 1 s after it began, is no 1 s timeout).
pub(super) fn own_hold(run: &RunRecord, a: &Arrival) -> Option<f64> {
    let h = a.hung_up_ms?;
    if run.exit == Exit::TimedOut && h >= run.elapsed_ms - 5.0 {
        return None;
    }
    Some(h - a.at_ms)
}
