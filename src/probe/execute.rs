//! Running every scenario `runs` times: a fresh probe server per run (or a
//! closed port for `refused`), the client against it, the arrivals
//! collected, the server shut down. Runs are independent, so they go
//! side by side up to `parallel` at a time, the longest kinds first.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio_util::sync::CancellationToken;

use super::record::{RunRecord, ScenarioRecord};
use super::refusals::SynCounter;
use super::runner::{self, Bound, ClientCommand};
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
    pub(crate) fn url(&self, port: u16) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}:{port}/", self.host)
    }

    /// The client's environment beyond the URL: the CA's path under
    /// every name TLS stacks read it from.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        self.tls.as_ref().map(|t| t.env()).unwrap_or_default()
    }
}

/// One run of the client against one scenario. `start_permit`, when
/// given, is held only until the first attempt arrives (the client is up;
/// from then on it mostly waits), or until the run ends.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_once(
    cmd: &ClientCommand,
    scenario: &Scenario,
    run_no: u64,
    bound: Bound,
    stop: &CancellationToken,
    syns: Option<&SynCounter>,
    target: &Target,
    start_permit: Option<OwnedSemaphorePermit>,
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
    let run = runner::run(cmd, &url, &env, run_no, bound, stop);
    let done = match start_permit {
        None => run.await,
        Some(permit) => {
            tokio::pin!(run);
            tokio::select! {
                done = &mut run => done,
                () = srv.first_arrival() => {
                    drop(permit);
                    run.await
                }
            }
        }
    };
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

/// Clients alive at once for each one starting (`--parallel` above 1): past its
/// first attempt a client mostly sleeps through its waits, so many sit
/// side by side while few take the CPU to start, which is what blurs the
/// timing on a small machine.
const ALIVE_PER_STARTING: usize = 4;

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
pub(crate) fn hang_cut<'a>(
    done: impl IntoIterator<Item = &'a RunRecord>,
    bound: Duration,
) -> Duration {
    let longest = done
        .into_iter()
        .flat_map(RunRecord::waits_ms)
        .fold(0.0, f64::max);
    // In whole tenths of a second, as the report writes it.
    let tenths = ((1.5 * longest + 1000.0) / 100.0).ceil().min(1e9) as u64;
    let cut = Duration::from_millis(tenths * 100).max(HANG_FLOOR);
    cut.min(bound)
}

/// Every scenario `runs` times; results in the scenarios' order. The hang
/// runs start first, beside the others, and are cut at [`hang_cut`] of
/// what the others showed once they are done.
/// (`options`' scenarios, runs, bound, parallel and progress are read.)
pub(crate) async fn run_all(
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
        parallel: parallel.max(1),
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
        b.set_message(format!("{} scenarios", scenarios.len()));
    }
    let (done, cut) = run.go(&others, &later, bound).await?;
    for (i, runs) in done {
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
    /// Clients starting at once, and their permits.
    parallel: usize,
    permits: &'a Arc<Semaphore>,
    syns: &'a Option<Arc<SynCounter>>,
    stop: &'a CancellationToken,
    bar: Option<&'a indicatif::ProgressBar>,
    target: &'a Target,
}

/// The runs under way: each ends with its scenario, its number and its record.
type Tasks = tokio::task::JoinSet<(usize, u32, std::io::Result<RunRecord>)>;

impl Batch<'_> {
    /// The scenarios `others` and `hanging`, each `runs` times; each
    /// scenario's runs in order, and the hang runs' cut. A run holds one of
    /// the permits only while its client starts, up to its first attempt,
    /// and up to [`ALIVE_PER_STARTING`] times as many clients are alive.
    /// The hang runs go first, when they leave room for the others, and sit
    /// out their cut beside them rather than after them; their bound is
    /// lowered to the cut when the others are done, and whatever a run
    /// showed past the cut is dropped, as if it had been killed there.
    async fn go(
        &self,
        others: &[usize],
        hanging: &[usize],
        bound: Duration,
    ) -> std::io::Result<(Vec<(usize, Vec<RunRecord>)>, Duration)> {
        let runs = self.runs;
        // `--parallel 1` is one client at a time, start to end (a client
        // that shares state between processes).
        let alive = match self.parallel {
            1 => 1,
            n => n * ALIVE_PER_STARTING,
        };
        let each = |which: &[usize]| -> Vec<(usize, u32)> {
            which
                .iter()
                .flat_map(|&s| (0..runs).map(move |r| (s, r)))
                .collect()
        };
        let mut rest = each(others);
        rest.sort_by_key(|&(s, r)| (weight(&self.scenarios[s]), r, s));
        let hang_runs = each(hanging);
        // Hang runs first would hold every place until the cut, which only
        // the others' end fixes: then they wait for it instead.
        let mut queue: std::collections::VecDeque<(usize, u32)> = if alive > hang_runs.len() {
            hang_runs.into_iter().chain(rest).collect()
        } else {
            rest.into_iter().chain(hang_runs).collect()
        };
        let alive = Arc::new(Semaphore::new(alive));
        let (set_cut, cut_rx) = watch::channel(bound);
        let mut tasks: Tasks = tokio::task::JoinSet::new();
        let mut slots: Vec<(usize, Vec<Option<RunRecord>>)> = hanging
            .iter()
            .chain(others)
            .map(|&s| (s, vec![None; runs as usize]))
            .collect();
        let mut others_left = others.len() * runs as usize;
        let mut cut = None;
        let mut first_error = None;
        loop {
            if others_left == 0 && cut.is_none() {
                let c = if others.is_empty() {
                    bound
                } else {
                    // From the others' records, kept in their slots.
                    let done = slots
                        .iter()
                        .filter(|(s, _)| !hanging.contains(s))
                        .flat_map(|(_, runs)| runs.iter().flatten());
                    hang_cut(done, bound)
                };
                set_cut.send_replace(c);
                cut = Some(c);
                if let Some(b) = self.bar
                    && !hanging.is_empty()
                {
                    b.set_message(format!(
                        "hang, cut at {}",
                        crate::input::duration::format(c)
                    ));
                }
            }
            if queue.is_empty() && tasks.is_empty() {
                break;
            }
            // Starts the next run once it has its places, and meanwhile
            // takes in the runs that end (one of them may fix the cut).
            let places = async {
                let alive = Arc::clone(&alive).acquire_owned().await.ok()?;
                let start = Arc::clone(self.permits).acquire_owned().await.ok()?;
                Some((alive, start))
            };
            tokio::select! {
                biased;
                Some(joined) = tasks.join_next() => {
                    if let Some(b) = self.bar {
                        b.inc(1);
                    }
                    let (s, r, result) = match joined {
                        Ok(done) => done,
                        Err(e) => {
                            first_error.get_or_insert(std::io::Error::other(e.to_string()));
                            continue;
                        }
                    };
                    if !hanging.contains(&s) {
                        others_left -= 1;
                    }
                    match result {
                        Ok(run) => {
                            if let Some((_, slot)) = slots.iter_mut().find(|(i, _)| *i == s) {
                                slot[r as usize] = Some(run);
                            }
                        }
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                Some((alive, start)) = places, if !queue.is_empty() && !self.stop.is_cancelled() => {
                    if let Some((s, r)) = queue.pop_front() {
                        self.spawn(&mut tasks, (s, r), (alive, start), bound, &cut_rx);
                    }
                }
                _ = self.stop.cancelled(), if !queue.is_empty() => queue.clear(),
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let cut = cut.unwrap_or(bound);
        let cut_ms = cut.as_secs_f64() * 1e3;
        let done = slots
            .into_iter()
            .map(|(s, slot)| {
                let mut runs: Vec<RunRecord> = slot.into_iter().flatten().collect();
                if hanging.contains(&s) {
                    runs.iter_mut().for_each(|r| r.cut_to(cut_ms));
                }
                (s, runs)
            })
            .collect();
        Ok((done, cut))
    }

    /// Starts run `r` of scenario `s`, holding its places: the start
    /// permit until the first attempt arrives, the alive one to its end.
    fn spawn(
        &self,
        tasks: &mut Tasks,
        (s, r): (usize, u32),
        (alive, start): (OwnedSemaphorePermit, OwnedSemaphorePermit),
        bound: Duration,
        cut: &watch::Receiver<Duration>,
    ) {
        let (cmd, scenario, stop) = (
            self.cmd.clone(),
            self.scenarios[s].clone(),
            self.stop.clone(),
        );
        let (syns, target) = (self.syns.clone(), self.target.clone());
        let run_bound = if hangs(&scenario) {
            Bound::Cut(cut.clone())
        } else {
            Bound::Fixed(bound)
        };
        let runs = self.runs;
        tasks.spawn(async move {
            let run_no = s as u64 * u64::from(runs) + u64::from(r);
            let result = run_once(
                &cmd,
                &scenario,
                run_no,
                run_bound,
                &stop,
                syns.as_deref(),
                &target,
                Some(start),
            )
            .await;
            drop(alive);
            (s, r, result)
        });
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
    fn a_hang_run_held_past_its_cut_shows_what_one_cut_there_would() {
        // Attempts at 0 and 6.2 s, the first hung up at 6.1 s, held to 9 s;
        // cut at 6 s: one attempt, never hung up, killed at the cut.
        let mut held = run(&[0.0, 6200.0]);
        held.arrivals[0].hung_up_ms = Some(6100.0);
        held.elapsed_ms = 9000.0;
        held.cut_to(6000.0);
        assert_eq!(held.arrivals.len(), 1);
        assert_eq!(held.arrivals[0].hung_up_ms, None);
        assert_eq!((held.exit, held.elapsed_ms), (Exit::TimedOut, 6000.0));
        // A run that ended within its cut is left as it was.
        let mut within = run(&[0.0, 5000.0]);
        within.arrivals[0].hung_up_ms = Some(4000.0);
        within.elapsed_ms = 5500.0;
        let before = within.clone();
        within.cut_to(6000.0);
        assert_eq!(within, before);
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
