//! Trials across threads. Trial i runs with seed + i on whichever thread takes
//! it; threads take small batches of trial indexes from a shared counter, each
//! reusing one engine. What a thread returns is integer sums, merged
//! histograms and per-trial figures tagged with their index, so the merged
//! result is the same for any number of threads and any scheduling.

use std::sync::atomic::{AtomicU32, Ordering};

use super::SimError;
use super::counters::Accumulated;
use super::engine::Engine;
use super::model::Model;

/// Runs trials `0..trials` of `m` on `threads` threads.
pub(crate) fn run(
    m: &Model,
    seed: u64,
    trials: u32,
    threads: usize,
) -> Result<Vec<Accumulated>, SimError> {
    let threads = threads.clamp(1, trials.max(1) as usize);
    let targets: Vec<bool> = m.services.iter().map(|s| s.target).collect();
    let next = AtomicU32::new(0);
    // Batches small enough to balance the threads, large enough that the
    // shared counter is not contended.
    let batch = (trials / (threads as u32 * 16)).clamp(1, 256);
    let work = || -> Result<Accumulated, SimError> {
        let mut engine = Engine::new(m);
        let mut acc = Accumulated::new(m.services.len(), m.layers.len());
        loop {
            let start = next.fetch_add(batch, Ordering::Relaxed);
            if start >= trials {
                break;
            }
            for i in start..start.saturating_add(batch).min(trials) {
                engine.run_trial(seed.wrapping_add(u64::from(i)));
                if engine.stalled {
                    return Err(SimError::Stalled);
                }
                acc.add(i, &engine.counts, &targets);
            }
        }
        acc.histograms = std::mem::take(&mut engine.histograms);
        Ok(acc)
    };
    if threads == 1 {
        return Ok(vec![work()?]);
    }
    std::thread::scope(|scope| {
        let handles = (0..threads)
            .map(|i| {
                std::thread::Builder::new()
                    .name(format!("retrylint-sim-{i}"))
                    .spawn_scoped(scope, work)
                    .map_err(SimError::Thread)
            })
            .collect::<Vec<_>>();
        let mut parts = Vec::with_capacity(threads);
        let mut first_error = None;
        for h in handles {
            match h.map(|h| h.join()) {
                Ok(Ok(Ok(acc))) => parts.push(acc),
                Ok(Ok(Err(e))) | Err(e) => {
                    first_error.get_or_insert(e);
                }
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(parts),
        }
    })
}
