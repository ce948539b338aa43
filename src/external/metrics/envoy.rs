//! Envoy's cluster counters as attempts per request on a call.
//!
//! Envoy keeps, per upstream cluster (cluster manager statistics,
//! `configuration/upstream/cluster_manager/cluster_stats`):
//! `upstream_rq_total` "Total requests" — every request the router sends
//! upstream, each retry included; `upstream_rq_retry` "Total request
//! retries"; `upstream_rq_retry_overflow` "Total requests not retried due
//! to circuit breaking or exceeding the retry budget";
//! `upstream_rq_retry_limit_exceeded` "Total requests not retried due to
//! exceeding the configured number of maximum retries". So the requests
//! that came into the proxy for the cluster are `total − retry`, and the
//! attempts the proxy made per request are `total / (total − retry)`.
//!
//! One correction: Envoy counts a request in `upstream_rq_total` when the
//! connection pool attaches it to a connection (`attachStreamToClient`),
//! so an attempt that failed while waiting for a connection is not in it
//! although its retry is in `upstream_rq_retry`. Those attempts are
//! `upstream_rq_pending_failure_eject` ("Total requests that were failed due
//! to a connection pool connection failure or remote connection
//! termination"); when the file has it, the attempts are `total + eject`.
//! Were an Envoy to count them in `total` already, adding them again only
//! moves the figure towards 1: the finding can be missed, never made up.
//!
//! The cluster is the Prometheus label `envoy_cluster_name` (Envoy's
//! default tag) or `cluster_name` (the tag Istio's bootstrap defines); it
//! names the callee as the configuration readers name clusters (see
//! `external::envoy::cluster_host`): `outbound|8080||payments.default.svc.cluster.local`
//! is the service `payments`. The caller is not in the counters: a stats
//! dump is one proxy's, and the user names whose.

use std::collections::HashMap;

use super::exposition::Sample;
use crate::external::facts::{At, Counted, CountedFact, CounterKind, Facts, HostRef};
use crate::external::node::Cx;
use crate::input::error::LoadError;

/// The labels that carry the cluster's name.
pub(crate) const CLUSTER_LABELS: &[&str] = &["envoy_cluster_name", "cluster_name"];

const TOTAL: &str = "envoy_cluster_upstream_rq_total";
const RETRY: &str = "envoy_cluster_upstream_rq_retry";
const OVERFLOW: &str = "envoy_cluster_upstream_rq_retry_overflow";
const LIMIT: &str = "envoy_cluster_upstream_rq_retry_limit_exceeded";
const EJECT: &str = "envoy_cluster_upstream_rq_pending_failure_eject";

#[derive(Default)]
struct Cluster {
    name: String,
    total: Option<u64>,
    retry: Option<u64>,
    overflow: Option<u64>,
    limit: Option<u64>,
    eject: Option<u64>,
    /// The first `upstream_rq_total` sample.
    at: Option<At>,
}

/// Adds the calls `samples` count to `facts`; returns how many clusters
/// had requests (0: the document carries no retry counters to compare).
pub(crate) fn read(
    cx: Cx,
    samples: &[Sample],
    caller: Option<&str>,
    // The caller came from the file's own labels (Istio's series), so one
    // the topology lacks is a warning, as it is for those series.
    caller_labelled: bool,
    window: &str,
    facts: &mut Facts,
) -> Result<usize, LoadError> {
    let mut clusters: Vec<Cluster> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for s in samples {
        if ![TOTAL, RETRY, OVERFLOW, LIMIT, EJECT].contains(&s.name.as_str()) {
            continue;
        }
        let Some(name) = s
            .labels
            .iter()
            .find(|(k, _)| CLUSTER_LABELS.contains(&k.as_str()))
            .map(|(_, v)| v)
        else {
            continue;
        };
        let v = super::counter(
            cx,
            s,
            "a counter counts up from 0; save the proxy's /stats/prometheus as it answered",
        )?;
        let i = *index.entry(name.clone()).or_insert_with(|| {
            clusters.push(Cluster {
                name: name.clone(),
                ..Cluster::default()
            });
            clusters.len() - 1
        });
        let c = &mut clusters[i];
        // Series of one cluster from several replicas of the caller (a
        // query across pods) add up: the ratio of the sums is the mean
        // over all their requests.
        let slot = match s.name.as_str() {
            TOTAL => {
                c.at.get_or_insert(cx.at(s.at));
                &mut c.total
            }
            RETRY => &mut c.retry,
            OVERFLOW => &mut c.overflow,
            EJECT => &mut c.eject,
            _ => &mut c.limit,
        };
        *slot = Some(slot.unwrap_or(0).saturating_add(v));
    }
    let mut found = 0;
    for c in clusters {
        let (Some(total), Some(at)) = (c.total, c.at) else {
            continue;
        };
        if total == 0 || crate::external::envoy::internal_cluster(&c.name) {
            continue;
        }
        found += 1;
        let Some(caller) = caller else {
            return Err(cx
                .f
                .error(at.pos, format!("counters of Envoy cluster `{}` without a caller: a proxy's stats are its own service's, and which service's is not said", c.name))
                .with_help("name the service whose proxy wrote them: `--metrics-caller SERVICE`, or `{ path: FILE, caller: SERVICE }` in the topology's `sources:`"));
        };
        let Some(retries) = c.retry else {
            facts.warn(
                Some(at),
                format!(
                    "cluster `{}` has `{TOTAL}` but no `{RETRY}`: its retries cannot be told, so it is not compared",
                    c.name
                ),
            );
            continue;
        };
        let attempts = total.saturating_add(c.eject.unwrap_or(0));
        if retries >= attempts {
            facts.warn(
                Some(at),
                format!(
                    "cluster `{}` counts {retries} retries among {attempts} attempts: no first attempts are left, so it is not compared",
                    c.name
                ),
            );
            continue;
        }
        facts.counted.push(CountedFact {
            caller: caller.to_owned(),
            caller_labelled,
            host: HostRef {
                host: crate::external::envoy::cluster_host(&c.name),
                namespace: None,
                at,
            },
            counters: Counted {
                kind: CounterKind::Envoy,
                cluster: c.name,
                attempts,
                unattached: c.eject,
                retries,
                overflow: c.overflow,
                limit_exceeded: c.limit,
                window: window.to_owned(),
            },
            at,
        });
    }
    Ok(found)
}
