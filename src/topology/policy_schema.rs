//! Reading retry policies: inline maps, preset names, and presets with
//! overrides (`{ preset: aws-sdk-standard, max_attempts: 4 }`), where an
//! override of `backoff` or `budget` changes only the fields it names.

use std::collections::HashMap;

use crate::policy::names::one_of;
use crate::policy::{
    Backoff, BackoffKind, BudgetKind, BudgetSpec, Condition, Jitter, MAX_ATTEMPTS_LIMIT, RetryOn,
    RetryPolicy,
};

use super::model::PolicySpans;
use super::presets::Presets;
use crate::input::error::{LoadError, nearest};
use crate::input::fields::Fields;
use crate::input::yaml::{self, Node, Pos, Value};

const POLICY_KEYS: &[&str] = &[
    "preset",
    "max_attempts",
    "backoff",
    "retry_on",
    "honor_retry_after",
    "budget",
    "description",
];
const BACKOFF_KEYS: &[&str] = &[
    "kind",
    "base",
    "multiplier",
    "cap",
    "jitter",
    "jitter_ratio",
];
const CONDITION_NAMES: &[&str] = &[
    "timeout", "connect", "reset", "4xx", "5xx", "429", "500", "502", "503", "504",
];

/// A policy read from the topology, with where its fields were written.
#[derive(Debug, Clone)]
pub(crate) struct ReadPolicy {
    pub policy: RetryPolicy,
    pub spans: PolicySpans,
    pub preset: Option<String>,
}

/// Reads policies, parsing each preset once.
pub(crate) struct PolicyReader<'p> {
    presets: &'p Presets,
    cache: HashMap<String, RetryPolicy>,
}

impl<'p> PolicyReader<'p> {
    pub(super) fn new(presets: &'p Presets) -> Self {
        PolicyReader {
            presets,
            cache: HashMap::new(),
        }
    }

    /// A `retry:` value in `f`'s file; `at` is where the policy is named (the
    /// `retry:` key), which findings about the whole policy point at.
    pub(super) fn read(
        &mut self,
        f: Fields,
        at: Pos,
        node: &Node,
    ) -> Result<ReadPolicy, LoadError> {
        let all_at = |pos: Pos| PolicySpans {
            policy: Some(pos),
            max_attempts: Some(pos),
            backoff: Some(pos),
            backoff_kind: Some(pos),
            jitter: Some(pos),
            cap: Some(pos),
            retry_on: Some(pos),
            honor_retry_after: Some(pos),
            budget: Some(pos),
        };
        if let Value::Str(name) = &node.value {
            let policy = self.preset(f, name, node.pos)?;
            return Ok(ReadPolicy {
                policy,
                spans: all_at(at),
                preset: Some(name.to_string()),
            });
        }
        let m = f.map(node, "a retry policy", POLICY_KEYS).map_err(|e| {
            if e.message.contains("unknown key `timeout`") {
                e.with_help("the per-attempt timeout belongs to the call or `via` layer, not to its retry policy: move `timeout:` one level up")
            } else if e.message.contains("unknown key `attempts`") {
                e.with_help("write `max_attempts:`, the total attempts including the first (Istio's `attempts: 2` is `max_attempts: 3`)")
            } else {
                e
            }
        })?;
        let (mut policy, mut spans, preset) = match m.get("preset") {
            Some(p) => {
                let name = f.str(p, "`preset`")?;
                let key = m.key_pos("preset");
                (
                    self.preset(f, name, p.pos)?,
                    all_at(key),
                    Some(name.to_owned()),
                )
            }
            None => {
                if m.get("max_attempts").is_none() {
                    return Err(f
                        .error(node.pos, "a retry policy needs `max_attempts`")
                        .with_help("add `max_attempts: 3` (total attempts, including the first), or name a preset"));
                }
                (RetryPolicy::default(), PolicySpans::default(), None)
            }
        };
        spans.policy = Some(at);
        apply(f, &m_entries(&m), &mut policy, &mut spans)?;
        Ok(ReadPolicy {
            policy,
            spans,
            preset,
        })
    }

    fn preset(&mut self, f: Fields, name: &str, at: Pos) -> Result<RetryPolicy, LoadError> {
        if let Some(p) = self.cache.get(name) {
            return Ok(p.clone());
        }
        let Some(source) = self.presets.get(name) else {
            let err = f.error(at, format!("unknown preset `{name}`"));
            return Err(match nearest(name, self.presets.names()) {
                Some(near) => err.with_help(format!("did you mean `{near}`?")),
                None => err.with_help(format!(
                    "known presets: {}; add your own with --policies DIR",
                    self.presets.names().collect::<Vec<_>>().join(", ")
                )),
            });
        };
        let pf = Fields::new(&source.file, &source.text);
        let root = yaml::parse_config(&source.text)
            .map_err(|e| crate::input::read::syntax_error_in(&source.file, &source.text, e))?;
        let m = pf.map(&root, "a preset", POLICY_KEYS)?;
        if m.get("preset").is_some() {
            return Err(pf.error(root.pos, "a preset cannot name another preset"));
        }
        if m.get("max_attempts").is_none() {
            return Err(pf
                .error(root.pos, "a preset needs `max_attempts`")
                .with_help("add `max_attempts: N`, the total attempts including the first"));
        }
        let mut policy = RetryPolicy::default();
        apply(pf, &m_entries(&m), &mut policy, &mut PolicySpans::default())?;
        self.cache.insert(name.to_owned(), policy.clone());
        Ok(policy)
    }
}

fn m_entries<'a>(m: &crate::input::fields::MapView<'a>) -> Vec<(&'a Node, &'a Node)> {
    m.entries().collect()
}

fn key_of(k: &Node) -> &str {
    match &k.value {
        Value::Str(s) => s,
        _ => "",
    }
}

/// Applies the fields of a policy map over `policy`.
fn apply(
    f: Fields,
    entries: &[(&Node, &Node)],
    policy: &mut RetryPolicy,
    spans: &mut PolicySpans,
) -> Result<(), LoadError> {
    for (k, v) in entries {
        match key_of(k) {
            "max_attempts" => {
                policy.max_attempts = read_max_attempts(f, v)?;
                spans.max_attempts = Some(k.pos);
            }
            "backoff" => {
                read_backoff(f, v, &mut policy.backoff, spans)?;
                spans.backoff = Some(k.pos);
            }
            "retry_on" => {
                policy.retry_on = read_retry_on(f, v)?;
                spans.retry_on = Some(k.pos);
            }
            "honor_retry_after" => {
                policy.honor_retry_after = f.bool(v, "honor_retry_after")?;
                spans.honor_retry_after = Some(k.pos);
            }
            "budget" => {
                policy.budget = read_budget(f, v, policy.budget.as_ref())?;
                spans.budget = Some(k.pos);
            }
            _ => {}
        }
    }
    Ok(())
}

/// A count of attempts, or `unlimited` (retry until the deadline, the
/// caller's timeout or a budget stops it).
fn read_max_attempts(f: Fields, v: &Node) -> Result<u32, LoadError> {
    match &v.value {
        Value::Str(s) if s == "unlimited" => return Ok(RetryPolicy::UNLIMITED),
        Value::Str(s) => {
            let err = f.error(
                v.pos,
                format!("`max_attempts: {s}` is not a count of attempts"),
            );
            let near = ["unlimited", "infinite", "infinity", "forever", "unbounded"]
                .contains(&s.to_ascii_lowercase().as_str())
                || nearest(s, ["unlimited"]).is_some();
            return Err(if near {
                err.with_help("did you mean `unlimited`? (retries until a timeout, the deadline or a budget stops them)")
            } else {
                err.with_help(format!(
                    "write a whole number from 1 to {MAX_ATTEMPTS_LIMIT} (attempts including the first), or `unlimited`"
                ))
            });
        }
        Value::Int(n) if *n < 1 => {
            return Err(f
                .error(v.pos, format!("`max_attempts: {n}` is less than 1"))
                .with_help("max_attempts counts every attempt including the first: write `max_attempts: 1` for no retries"));
        }
        _ => {}
    }
    let n = f
        .int(v, "max_attempts", 1, i128::from(MAX_ATTEMPTS_LIMIT))
        .map_err(|e| {
            e.with_help("max_attempts is the total attempts including the first; for a count bounded only by time (Kafka's retries, Temporal's activities) write `unlimited`")
        })?;
    Ok(n as u32)
}

fn read_backoff(
    f: Fields,
    node: &Node,
    b: &mut Backoff,
    spans: &mut PolicySpans,
) -> Result<(), LoadError> {
    // `backoff: none` is shorthand for no wait.
    if let Value::Str(s) = &node.value {
        b.kind = backoff_kind(f, node, s)?;
        spans.backoff_kind = Some(node.pos);
        return Ok(());
    }
    let m = f.map(node, "a backoff", BACKOFF_KEYS)?;
    let was_none = b.kind == BackoffKind::None;
    match m.entry("kind") {
        Some((key, k)) => {
            b.kind = backoff_kind(f, k, f.str(k, "`kind`")?)?;
            spans.backoff_kind = Some(key.pos);
        }
        // A backoff written without a kind, over no backoff, is exponential.
        None if was_none => {
            b.kind = BackoffKind::Exponential;
            spans.backoff_kind = Some(node.pos);
        }
        None => {}
    }
    if let Some(v) = m.get("base") {
        b.base = f.duration(v, "base")?;
    } else if was_none && b.kind != BackoffKind::None {
        return Err(f
            .error(node.pos, "a backoff needs `base`")
            .with_help("add `base: 100ms`, the first wait"));
    }
    if let Some(v) = m.get("multiplier") {
        let x = f.number(v, "multiplier")?;
        if !(1.0..=100.0).contains(&x) {
            return Err(f
                .error(v.pos, format!("`multiplier: {x}` is outside 1..=100"))
                .with_help("exponential backoff grows by the multiplier each retry; 2 is usual"));
        }
        b.multiplier = x;
    }
    if let Some(v) = m.get("cap") {
        b.cap = Some(f.duration(v, "cap")?);
        spans.cap = Some(m.key_pos("cap"));
    }
    if let Some(v) = m.get("jitter") {
        let name = f.str(v, "`jitter`")?;
        let ratio = match b.jitter {
            Jitter::Proportional { ratio } => ratio,
            _ => Jitter::DEFAULT_RATIO,
        };
        b.jitter = match name.parse::<Jitter>() {
            Ok(Jitter::Proportional { .. }) => Jitter::Proportional { ratio },
            Ok(jitter) => jitter,
            Err(_) => {
                let kinds = Jitter::NAMES.iter().copied();
                let err = f.error(v.pos, format!("unknown jitter `{name}`"));
                return Err(match nearest(name, kinds) {
                    Some(n) => err.with_help(format!("did you mean `{n}`?")),
                    None => err.with_help(format!("use {}", one_of(Jitter::NAMES.iter().copied()))),
                });
            }
        };
        spans.jitter = Some(m.key_pos("jitter"));
    }
    if let Some(v) = m.get("jitter_ratio") {
        // Like `multiplier` for other kinds, a ratio beside another jitter has
        // no effect, but it is a valid field: topologies written after the
        // first schema's example carry one beside other jitters.
        let r = f.ratio(v, "jitter_ratio")?;
        if let Jitter::Proportional { ratio } = &mut b.jitter {
            *ratio = r;
        }
    }
    Ok(())
}

fn backoff_kind(f: Fields, node: &Node, s: &str) -> Result<BackoffKind, LoadError> {
    // `fixed` is what some libraries call a constant backoff.
    let name = if s == "fixed" { "constant" } else { s };
    if let Ok(kind) = name.parse::<BackoffKind>() {
        return Ok(kind);
    }
    if matches!(
        s.parse::<Jitter>(),
        Ok(Jitter::Full | Jitter::Equal | Jitter::Decorrelated)
    ) {
        return Err(f
            .error(node.pos, format!("`{s}` is a jitter, not a backoff kind"))
            .with_help(format!(
                "write `kind: {}` and `jitter: {s}`",
                BackoffKind::Exponential.as_str()
            )));
    }
    let err = f.error(node.pos, format!("unknown backoff kind `{s}`"));
    Err(match nearest(s, BackoffKind::NAMES.iter().copied()) {
        Some(n) => err.with_help(format!("did you mean `{n}`?")),
        None => err.with_help(format!(
            "use {}",
            one_of(BackoffKind::NAMES.iter().copied())
        )),
    })
}

pub(super) fn read_retry_on(f: Fields, node: &Node) -> Result<RetryOn, LoadError> {
    let mut conditions = Vec::new();
    for item in f.list(node) {
        let text = match &item.value {
            Value::Int(n) => n.to_string(),
            Value::Str(s) => s.to_string(),
            _ => return Err(f.expected(item, "a status code or outcome name in `retry_on`")),
        };
        let c: Condition = text.parse().map_err(|_| {
            let err = f.error(item.pos, format!("unknown retry condition `{text}`"));
            let envoy = match text.as_str() {
                // refused-stream and reset-before-request: the request was
                // never processed, as with a refused connection.
                "connect-failure" | "refused" | "connection-refused" | "refused-stream"
                | "reset-before-request" => Some("connect"),
                "gateway-error" => Some("502, 503 and 504"),
                "retriable-4xx" => Some("409"),
                "unavailable" => Some("503"),
                "deadline-exceeded" => Some("timeout"),
                _ => None,
            };
            match envoy.or_else(|| nearest(&text, CONDITION_NAMES.iter().copied())) {
                Some(n) => err.with_help(format!("did you mean `{n}`?")),
                None => err.with_help(
                    "use timeout, connect, reset, a status code such as 503, or a class such as 5xx",
                ),
            }
        })?;
        if !conditions.contains(&c) {
            conditions.push(c);
        }
    }
    Ok(RetryOn(conditions))
}

fn read_budget(
    f: Fields,
    node: &Node,
    base: Option<&BudgetSpec>,
) -> Result<Option<BudgetSpec>, LoadError> {
    if matches!(node.value, Value::Null) {
        return Ok(None);
    }
    if let Value::Str(s) = &node.value
        && s == "none"
    {
        return Ok(None);
    }
    let all = [
        "kind",
        "ratio",
        "min_per_second",
        "window",
        "capacity",
        "retry_cost",
        "timeout_cost",
        "success_refund",
        "max_tokens",
        "token_ratio",
        "max",
    ];
    let m = f.map(node, "a budget", &all)?;
    let kind = match m.get("kind") {
        Some(k) => {
            let name = f.str(k, "`kind`")?;
            match name.parse::<BudgetKind>() {
                Ok(kind) => kind,
                Err(_) => {
                    let err = f.error(k.pos, format!("unknown budget kind `{name}`"));
                    return Err(match nearest(name, BudgetKind::NAMES.iter().copied()) {
                        Some(n) => err.with_help(format!("did you mean `{n}`?")),
                        None => err.with_help(format!(
                            "use {}",
                            one_of(BudgetKind::NAMES.iter().copied())
                        )),
                    });
                }
            }
        }
        None => match base {
            Some(b) => b.kind(),
            None => {
                let kinds = BudgetKind::NAMES.iter().map(|n| format!("`kind: {n}`"));
                let kinds: Vec<String> = kinds.collect();
                return Err(f
                    .error(node.pos, "a budget needs `kind`")
                    .with_help(format!("add {}", one_of(kinds.iter().map(String::as_str)))));
            }
        },
    };
    // Overrides of a preset's budget of the same kind start from its values.
    let base = base.filter(|b| b.kind() == kind);
    let (allowed, spec): (&[&str], BudgetSpec) = match kind {
        BudgetKind::Ratio => {
            let (mut ratio, mut min, mut window) = match base {
                Some(BudgetSpec::Ratio {
                    ratio,
                    min_per_second,
                    window,
                }) => (Some(*ratio), *min_per_second, *window),
                _ => (None, 0.0, BudgetSpec::DEFAULT_WINDOW),
            };
            if let Some(v) = m.get("ratio") {
                ratio = Some(f.ratio(v, "ratio")?);
            }
            if let Some(v) = m.get("min_per_second") {
                min = f.number(v, "min_per_second")?;
                if min < 0.0 {
                    return Err(f.error(v.pos, "`min_per_second` is negative; write 0 or more"));
                }
            }
            if let Some(v) = m.get("window") {
                window = f.duration(v, "window")?;
                if window.is_zero() {
                    return Err(f.error(v.pos, "`window` is zero; write e.g. `window: 10s`"));
                }
            }
            let Some(ratio) = ratio else {
                return Err(f
                    .error(node.pos, "a ratio budget needs `ratio`")
                    .with_help("add `ratio: 0.1` (retries at most 10 % of requests)"));
            };
            (
                &["kind", "ratio", "min_per_second", "window"],
                BudgetSpec::Ratio {
                    ratio,
                    min_per_second: min,
                    window,
                },
            )
        }
        BudgetKind::TokenBucket => {
            let (mut capacity, mut retry_cost, mut timeout_cost, mut success_refund) = match base {
                Some(BudgetSpec::TokenBucket {
                    capacity,
                    retry_cost,
                    timeout_cost,
                    success_refund,
                }) => (*capacity, *retry_cost, *timeout_cost, *success_refund),
                _ => (500, 5, 10, 1),
            };
            let max = i128::from(u32::MAX);
            if let Some(v) = m.get("capacity") {
                capacity = f.int(v, "capacity", 0, max)? as u32;
            }
            if let Some(v) = m.get("retry_cost") {
                retry_cost = f.int(v, "retry_cost", 1, max)? as u32;
            }
            if let Some(v) = m.get("timeout_cost") {
                timeout_cost = f.int(v, "timeout_cost", 1, max)? as u32;
            }
            if let Some(v) = m.get("success_refund") {
                success_refund = f.int(v, "success_refund", 0, max)? as u32;
            }
            (
                &[
                    "kind",
                    "capacity",
                    "retry_cost",
                    "timeout_cost",
                    "success_refund",
                ],
                BudgetSpec::TokenBucket {
                    capacity,
                    retry_cost,
                    timeout_cost,
                    success_refund,
                },
            )
        }
        BudgetKind::GrpcThrottling => {
            let (mut max_tokens, mut token_ratio) = match base {
                Some(BudgetSpec::GrpcThrottling {
                    max_tokens,
                    token_ratio,
                }) => (*max_tokens, *token_ratio),
                _ => (10.0, 0.1),
            };
            if let Some(v) = m.get("max_tokens") {
                max_tokens = f.number(v, "max_tokens")?;
                if !(0.0..=1000.0).contains(&max_tokens) || max_tokens == 0.0 {
                    return Err(f
                        .error(
                            v.pos,
                            format!("`max_tokens: {max_tokens}` is outside 0..=1000"),
                        )
                        .with_help("gRPC A6 requires 0 < max_tokens <= 1000"));
                }
            }
            if let Some(v) = m.get("token_ratio") {
                token_ratio = f.ratio(v, "token_ratio")?;
            }
            (
                &["kind", "max_tokens", "token_ratio"],
                BudgetSpec::GrpcThrottling {
                    max_tokens,
                    token_ratio,
                },
            )
        }
        BudgetKind::Concurrency => {
            let mut max = match base {
                Some(BudgetSpec::Concurrency { max }) => *max,
                // Envoy's cluster circuit breaker default.
                _ => 3,
            };
            if let Some(v) = m.get("max") {
                max = f.int(v, "max", 0, i128::from(u32::MAX))? as u32;
            }
            (&["kind", "max"], BudgetSpec::Concurrency { max })
        }
    };
    for (k, _) in m.entries() {
        let key = key_of(k);
        if !allowed.contains(&key) {
            return Err(f
                .error(k.pos, format!("`{key}` does not apply to a {kind} budget"))
                .with_help(format!("a {kind} budget takes: {}", allowed.join(", "))));
        }
    }
    Ok(Some(spec))
}
