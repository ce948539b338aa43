//! Inference again on a saved probe: the `--format json` report of an
//! earlier run holds every arrival of every run, so the policy can be
//! re-read from it — by a newer retrylint, or by the tests, which replay
//! real clients' recorded timelines without running them (no timing
//! flakiness, no client to install).

use std::time::Duration;

use serde::Deserialize;

use super::record::ScenarioRecord;
use super::runner::ClientCommand;
use super::{ProbeOptions, ProbeReport, Scenario, assemble};

/// The parts of a saved report the inference reads.
#[derive(Debug, Deserialize)]
struct Saved {
    command: Vec<String>,
    runs: u32,
    time_bound_ms: f64,
    scenarios: Vec<ScenarioRecord>,
}

/// Why a saved report cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(
        "{path}:{line}:{column}: not a saved probe report ({reason}); write one with `retrylint probe --format json -- CLIENT > FILE`"
    )]
    Parse {
        path: String,
        line: usize,
        column: usize,
        reason: String,
    },
    #[error("{path}: scenario `{name}` is not one this retrylint knows; use {known}")]
    Scenario {
        path: String,
        name: String,
        known: String,
    },
}

/// Re-infers the policy from a saved report's records; `options` give the
/// method and the layer to hold the client to, as on a live probe.
pub fn replay(text: &str, path: &str, options: &ProbeOptions) -> Result<ProbeReport, ReplayError> {
    let saved: Saved = serde_json::from_str(text).map_err(|e| ReplayError::Parse {
        path: path.to_owned(),
        line: e.line(),
        column: e.column(),
        reason: e
            .to_string()
            .split(" at line")
            .next()
            .unwrap_or("")
            .to_owned(),
    })?;
    if let Some(bad) = saved
        .scenarios
        .iter()
        .find(|s| Scenario::named(&s.name).is_none())
    {
        return Err(ReplayError::Scenario {
            path: path.to_owned(),
            name: bad.name.clone(),
            known: Scenario::names().join(", "),
        });
    }
    let cmd = ClientCommand::from_argv(&saved.command).unwrap_or_else(|| {
        ClientCommand::from_argv(&["(unknown client)".to_owned()]).expect("one argument")
    });
    let bound = Duration::from_secs_f64((saved.time_bound_ms / 1e3).clamp(0.001, 86_400.0));
    let opts = ProbeOptions {
        runs: saved.runs,
        bound,
        ..options.clone()
    };
    Ok(assemble(&cmd, &opts, saved.scenarios, Duration::ZERO))
}
