//! Choosing which fixes to make together: in the findings' order, a fix whose
//! edits collide with an earlier accepted fix is skipped (whole) with the
//! reason, so the outcome never depends on anything but the findings.

use serde::Serialize;

use super::edit::EditSet;
use crate::lint::{Edit, Finding};

/// A fix made or skipped, named by its finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixNote {
    pub code: &'static str,
    pub rule: &'static str,
    pub service: String,
    pub file: String,
    /// The finding's position (in the text the fix was planned on).
    pub line: u32,
    pub column: u32,
    pub description: String,
    /// Why it was skipped; `None` for a fix that was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The edits to make, and which fixes they come from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Every accepted fix's edits, each once, for [`super::apply`].
    pub edits: Vec<Edit>,
    pub applied: Vec<FixNote>,
    pub skipped: Vec<FixNote>,
}

fn note(f: &Finding, description: &str, reason: Option<String>) -> FixNote {
    FixNote {
        code: f.code,
        rule: f.rule,
        service: f.service.clone(),
        file: f.file.clone(),
        line: f.line,
        column: f.column,
        description: description.to_owned(),
        reason,
    }
}

/// The fixes of `findings` that can be made together.
pub fn plan(findings: &[Finding]) -> Plan {
    let mut p = Plan::default();
    let mut accepted = EditSet::new();
    for f in findings {
        let Some(fix) = &f.fix else {
            continue;
        };
        if let Some(reason) = &fix.refused {
            p.skipped
                .push(note(f, &fix.description, Some(reason.clone())));
            continue;
        }
        // Edits another fix already makes are made once.
        let new: Vec<&Edit> = fix.edits.iter().filter(|e| !accepted.contains(e)).collect();
        let clash = new.iter().find_map(|e| accepted.conflict(e));
        if let Some(reason) = clash {
            p.skipped.push(note(f, &fix.description, Some(reason)));
            continue;
        }
        for e in new {
            accepted.insert(e.clone());
            p.edits.push(e.clone());
        }
        p.applied.push(note(f, &fix.description, None));
    }
    p
}
