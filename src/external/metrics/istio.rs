//! Istio's standard metric `istio_requests_total` as the least attempts
//! per request a caller's sidecar made.
//!
//! The counter is kept by Istio's stats filter (istio/proxy
//! `source/extensions/filters/http/istio_stats/istio_stats.cc`), an HTTP
//! filter that records once per downstream request, at its end (as an
//! access-log handler): a request the sidecar retried is still one
//! request. So the counter alone says nothing of retries; its
//! `response_flags` label does. It is Envoy's short flag string
//! (`ResponseFlagUtils::toShortString`: the flags joined by `,`, `-` for
//! none), and `URX` (UpstreamRetryLimitExceeded) is set by Envoy's router
//! only when `RetryStateImpl::shouldRetry` answers `NoRetryLimitExceeded`:
//! the response was retriable and `retries_remaining_` was 0, i.e. every
//! retry the policy allows had been made. Istio never writes a route retry
//! policy of 0 retries (`ConvertPolicy`: `attempts <= 0` writes none, and
//! without a policy no retry state is made), so a `URX` request made at
//! least 2 attempts. The least the counters prove is therefore
//! `requests + URX requests` attempts: a lower bound, worded so.
//!
//! Only `reporter="source"` series are read: the caller's own sidecar,
//! where outbound retries happen. The caller is the series'
//! `source_canonical_service` (else `source_app`, else `source_workload`),
//! in `source_workload_namespace`; the callee is `destination_service`
//! (the Service's host, `reviews.default.svc.cluster.local`), else
//! `destination_service_name`, else `destination_canonical_service`.
//! `--metrics-caller` is used only for series that name no caller.

use std::collections::HashMap;

use super::exposition::Sample;
use crate::external::facts::{At, Counted, CountedFact, CounterKind, Facts, HostRef};
use crate::external::node::Cx;
use crate::input::error::LoadError;

pub(crate) const REQUESTS: &str = "istio_requests_total";

/// The response flag Envoy sets when a request's retries ran out.
const URX: &str = "URX";

struct Pair {
    caller: Option<String>,
    callee: String,
    namespace: Option<String>,
    requests: u64,
    urx: u64,
    at: At,
}

/// [`super::label`], where Istio's `unknown` (what its stats filter
/// writes for a value it could not learn) is no label either.
fn label<'a>(s: &'a Sample, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| super::label(s, &[k]).filter(|v| *v != "unknown"))
}

/// The one caller the `reporter="source"` series name, if they name
/// exactly one: a sidecar's scrape is its own workload's, so its Envoy
/// cluster counters are that caller's too.
pub(crate) fn sole_caller(samples: &[Sample]) -> Option<String> {
    let mut found: Option<String> = None;
    for s in samples {
        if s.name != REQUESTS || label(s, &["reporter"]) != Some("source") {
            continue;
        }
        let name = label(
            s,
            &["source_canonical_service", "source_app", "source_workload"],
        )?;
        let name = match label(s, &["source_workload_namespace"]) {
            Some(ns) => format!("{name}.{ns}"),
            None => name.to_owned(),
        };
        match &found {
            Some(f) if *f != name => return None,
            Some(_) => {}
            None => found = Some(name),
        }
    }
    found
}

/// Adds the calls `samples` count to `facts`; returns how many caller →
/// callee pairs had requests.
pub(crate) fn read(
    cx: Cx,
    samples: &[Sample],
    caller: Option<&str>,
    window: &str,
    facts: &mut Facts,
) -> Result<usize, LoadError> {
    let mut pairs: Vec<Pair> = Vec::new();
    let mut index: HashMap<(Option<String>, String), usize> = HashMap::new();
    for s in samples {
        if s.name != REQUESTS || label(s, &["reporter"]) != Some("source") {
            continue;
        }
        let Some(callee) = label(
            s,
            &[
                "destination_service",
                "destination_service_name",
                "destination_canonical_service",
            ],
        ) else {
            continue;
        };
        let v = super::counter(
            cx,
            s,
            "a counter counts up from 0; save the scrape or the query's answer as it came",
        )?;
        let from = label(
            s,
            &["source_canonical_service", "source_app", "source_workload"],
        )
        .map(|name| match label(s, &["source_workload_namespace"]) {
            Some(ns) => format!("{name}.{ns}"),
            None => name.to_owned(),
        });
        let key = (from.clone(), callee.to_owned());
        let i = *index.entry(key).or_insert_with(|| {
            pairs.push(Pair {
                caller: from,
                callee: callee.to_owned(),
                namespace: label(s, &["destination_service_namespace"]).map(str::to_owned),
                requests: 0,
                urx: 0,
                at: cx.at(s.at),
            });
            pairs.len() - 1
        });
        let p = &mut pairs[i];
        p.requests = p.requests.saturating_add(v);
        let flags = label(s, &["response_flags"]).unwrap_or("-");
        if flags.split(',').any(|f| f.trim() == URX) {
            p.urx = p.urx.saturating_add(v);
        }
    }
    let mut found = 0;
    for p in pairs {
        if p.requests == 0 {
            continue;
        }
        found += 1;
        let labelled = p.caller.is_some();
        let Some(from) = p.caller.or_else(|| caller.map(str::to_owned)) else {
            return Err(cx
                .f
                .error(p.at.pos, format!("`{REQUESTS}` to `{}` names no caller (no `source_canonical_service`, `source_app` or `source_workload`), and none is given", p.callee))
                .with_help("name the service whose sidecar reported them: `--metrics-caller SERVICE`, or `{ path: FILE, caller: SERVICE }` in the topology's `sources:`"));
        };
        facts.counted.push(CountedFact {
            caller: from,
            caller_labelled: labelled,
            host: HostRef {
                host: p.callee.clone(),
                namespace: p.namespace,
                at: p.at,
            },
            counters: Counted {
                kind: CounterKind::Istio,
                cluster: p.callee,
                attempts: p.requests.saturating_add(p.urx),
                unattached: None,
                retries: p.urx,
                overflow: None,
                limit_exceeded: None,
                window: window.to_owned(),
            },
            at: p.at,
        });
    }
    Ok(found)
}
