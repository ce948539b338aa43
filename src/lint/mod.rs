//! Static analysis: the rules of the catalogue (docs/rules.md) over the call graph, and the
//! figures they read. Nothing here prints; `check` returns plain data.

mod edit;
mod entries;
pub mod finding;
pub(crate) mod hang_text;
mod intent;
pub mod levels;
mod order;
pub mod rule;
pub mod rules;

use std::time::Duration;

use serde::Serialize;

use crate::topology::Topology;

pub use crate::prediction::{self, Analysis, Count};
pub(crate) use edit::{Edit, EditKind};
pub use entries::affordable;
pub(crate) use finding::{CallRef, Finding};
pub use finding::{Fix, Severity};
pub(crate) use intent::{Change, Intent, LayerAt, Section};
pub use levels::{CliLevels, Config, Level, ResolveError};
pub use rule::Rule;
pub use rules::RULES;

/// One row of the amplification table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AmplificationRow {
    pub service: String,
    /// Attempts reaching the service per user request when every call fails.
    pub worst_case: f64,
    /// The exact figure as a string (JSON doubles lose precision beyond 2⁵³).
    pub worst_case_exact: String,
    /// `worst_case_exact` is a lower bound: the count saturated u128.
    pub saturated: bool,
    /// The same with every retry budget in its steady state.
    pub with_budgets: f64,
    /// The same under a sustained total outage once every circuit breaker is
    /// open, half-open probes counted, at `CheckReport::reference_rate` user
    /// requests per second; equal to `with_budgets` without breakers.
    pub with_breakers: f64,
    /// Attempts reaching the service per user request when nothing fails:
    /// one per call path, times the expected copies of each hedged call.
    pub healthy: f64,
    /// Worst-case time for the service to answer at the p99 latencies (the
    /// 1 ms default where none is declared), in milliseconds.
    pub worst_response_ms: f64,
    /// Worst-case time for the service to answer when its callees hang,
    /// each attempt lasting its whole timeout, in milliseconds; `null` when
    /// no timeout bounds it (`untimed_call` says where: RL011).
    pub worst_response_if_hang_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untimed_call: Option<CallRef>,
    /// The service or one below it declares a latency: the tables show
    /// `worst_response_ms` beside the hang figure only then.
    #[serde(skip)]
    pub(crate) latency_declared: bool,
    pub reachable: bool,
    /// With several entries, the entry these figures are from: the one
    /// whose user request sends the most attempts here. Absent with one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
}

impl AmplificationRow {
    /// The worst case as every output writes it: `486×`, exact however
    /// large; `≈3.4e38×` once the count saturated.
    pub(crate) fn worst_case_text(&self) -> String {
        if self.saturated {
            format!("≈{:.1e}×", self.worst_case)
        } else {
            [self.worst_case_exact.as_str(), "×"].concat()
        }
    }
}

/// A call for graph drawings: attempts per call and whether it lies on a hot path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EdgeRow {
    pub from: String,
    pub to: String,
    /// Product of the call's layers' max_attempts.
    pub attempts: f64,
    /// Names of the layers that retry, outermost first.
    pub(crate) retrying_layers: Vec<String>,
    /// On the hot path to a service over the amplification limit.
    pub hot: bool,
    /// Worst-case time of the call from the caller's view at the p99
    /// latencies, in milliseconds.
    pub worst_response_ms: f64,
    /// The same when the callee hangs, each attempt lasting its whole
    /// timeout; `null` when no layer of the call has one (RL011).
    pub worst_response_if_hang_ms: Option<f64>,
    /// Layers whose huge or `unlimited` count time bounds, and by what:
    /// `attempts` counts them so. Absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub time_bounded: Vec<TimeBoundedLayer>,
}

/// A layer whose attempts the analysis bounds by time rather than by count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeBoundedLayer {
    pub layer: String,
    /// As written: a count, or `unlimited`.
    pub max_attempts: String,
    /// The attempts the figures use.
    pub attempts: u32,
    /// `true` when the count is an estimate on the mean waits (full jitter
    /// can wait nothing, so no count is sure).
    pub estimate: bool,
    /// How long the layer can go on starting attempts, in milliseconds.
    pub within_ms: f64,
    /// What stops it: the deadline, a caller's propagated deadline, an outer
    /// layer's timeout.
    pub bounded_by: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

/// Everything `check` found, for the reporters.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub topology: String,
    pub file: String,
    /// The topology's text, shared with the topology.
    pub source: std::sync::Arc<String>,
    /// Source files merged into the topology (`--from`, `sources:`): their
    /// names and texts, for the snippets of findings that point into them.
    pub sources: Vec<(String, String)>,
    /// The first entry (`entries[0]`).
    pub entry: String,
    /// Every entry; each was analysed as the only one and the figures are
    /// the worst over them (`lint::entries`).
    pub entries: Vec<String>,
    /// Which of `entries` the `entry_*` figures are from: the slowest
    /// user request.
    pub(crate) worst_entry: usize,
    pub findings: Vec<Finding>,
    pub amplification: Vec<AmplificationRow>,
    pub edges: Vec<EdgeRow>,
    pub summary: Summary,
    pub fail_on: Severity,
    pub max_amplification: f64,
    /// Worst case of one user request through the client layer.
    pub(crate) entry_worst: Duration,
    /// The same when callees hang; `None` when no timeout bounds it, and
    /// then the call without one.
    pub(crate) entry_hang: Option<Duration>,
    pub(crate) entry_untimed: Option<CallRef>,
    /// Some service declares a latency: the p99-based figures are then
    /// shown beside the hang figures.
    pub(crate) latency_declared: bool,
    /// Some service leaves its latency at the 1 ms default.
    pub(crate) latency_defaulted: bool,
    pub deadline: Option<Duration>,
    /// User requests per second into the entry that `with_breakers` assumes.
    pub(crate) reference_rate: f64,
    /// Some layer has a circuit breaker (`with_breakers` differs from
    /// `with_budgets` somewhere only then).
    pub has_breakers: bool,
    /// Some call hedges (`healthy` counts more than call paths only then).
    pub has_hedging: bool,
    /// Per service (indexed like `amplification`), its caller on the hottest
    /// path from the entry: the routes findings are named by (`--format
    /// short`). `None` for the entry and services it does not reach.
    pub(crate) hot_caller: Vec<Option<usize>>,
}

impl CheckReport {
    /// Whether `row` is over `--max-amplification` (the same test RL001 makes).
    pub(crate) fn over_limit(&self, row: &AmplificationRow) -> bool {
        row.reachable && row.worst_case > self.max_amplification
    }

    /// Whether a finding reaches `fail_on`: exit code 1.
    pub fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.severity >= self.fail_on)
    }
}

/// Resolves a rule's intent into its finding's fix. `lint` only states what
/// a rule would change; `fix::check` passes `fix::resolve` on the file's
/// located tree.
pub(crate) type Resolve<'a> = dyn Fn(&Intent) -> Fix + Sync + 'a;

/// One rule's findings over `cx`, at `level`, with their fixes resolved by
/// `resolve` when given. The rule writes into `diagnostics`, which is left empty
/// with its capacity kept for the next rule on the thread: a rule with tens of
/// thousands of findings grows it by doubling, and each new block is memory
/// the kernel must clear.
fn findings_of(
    cx: &rule::Context,
    rule: &Rule,
    level: Severity,
    set_by_user: bool,
    resolve: Option<&Resolve>,
    diagnostics: &mut Vec<rule::Diagnostic>,
) -> Vec<Finding> {
    let t = cx.topology;
    (rule.check)(cx, diagnostics);
    diagnostics
        .drain(..)
        .map(|d| {
            // A rule's own escalation (RL007's deadline case) applies only
            // while nobody set the rule's level; a level set by the user wins,
            // even when it equals the default (`--warn RL007`).
            let severity = match d.severity {
                Some(s) if !set_by_user => s,
                _ => level,
            };
            let call = d.call.map(|i| {
                let c = &t.services[d.service].calls[i];
                Box::new(CallRef {
                    from: t.services[c.from].name.clone(),
                    to: t.services[c.to].name.clone(),
                })
            });
            // An imported value points into its own file.
            let (file, pos) = t.locate(d.pos);
            // Fixes edit the topology file only, never an imported source.
            let fix = match (&d.fix, resolve) {
                (Some(intent), Some(resolve)) if file == t.file => Some(Box::new(resolve(intent))),
                _ => None,
            };
            Finding {
                code: rule.code,
                rule: rule.name,
                severity,
                message: d.message,
                help: d.help,
                service: t.services[d.about.unwrap_or(d.service)].name.clone(),
                call,
                layer: d.layer,
                file: file.to_owned(),
                line: pos.line,
                column: pos.column,
                label: d.label,
                fix,
            }
        })
        .collect()
}

/// Runs every enabled rule over `t`; on a large topology, on up to four
/// threads (the result is the same as on one). The findings carry no fixes:
/// `fix::check` runs this with them resolved.
pub fn check(t: &Topology, config: &Config) -> CheckReport {
    check_on(t, config, threads_for(t))
}

/// The threads [`check`] shares its rules among on `t`.
pub(crate) fn threads_for(t: &Topology) -> usize {
    crate::large::rule_threads(t.calls().count())
}

/// [`check`] with its rules shared among `threads` threads.
pub fn check_on(t: &Topology, config: &Config, threads: usize) -> CheckReport {
    check_resolving(t, config, threads, None)
}

/// [`check_on`], each finding's intent made its fix by `resolve` when given
/// (the rules build their intents only then: a large topology has tens of
/// thousands of findings).
pub(crate) fn check_resolving(
    t: &Topology,
    config: &Config,
    threads: usize,
    resolve: Option<&Resolve>,
) -> CheckReport {
    if t.entries.len() > 1 {
        return entries::check_each(t, config, threads, resolve);
    }
    let analysis = Analysis::new(t);
    let cx = rule::Context {
        topology: t,
        analysis: &analysis,
        max_amplification: config.max_amplification,
        fixes: resolve.is_some(),
    };
    let enabled: Vec<(&Rule, Severity, bool)> = RULES
        .iter()
        .zip(&config.levels)
        .zip(&config.set_by_user)
        .filter_map(|((rule, level), set_by_user)| match *level {
            Level::Report(level) => Some((*rule, level, *set_by_user)),
            Level::Allow => None,
        })
        .collect();
    let run = |&(rule, level, set_by_user): &(&Rule, Severity, bool),
               scratch: &mut Vec<rule::Diagnostic>| {
        order::Placed::new(
            t,
            findings_of(&cx, rule, level, set_by_user, resolve, scratch),
        )
    };
    // Rules are independent, so they can share the cores; the tables need
    // no findings and are made here meanwhile.
    let (per_rule, (amplification, edges)) =
        crate::large::each_shared(&enabled, threads, run, || {
            (
                amplification_rows(t, &analysis),
                edge_rows(t, &analysis, config.max_amplification),
            )
        });
    let findings = order::in_file_order(per_rule);
    let mut summary = Summary::default();
    for f in &findings {
        match f.severity {
            Severity::Error => summary.errors += 1,
            Severity::Warning => summary.warnings += 1,
            Severity::Info => summary.infos += 1,
        }
    }
    CheckReport {
        topology: t.name.clone(),
        file: t.file.clone(),
        source: t.source.clone(),
        sources: t
            .origins
            .iter()
            .map(|o| (o.file.clone(), o.text.clone()))
            .collect(),
        entry: t.services[t.entry].name.clone(),
        entries: vec![t.services[t.entry].name.clone()],
        worst_entry: 0,
        amplification,
        edges,
        findings,
        summary,
        fail_on: config.fail_on,
        max_amplification: config.max_amplification,
        entry_worst: analysis.entry_worst,
        entry_hang: analysis.hang.entry.within(),
        entry_untimed: untimed(t, analysis.hang.entry),
        latency_declared: t.services.iter().any(|s| s.latency.pos.is_some()),
        latency_defaulted: t.services.iter().any(|s| s.latency.pos.is_none()),
        deadline: t.deadline.map(|d| d.value),
        reference_rate: prediction::REFERENCE_RATE,
        has_breakers: t.layers().any(|(_, l)| l.breaker.is_some()),
        has_hedging: t.layers().any(|(_, l)| l.hedging.is_some()),
        hot_caller: analysis
            .hottest_caller
            .iter()
            .map(|c| c.map(|(caller, _)| caller))
            .collect(),
    }
}

/// Milliseconds as a double, exact for whole microseconds (`1001.0`, not
/// the `1000.9999999999999` of seconds × 1000).
fn millis(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// The call no timeout bounds, when a hang figure has no bound.
fn untimed(t: &Topology, h: prediction::Hang) -> Option<CallRef> {
    match h {
        prediction::Hang::Unbounded { service, call } => {
            let c = &t.services[service].calls[call];
            Some(CallRef {
                from: t.services[c.from].name.clone(),
                to: t.services[c.to].name.clone(),
            })
        }
        prediction::Hang::Within(_) => None,
    }
}

fn amplification_rows(t: &Topology, a: &Analysis) -> Vec<AmplificationRow> {
    t.services
        .iter()
        .enumerate()
        .map(|(s, svc)| {
            let c = a.worst_case[s];
            AmplificationRow {
                service: svc.name.clone(),
                worst_case: c.value(),
                worst_case_exact: itoa::Buffer::new().format(c.exact).to_owned(),
                saturated: c.saturated,
                with_budgets: a.with_budgets[s],
                with_breakers: a.with_breakers[s],
                healthy: a.healthy[s],
                worst_response_ms: a.service_worst[s].as_secs_f64() * 1000.0,
                worst_response_if_hang_ms: a.hang.service[s].within().map(millis),
                untimed_call: untimed(t, a.hang.service[s]),
                latency_declared: a.latency_declared_below[s],
                reachable: a.reachable[s],
                entry: None,
            }
        })
        .collect()
}

fn edge_rows(t: &Topology, a: &Analysis, max: f64) -> Vec<EdgeRow> {
    let mut hot = vec![Vec::new(); t.services.len()];
    for (caller, i) in a.hot_calls((0..t.services.len()).filter(|&s| a.worst_case[s].value() > max))
    {
        hot[caller].push(i);
    }
    t.services
        .iter()
        .enumerate()
        .flat_map(|(s, svc)| {
            let hot = &hot;
            svc.calls.iter().enumerate().map(move |(i, c)| EdgeRow {
                from: svc.name.clone(),
                to: t.services[c.to].name.clone(),
                attempts: a.call_attempts(s, i) as f64,
                retrying_layers: c
                    .layers
                    .iter()
                    .filter(|l| l.policy.retries())
                    .map(|l| l.name.clone())
                    .collect(),
                hot: hot[s].contains(&i),
                worst_response_ms: a.call_worst[s][i].as_secs_f64() * 1000.0,
                worst_response_if_hang_ms: a.hang.call(s, i).within().map(millis),
                time_bounded: c
                    .layers
                    .iter()
                    .zip(&a.layer_attempts[s][i])
                    .filter_map(|(l, la)| {
                        let tb = la.time.filter(|_| la.time_bounded())?;
                        Some(TimeBoundedLayer {
                            layer: l.name.clone(),
                            max_attempts: l.policy.attempts_text(),
                            attempts: la.count,
                            estimate: la.basis == prediction::Basis::TimeTypical,
                            within_ms: tb.within.as_secs_f64() * 1000.0,
                            bounded_by: rule::bound_text(t, Some(c), &tb),
                        })
                    })
                    .collect(),
            })
        })
        .collect()
}
