//! Running every scenario `runs` times: a fresh probe server per run (or a
//! closed port for `refused`), the client against it, the arrivals
//! collected, the server shut down. Runs are independent, so they go
//! side by side up to `parallel` at a time, the longest kinds first.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::record::{RunRecord, ScenarioRecord};
use super::runner::{self, ClientCommand};
use super::scenario::{Purpose, Scenario};
use super::server::{self, ProbeServer};

/// One run of the client against one scenario.
pub async fn run_once(
    cmd: &ClientCommand,
    scenario: &Scenario,
    run_no: u64,
    bound: Duration,
    stop: &CancellationToken,
) -> std::io::Result<RunRecord> {
    if scenario.refuses() {
        let addr = server::closed_port().await?;
        let url = format!("http://{addr}/");
        let done = runner::run(cmd, &url, run_no, bound, stop).await;
        return Ok(record(url, Vec::new(), done));
    }
    let srv = ProbeServer::start(scenario.clone()).await?;
    let url = format!("http://{}/", srv.addr());
    let done = runner::run(cmd, &url, run_no, bound, stop).await;
    let arrivals = srv.stop(done.started).await;
    Ok(record(url, arrivals, done))
}

fn record(url: String, arrivals: Vec<super::record::Arrival>, done: runner::Finished) -> RunRecord {
    let mut stderr_tail = done.stderr_tail;
    if let Some(e) = done.error {
        stderr_tail = e;
    }
    RunRecord {
        url,
        arrivals,
        exit: done.exit,
        elapsed_ms: done.elapsed.as_secs_f64() * 1e3,
        stderr_tail,
    }
}

/// Likely long runs first, so the slowest do not start last.
fn weight(s: &Scenario) -> u8 {
    match s.purpose {
        Purpose::RetryAfter { .. } => 0,
        _ if s.outcome() == Some(crate::policy::Outcome::Timeout) => 0,
        _ => 1,
    }
}

/// Every scenario `runs` times; results in the scenarios' order.
pub async fn run_all(
    cmd: &ClientCommand,
    scenarios: &[Scenario],
    runs: u32,
    bound: Duration,
    parallel: usize,
    stop: &CancellationToken,
) -> std::io::Result<Vec<ScenarioRecord>> {
    let permits = Arc::new(Semaphore::new(parallel.max(1)));
    let mut order: Vec<(usize, u32)> = (0..scenarios.len())
        .flat_map(|s| (0..runs).map(move |r| (s, r)))
        .collect();
    order.sort_by_key(|&(s, r)| (weight(&scenarios[s]), r, s));
    let mut tasks = tokio::task::JoinSet::new();
    for (s, r) in order {
        let permit = tokio::select! {
            p = Arc::clone(&permits).acquire_owned() => p.ok(),
            _ = stop.cancelled() => None,
        };
        let Some(permit) = permit else { break };
        let (cmd, scenario, stop) = (cmd.clone(), scenarios[s].clone(), stop.clone());
        tasks.spawn(async move {
            let run_no = s as u64 * u64::from(runs) + u64::from(r);
            let result = run_once(&cmd, &scenario, run_no, bound, &stop).await;
            drop(permit);
            (s, r, result)
        });
    }
    let mut records: Vec<ScenarioRecord> = scenarios
        .iter()
        .map(|s| ScenarioRecord {
            name: s.name.to_owned(),
            description: s.describe(),
            runs: Vec::new(),
        })
        .collect();
    let mut slots: Vec<Vec<Option<RunRecord>>> = scenarios
        .iter()
        .map(|_| vec![None; runs as usize])
        .collect();
    let mut first_error = None;
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((s, r, Ok(run))) => slots[s][r as usize] = Some(run),
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
    for (rec, slot) in records.iter_mut().zip(slots) {
        rec.runs = slot.into_iter().flatten().collect();
    }
    Ok(records)
}
