//! gRPC service config JSON (gRFC A6, `doc/service_config.md`):
//! `methodConfig[].retryPolicy`, `timeout` and the top-level
//! `retryThrottling`, as a layer on the calls to the service each
//! `methodConfig` names.
//!
//! - `maxAttempts` counts ATTEMPTS, the first included (unlike Istio and
//!   Envoy); it must be above 1, and clients treat values above 5 as 5.
//! - Backoff: the n-th retry waits `min(initialBackoff × backoffMultiplier^(n-1),
//!   maxBackoff) × random(0.8, 1.2)` (A6 as amended in 2024): exponential,
//!   cap `maxBackoff`, proportional jitter 0.2, as the `grpc-a6-example` preset.
//! - `retryableStatusCodes` in HTTP terms, the gRPC↔HTTP mapping of
//!   google.rpc.Code (see [`status`]): `UNAVAILABLE` is `503` plus `connect`
//!   and `reset` (gRPC reports a refused connection and a broken transport
//!   as UNAVAILABLE), `DEADLINE_EXCEEDED` is `timeout`.
//! - `timeout` is the whole call's deadline, retries included: an outer
//!   `grpc-deadline` layer with no retries. gRPC has no per-attempt timeout.
//! - `retryThrottling` is the policy engine's `grpc_throttling` budget on
//!   every retry layer of the file (it is per channel in gRPC).
//! - Server pushback (`grpc-retry-pushback-ms`) plays Retry-After's role:
//!   `honor_retry_after: true`.
//! - `hedgingPolicy` is noted and not read; `waitForReady` and load
//!   balancing are not retry settings.
//!
//! - `name` entries: `{service, method}` applies to the call whose path is
//!   `/service/method` (a call that states no path does not take it),
//!   `{service}` to the service's other calls, `{}` (or no `service`) is
//!   the channel default — in that order, whatever the file's order, as
//!   grpc-go's `getMethodConfig` looks them up. A name given twice, or a
//!   `method` without a `service`, is an error, as gRPC rejects the config.
//! - A `.json` file is strict JSON: a comment or a trailing comma is an
//!   error at its line (gRPC's JSON parsers reject both).
//!
//! The config names gRPC services (`grpc.examples.echo.Echo`), not hosts:
//! the last part, lowercased (`echo`), is the host, unless the `sources:`
//! entry says `service:`.

use std::time::Duration;

use super::facts::*;
use super::node::{self, Cx, items};
use crate::input::error::LoadError;
use crate::input::{Node, Pos, Value};
use crate::policy::{Backoff, BackoffKind, BudgetSpec, Condition, Jitter, RetryOn, RetryPolicy};

pub(crate) const LAYER: &str = "grpc";
pub(crate) const DEADLINE: &str = "grpc-deadline";

/// A key, case-insensitively (grpc-go's JSON decoding ignores case; its
/// retry example writes `MaxAttempts`).
fn get<'a>(node: &'a Node, key: &str) -> Option<(&'a Node, &'a Node)> {
    let Value::Map(entries) = &node.value else {
        return None;
    };
    entries
        .iter()
        .find(|(k, v)| {
            matches!(&k.value, Value::Str(s) if s.eq_ignore_ascii_case(key))
                && v.value != Value::Null
        })
        .map(|(k, v)| (k, v))
}

pub(crate) fn read(
    cx: Cx,
    root: &Node,
    service: Option<&str>,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    if facts.files[cx.file].file.ends_with(".json") {
        strict_json(cx, &facts.files[cx.file].text)?;
    }
    let group = facts.read_kinds.len();
    let first = facts.routes.len();
    let budget = match get(root, "retryThrottling") {
        Some((k, v)) => Some((throttling(cx, v)?, k.pos)),
        None => None,
    };
    let configs = match get(root, "methodConfig") {
        Some((_, v)) if matches!(v.value, Value::Seq(_)) => items(v),
        Some((_, v)) => return Err(cx.f.expected(v, "a list for `methodConfig`")),
        None => &[],
    };
    // Each route's specificity: 0 a method, 1 a service, 2 the channel
    // default (grpc-go's getMethodConfig looks up `/service/method`, then
    // `/service/`, then ``).
    let mut rank: Vec<u8> = Vec::new();
    let mut paths: Vec<(String, Pos)> = Vec::new();
    for mc in configs {
        if let Some((k, _)) = get(mc, "hedgingPolicy") {
            facts.note(
                Some(cx.at(k.pos)),
                "gRPC hedgingPolicy is not read; write `hedging:` on the call in the topology",
            );
        }
        let mut targets: Vec<(HostRef, MatchRule, u8)> = Vec::new();
        if let Some((_, names)) = get(mc, "name") {
            for n in items(names) {
                let grpc_service = match get(n, "service") {
                    Some((_, sv)) => cx.f.str(sv, "`service`")?,
                    None => "",
                };
                let method = match get(n, "method") {
                    Some((_, mv)) => cx.f.str(mv, "`method`")?,
                    None => "",
                };
                if grpc_service.is_empty() && !method.is_empty() {
                    return Err(cx
                        .f
                        .error(n.pos, "a `name` with a `method` but no `service`")
                        .with_help("name the service too: `{ \"service\": \"pkg.Service\", \"method\": \"Get\" }` (gRPC rejects this config)"));
                }
                let path = match (grpc_service, method) {
                    ("", _) => String::new(),
                    (s, "") => format!("/{s}/"),
                    (s, m) => format!("/{s}/{m}"),
                };
                if let Some((_, at)) = paths.iter().find(|(p, _)| *p == path) {
                    return Err(cx
                        .f
                        .error(n.pos, "this `name` is already configured")
                        .with_help(format!(
                            "gRPC rejects a config that names a method twice (first at line {}); merge the two methodConfigs",
                            at.line
                        )));
                }
                paths.push((path.clone(), n.pos));
                let host = match service {
                    Some(s) => s.to_owned(),
                    None if grpc_service.is_empty() => {
                        facts.warn(
                            Some(cx.at(n.pos)),
                            "a gRPC methodConfig for every service (the channel default), but no target: name it with `sources: [{ path: ..., service: NAME }]`",
                        );
                        continue;
                    }
                    None => grpc_service
                        .rsplit('.')
                        .next()
                        .unwrap_or(grpc_service)
                        .to_ascii_lowercase(),
                };
                let (rule, r) = match (grpc_service, method) {
                    ("", _) => (MatchRule::default(), 2),
                    (_, "") => (
                        MatchRule {
                            method: None,
                            path: Some(StrMatch::Prefix(path)),
                        },
                        1,
                    ),
                    _ => (
                        MatchRule {
                            method: None,
                            path: Some(StrMatch::Method(path)),
                        },
                        0,
                    ),
                };
                targets.push((
                    HostRef {
                        host,
                        namespace: None,
                        at: cx.at(n.pos),
                    },
                    rule,
                    r,
                ));
            }
        }
        if targets.is_empty() {
            continue;
        }
        let mut layers = Vec::new();
        if let Some((k, v)) = get(mc, "timeout") {
            let d = node::duration(cx, v, "timeout")?;
            layers.push(LayerFact {
                grpc_retry_on: None,
                timeout_default: None,
                name: DEADLINE.into(),
                file: cx.file,
                pos: k.pos,
                timeout: Some((d, k.pos)),
                policy: PolicyFact::None,
                comment: "gRPC methodConfig timeout: the call's deadline, all attempts included"
                    .into(),
            });
        }
        if let Some((k, rp)) = get(mc, "retryPolicy") {
            let (mut policy, mut spans) = retry_policy(cx, k.pos, rp, facts)?;
            if let Some((b, at)) = &budget {
                policy.budget = Some(b.clone());
                spans.budget = Some(*at);
            }
            layers.push(LayerFact {
                grpc_retry_on: None,
                timeout_default: None,
                name: LAYER.into(),
                file: cx.file,
                pos: k.pos,
                timeout: None,
                comment: format!(
                    "gRPC retryPolicy: maxAttempts {} counts attempts, the first included",
                    policy.max_attempts
                ),
                policy: PolicyFact::Inline { policy, spans },
            });
        }
        // Pushed without layers too: a method's config without retries
        // still shadows its service's and the channel default.
        for (host, rule, r) in targets {
            rank.push(r);
            facts.routes.push(RouteFact {
                source: "grpc",
                group,
                hosts: vec![host],
                matcher: Matcher {
                    any: vec![rule],
                    grpc: None,
                },
                layers: layers.clone(),
            });
        }
    }
    let mut mine: Vec<(u8, RouteFact)> =
        rank.into_iter().zip(facts.routes.drain(first..)).collect();
    mine.sort_by_key(|(r, _)| *r);
    facts.routes.extend(mine.into_iter().map(|(_, r)| r));
    Ok(())
}

/// A `.json` service config is JSON as gRPC parses it: no comments, no
/// trailing commas (the located YAML reader would take both).
fn strict_json(cx: Cx, text: &str) -> Result<(), LoadError> {
    let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) else {
        return Ok(());
    };
    let (line, column) = (e.line() as u32, e.column() as u32);
    let lines: Vec<&str> = text.lines().collect();
    let here = lines
        .get((line as usize).saturating_sub(1))
        .copied()
        .unwrap_or("");
    let mut pos = Pos { line, column };
    // serde_json stops at the bracket after a trailing comma: point at the comma.
    let upto: String = lines
        .iter()
        .take((line as usize).saturating_sub(1))
        .map(|l| format!("{l}\n"))
        .chain(std::iter::once(
            here.chars()
                .take((column as usize).saturating_sub(1))
                .collect::<String>(),
        ))
        .collect();
    let stop = here.chars().nth((column as usize).saturating_sub(1));
    let before = upto.trim_end();
    let trailing = matches!(stop, Some(']' | '}')) && before.ends_with(',');
    if trailing {
        let comma_line = before.lines().count() as u32;
        let comma_col = before
            .lines()
            .last()
            .map_or(1, |l| l.chars().count() as u32);
        pos = Pos {
            line: comma_line,
            column: comma_col,
        };
    }
    let (what, help) = if trailing || e.to_string().starts_with("trailing comma") {
        (
            "a trailing comma",
            "remove the comma before the closing bracket (gRPC rejects the config)",
        )
    } else if here.trim_start().starts_with("//")
        || here.trim_start().starts_with("/*")
        || here.trim_start().starts_with('#')
    {
        (
            "a comment",
            "JSON has no comments: remove it (gRPC rejects the config)",
        )
    } else {
        (
            "not JSON",
            "a .json service config must be strict JSON, as gRPC parses it",
        )
    };
    Err(cx
        .f
        .error(pos, format!("{what} in a gRPC service config: {e}"))
        .with_help(help))
}

fn required<'a>(
    cx: Cx,
    rp: &'a Node,
    key: &str,
    example: &str,
) -> Result<(&'a Node, &'a Node), LoadError> {
    get(rp, key).ok_or_else(|| {
        cx.f.error(rp.pos, format!("a gRPC retryPolicy needs `{key}`"))
            .with_help(format!(
                "add `\"{key}\": {example}` (gRFC A6: every field of retryPolicy is required)"
            ))
    })
}

fn retry_policy(
    cx: Cx,
    at: Pos,
    rp: &Node,
    facts: &mut Facts,
) -> Result<(RetryPolicy, Spans), LoadError> {
    let mut spans = Spans {
        policy: Some(at),
        ..Spans::default()
    };
    let (k, v) = required(cx, rp, "maxAttempts", "4")?;
    spans.max_attempts = Some(k.pos);
    let mut max_attempts = node::int(cx, v, "maxAttempts", 2, i128::from(u32::MAX))? as u32;
    if max_attempts > 5 {
        facts.note(
            Some(cx.at(v.pos)),
            format!("gRPC clients treat maxAttempts {max_attempts} as 5 (gRFC A6): read as 5"),
        );
        max_attempts = 5;
    }
    let (k, v) = required(cx, rp, "initialBackoff", "\"0.1s\"")?;
    spans.backoff = Some(k.pos);
    spans.backoff_kind = Some(k.pos);
    spans.jitter = Some(k.pos);
    let base = positive(cx, v, "initialBackoff")?;
    let (k, v) = required(cx, rp, "maxBackoff", "\"1s\"")?;
    spans.cap = Some(k.pos);
    let cap = positive(cx, v, "maxBackoff")?;
    let (_, v) = required(cx, rp, "backoffMultiplier", "2")?;
    let multiplier = cx.f.number(v, "backoffMultiplier")?;
    if multiplier <= 0.0 {
        return Err(cx
            .f
            .error(v.pos, "`backoffMultiplier` must be above 0")
            .with_help("write e.g. `\"backoffMultiplier\": 2`"));
    }
    let (k, v) = required(cx, rp, "retryableStatusCodes", "[\"UNAVAILABLE\"]")?;
    spans.retry_on = Some(k.pos);
    let mut retry_on: Vec<Condition> = Vec::new();
    for code in items(v) {
        let conditions = match &code.value {
            Value::Int(n) => u8::try_from(*n).ok().and_then(status_by_number),
            Value::Str(s) => status(s),
            _ => None,
        }
        .ok_or_else(|| {
            cx.f.error(code.pos, "not a gRPC status code")
                .with_help("write a code name such as \"UNAVAILABLE\" or its number (14)")
        })?;
        for c in conditions {
            if !retry_on.contains(c) {
                retry_on.push(*c);
            }
        }
    }
    if retry_on.is_empty() && items(v).is_empty() {
        return Err(cx
            .f
            .error(v.pos, "`retryableStatusCodes` is empty")
            .with_help("gRFC A6 requires at least one code, e.g. [\"UNAVAILABLE\"]"));
    }
    let policy = RetryPolicy {
        max_attempts,
        backoff: Backoff {
            kind: BackoffKind::Exponential,
            base,
            multiplier,
            cap: Some(cap),
            jitter: Jitter::Proportional { ratio: 0.2 },
        },
        retry_on: RetryOn(retry_on),
        honor_retry_after: true,
        budget: None,
    };
    Ok((policy, spans))
}

fn positive(cx: Cx, v: &Node, key: &str) -> Result<Duration, LoadError> {
    let d = node::duration(cx, v, key)?;
    if d.is_zero() {
        return Err(cx
            .f
            .error(v.pos, format!("`{key}` must be above 0"))
            .with_help(format!("write e.g. `\"{key}\": \"0.1s\"`")));
    }
    Ok(d)
}

fn throttling(cx: Cx, v: &Node) -> Result<BudgetSpec, LoadError> {
    let (_, mt) = get(v, "maxTokens").ok_or_else(|| {
        cx.f.error(v.pos, "`retryThrottling` needs `maxTokens`")
            .with_help("write `\"retryThrottling\": { \"maxTokens\": 10, \"tokenRatio\": 0.1 }`")
    })?;
    let max_tokens = node::int(cx, mt, "maxTokens", 1, 1000)? as f64;
    let (_, tr) = get(v, "tokenRatio").ok_or_else(|| {
        cx.f.error(v.pos, "`retryThrottling` needs `tokenRatio`")
            .with_help("write `\"tokenRatio\": 0.1`")
    })?;
    let token_ratio = cx.f.number(tr, "tokenRatio")?;
    if token_ratio <= 0.0 {
        return Err(cx
            .f
            .error(tr.pos, "`tokenRatio` must be above 0")
            .with_help("write e.g. `\"tokenRatio\": 0.1`"));
    }
    Ok(BudgetSpec::GrpcThrottling {
        max_tokens,
        token_ratio,
    })
}

const UNAVAILABLE: &[Condition] = &[Condition::Connect, Condition::Reset, Condition::Status(503)];

/// A gRPC status code (name, any case) in the engine's HTTP terms.
///
/// | gRPC | HTTP-ish |
/// |---|---|
/// | CANCELLED | reset (the stream was torn down) |
/// | UNKNOWN, INTERNAL, DATA_LOSS | 500 |
/// | INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE | 400 |
/// | DEADLINE_EXCEEDED | timeout |
/// | NOT_FOUND | 404 |
/// | ALREADY_EXISTS, ABORTED | 409 |
/// | PERMISSION_DENIED | 403 |
/// | UNAUTHENTICATED | 401 |
/// | RESOURCE_EXHAUSTED | 429 |
/// | UNIMPLEMENTED | 501 |
/// | UNAVAILABLE | 503, connect, reset |
pub(crate) fn status(name: &str) -> Option<&'static [Condition]> {
    let n = match name.trim().to_ascii_uppercase().as_str() {
        "OK" => 0,
        "CANCELLED" => 1,
        "UNKNOWN" => 2,
        "INVALID_ARGUMENT" => 3,
        "DEADLINE_EXCEEDED" => 4,
        "NOT_FOUND" => 5,
        "ALREADY_EXISTS" => 6,
        "PERMISSION_DENIED" => 7,
        "RESOURCE_EXHAUSTED" => 8,
        "FAILED_PRECONDITION" => 9,
        "ABORTED" => 10,
        "OUT_OF_RANGE" => 11,
        "UNIMPLEMENTED" => 12,
        "INTERNAL" => 13,
        "UNAVAILABLE" => 14,
        "DATA_LOSS" => 15,
        "UNAUTHENTICATED" => 16,
        _ => return None,
    };
    status_by_number(n)
}

fn status_by_number(n: u8) -> Option<&'static [Condition]> {
    Some(match n {
        1 => &[Condition::Reset],
        2 | 13 | 15 => &[Condition::Status(500)],
        3 | 9 | 11 => &[Condition::Status(400)],
        4 => &[Condition::Timeout],
        5 => &[Condition::Status(404)],
        6 | 10 => &[Condition::Status(409)],
        7 => &[Condition::Status(403)],
        8 => &[Condition::Status(429)],
        12 => &[Condition::Status(501)],
        14 => UNAVAILABLE,
        16 => &[Condition::Status(401)],
        _ => return None,
    })
}
