//! What a rule reports: plain data for the reporters.

use serde::Serialize;

use super::edit::Edit;
use crate::topology::Pos;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A call, by its ends.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct CallRef {
    pub from: String,
    pub to: String,
}

/// One hazard at one place in the topology.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub code: &'static str,
    pub rule: &'static str,
    pub severity: Severity,
    /// What is wrong, lowercase, no final period.
    pub message: String,
    /// The concrete fix.
    pub help: String,
    /// The service the finding is about (the caller, for a call).
    pub service: String,
    // Boxed, as `fix` is: a large topology has tens of thousands of
    // findings, each moved from its rule's list to its place in the file's
    // order; inline, these two made a finding 312 bytes where it is now 208.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<Box<CallRef>>,
    /// The retry layer, when the finding is about one: `app`, `client`, a `via` name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The help's edit as data, when the help proposes a concrete one
    /// (absent from JSON when the rule has none for this finding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Box<Fix>>,
    /// A few words shown under the caret.
    #[serde(skip)]
    pub label: String,
}

impl Finding {
    pub fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }
}

/// A finding's fix: what it does, in words, and the edits that do it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fix {
    /// What the fix does, e.g. "set `max_attempts: 1` on the call web → api".
    pub description: String,
    /// The byte edits; empty when refused.
    pub edits: Vec<Edit>,
    /// Why it cannot be made safely, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}
