//! The rule catalogue: one file per rule, registered by one line here, in code
//! order. Codes are stable and never reused.

mod breaker_inside_retry;
mod deadline_overrun;
mod declared_retry_unseen;
mod excessive_attempts;
mod hedging_delay_below_p50;
mod ignores_retry_after;
mod immediate_retry;
mod missing_budget;
mod missing_circuit_breaker;
mod missing_jitter;
mod missing_timeout;
mod multi_layer_retry;
mod non_idempotent_hedging;
mod non_idempotent_retry;
mod retries_permanent_error;
mod retry_amplification;
mod synchronized_half_open;
mod timeout_below_latency;
mod unbounded_retry;
mod uncapped_backoff;
mod undeclared_retry_layer;
mod unreachable_attempts;

use super::rule::Rule;

pub static RULES: &[&Rule] = &[
    &retry_amplification::RULE,
    &multi_layer_retry::RULE,
    &non_idempotent_retry::RULE,
    &missing_jitter::RULE,
    &immediate_retry::RULE,
    &excessive_attempts::RULE,
    &deadline_overrun::RULE,
    &unreachable_attempts::RULE,
    &retries_permanent_error::RULE,
    &ignores_retry_after::RULE,
    &missing_timeout::RULE,
    &missing_budget::RULE,
    &timeout_below_latency::RULE,
    &uncapped_backoff::RULE,
    &unbounded_retry::RULE,
    &breaker_inside_retry::RULE,
    &synchronized_half_open::RULE,
    &non_idempotent_hedging::RULE,
    &hedging_delay_below_p50::RULE,
    &missing_circuit_breaker::RULE,
    &undeclared_retry_layer::RULE,
    &declared_retry_unseen::RULE,
];

/// The index in `RULES` of a rule by code (any case) or name.
pub fn find_rule(code_or_name: &str) -> Option<usize> {
    RULES.iter().position(|r| {
        r.code.eq_ignore_ascii_case(code_or_name) || r.name.eq_ignore_ascii_case(code_or_name)
    })
}
