//! One row of a policy comparison (`simulate a.yaml b.yaml …`): a topology's
//! figures under the compared scenario. Plain data, like the run report.

use serde::{Deserialize, Serialize};

use super::goodput::Verdict;
use super::report::{LatencyMs, Spread};

/// One topology's figures under the compared scenario, per trial over all
/// trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    /// The topology's name.
    pub topology: String,
    /// The file it was read from.
    pub file: String,
    pub fault: String,
    /// The scenario's target as written (`leaves`, `db`, …).
    pub target: String,
    /// The services that target resolves to here, in topology order.
    pub(crate) target_services: Vec<String>,
    pub trials: u64,
    /// User requests per trial (median).
    pub requests: u64,
    /// Attempts that arrived at the fault target(s) in a trial.
    pub(crate) attempts_at_target: Spread,
    /// Attempts that arrived at any service in a trial.
    pub attempts_total: Spread,
    /// Median attempts at the target per user request.
    pub(crate) amplification_at_target: f64,
    /// User requests that succeeded in a trial.
    pub succeeded: Spread,
    /// Succeeded ÷ user requests, over all trials together.
    pub success_ratio: f64,
    /// Share of trials in which every user request succeeded.
    pub all_succeeded_ratio: f64,
    /// Completion time: when the last success came, over the trials that had
    /// one; `None` when no trial had a success.
    pub last_success_ms: Option<Spread>,
    /// End-to-end latency over every user request of every trial.
    pub latency_ms: LatencyMs,
    /// Whether goodput came back after the fault, where the run reports
    /// goodput (a service queues or the load surges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Verdict>,
}
