//! A topology written back as YAML (schema version 1): what `retrylint
//! import` prints. Every value is written out in full (a preset's values
//! too, so the file says what runs), and each value that came from a source
//! file carries a comment naming that file and line, so a reader knows where
//! to change it. Loading the output gives the same figures as the model it
//! was written from: circuit breakers, hedging and queueing capacities
//! included, in the schema `topology::schema` reads (docs/topology.md;
//! `capacity_schema`).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::model::{
    Call, Discipline, Latency, Layer, LevelSetting, Observed, ObservedLatency, Pos, Queueing,
    Topology,
};
use crate::input::duration::format as dur;
use crate::input::quote::scalar as quote;
use crate::policy::{
    BackoffKind, BreakerSpec, BreakerWindow, BudgetSpec, HedgingPolicy, Jitter, RetryPolicy,
};

/// One call's measured attempts: `(from, to, mean, most, calls)`.
pub(crate) type MeasuredCall = (String, String, f64, u32, u64);
/// Calls' measured attempts.
pub type Measured = [MeasuredCall];
/// Measured attempts by (from, to).
type ByCall<'t> = HashMap<(&'t str, &'t str), &'t MeasuredCall>;

pub fn write(t: &Topology, measured: &Measured) -> String {
    // Looked up per call: a trace of 40,000 services in a chain has as many
    // calls, and a scan of the list for each was most of an import's time.
    let mut seen: ByCall = HashMap::with_capacity(measured.len());
    for m in measured {
        seen.entry((m.0.as_str(), m.1.as_str())).or_insert(m);
    }
    let mut observed: HashMap<(usize, usize), Vec<&Observed>> = HashMap::new();
    for o in &t.observed {
        observed.entry((o.from, o.to)).or_default().push(o);
    }
    let mut w = Writer {
        t,
        out: String::new(),
        seen,
        observed,
    };
    w.out.push_str("# Written by `retrylint import`: edit freely. A comment names the file and\n# line each imported value came from.\n");
    let files: Vec<&str> = t.origins.iter().map(|o| o.file.as_str()).collect();
    if !files.is_empty() {
        let _ = writeln!(w.out, "# Sources: {}", files.join(", "));
    }
    w.out.push_str("version: 1\n");
    let _ = writeln!(w.out, "name: {}", quote(&t.name));
    match t.entries.as_slice() {
        [_, _, ..] => {
            let names: Vec<String> = t
                .entries
                .iter()
                .map(|&e| quote(&t.services[e].name))
                .collect();
            let _ = writeln!(w.out, "entry: [{}]", names.join(", "));
        }
        _ => {
            let _ = writeln!(w.out, "entry: {}", quote(&t.services[t.entry].name));
        }
    }
    if let Some(d) = t.deadline {
        let line = format!("deadline: {}", dur(d.value));
        w.line(0, &line, Some(d.pos));
    }
    if let Some(c) = &t.client {
        w.out.push_str("client:\n");
        w.layer_body(2, c);
    }
    w.lint();
    w.out.push_str("services:\n");
    let latency: HashMap<usize, &ObservedLatency> =
        t.observed_latency.iter().map(|l| (l.service, l)).collect();
    for (i, s) in t.services.iter().enumerate() {
        w.line(2, &format!("{}:", quote(&s.name)), Some(s.pos));
        if s.latency != Latency::fixed(Latency::DEFAULT, None) {
            let l = &s.latency;
            let text = match l.exponential_mean {
                Some(m) => format!("latency: {{ distribution: exponential, mean: {} }}", dur(m)),
                None if l.p50 == l.p99 => format!("latency: {}", dur(l.p50)),
                None => format!("latency: {{ p50: {}, p99: {} }}", dur(l.p50), dur(l.p99)),
            };
            w.line(4, &text, l.pos);
        }
        if let Some(c) = s.capacity {
            w.line(4, &format!("capacity: {}", c.value), Some(c.pos));
        }
        if let Some(q) = &s.queueing {
            w.line(4, &format!("capacity: {}", queueing(&q.value)), Some(q.pos));
        }
        if s.deadline_propagation {
            w.out.push_str("    deadline_propagation: true\n");
        }
        if let Some(l) = latency.get(&i) {
            let text = format!(
                "observed: {{ source: traces, server_spans: {}, p50: {}, p99: {} }}",
                l.spans,
                dur(l.p50),
                dur(l.p99)
            );
            w.line(4, &text, Some(l.pos));
        }
        if s.calls.is_empty() {
            continue;
        }
        w.out.push_str("    calls:\n");
        for c in &s.calls {
            w.call(c);
        }
    }
    w.out
}

struct Writer<'t> {
    t: &'t Topology,
    out: String,
    /// Measured attempts by (from, to): the first entry of each pair.
    seen: ByCall<'t>,
    /// What traces or counters showed of each call, by (from, to).
    observed: HashMap<(usize, usize), Vec<&'t Observed>>,
}

impl Writer<'_> {
    /// `text` at `indent`, with a comment naming its source when it was imported.
    fn line(&mut self, indent: usize, text: &str, pos: Option<Pos>) {
        self.line_with(indent, text, pos, None);
    }

    /// The same with more words in the comment.
    fn line_with(&mut self, indent: usize, text: &str, pos: Option<Pos>, extra: Option<String>) {
        let _ = write!(self.out, "{:indent$}{text}", "");
        let mut said = Vec::new();
        if let Some(p) = pos {
            let (file, at) = self.t.locate(p);
            if file != self.t.file || self.t.source.is_empty() {
                said.push(format!("{file}:{}", at.line));
            }
        }
        said.extend(extra);
        if !said.is_empty() {
            let _ = write!(self.out, "  # {}", said.join("; "));
        }
        self.out.push('\n');
    }

    fn lint(&mut self) {
        let l = &self.t.lint;
        if l.levels.is_empty() && l.max_amplification.is_none() && l.fail_on.is_none() {
            return;
        }
        self.out.push_str("lint:\n");
        if let Some(m) = l.max_amplification {
            let _ = writeln!(self.out, "  max_amplification: {}", m.value);
        }
        if let Some(f) = l.fail_on {
            let _ = writeln!(self.out, "  fail_on: {}", level(f.value));
        }
        for (code, lvl) in &l.levels {
            let _ = writeln!(self.out, "  {}: {}", quote(&code.value), level(*lvl));
        }
    }

    fn call(&mut self, c: &Call) {
        let t = self.t;
        let from = &t.services[c.from].name;
        let to = &t.services[c.to].name;
        let seen = self
            .seen
            .get(&(from.as_str(), to.as_str()))
            .map(|(_, _, mean, most, calls)| {
                format!(
                    "traces: {mean:.2} attempts per call seen (at most {most}, over {calls} calls)"
                )
            });
        self.line_with(6, &format!("- to: {}", quote(to)), Some(c.pos), seen);
        let method = match &c.path {
            Some(p) => format!("method: {}", quote(&format!("{} {p}", c.method.value))),
            None => format!("method: {}", c.method.value),
        };
        self.line(8, &method, Some(c.method.pos));
        if c.grpc {
            // Known from the sources (a Service port, a trace): written so
            // that `check` of this file reads the call as they did.
            self.out.push_str("        protocol: grpc\n");
        }
        if c.idempotent != super::schema::method_is_idempotent(&c.method.value) {
            let _ = writeln!(self.out, "        idempotent: {}", c.idempotent);
        }
        if c.idempotency_key {
            self.out.push_str("        idempotency_key: true\n");
        }
        if c.parallel {
            self.out.push_str("        parallel: true\n");
        }
        let observed: Vec<&Observed> = self
            .observed
            .get(&(c.from, c.to))
            .map(|v| v.to_vec())
            .unwrap_or_default();
        match observed.as_slice() {
            [] => {}
            [o] => self.line(8, &format!("observed: {}", observed_text(o)), Some(o.pos)),
            several => {
                self.out.push_str("        observed:\n");
                for o in several {
                    self.line(10, &format!("- {}", observed_text(o)), Some(o.pos));
                }
            }
        }
        let mut layers = c.layers.iter();
        if let Some(app) = layers.next() {
            self.layer_body(8, app);
        }
        let vias: Vec<&Layer> = layers.collect();
        if !vias.is_empty() {
            self.out.push_str("        via:\n");
            for l in vias {
                let preset = l.preset.as_ref().map(|p| format!("the `{p}` preset"));
                self.line_with(
                    10,
                    &format!("- name: {}", quote(&l.name)),
                    Some(l.pos),
                    preset,
                );
                self.layer_body(12, l);
            }
        }
    }

    /// A layer's `timeout:`, `circuit_breaker:`, `hedging:` and `retry:` at
    /// `indent`.
    fn layer_body(&mut self, indent: usize, l: &Layer) {
        if let Some(tm) = l.timeout {
            self.line(indent, &format!("timeout: {}", dur(tm.value)), Some(tm.pos));
        }
        if let Some(b) = &l.breaker {
            let text = format!("circuit_breaker: {}", breaker(&b.value));
            self.line(indent, &text, Some(b.pos));
        }
        if let Some(h) = &l.hedging {
            self.line(
                indent,
                &format!("hedging: {}", hedging(&h.value)),
                Some(h.pos),
            );
        }
        // A layer that only times out (the app's own, Istio's route timeout).
        if l.policy == RetryPolicy::default() && l.preset.is_none() {
            return;
        }
        let p = &l.policy;
        // A field no source wrote (Envoy's default backoff under Istio)
        // comes from the policy that implies it.
        let mut s = l.spans;
        for f in [
            &mut s.backoff,
            &mut s.honor_retry_after,
            &mut s.retry_on,
            &mut s.max_attempts,
        ] {
            *f = f.or(l.spans.policy);
        }
        self.line(indent, "retry:", s.policy);
        let i = indent + 2;
        self.line(
            i,
            &format!("max_attempts: {}", p.attempts_text()),
            s.max_attempts,
        );
        let b = &p.backoff;
        let backoff = match b.kind {
            BackoffKind::None => "backoff: { kind: none }".to_owned(),
            kind => {
                let mut text =
                    format!("backoff: {{ kind: {}, base: {}", kind.as_str(), dur(b.base));
                if kind == BackoffKind::Exponential {
                    let _ = write!(text, ", multiplier: {}", b.multiplier);
                }
                if let Some(cap) = b.cap {
                    let _ = write!(text, ", cap: {}", dur(cap));
                }
                let jitter = match b.jitter {
                    Jitter::Proportional { ratio } => {
                        format!("{}, jitter_ratio: {ratio}", b.jitter.as_str())
                    }
                    other => other.as_str().to_owned(),
                };
                let _ = write!(text, ", jitter: {jitter} }}");
                text
            }
        };
        self.line(i, &backoff, s.backoff);
        let on: Vec<String> = p.retry_on.0.iter().map(|c| c.to_string()).collect();
        self.line(i, &format!("retry_on: [{}]", on.join(", ")), s.retry_on);
        self.line(
            i,
            &format!("honor_retry_after: {}", p.honor_retry_after),
            s.honor_retry_after,
        );
        if let Some(budget) = &p.budget {
            let text = match budget {
                BudgetSpec::Ratio {
                    ratio,
                    min_per_second,
                    window,
                } => format!(
                    "budget: {{ kind: ratio, ratio: {ratio}, min_per_second: {min_per_second}, window: {} }}",
                    dur(*window)
                ),
                BudgetSpec::TokenBucket {
                    capacity,
                    retry_cost,
                    timeout_cost,
                    success_refund,
                } => format!(
                    "budget: {{ kind: token_bucket, capacity: {capacity}, retry_cost: {retry_cost}, timeout_cost: {timeout_cost}, success_refund: {success_refund} }}"
                ),
                BudgetSpec::GrpcThrottling {
                    max_tokens,
                    token_ratio,
                } => format!(
                    "budget: {{ kind: grpc_throttling, max_tokens: {max_tokens}, token_ratio: {token_ratio} }}"
                ),
                BudgetSpec::Concurrency { max } => {
                    format!("budget: {{ kind: concurrency, max: {max} }}")
                }
            };
            self.line(i, &text, s.budget);
        }
    }
}

/// A call's `observed:` figures as `topology::observed_schema` reads them
/// back: every figure the rules use, so a later `check` of the file finds
/// what `check --from` found.
fn observed_text(o: &Observed) -> String {
    match &o.counted {
        None => format!(
            "{{ source: traces, calls: {}, attempts_per_call: {}, max_attempts: {}, proxy_max: {}, client_max: {}, resend_max: {}, failed_calls: {} }}",
            o.figures.calls,
            o.figures.attempts_mean,
            o.figures.attempts_max,
            o.figures.proxy_max,
            o.figures.client_max,
            o.figures.resend_max,
            o.figures.failed_calls
        ),
        Some(c) => {
            let (attempts, retries) = c.kind.keys();
            let mut text = format!(
                "{{ source: {}, {}: {}",
                c.kind.source(),
                c.kind.subject(),
                quote(&c.cluster)
            );
            let _ = write!(
                text,
                ", calls: {}, attempts_per_call: {:.2}, {attempts}: {}",
                o.figures.calls, o.figures.attempts_mean, c.attempts
            );
            if let Some(n) = c.unattached {
                let _ = write!(text, ", unattached: {n}");
            }
            let _ = write!(text, ", {retries}: {}", c.retries);
            if let Some(n) = c.limit_exceeded {
                let _ = write!(text, ", limit_exceeded: {n}");
            }
            if let Some(n) = c.overflow {
                let _ = write!(text, ", overflow: {n}");
            }
            let _ = write!(text, ", window: {} }}", quote(&c.window));
            text
        }
    }
}

/// `{ workers: 10, queue: 100, ... }`, every field written.
fn queueing(q: &Queueing) -> String {
    let mut text = format!(
        "{{ workers: {}, queue: {}, discipline: {}, reject_status: {}",
        q.workers,
        q.queue,
        match q.discipline {
            Discipline::Fifo => "fifo",
            Discipline::Lifo => "lifo",
        },
        q.reject_status
    );
    if let Some(d) = q.retry_after {
        let _ = write!(text, ", retry_after: {}", dur(d));
    }
    let _ = write!(text, ", drop_expired: {} }}", q.drop_expired);
    text
}

/// A breaker with every field written (the defaults are Resilience4j's, not
/// what a reader expects).
fn breaker(b: &BreakerSpec) -> String {
    let window = match b.window {
        BreakerWindow::Calls(n) => format!("{{ calls: {n} }}"),
        BreakerWindow::Time(d) => dur(d),
    };
    format!(
        "{{ failure_rate: {}, window: {window}, min_calls: {}, open_for: {}, open_jitter: {}, half_open_calls: {}, counts: {}, position: {} }}",
        b.failure_rate,
        b.min_calls,
        dur(b.open_for),
        b.open_jitter,
        b.half_open_calls,
        b.counts.as_str(),
        b.position.as_str(),
    )
}

fn hedging(h: &HedgingPolicy) -> String {
    let non_fatal: Vec<String> = h.non_fatal.0.iter().map(|c| c.to_string()).collect();
    format!(
        "{{ max_attempts: {}, delay: {}, non_fatal: [{}] }}",
        h.max_attempts,
        dur(h.delay),
        non_fatal.join(", ")
    )
}

fn level(l: LevelSetting) -> &'static str {
    match l {
        LevelSetting::Error => "error",
        LevelSetting::Warning => "warning",
        LevelSetting::Info => "info",
        LevelSetting::Allow => "allow",
    }
}
