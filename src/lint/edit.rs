//! A byte edit of a source text, and when two of them collide: what a
//! finding's fix is made of. `fix` resolves a rule's intent into edits and
//! applies them; the reporters show them (JSON `fix`, SARIF `fixes`).

use serde::Serialize;

/// What an edit does, for people and for tools that show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    /// Replaces a value (a scalar, or a shorthand written as one word).
    Replace,
    /// Inserts `key: value` into a mapping.
    Insert,
    /// Removes one item from a sequence.
    Remove,
}

/// One machine-applicable change: write `text` in place of the bytes
/// `start..end` of `file` (an insertion has `start == end`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub kind: EditKind,
    pub file: String,
    /// Where the replaced range starts, 1-based; the column counts characters
    /// (Unicode code points), as every position retrylint prints does.
    pub line: u32,
    pub column: u32,
    /// Where it ends (just past its last character; equal to the start for
    /// an insertion).
    pub(crate) end_line: u32,
    pub(crate) end_column: u32,
    /// The replaced bytes: `start..end` in the file's text.
    pub start: u32,
    pub end: u32,
    /// What is written in their place.
    pub text: String,
    /// The key an insertion adds (two insertions of one key into one mapping
    /// collide even though neither replaces a byte).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl Edit {
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Why `self` cannot be made together with `other`, if it cannot; `None`
    /// when they are independent or the same edit.
    pub(crate) fn conflict(&self, other: &Edit) -> Option<String> {
        if self.file != other.file || self.same_as(other) {
            return None;
        }
        // Non-empty overlap, or an insertion strictly inside a replaced range.
        let overlap = self.start < other.end && other.start < self.end;
        let same_key = self.kind == EditKind::Insert
            && other.kind == EditKind::Insert
            && self.start == other.start
            && self.key.is_some()
            && self.key == other.key;
        (overlap || same_key).then(|| {
            format!(
                "it overlaps another fix's edit at line {}, column {}",
                other.line, other.column
            )
        })
    }

    /// The same change (two rules that propose one edit make it once).
    pub(crate) fn same_as(&self, other: &Edit) -> bool {
        self.file == other.file
            && self.start == other.start
            && self.end == other.end
            && self.text == other.text
    }
}
