//! Which outcomes the client retries and how many attempts it makes: the
//! counts of every scenario's runs.

use super::*;

pub(super) fn attempts_text(counts: &[usize]) -> String {
    let first = counts.first().copied().unwrap_or(0);
    if counts.iter().all(|&c| c == first) {
        format!(
            "{first} attempt{} in each of {} run{}",
            if first == 1 { "" } else { "s" },
            counts.len(),
            if counts.len() == 1 { "" } else { "s" }
        )
    } else {
        let list: Vec<String> = counts.iter().map(usize::to_string).collect();
        format!("attempts per run: {}", list.join(", "))
    }
}

pub(super) fn verdict(s: &Scenario, outcome: Outcome, runs: &[RunRecord]) -> OutcomeVerdict {
    verdict_named(s, outcome.to_string(), runs)
}

/// As [`verdict`], for an outcome the schema has no condition for (an AWS
/// throttling error).
pub(super) fn verdict_named(s: &Scenario, outcome: String, runs: &[RunRecord]) -> OutcomeVerdict {
    let counts: Vec<usize> = runs
        .iter()
        .map(|r| r.arrivals.len())
        .filter(|&c| c > 0)
        .collect();
    let (retried, confidence, evidence) = if counts.is_empty() {
        (
            None,
            Confidence::Low,
            "the client sent no request in this scenario".to_owned(),
        )
    } else {
        let retried_runs = counts.iter().filter(|&&c| c >= 2).count();
        let text = attempts_text(&counts);
        if retried_runs == counts.len() {
            let c = if counts.len() >= 2 {
                Confidence::High
            } else {
                Confidence::Medium
            };
            (Some(true), c, text)
        } else if retried_runs == 0 {
            let c = if counts.len() >= 2 {
                Confidence::High
            } else {
                Confidence::Medium
            };
            (Some(false), c, text)
        } else {
            (
                Some(true),
                Confidence::Medium,
                format!(
                    "{text} (retried in {retried_runs} of {} runs)",
                    counts.len()
                ),
            )
        }
    };
    OutcomeVerdict {
        outcome,
        scenario: s.name.to_owned(),
        retried,
        confidence,
        evidence,
    }
}

/// Scenarios whose every attempt fails, that reached the server.
pub(super) fn failing_every_time(
    records: &[(Scenario, ScenarioRecord)],
) -> impl Iterator<Item = (&Scenario, &ScenarioRecord)> {
    records
        .iter()
        .filter(|(s, _)| matches!(s.purpose, Purpose::Every(_)) && !s.refuses())
        .map(|(s, r)| (s, r))
}

fn median_usize(xs: &mut [usize]) -> usize {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

pub(super) fn max_attempts(
    records: &[(Scenario, ScenarioRecord)],
    notes: &mut Vec<String>,
) -> Field<u32> {
    let mut per_scenario: Vec<(&str, usize, Vec<usize>)> = Vec::new();
    let mut contacted = false;
    for (s, r) in failing_every_time(records) {
        let mut counts: Vec<usize> = r
            .runs
            .iter()
            .map(|r| r.arrivals.len())
            .filter(|&c| c > 0)
            .collect();
        if counts.is_empty() {
            continue;
        }
        contacted = true;
        let all = counts.clone();
        let m = median_usize(&mut counts);
        if m >= 2 {
            per_scenario.push((s.name, m, all));
        }
    }
    if per_scenario.is_empty() {
        return if contacted {
            Field::known(
                1,
                Confidence::High,
                "no failure was retried: one attempt in every run",
            )
        } else {
            Field::unknown("no failing scenario reached the server")
        };
    }
    let value = per_scenario.iter().map(|(_, m, _)| *m).max().unwrap_or(1);
    let agree = per_scenario
        .iter()
        .all(|(_, _, all)| all.iter().all(|&c| c == value));
    let evidence: Vec<String> = per_scenario
        .iter()
        .map(|(name, m, all)| {
            if all.iter().all(|c| c == m) {
                format!("{name}: {m}")
            } else {
                let list: Vec<String> = all.iter().map(usize::to_string).collect();
                format!("{name}: {}", list.join("/"))
            }
        })
        .collect();
    let fewer: Vec<&str> = per_scenario
        .iter()
        .filter(|(_, m, _)| *m < value)
        .map(|(n, _, _)| *n)
        .collect();
    if !fewer.is_empty() {
        notes.push(format!(
            "fewer attempts under {} than the {value} seen elsewhere: a limit on the whole call's time (like curl's --retry-max-time) may cut retries, or another layer retries that failure on a count of its own (aiohttp retries a reset once by itself, below aiohttp-retry)",
            fewer.join(", ")
        ));
    }
    let runs = per_scenario.iter().map(|(_, _, a)| a.len()).sum::<usize>();
    // A run cut at the time bound was still retrying: its count is only
    // the attempts it had time for.
    let cut = !failing_every_time(records)
        .flat_map(|(_, r)| &r.runs)
        .any(|r| r.exit != Exit::TimedOut && r.arrivals.len() == value);
    if cut {
        return Field::known(
            u32::try_from(value).unwrap_or(u32::MAX),
            Confidence::Low,
            format!(
                "at least {value}: every run with {value} attempts was cut at the time bound, none ended by itself (raise --timeout to see them end) — {}",
                evidence.join(", ")
            ),
        );
    }
    let confidence = if agree && runs >= 2 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    Field::known(
        u32::try_from(value).unwrap_or(u32::MAX),
        confidence,
        format!(
            "attempts per run where failures were retried — {}",
            evidence.join(", ")
        ),
    )
}
