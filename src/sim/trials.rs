//! Trials across threads. Trial i runs with seed + i on whichever thread takes
//! it; threads take small batches of trial indexes from a shared counter, each
//! reusing one engine. What a thread returns is integer sums, merged
//! histograms and per-trial figures tagged with their index, so the merged
//! result is the same for any number of threads and any scheduling.
//!
//! Every thread watches the run's [`Guard`]: past the work budget the run
//! fails; on Ctrl-C the threads stop taking trials, a trial cut midway is
//! dropped, and the trials completed are returned for a partial report.

use std::sync::atomic::{AtomicU32, Ordering};

use super::SimError;
use super::counters::Accumulated;
use super::engine::Engine;
use super::guard::{Cut, Guard};
use super::model::Model;

/// What the threads accumulated, and whether Ctrl-C cut the run short.
pub(crate) struct Finished {
    pub parts: Vec<Accumulated>,
    pub interrupted: bool,
}

/// Runs trials `0..trials` of `m` on `threads` threads under `guard`.
pub(crate) fn run(
    m: &Model,
    seed: u64,
    trials: u32,
    threads: usize,
    guard: &Guard,
) -> Result<Finished, SimError> {
    let threads = threads.clamp(1, trials.max(1) as usize);
    let targets: Vec<bool> = m.services.iter().map(|s| s.target).collect();
    let next = AtomicU32::new(0);
    // Batches small enough to balance the threads, large enough that the
    // shared counter is not contended.
    let batch = (trials / (threads as u32 * 16)).clamp(1, 256);
    let work = || -> Result<(Accumulated, bool), SimError> {
        let mut engine = Engine::new(m);
        let mut acc = Accumulated::new(m.services.len(), m.layers.len());
        let mut interrupted = false;
        'trials: loop {
            let start = next.fetch_add(batch, Ordering::Relaxed);
            if start >= trials {
                break;
            }
            for i in start..start.saturating_add(batch).min(trials) {
                engine.run_trial(seed.wrapping_add(u64::from(i)), guard);
                match engine.cut {
                    Some(Cut::Interrupted) => {
                        interrupted = true;
                        break 'trials;
                    }
                    Some(cut) => {
                        return Err(SimError::Exceeded {
                            memory: cut == Cut::Memory,
                            attempts: guard.used.load(Ordering::Relaxed) + engine.work,
                            budget: guard.budget,
                        });
                    }
                    None => {}
                }
                if engine.stalled {
                    return Err(SimError::Stalled);
                }
                acc.add(i, &engine.counts, &targets);
                guard.finished(engine.work);
            }
            if guard.interrupted() {
                interrupted = true;
                break;
            }
        }
        acc.histograms = std::mem::take(&mut engine.histograms);
        Ok((acc, interrupted))
    };
    let results = if threads == 1 {
        vec![work()]
    } else {
        std::thread::scope(|scope| {
            let handles = (0..threads)
                .map(|i| {
                    std::thread::Builder::new()
                        .name(format!("retrylint-sim-{i}"))
                        .spawn_scoped(scope, work)
                        .map_err(SimError::Thread)
                })
                .collect::<Vec<_>>();
            handles
                .into_iter()
                .map(|h| match h.map(|h| h.join()) {
                    Ok(Ok(result)) => result,
                    Ok(Err(panic)) => std::panic::resume_unwind(panic),
                    Err(e) => Err(e),
                })
                .collect()
        })
    };
    let mut finished = Finished {
        parts: Vec::with_capacity(threads),
        interrupted: false,
    };
    for r in results {
        let (acc, interrupted) = r?;
        finished.parts.push(acc);
        finished.interrupted |= interrupted;
    }
    Ok(finished)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::estimate::WorkBudget;

    fn model() -> Model {
        let t = crate::topology::load_str(
            "version: 1\nentry: a\nservices:\n  a: { calls: [ { to: b, retry: { max_attempts: 3 } } ] }\n  b: {}\n",
            "t.yaml",
            "t",
            &Default::default(),
        )
        .unwrap();
        let s = crate::faults::load("total-outage").unwrap();
        let load = crate::run::LoadSettings::new(None, Some(1), Some(10_000), None, Some(1))
            .unwrap()
            .in_virtual_time();
        Model::new(&t, &s, &load).unwrap()
    }

    #[test]
    fn a_run_past_its_budget_stops_while_running() {
        let m = model();
        // Each user request makes 1 + 3 attempts; 10,000 of them need 40,000.
        let guard = Guard::new(
            WorkBudget {
                attempts: 10_000,
                ..WorkBudget::DEFAULT
            },
            None,
        );
        match run(&m, 1, 4, 1, &guard) {
            Err(SimError::Exceeded {
                memory: false,
                attempts,
                ..
            }) => assert!(attempts > 10_000, "{attempts}"),
            other => panic!(
                "expected the budget to stop it: {:?}",
                other.map(|f| f.parts.len())
            ),
        }
        let tight = Guard::new(
            WorkBudget {
                attempts: u64::MAX,
                memory: 1,
            },
            None,
        );
        assert!(matches!(
            run(&m, 1, 1, 1, &tight),
            Err(SimError::Exceeded { memory: true, .. })
        ));
    }

    #[test]
    fn an_interrupt_returns_the_trials_completed() {
        let m = model();
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let guard = Guard::new(WorkBudget::DEFAULT, Some(flag));
        let f = run(&m, 1, 8, 2, &guard).expect("interrupted, not failed");
        assert!(f.interrupted);
        assert_eq!(f.parts.iter().map(|p| p.trials.len()).sum::<usize>(), 0);
    }
}
