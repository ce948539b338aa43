//! What the client's requests carry and how it sends them: the method it
//! retries, an idempotency key, a deadline header, connection reuse, and
//! whether it stops at the first success.

use super::*;

pub(super) fn method(
    records: &[(Scenario, ScenarioRecord)],
    declared: Option<&str>,
    notes: &mut Vec<String>,
) -> Field<String> {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for a in records
        .iter()
        .flat_map(|(_, r)| &r.runs)
        .flat_map(|r| &r.arrivals)
    {
        *counts.entry(a.method.as_str()).or_default() += 1;
    }
    let observed = counts
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(m, _)| (*m).to_owned());
    match (declared, observed) {
        (Some(d), Some(o)) if !d.eq_ignore_ascii_case(&o) => {
            notes.push(format!("--method {d} was given, but the client sent {o}"));
            Field::known(
                d.to_ascii_uppercase(),
                Confidence::Low,
                format!("declared; the client sent {o}"),
            )
        }
        (Some(d), _) => Field::known(
            d.to_ascii_uppercase(),
            Confidence::High,
            "declared with --method",
        ),
        (None, Some(o)) => {
            let total: usize = counts.values().sum();
            Field::known(
                o.clone(),
                Confidence::High,
                format!("{o} on {} of {total} attempts", counts[o.as_str()]),
            )
        }
        (None, None) => Field::unknown("no attempt arrived"),
    }
}

pub(super) fn idempotency_key(records: &[(Scenario, ScenarioRecord)]) -> Field<bool> {
    let runs: Vec<&RunRecord> = records
        .iter()
        .flat_map(|(_, r)| &r.runs)
        .filter(|r| !r.arrivals.is_empty())
        .collect();
    if runs.is_empty() {
        return Field::unknown("no attempt arrived");
    }
    let retried: Vec<&&RunRecord> = runs.iter().filter(|r| r.arrivals.len() >= 2).collect();
    let keyed = |r: &RunRecord| r.arrivals.iter().all(|a| a.idempotency_key.is_some());
    if retried.is_empty() {
        let with = runs.iter().filter(|r| keyed(r)).count();
        return Field::known(
            with == runs.len(),
            Confidence::Medium,
            format!(
                "Idempotency-Key on {with} of {} single attempts; no retry to compare keys across",
                runs.len()
            ),
        );
    }
    let same = retried
        .iter()
        .filter(|r| {
            keyed(r)
                && r.arrivals
                    .iter()
                    .all(|a| a.idempotency_key == r.arrivals[0].idempotency_key)
        })
        .count();
    let keyed_runs = retried.iter().filter(|r| keyed(r)).count();
    if same == retried.len() {
        Field::known(
            true,
            Confidence::High,
            format!(
                "the same Idempotency-Key on every attempt of each of {} retried runs",
                retried.len()
            ),
        )
    } else if keyed_runs > 0 {
        Field::known(
            false,
            Confidence::High,
            format!(
                "Idempotency-Key changes between attempts in {} of {} retried runs: the server cannot tell a retry from a new request",
                keyed_runs - same,
                retried.len()
            ),
        )
    } else {
        Field::known(
            false,
            Confidence::High,
            format!(
                "no Idempotency-Key on the attempts of {} retried runs",
                retried.len()
            ),
        )
    }
}

pub(super) fn deadline_header(
    records: &[(Scenario, ScenarioRecord)],
    notes: &mut Vec<String>,
) -> Field<String> {
    const COUNTS: &[&str] = &[
        "x-envoy-attempt-count",
        "grpc-previous-rpc-attempts",
        "amz-sdk-request",
        "x-stainless-retry-count",
        "x-retry-attempt",
    ];
    let mut deadline: Option<(String, Vec<String>)> = None;
    let mut counted: Option<(String, Vec<String>)> = None;
    for run in records.iter().flat_map(|(_, r)| &r.runs) {
        for a in &run.arrivals {
            for (name, value) in &a.notable_headers {
                let slot = if COUNTS.contains(&name.as_str()) {
                    &mut counted
                } else {
                    &mut deadline
                };
                match slot {
                    None => *slot = Some((name.clone(), vec![value.clone()])),
                    Some((n, vals)) if n == name && vals.len() < 3 && run.arrivals.len() >= 2 => {
                        vals.push(value.clone())
                    }
                    _ => {}
                }
            }
        }
    }
    if let Some((name, vals)) = counted {
        notes.push(format!(
            "the client counts its attempts in `{name}` ({})",
            vals.join(", ")
        ));
    }
    match deadline {
        Some((name, vals)) => Field::known(
            name.clone(),
            Confidence::High,
            format!("`{name}` sent: {}", vals.join(", ")),
        ),
        None => Field {
            value: None,
            confidence: Confidence::Medium,
            evidence: "no deadline header (grpc-timeout, x-request-timeout, …) on any attempt"
                .into(),
        },
    }
}

pub(super) fn reuses_connection(records: &[(Scenario, ScenarioRecord)]) -> Field<bool> {
    let mut same = 0;
    let mut retries = 0;
    for run in failing_every_time(records)
        .filter(|(s, _)| {
            s.outcome() != Some(Outcome::Reset) && s.outcome() != Some(Outcome::Timeout)
        })
        .flat_map(|(_, r)| &r.runs)
    {
        for w in run.arrivals.windows(2) {
            retries += 1;
            same += usize::from(w[0].connection == w[1].connection);
        }
    }
    if retries == 0 {
        return Field::unknown("no retry after an answer to compare connections");
    }
    Field::known(
        same * 2 > retries,
        Confidence::High,
        format!("{same} of {retries} retries after an answer came on the same connection"),
    )
}

pub(super) fn stops_on_success(records: &[(Scenario, ScenarioRecord)]) -> Field<bool> {
    let Some((s, r)) = records
        .iter()
        .find(|(s, _)| matches!(s.purpose, Purpose::SuccessOn(_)))
    else {
        return Field::unknown("the success-on-k scenario did not run");
    };
    let Purpose::SuccessOn(k) = s.purpose else {
        unreachable!()
    };
    let k = k as usize;
    let counts: Vec<usize> = r
        .runs
        .iter()
        .map(|r| r.arrivals.len())
        .filter(|&c| c > 0)
        .collect();
    if counts.is_empty() {
        return Field::unknown("the client sent no request in the success-on-k scenario");
    }
    let text = attempts_text(&counts);
    if counts.iter().any(|&c| c > k) {
        return Field::known(
            false,
            Confidence::High,
            format!("{text}: it went on after the 200 of attempt {k}"),
        );
    }
    if counts.iter().all(|&c| c == k) {
        let ok = r.runs.iter().filter(|r| r.exit.success()).count();
        return Field::known(
            true,
            Confidence::High,
            format!("{text}; exit 0 in {ok} of {} runs", r.runs.len()),
        );
    }
    Field::unknown(format!("{text}: it gave up before attempt {k}'s success"))
}
