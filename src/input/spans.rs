//! Where a retry policy's fields were written: one struct for the importers'
//! facts (positions in the file they read) and the topology (positions in
//! the topology, or at the place that names a preset that filled a field in).

use super::Pos;

/// Positions of a policy's fields in its source file. A field a preset
/// filled in points at the place that names the preset.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PolicySpans {
    /// The `retry:` value (or what stands for it); `None` when the layer
    /// does not declare one.
    pub policy: Option<Pos>,
    pub max_attempts: Option<Pos>,
    pub backoff: Option<Pos>,
    pub(crate) backoff_kind: Option<Pos>,
    pub jitter: Option<Pos>,
    pub cap: Option<Pos>,
    pub retry_on: Option<Pos>,
    pub honor_retry_after: Option<Pos>,
    pub budget: Option<Pos>,
}

impl PolicySpans {
    /// Every position moved by `f` (from one file's places to another's).
    pub fn map(self, f: impl Fn(Option<Pos>) -> Option<Pos>) -> Self {
        PolicySpans {
            policy: f(self.policy),
            max_attempts: f(self.max_attempts),
            backoff: f(self.backoff),
            backoff_kind: f(self.backoff_kind),
            jitter: f(self.jitter),
            cap: f(self.cap),
            retry_on: f(self.retry_on),
            honor_retry_after: f(self.honor_retry_after),
            budget: f(self.budget),
        }
    }
}
