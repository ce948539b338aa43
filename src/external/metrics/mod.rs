//! Metrics, the other production record: counters a proxy keeps of the
//! requests it sent and the retries among them, compared with the declared
//! layers as traces are (RL021).
//!
//! Two containers hold the same samples: the Prometheus text exposition
//! ([`exposition`], what Envoy's `/stats/prometheus` answers) and a
//! Prometheus HTTP API query result ([`prom_api`], JSON). Each becomes
//! [`exposition::Sample`]s with their line and column; [`envoy`] turns
//! Envoy's cluster counters, [`istio`] Istio's `istio_requests_total`,
//! [`linkerd`] Linkerd's outbound route metrics, [`grpc`] gRPC's A96
//! client retry metrics, into
//! [`CountedFact`](super::facts::CountedFact)s, which `topology::merge`
//! adds to the topology's `observed`.

pub mod envoy;
pub mod exposition;
pub mod grpc;
pub mod istio;
pub mod linkerd;
pub(crate) mod prom_api;

use super::facts::{Account, Facts};
use super::node::Cx;
use crate::input::Node;
use crate::input::error::LoadError;
use exposition::Sample;

/// The largest count an f64 holds exactly.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// The value of the first of `keys` that `s` labels with something (an
/// empty value is no label, as Prometheus reads it).
fn label<'a>(s: &'a Sample, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| {
        s.labels
            .iter()
            .find(|(name, v)| name == k && !v.is_empty())
            .map(|(_, v)| v.as_str())
    })
}

/// `s`'s value as a counter's (finite, from 0, exact in an f64), or an
/// error at the value with `help`, which says how to save the file.
fn counter(cx: Cx, s: &Sample, help: &str) -> Result<u64, LoadError> {
    if !(s.value.is_finite() && s.value >= 0.0 && s.value <= EXACT) {
        return Err(cx
            .f
            .error(
                s.value_at,
                format!("`{}` is {}: not a counter's value", s.name, s.value),
            )
            .with_help(help.to_owned()));
    }
    Ok(s.value as u64)
}

/// What counters since start cover, said beside every figure.
pub(crate) const SINCE_START: &str = "since the proxy started";
/// The same, for a query that may hold several proxies' series.
pub(crate) const SINCE_EACH_START: &str = "since each proxy started";

/// Reads a text exposition (the whole file) for `caller`'s proxy.
pub(crate) fn read_exposition(
    cx: Cx,
    text: &str,
    caller: Option<&str>,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    let samples = exposition::parse(text).map_err(|e| {
        cx.f.error(e.pos, format!("not a Prometheus text exposition: {e}"))
            .with_help("save the proxy's answer as it came (`curl -s http://127.0.0.1:9901/stats/prometheus > envoy.prom`)")
    })?;
    // Unnamed, an Istio sidecar's Envoy counters are the caller its
    // `istio_requests_total` names.
    let istio_caller = caller
        .is_none()
        .then(|| istio::sole_caller(&samples))
        .flatten();
    let envoy_caller = caller.or(istio_caller.as_deref());
    let labelled = caller.is_none() && istio_caller.is_some();
    let found = envoy::read(cx, &samples, envoy_caller, labelled, SINCE_START, facts)?
        + istio::read(cx, &samples, caller, SINCE_START, facts)?
        + linkerd::read(cx, &samples, caller, SINCE_START, facts)?
        + grpc::read(cx, &samples, caller, SINCE_START, facts)?;
    if found == 0 {
        facts.reclassify(Account::NoRetry(
            "a Prometheus exposition without requests counted by Envoy, Istio, Linkerd or a gRPC client".into(),
        ));
    }
    Ok(())
}

/// Reads a Prometheus API query result for `caller`'s proxies.
pub(crate) fn read_query(
    cx: Cx,
    root: &Node,
    caller: Option<&str>,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    let read = prom_api::read(cx, root)?;
    // A query may add up several pods of the caller, each counting from
    // its own start.
    let window = match read.evaluated_at {
        Some(t) => format!("{SINCE_EACH_START}, as read at Unix time {t}"),
        None => SINCE_EACH_START.to_owned(),
    };
    let found = envoy::read(cx, &read.samples, caller, false, &window, facts)?
        + istio::read(cx, &read.samples, caller, &window, facts)?
        + linkerd::read(cx, &read.samples, caller, &window, facts)?
        + grpc::read(cx, &read.samples, caller, &window, facts)?;
    if found == 0 {
        facts.reclassify(Account::NoRetry(format!(
            "a Prometheus API result ({}) without requests counted by Envoy, Istio, Linkerd or a gRPC client",
            read.result_type
        )));
    }
    Ok(())
}
