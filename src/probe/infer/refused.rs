//! Whether the client retries a refused connection, from the connection
//! attempts counted on a port that refuses.

use super::*;

/// A refused connection never reaches the server, so whether the client
/// retries it shows only in how long it keeps at it against a closed port,
/// measured against its start-up and exit time and the waits seen elsewhere.
pub(super) fn refused_verdict(
    s: &Scenario,
    runs: &[RunRecord],
    records: &[(Scenario, ScenarioRecord)],
    f: Option<&BackoffFit>,
    attempts: Option<u32>,
) -> OutcomeVerdict {
    let mk = |retried, confidence, evidence: String| OutcomeVerdict {
        outcome: Outcome::Connect.to_string(),
        scenario: s.name.to_owned(),
        retried,
        confidence,
        evidence,
    };
    let counted: Vec<u32> = runs
        .iter()
        .filter(|r| r.exit != Exit::NotStarted)
        .filter_map(|r| r.refused_connects)
        .collect();
    if !counted.is_empty() && counted.len() == runs.len() {
        let mut sorted = counted.clone();
        sorted.sort_unstable();
        let text = format!(
            "{} refused connection attempts counted (SYNs to the closed port, per run: {})",
            sorted[sorted.len() / 2],
            counted
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        if sorted[sorted.len() - 1] == 0 {
            return mk(
                None,
                Confidence::Low,
                "the client made no connection attempt to the closed port".into(),
            );
        }
        // Whether a client retries a refused connection does not vary from
        // run to run: a lone run that disagrees is a stray SYN (another
        // process on the port's number, a kernel retransmission), so the
        // majority decides and a split is unknown.
        let (retrying, n) = (sorted.iter().filter(|&&c| c >= 2).count(), sorted.len());
        let retried = match (2 * retrying).cmp(&n) {
            std::cmp::Ordering::Greater => Some(true),
            std::cmp::Ordering::Less => Some(false),
            std::cmp::Ordering::Equal => None,
        };
        let dissent = retrying.min(n - retrying);
        let confidence = if dissent == 0 && n >= 2 {
            Confidence::High
        } else if 4 * dissent <= n && retried.is_some() {
            Confidence::Medium
        } else {
            Confidence::Low
        };
        let text = if dissent == 0 {
            text
        } else {
            format!("{text}; {dissent} of {n} runs disagree, read as noise")
        };
        return mk(retried, confidence, text);
    }
    let Some(overhead) = overhead_ms(records) else {
        return mk(
            None,
            Confidence::Low,
            "no other scenario shows the client's start-up and exit time to compare with".into(),
        );
    };
    let elapsed: Vec<f64> = runs
        .iter()
        .filter(|r| r.exit != Exit::NotStarted)
        .map(|r| r.elapsed_ms)
        .collect();
    if elapsed.is_empty() {
        return mk(None, Confidence::Low, "the client did not run".into());
    }
    let mut extra: Vec<f64> = elapsed.iter().map(|e| (e - overhead).max(0.0)).collect();
    extra.sort_by(f64::total_cmp);
    let median_extra = extra[extra.len() / 2];
    let shown = format!(
        "against a closed port the client ran {} ms beyond its usual {} ms start-up and exit",
        fmt_ms(median_extra),
        fmt_ms(overhead)
    );
    // A retry after a refusal shows once the waits add up to more than noise.
    let retries = attempts.unwrap_or(1).saturating_sub(1).max(1) as usize;
    let (mean_total, _) = f.map_or((0.0, 0.0), |f| {
        (0..retries).fold((0.0, 0.0), |(m, x), k| {
            let (mean, max) = expected_wait(f, k);
            (m + mean, x + max)
        })
    });
    // The client's start-up varies by seconds for some (boto3: 3.8–7.6 s):
    // only time beyond that spread is a retry's.
    let spread = overhead_spread(records);
    let min_visible = (20.0 + 0.1 * overhead).max(spread);
    if median_extra > min_visible.max(0.3 * mean_total) {
        let mut n = 1;
        let mut sum = 0.0;
        if let Some(f) = f {
            while n < 100 {
                let (mean, _) = expected_wait(f, n - 1);
                if sum + mean / 2.0 > median_extra {
                    break;
                }
                sum += mean;
                n += 1;
            }
        }
        return mk(
            Some(true),
            Confidence::Low,
            format!(
                "{shown} (its start-up varies by {} ms): about {n} attempts at the waits measured elsewhere; not counted, since a raw socket is not permitted here (run as root to count refused connections)",
                fmt_ms(spread)
            ),
        );
    }
    if mean_total < min_visible {
        return mk(
            None,
            Confidence::Low,
            format!(
                "{shown}; its waits ({} ms in all) are too short to tell retries from none without a listener to count them",
                fmt_ms(mean_total)
            ),
        );
    }
    mk(
        Some(false),
        Confidence::Low,
        format!(
            "{shown}: no time for a retry; not counted, since a raw socket is not permitted here (run as root to count refused connections)"
        ),
    )
}

/// A client that retries only refused connections (urllib3's POST) still
/// makes several attempts: the counted ones raise `max_attempts`.
pub(super) fn with_refused_attempts(
    f: Field<u32>,
    records: &[(Scenario, ScenarioRecord)],
) -> Field<u32> {
    let Some((_, r)) = records.iter().find(|(s, _)| s.refuses()) else {
        return f;
    };
    let mut counts: Vec<u32> = r.runs.iter().filter_map(|r| r.refused_connects).collect();
    if counts.is_empty() || counts.len() != r.runs.len() {
        return f;
    }
    counts.sort_unstable();
    let m = counts[counts.len() / 2];
    if f.value.is_some_and(|v| v >= m) || m < 2 {
        return f;
    }
    let agree = counts.iter().all(|&c| c == m);
    Field::known(
        m,
        if agree && counts.len() >= 2 {
            Confidence::High
        } else {
            Confidence::Medium
        },
        format!(
            "{} refused connection attempts counted in the refused scenario{}",
            m,
            match f.value {
                Some(v) => format!(", more than the {v} seen where the server answered"),
                None => String::new(),
            }
        ),
    )
}
