//! `retrylint drive`: the load driver alone, through the topology's
//! `client:` layer into an entry that is already running (`retrylint serve`
//! processes), then every process's counters merged into the one report
//! `chaos` prints. The driver is `chaos`'s (`boot::driver`), its client
//! layer counted here; each service's rows come from its own process.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::collect::Admins;
use super::serve::{CountersAnswer, StartRequest};
use super::token::Token;
use crate::chaos::harness::api::{
    ChaosError, RunOptions, STREAM_DRAWS, drive_until_done, http_client,
};
use crate::chaos::harness::context::Run;
use crate::chaos::harness::metrics::Metrics;
use crate::faults::Scenario;
use crate::run::build::Tally;
use crate::run::{Layout, Listener, LoadSettings, Mode, RunInfo, RunReport};
use crate::topology::Topology;

/// Drives `load` into the entry at `entry` (`http://HOST:PORT[/PATH]`) and
/// collects from the admin URLs `collect` (one per `serve` process), whose
/// start and stop need `token`. Every task it started has ended when it
/// returns.
pub async fn drive(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    entry: &str,
    collect: &[String],
    token: Option<&Token>,
    options: &RunOptions,
) -> Result<RunReport, ChaosError> {
    let wall = Instant::now();
    let plan = scenario.plan(t)?;
    let layout = Layout::new(t);
    let targets = plan.targets.clone();
    let http = http_client()?;
    // This run's id: the processes answer a start with another id while
    // this run goes on with 409, and name it in their counters.
    let run_id = Token::generate()
        .map_err(|e| ChaosError::Collect(format!("cannot make a run id: {e}")))?
        .expose()[..16]
        .to_owned();
    let admins = Admins {
        http: &http,
        urls: collect,
        token,
        run_id: &run_id,
        max_body: super::collect::counters_limit(t.services.len() + layout.slots()),
    };
    // Who answers where, before anything starts: a second collect of the
    // same service would count it twice.
    let before = admins.counters().await?;
    let mut seen = BTreeMap::new();
    for (url, answer) in collect.iter().zip(&before) {
        if !t.services.iter().any(|s| s.name == answer.service) {
            return Err(ChaosError::Collect(format!(
                "--collect {url} serves `{}`, which is not a service of this topology",
                answer.service
            )));
        }
        if let Some(other) = seen.insert(answer.service.clone(), url.clone()) {
            return Err(ChaosError::Collect(format!(
                "--collect {other} and {url} both serve `{}`: collect each service once",
                answer.service
            )));
        }
    }
    let (authority, path, addr) = crate::chaos::load::drive_url::entry(entry).await?;
    let start = StartRequest {
        run_id: run_id.clone(),
        seed: load.seed,
        fault: scenario.name.clone(),
        horizon_ns: u64::try_from(load.horizon().as_nanos()).unwrap_or(u64::MAX),
        grace_ns: u64::try_from(options.grace.as_nanos()).unwrap_or(u64::MAX),
    };
    let numbers = admins.start_all(&start).await?;
    let metrics = Metrics::new(t.services.len(), layout.slots(), targets.clone());
    let run = Arc::new(Run::new(
        load.horizon(),
        http.clone(),
        plan,
        load.stream_seed(STREAM_DRAWS),
        metrics,
    ));
    let driver = crate::chaos::harness::boot::driver(
        &run,
        t,
        load,
        format!("http://{authority}"),
        addr,
        &path,
        options.max_in_flight,
    );
    let bar = crate::chaos::harness::progress::start(&run, options.progress, "drive");
    let interrupted = drive_until_done(&run, driver, options).await;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let collected = admins.stop_and_collect().await;
    // A process whose run is not this one by now (replaced once this run
    // had stopped, or the process restarted) has counters of another run;
    // one that cannot be read (gone, or answering nonsense) has none. Both
    // are named; the others' counters are the report.
    let mut answers: Vec<CountersAnswer> = Vec::with_capacity(collected.len());
    let mut replaced = Vec::new();
    let mut unread = Vec::new();
    for ((result, &n), was) in collected.into_iter().zip(&numbers).zip(&before) {
        match result {
            Ok(a) if a.service == was.service && a.run_id == run_id && a.run == n => {
                answers.push(a)
            }
            Ok(a) => replaced.push((was.service.clone(), a.run, n)),
            Err(e) => unread.push((was.service.clone(), e)),
        }
    }
    let mut merged = run.metrics.snapshot();
    let mut listeners = Vec::new();
    for a in &answers {
        merged.add(&a.snapshot);
        listeners.push(Listener {
            name: a.service.clone(),
            addr: a.listen.clone(),
        });
        listeners.extend(a.sidecars.iter().map(|(name, addr)| Listener {
            name: name.clone(),
            addr: addr.clone(),
        }));
    }
    let info = RunInfo {
        mode: Mode::Drive,
        scenario,
        load,
        targets: &targets,
        elapsed_ms: wall.elapsed().as_secs_f64() * 1e3,
        listeners,
        interrupted,
    };
    let latency = merged
        .latency
        .iter()
        .map(|l| (!l.is_empty()).then_some(l))
        .collect();
    let mut report = crate::run::build::build(
        t,
        &layout,
        info,
        Tally::single(&merged.counts, latency, &merged.end_to_end_latency),
    );
    let mut h = run.metrics.harness();
    if matches!(load.arrival, crate::run::Arrival::Rate(_)) {
        h.max_in_flight = Some(options.max_in_flight as u64);
    }
    let missing: Vec<&str> = t
        .services
        .iter()
        .map(|s| s.name.as_str())
        .filter(|n| !seen.contains_key(*n))
        .collect();
    if !missing.is_empty() {
        h.warnings.push(format!(
            "no --collect for {}: their rows count only what their callers saw (refused connections), not what they received",
            missing.join(", ")
        ));
    }
    for (service, run, n) in &replaced {
        h.warnings.push(if *run == 0 {
            format!(
                "`{service}` had no run when its counters were read: its process restarted during this drive; its row counts only what its callers saw"
            )
        } else {
            format!(
                "`{service}` ran another run when its counters were read (run {run}, not this drive's run {n}): it was started again once this run had stopped, or its process restarted; its row counts only what its callers saw"
            )
        });
        h.uncollected.push(service.clone());
    }
    for (service, e) in &unread {
        h.warnings.push(format!(
            "`{service}`'s counters could not be read ({e}): its row counts only what its callers saw"
        ));
        h.uncollected.push(service.clone());
    }
    report.harness = h;
    if interrupted {
        return Err(ChaosError::Interrupted(Box::new(report)));
    }
    Ok(report)
}

/// [`drive`] on its own runtime, stopping early on Ctrl-C.
pub fn drive_blocking(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    entry: &str,
    collect: &[String],
    token: Option<&Token>,
    options: &RunOptions,
) -> Result<RunReport, ChaosError> {
    crate::chaos::harness::api::on_own_runtime("retrylint-drive", options, |opts| async move {
        drive(t, scenario, load, entry, collect, token, &opts).await
    })
}
