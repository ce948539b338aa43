//! What a rule asks to change, said in the topology's terms (this layer's
//! `max_attempts`, that call's `timeout`), not in bytes. `fix::resolve`, above
//! this module, finds the YAML behind each change; rules never see the
//! located tree.

use crate::policy::Condition;
use crate::topology::ServiceId;

/// A layer by where it sits: the client layer, or layer `index` of call
/// `call` of `service` (0 is the call's own app layer, then its `via` layers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LayerAt {
    pub call: Option<(ServiceId, usize)>,
    pub index: usize,
}

impl LayerAt {
    pub(crate) const CLIENT: LayerAt = LayerAt {
        call: None,
        index: 0,
    };

    pub(crate) fn call(service: ServiceId, call: usize, index: usize) -> Self {
        LayerAt {
            call: Some((service, call)),
            index,
        }
    }
}

/// Which mapping of a layer a key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    /// The call itself (`- to: api`): `idempotency_key`, `circuit_breaker`.
    Call,
    /// The layer: the call for the app layer, the `via` item, the `client:`
    /// mapping. `timeout` lives here.
    Layer,
    /// The layer's `retry:` policy.
    Retry,
    /// The layer's `circuit_breaker:`.
    Breaker,
    /// The call's `hedging:`.
    Hedging,
}

/// One change to the topology.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change {
    /// `key: value` in a section: the value replaced where it is written,
    /// the entry inserted where it is not.
    Set {
        at: LayerAt,
        section: Section,
        key: &'static str,
        value: String,
    },
    /// Fields of the retry policy's `backoff`. `whole`: the fields make a
    /// complete backoff, which may replace one written as a single word or
    /// be inserted when there is none.
    SetBackoff {
        at: LayerAt,
        fields: Vec<(&'static str, String)>,
        whole: bool,
    },
    /// Items removed from the retry policy's `retry_on`.
    RemoveRetryOn {
        at: LayerAt,
        conditions: Vec<Condition>,
    },
}

/// A rule's proposed fix: what it does, in words, and the changes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Intent {
    pub description: String,
    pub changes: Vec<Change>,
    /// Why the fix must not be made automatically, whatever the file: it
    /// would rest on a figure the topology does not give.
    pub refused: Option<String>,
}

impl Intent {
    pub(crate) fn new(description: impl Into<String>) -> Self {
        Intent {
            description: description.into(),
            changes: Vec::new(),
            refused: None,
        }
    }

    /// The fix is offered as advice only, for `reason`.
    pub(crate) fn refuse(mut self, reason: impl Into<String>) -> Self {
        self.refused = Some(reason.into());
        self
    }

    pub(crate) fn set(
        mut self,
        at: LayerAt,
        section: Section,
        key: &'static str,
        value: impl Into<String>,
    ) -> Self {
        self.changes.push(Change::Set {
            at,
            section,
            key,
            value: value.into(),
        });
        self
    }

    pub(crate) fn backoff(
        mut self,
        at: LayerAt,
        fields: &[(&'static str, &str)],
        whole: bool,
    ) -> Self {
        self.changes.push(Change::SetBackoff {
            at,
            fields: fields.iter().map(|(k, v)| (*k, (*v).to_owned())).collect(),
            whole,
        });
        self
    }

    pub(crate) fn remove_retry_on(mut self, at: LayerAt, conditions: Vec<Condition>) -> Self {
        self.changes.push(Change::RemoveRetryOn { at, conditions });
        self
    }
}
