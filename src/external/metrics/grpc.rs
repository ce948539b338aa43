//! gRPC's own client metrics (gRFC A66, A96) as a client's attempts per
//! call.
//!
//! A96 (`A96-retry-otel-stats.md`) defines, recorded at the end of each
//! call by the `CallTracer`: `grpc.client.call.retries` "Number of retries
//! during the client call. If there were no retries, 0 is not reported",
//! `grpc.client.call.hedges` (the same for hedges) and
//! `grpc.client.call.transparent_retries` (retries gRPC makes below the
//! application's policy, of attempts that never left the client: not the
//! policy's retries, so not counted). A call without retries records
//! nothing, so the histograms' `_count` is not the calls; A66's
//! `grpc.client.call.duration` is recorded once for every call, so its
//! `_count` is. A66's `grpc.client.attempt.started` counts attempts
//! including transparent retries and those still running, so it is not
//! used. Attempts are therefore `calls + retries + hedges`, with retries
//! and hedges the histograms' `_sum`.
//!
//! In Prometheus form (the OpenTelemetry exporters' conversion: dots to
//! `_`, a unit in braces dropped, `s` as `_seconds`; as grpc-go's client
//! writes them) they are `grpc_client_call_duration_seconds_count`,
//! `grpc_client_call_retries_sum`, `grpc_client_call_hedges_sum`, labelled
//! `grpc_method` and `grpc_target`. The callee is the target's host
//! (`dns:///payments:50051` is `payments`); the caller is not in them: the
//! user names whose client they are (`--metrics-caller`).

use super::exposition::Sample;
use crate::external::facts::{At, Counted, CountedFact, CounterKind, Facts, HostRef};
use crate::external::node::Cx;
use crate::input::error::LoadError;

const CALLS: &str = "grpc_client_call_duration_seconds_count";
const RETRIES: &str = "grpc_client_call_retries_sum";
const HEDGES: &str = "grpc_client_call_hedges_sum";

#[derive(Default)]
struct Target {
    name: String,
    calls: u64,
    retries: Option<u64>,
    hedges: Option<u64>,
    /// The first `call_duration` count sample.
    at: Option<At>,
    /// The first sample of any of the three.
    first: Option<At>,
}

/// The host a canonical target URI names: `dns:///payments:50051` and
/// `xds:///payments` are `payments`, `dns://8.8.8.8/payments:50051` too;
/// a target without a scheme is taken as `host:port`.
pub(crate) fn target_host(target: &str) -> &str {
    let rest = match target.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or(rest, |(_, path)| path),
        None => target,
    };
    let rest = rest.trim_start_matches('/');
    match rest.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => rest,
    }
}

/// Adds the calls `samples` count to `facts`; returns how many targets
/// had calls.
pub(crate) fn read(
    cx: Cx,
    samples: &[Sample],
    caller: Option<&str>,
    window: &str,
    facts: &mut Facts,
) -> Result<usize, LoadError> {
    let mut targets: Vec<Target> = Vec::new();
    // Series without the target they count for: the first, and how many.
    let mut untargeted: Option<(At, usize)> = None;
    for s in samples {
        if ![CALLS, RETRIES, HEDGES].contains(&s.name.as_str()) {
            continue;
        }
        let Some(name) = s
            .labels
            .iter()
            .find(|(k, _)| k == "grpc_target")
            .map(|(_, v)| v.as_str())
        else {
            untargeted.get_or_insert((cx.at(s.at), 0)).1 += 1;
            continue;
        };
        if s.value.fract() != 0.0 {
            return Err(cx
                .f
                .error(s.value_at, format!("`{}` is {}: not a count", s.name, s.value))
                .with_help("calls, retries and hedges are whole counts from 0; save the client's metrics as they were served"));
        }
        let v = super::counter(
            cx,
            s,
            "calls, retries and hedges are whole counts from 0; save the client's metrics as they were served",
        )?;
        let i = match targets.iter().position(|t| t.name == name) {
            Some(i) => i,
            None => {
                targets.push(Target {
                    name: name.to_owned(),
                    ..Target::default()
                });
                targets.len() - 1
            }
        };
        let t = &mut targets[i];
        t.first.get_or_insert(cx.at(s.at));
        let add = |slot: &mut Option<u64>| *slot = Some(slot.unwrap_or(0).saturating_add(v));
        match s.name.as_str() {
            CALLS => {
                t.at.get_or_insert(cx.at(s.at));
                t.calls = t.calls.saturating_add(v);
            }
            RETRIES => add(&mut t.retries),
            _ => add(&mut t.hedges),
        }
    }
    // Counters since the client process started, not a proxy.
    let window = window.replace("proxy", "client");
    if let Some((at, n)) = untargeted {
        facts.warn(
            Some(at),
            format!("{n} gRPC client series without a `grpc_target` label: which channel they count cannot be told, so they are not compared"),
        );
    }
    let mut found = 0;
    for t in targets {
        let Some(at) = t.at else {
            if let Some(first) = t.first {
                facts.warn(
                    Some(first),
                    format!(
                        "gRPC client metrics for target `{}` without `{CALLS}`: its calls cannot be told, so it is not compared",
                        t.name
                    ),
                );
            }
            continue;
        };
        if t.calls == 0 {
            continue;
        }
        found += 1;
        let host = target_host(&t.name);
        if host.is_empty() {
            facts.warn(
                Some(at),
                format!(
                    "gRPC target `{}` names no host: its {} calls are not compared",
                    t.name, t.calls
                ),
            );
            continue;
        }
        if t.retries.is_none() && t.hedges.is_none() {
            facts.warn(
                Some(at),
                format!(
                    "gRPC calls to `{}` without `grpc_client_call_retries` or `…_hedges`: A96's retry metrics are off by default and record nothing for a call that was not retried, so whether they retried cannot be told; not compared",
                    t.name
                ),
            );
            continue;
        }
        let Some(caller) = caller else {
            return Err(cx
                .f
                .error(at.pos, format!("gRPC client metrics for target `{}` without a caller: a client's metrics are its own service's, and which service's is not said", t.name))
                .with_help("name the service whose client wrote them: `--metrics-caller SERVICE`, or `{ path: FILE, caller: SERVICE }` in the topology's `sources:`"));
        };
        let retries = t.retries.unwrap_or(0).saturating_add(t.hedges.unwrap_or(0));
        facts.counted.push(CountedFact {
            caller: caller.to_owned(),
            caller_labelled: false,
            host: HostRef {
                host: host.to_owned(),
                namespace: None,
                at,
            },
            counters: Counted {
                kind: CounterKind::Grpc,
                cluster: t.name,
                attempts: t.calls.saturating_add(retries),
                unattached: None,
                retries,
                overflow: None,
                limit_exceeded: None,
                window: window.clone(),
            },
            at,
        });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::target_host;

    #[test]
    fn a_targets_host_is_its_path_without_the_port() {
        assert_eq!(target_host("dns:///payments:50051"), "payments");
        assert_eq!(target_host("xds:///payments"), "payments");
        assert_eq!(
            target_host("dns://8.8.8.8/payments.prod:443"),
            "payments.prod"
        );
        assert_eq!(target_host("payments:50051"), "payments");
        assert_eq!(target_host("dns:///:50051"), "");
    }
}
