//! Running every scenario `runs` times: a fresh probe server per run (or a
//! closed port for `refused`), the client against it, the arrivals
//! collected, the server shut down. Runs are independent, so they go
//! side by side up to `parallel` at a time, the longest kinds first.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::record::{RunRecord, ScenarioRecord};
use super::refusals::SynCounter;
use super::runner::{self, ClientCommand};
use super::scenario::{Purpose, Scenario};
use super::server::{self, ProbeServer, Served};
use super::tls::ProbeTls;

/// Where the client is sent: the name in its URL (the server always
/// listens on 127.0.0.1 alone) and, for `--https`, the probe's TLS.
#[derive(Debug, Clone)]
pub struct Target {
    /// `127.0.0.1`, `localhost` or a name under `.localhost`.
    pub host: String,
    pub tls: Option<Arc<ProbeTls>>,
}

impl Default for Target {
    fn default() -> Self {
        Target {
            host: "127.0.0.1".to_owned(),
            tls: None,
        }
    }
}

impl Target {
    /// The URL of a server on `port`.
    pub fn url(&self, port: u16) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}:{port}/", self.host)
    }

    /// The client's environment beyond the URL: the CA's path under
    /// every name TLS stacks read it from.
    pub fn env(&self) -> Vec<(String, String)> {
        self.tls.as_ref().map(|t| t.env()).unwrap_or_default()
    }
}

/// One run of the client against one scenario.
pub async fn run_once(
    cmd: &ClientCommand,
    scenario: &Scenario,
    run_no: u64,
    bound: Duration,
    stop: &CancellationToken,
    syns: Option<&SynCounter>,
    target: &Target,
) -> std::io::Result<RunRecord> {
    let env = target.env();
    if scenario.refuses() {
        let addr = server::closed_port().await?;
        let url = target.url(addr.port());
        let done = runner::run(cmd, &url, &env, run_no, bound, stop).await;
        let mut rec = record(url, Served::default(), done);
        if let Some(c) = syns {
            rec.refused_connects = Some(c.settle(addr.port()).await);
        }
        return Ok(rec);
    }
    let acceptor = target.tls.as_ref().map(|t| t.acceptor());
    let srv = ProbeServer::start_with(scenario.clone(), acceptor).await?;
    let url = target.url(srv.addr().port());
    let done = runner::run(cmd, &url, &env, run_no, bound, stop).await;
    let served = srv.finish(done.started).await;
    Ok(record(url, served, done))
}

fn record(url: String, served: Served, done: runner::Finished) -> RunRecord {
    let mut stderr_tail = done.stderr_tail;
    if let Some(e) = done.error {
        stderr_tail = e;
    }
    RunRecord {
        url,
        arrivals: served.arrivals,
        exit: done.exit,
        elapsed_ms: done.elapsed.as_secs_f64() * 1e3,
        refused_connects: None,
        stderr_tail,
        handshakes_failed: served.handshakes_failed,
        handshake_error: served.handshake_error,
    }
}

/// Likely long runs first, so the slowest do not start last.
fn weight(s: &Scenario) -> u8 {
    match s.purpose {
        Purpose::RetryAfter { .. } => 0,
        _ => 1,
    }
}

fn hangs(s: &Scenario) -> bool {
    s.outcome() == Some(crate::policy::Outcome::Timeout)
}

/// The shortest time a hang run is given, however short the client's waits:
/// past 5 s, a common default (httpx's `Timeout(5.0)`), which a cut at
/// exactly 5 s reads as "no timeout within 5 s".
pub const HANG_FLOOR: Duration = Duration::from_secs(6);

/// How long the hang runs may take: a client that still holds a hanging
/// attempt well past the longest wait it took elsewhere has no per-attempt
/// timeout the probe needs to wait for (curl and got hold one forever, and
/// would sit out the whole bound on every run). Never past `bound`.
pub fn hang_cut(done: &[RunRecord], bound: Duration) -> Duration {
    let longest = done
        .iter()
        .flat_map(RunRecord::waits_ms)
        .fold(0.0, f64::max);
    // In whole tenths of a second, as the report writes it.
    let tenths = ((1.5 * longest + 1000.0) / 100.0).ceil().min(1e9) as u64;
    let cut = Duration::from_millis(tenths * 100).max(HANG_FLOOR);
    cut.min(bound)
}

/// Every scenario `runs` times; results in the scenarios' order. The hang
/// scenario runs last, bounded by [`hang_cut`] of what the others showed.
/// (`options`' scenarios, runs, bound, parallel and progress are read.)
pub async fn run_all(
    cmd: &ClientCommand,
    options: &super::ProbeOptions,
    stop: &CancellationToken,
    target: &Target,
) -> std::io::Result<Vec<ScenarioRecord>> {
    let (scenarios, runs, bound) = (&options.scenarios[..], options.runs.max(1), options.bound);
    let (parallel, progress) = (options.parallel, options.progress);
    let bar = super::progress::bar(progress, scenarios.len() as u64 * u64::from(runs));
    let permits = Arc::new(Semaphore::new(parallel.max(1)));
    let syns: Option<Arc<SynCounter>> = scenarios
        .iter()
        .any(Scenario::refuses)
        .then(SynCounter::start)
        .flatten()
        .map(Arc::new);
    let mut records: Vec<ScenarioRecord> = scenarios
        .iter()
        .map(|s| ScenarioRecord {
            name: s.name.to_owned(),
            description: s.describe(),
            runs: Vec::new(),
            bound_ms: None,
        })
        .collect();
    let run = Batch {
        cmd,
        scenarios,
        runs,
        permits: &permits,
        syns: &syns,
        stop,
        bar: bar.as_ref(),
        target,
    };
    let others: Vec<usize> = (0..scenarios.len())
        .filter(|&i| !hangs(&scenarios[i]))
        .collect();
    let later: Vec<usize> = (0..scenarios.len())
        .filter(|&i| hangs(&scenarios[i]))
        .collect();
    if let Some(b) = &bar {
        b.set_message(format!("{} scenarios", others.len()));
    }
    let first = run.go(&others, bound).await?;
    let done: Vec<RunRecord> = first.iter().flat_map(|(_, r)| r.clone()).collect();
    let cut = if others.is_empty() {
        bound
    } else {
        hang_cut(&done, bound)
    };
    if let Some(b) = &bar
        && !later.is_empty()
    {
        b.set_message(format!(
            "hang, cut at {}",
            crate::input::duration::format(cut)
        ));
    }
    let second = if stop.is_cancelled() {
        Vec::new()
    } else {
        run.go(&later, cut).await?
    };
    for (i, runs) in first.into_iter().chain(second) {
        records[i].runs = runs;
        if hangs(&scenarios[i]) && cut < bound {
            records[i].bound_ms = Some(cut.as_secs_f64() * 1e3);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(records)
}

/// What one batch of runs shares.
struct Batch<'a> {
    cmd: &'a ClientCommand,
    scenarios: &'a [Scenario],
    runs: u32,
    permits: &'a Arc<Semaphore>,
    syns: &'a Option<Arc<SynCounter>>,
    stop: &'a CancellationToken,
    bar: Option<&'a indicatif::ProgressBar>,
    target: &'a Target,
}

impl Batch<'_> {
    /// The scenarios `which`, each `runs` times, up to the permits at a
    /// time; each scenario's runs in order.
    async fn go(
        &self,
        which: &[usize],
        bound: Duration,
    ) -> std::io::Result<Vec<(usize, Vec<RunRecord>)>> {
        let runs = self.runs;
        let mut order: Vec<(usize, u32)> = which
            .iter()
            .flat_map(|&s| (0..runs).map(move |r| (s, r)))
            .collect();
        order.sort_by_key(|&(s, r)| (weight(&self.scenarios[s]), r, s));
        let mut tasks = tokio::task::JoinSet::new();
        for (s, r) in order {
            let permit = tokio::select! {
                p = Arc::clone(self.permits).acquire_owned() => p.ok(),
                _ = self.stop.cancelled() => None,
            };
            let Some(permit) = permit else { break };
            let (cmd, scenario, stop) = (
                self.cmd.clone(),
                self.scenarios[s].clone(),
                self.stop.clone(),
            );
            let syns = self.syns.clone();
            let target = self.target.clone();
            tasks.spawn(async move {
                let run_no = s as u64 * u64::from(runs) + u64::from(r);
                let result = run_once(
                    &cmd,
                    &scenario,
                    run_no,
                    bound,
                    &stop,
                    syns.as_deref(),
                    &target,
                )
                .await;
                drop(permit);
                (s, r, result)
            });
        }
        let mut slots: Vec<(usize, Vec<Option<RunRecord>>)> = which
            .iter()
            .map(|&s| (s, vec![None; runs as usize]))
            .collect();
        let mut first_error = None;
        while let Some(joined) = tasks.join_next().await {
            if let Some(b) = self.bar {
                b.inc(1);
            }
            match joined {
                Ok((s, r, Ok(run))) => {
                    if let Some((_, slot)) = slots.iter_mut().find(|(i, _)| *i == s) {
                        slot[r as usize] = Some(run);
                    }
                }
                Ok((_, _, Err(e))) => {
                    first_error.get_or_insert(e);
                }
                Err(e) => {
                    first_error.get_or_insert(std::io::Error::other(e.to_string()));
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        Ok(slots
            .into_iter()
            .map(|(s, slot)| (s, slot.into_iter().flatten().collect()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::record::{Arrival, Exit};

    fn run(at: &[f64]) -> RunRecord {
        RunRecord {
            url: String::new(),
            arrivals: at
                .iter()
                .map(|&at_ms| Arrival {
                    at_ms,
                    method: "GET".into(),
                    path: "/".into(),
                    connection: 1,
                    peer_port: 1,
                    body_bytes: 0,
                    idempotency_key: None,
                    notable_headers: Vec::new(),
                    host: None,
                    hung_up_ms: None,
                })
                .collect(),
            exit: Exit::Code(1),
            elapsed_ms: 0.0,
            refused_connects: None,
            stderr_tail: String::new(),
            handshakes_failed: 0,
            handshake_error: None,
        }
    }

    #[test]
    fn a_hang_is_cut_well_past_the_longest_wait_and_never_past_the_bound() {
        let bound = Duration::from_secs(20);
        // curl --retry 3: waits of 1, 2 and 4 s: cut at 1.5 × 4 s + 1 s.
        let curl = [run(&[0.0, 1000.0, 3000.0, 7000.0])];
        assert_eq!(hang_cut(&curl, bound), Duration::from_secs(7));
        // No wait at all: the floor.
        assert_eq!(hang_cut(&[run(&[5.0])], bound), HANG_FLOOR);
        // Waits of 30 s: the bound.
        assert_eq!(hang_cut(&[run(&[0.0, 30_000.0])], bound), bound);
    }
}
