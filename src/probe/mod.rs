//! `retrylint probe`: measures a real client's retry behaviour. It serves
//! scripted failures on 127.0.0.1 (the fault kinds of `crate::faults`), runs
//! the user's own client against them once per scenario and run, records
//! every attempt, and infers the policy — attempts, retried outcomes,
//! backoff and jitter, Retry-After, per-attempt timeout, idempotency key —
//! each field with its evidence and a confidence. The measured policy is
//! rendered in topology syntax, checked by the lint rules, set beside the
//! nearest shipped preset, and optionally held to a topology's declared
//! layer (the CI gate). Nothing here prints.
//!
//! One job per file: `scenario` (what each attempt gets), `server` (the
//! recording probe server), `runner` (the client as a process group with a
//! time bound), `execute` (scenarios × runs), `record` (what was seen),
//! `infer` (from records to a policy), `render` (topology syntax),
//! `findings` (the lint rules on it), `compare`, `preset`, `expect`,
//! `replay` (the inference again on a saved report).

pub mod compare;
pub mod execute;
pub mod expect;
pub mod findings;
pub mod host;
pub mod infer;
pub mod preset;
pub mod progress;
pub mod record;
pub mod refusals;
pub mod render;
pub mod replay;
pub mod runner;
pub mod scenario;
pub mod server;
pub mod tls;

use std::time::{Duration, Instant};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use expect::{Declared, ExpectError, ExpectResult};
pub use infer::{Confidence, Field, InferredPolicy};
pub use preset::PresetMatch;
pub use record::{Arrival, Exit, RunRecord, ScenarioRecord};
pub use runner::ClientCommand;
pub use scenario::Scenario;

use crate::lint::Finding;
use crate::topology::Presets;

/// What to probe and how.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// Runs per scenario.
    pub runs: u32,
    pub scenarios: Vec<Scenario>,
    /// The call's method as the topology will declare it; `None`: as sent.
    pub method: Option<String>,
    /// The longest one run may take; the client is killed then.
    pub bound: Duration,
    /// Runs at a time.
    pub parallel: usize,
    /// A declared layer to hold the client to.
    pub expect: Option<Declared>,
    /// Cancel to stop early; [`probe`] also stops on Ctrl-C when `ctrl_c`.
    pub stop: Option<CancellationToken>,
    pub ctrl_c: bool,
    /// Draw progress on stderr when it is a terminal.
    pub progress: bool,
    /// Serve over TLS with a CA made for this probe (`--https`).
    pub https: bool,
    /// The name in the client's URL (`--host`): `localhost` or under
    /// `.localhost`; `None`: 127.0.0.1.
    pub host: Option<String>,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            runs: 5,
            scenarios: Scenario::all(),
            method: None,
            bound: Duration::from_secs(20),
            parallel: 4,
            expect: None,
            stop: None,
            ctrl_c: true,
            progress: false,
            https: false,
            host: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    #[error("{0}")]
    NotStarted(String),
    /// The client never reached the probe server.
    #[error("the client sent no request to the probe server in any run{}", stderr_hint(.stderr))]
    NoRequests { stderr: String },
    /// `--https`: the client never completed a TLS handshake.
    #[error(
        "the client completed no TLS handshake with the probe server in any run ({failed} failed, the first with: {error}): it does not trust the probe's CA. The CA's path is in SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS, CURL_CA_BUNDLE, AWS_CA_BUNDLE and RETRYLINT_CA; point the client's TLS settings at $RETRYLINT_CA if it reads none of them{}",
        stderr_end(.stderr)
    )]
    Untrusted {
        failed: u32,
        error: String,
        stderr: String,
    },
    #[error(transparent)]
    Host(#[from] host::HostError),
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("interrupted: the probe was stopped before its end")]
    Interrupted,
}

fn stderr_hint(stderr: &str) -> String {
    format!(
        "; does it use {{url}} or $RETRYLINT_URL?{}",
        stderr_end(stderr)
    )
}

fn stderr_end(stderr: &str) -> String {
    match stderr.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(line) => format!(" Its stderr ends: {}", line.trim()),
        None => String::new(),
    }
}

/// Everything the probe found, for the reporters.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    pub version: u32,
    pub command: Vec<String>,
    pub runs: u32,
    pub time_bound_ms: f64,
    pub scenarios: Vec<ScenarioRecord>,
    pub policy: InferredPolicy,
    /// The call in topology syntax, ready to paste under the caller.
    pub snippet: String,
    pub nearest_preset: Option<PresetMatch>,
    /// The lint rules on the measured policy.
    pub findings: Vec<Finding>,
    /// Rules the measurements cannot decide, with why (not run).
    pub unchecked_rules: Vec<UncheckedRule>,
    /// Why the rules could not run at all, when they could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectation: Option<ExpectResult>,
    pub elapsed_ms: f64,
}

/// A rule left out of the check of the measured policy.
#[derive(Debug, Clone, Serialize)]
pub struct UncheckedRule {
    pub code: &'static str,
    pub reason: String,
}

impl ProbeReport {
    /// What the table and the PR comment say when no rule fired: never a
    /// plain "no finding" when the rules did not run, or ran in part.
    pub(crate) fn no_finding_text(&self) -> String {
        if let Some(e) = &self.rules_error {
            return format!("the rules could not check the measured policy: {e}");
        }
        let codes: Vec<&str> = self.unchecked_rules.iter().map(|u| u.code).collect();
        if codes.is_empty() {
            "no finding on the measured policy".into()
        } else {
            format!(
                "no finding on the measured policy among the rules it could check ({} not checked; see the notes)",
                codes.join(", ")
            )
        }
    }

    /// Whether a declared layer was given and the client differs from it.
    pub fn failed(&self) -> bool {
        self.expectation.as_ref().is_some_and(|e| !e.held)
    }
}

/// Probes `cmd` on a runtime of its own. Must not be called from inside a
/// tokio runtime; use [`probe_async`] there.
pub fn probe(cmd: &ClientCommand, options: &ProbeOptions) -> Result<ProbeReport, ProbeError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("retrylint-probe")
        .build()
        .map_err(ProbeError::Runtime)?;
    let result = rt.block_on(async {
        let stop = options.stop.clone().unwrap_or_default();
        // SIGINT, SIGTERM and SIGHUP alike: the clients' process groups are
        // ended on the way out, as on Ctrl-C.
        let ctrl_c = options.ctrl_c.then(|| {
            let stop = stop.clone();
            let signal = crate::stop_signal::listen();
            tokio::spawn(async move {
                signal.await;
                stop.cancel();
            })
        });
        let mut opts = options.clone();
        opts.stop = Some(stop);
        let result = probe_async(cmd, &opts).await;
        if let Some(task) = ctrl_c {
            task.abort();
        }
        result
    });
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// The probe on the caller's runtime. Every server, connection and client
/// process it started is gone when it returns.
pub(crate) async fn probe_async(
    cmd: &ClientCommand,
    options: &ProbeOptions,
) -> Result<ProbeReport, ProbeError> {
    let wall = Instant::now();
    let stop = options.stop.clone().unwrap_or_default();
    let mut target = execute::Target::default();
    if let Some(h) = &options.host {
        host::check(h).await?;
        target.host = h.trim_end_matches('.').to_ascii_lowercase();
    }
    if options.https {
        let name = options.host.as_deref().unwrap_or("localhost");
        target.tls = Some(std::sync::Arc::new(tls::ProbeTls::generate(name)?));
    }
    let records = execute::run_all(cmd, options, &stop, &target)
        .await
        .map_err(ProbeError::Bind)?;
    // The CA file goes now, whatever comes next.
    drop(target);
    if stop.is_cancelled() {
        return Err(ProbeError::Interrupted);
    }
    let all_runs = || records.iter().flat_map(|r| &r.runs);
    if let Some(run) = all_runs().find(|r| r.exit == Exit::NotStarted) {
        return Err(ProbeError::NotStarted(run.stderr_tail.clone()));
    }
    if all_runs().all(|r| r.arrivals.is_empty() && r.refused_connects.unwrap_or(0) == 0) {
        let stderr = all_runs()
            .map(|r| r.stderr_tail.clone())
            .find(|s| !s.is_empty())
            .unwrap_or_default();
        let failed: u32 = all_runs().map(|r| r.handshakes_failed).sum();
        if failed > 0 {
            let error = all_runs()
                .find_map(|r| r.handshake_error.clone())
                .unwrap_or_default();
            return Err(ProbeError::Untrusted {
                failed,
                error,
                stderr,
            });
        }
        return Err(ProbeError::NoRequests { stderr });
    }
    Ok(assemble(cmd, options, records, wall.elapsed()))
}

/// From the records to the report: inference, rendering, rules, preset and
/// gate. Pure, so it can be tested on recorded runs.
pub fn assemble(
    cmd: &ClientCommand,
    options: &ProbeOptions,
    records: Vec<ScenarioRecord>,
    elapsed: Duration,
) -> ProbeReport {
    let paired: Vec<(Scenario, ScenarioRecord)> = records
        .into_iter()
        .filter_map(|r| Some((Scenario::named(&r.name)?, r)))
        .collect();
    let cx = infer::Context {
        declared_method: options.method.as_deref(),
        bound: options.bound,
    };
    let mut policy = infer::infer(&paired, &cx);
    let engine = policy.to_policy();
    let snippet = render::call_snippet(&engine, &policy, "SERVICE");
    let unchecked_rules: Vec<UncheckedRule> = findings::unchecked(&policy)
        .into_iter()
        .map(|(code, reason)| UncheckedRule { code, reason })
        .collect();
    for u in &unchecked_rules {
        policy
            .notes
            .push(format!("{} not checked: {}", u.code, u.reason));
    }
    let mut rules_error = None;
    let findings = match findings::lint(&engine, &policy) {
        Ok(f) => f,
        Err(e) => {
            policy.notes.push(format!(
                "the rules could not check the measured policy: {e}"
            ));
            rules_error = Some(e.to_string());
            Vec::new()
        }
    };
    let nearest_preset = preset::nearest(&policy, &Presets::embedded());
    let expectation = options.expect.as_ref().map(|d| expect::check(&policy, d));
    ProbeReport {
        version: 1,
        command: cmd.argv(),
        runs: options.runs,
        time_bound_ms: options.bound.as_secs_f64() * 1e3,
        scenarios: paired.into_iter().map(|(_, r)| r).collect(),
        policy,
        snippet,
        nearest_preset,
        findings,
        unchecked_rules,
        rules_error,
        expectation,
        elapsed_ms: elapsed.as_secs_f64() * 1e3,
    }
}
