//! Applying a set of byte edits to a source text (the edits themselves, and
//! how two collide, are `lint::Edit`'s: a finding carries them). Everything
//! outside an edit's range is copied byte for byte, which is what keeps
//! comments, key order and indentation.

use crate::lint::Edit;

/// Why a set of edits could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Skipped {
    pub reason: String,
}

/// Edits accepted so far, none colliding with another, ordered by where they
/// start. Accepted edits never overlap, so their ends grow with their
/// starts, and a new edit only needs comparing with its neighbours: checking
/// thousands of fixes stays O(n log n).
#[derive(Debug, Clone, Default)]
pub(crate) struct EditSet {
    by_start: std::collections::BTreeMap<(u32, u32, usize), Edit>,
}

impl EditSet {
    pub(super) fn new() -> Self {
        EditSet::default()
    }

    /// Whether the same edit is already in.
    pub(super) fn contains(&self, e: &Edit) -> bool {
        self.by_start
            .range((e.start, e.end, 0)..=(e.start, e.end, usize::MAX))
            .any(|(_, a)| a.same_as(e))
    }

    /// Why `e` collides with an edit already in, if it does.
    pub(crate) fn conflict(&self, e: &Edit) -> Option<String> {
        for (_, a) in self.by_start.range(..=(e.end, u32::MAX, usize::MAX)).rev() {
            if a.end < e.start {
                break;
            }
            if let Some(reason) = e.conflict(a) {
                return Some(reason);
            }
        }
        None
    }

    /// Adds `e`, which the caller checked with `conflict`; the insertion
    /// order breaks ties between insertions at one point.
    pub(super) fn insert(&mut self, e: Edit) {
        let seq = self.by_start.len();
        self.by_start.insert((e.start, e.end, seq), e);
    }

    /// The edits, in the order `apply` makes them.
    pub(crate) fn into_vec(self) -> Vec<Edit> {
        self.by_start.into_values().collect()
    }
}

/// `text` with every edit made. Edits are applied in byte order; insertions at
/// one point keep the order they are given in (the more indented line first,
/// see below); an edit given twice is made once. Overlapping edits, or a range
/// outside `text` or not on a character boundary, are refused as a whole:
/// nothing is half applied.
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, Skipped> {
    let mut set = EditSet::new();
    for e in edits {
        if e.start > e.end
            || e.end as usize > text.len()
            || !text.is_char_boundary(e.start as usize)
            || !text.is_char_boundary(e.end as usize)
        {
            return Err(Skipped {
                reason: format!(
                    "the edit at line {}, column {} lies outside the text ({} bytes)",
                    e.line,
                    e.column,
                    text.len()
                ),
            });
        }
        if set.contains(e) {
            continue;
        }
        if let Some(reason) = set.conflict(e) {
            return Err(Skipped { reason });
        }
        set.insert(e.clone());
    }
    let mut order = set.into_vec();
    // Stable: an insertion at `p` goes before a replacement that starts at
    // `p`; of the lines inserted at one point, the more indented go first
    // (they belong to a mapping nested in the other's), and otherwise the
    // order given is kept.
    order.sort_by_key(|e| (e.start, e.end, std::cmp::Reverse(indent(&e.text))));
    let extra: usize = order.iter().map(|e| e.text.len()).sum();
    let mut out = String::with_capacity(text.len() + extra);
    let mut cursor = 0usize;
    for e in order {
        out.push_str(&text[cursor..e.start as usize]);
        out.push_str(&e.text);
        cursor = e.end as usize;
    }
    out.push_str(&text[cursor..]);
    Ok(out)
}

/// The indentation of an inserted line (after a leading newline).
fn indent(text: &str) -> usize {
    let line = text.strip_prefix('\n').unwrap_or(text);
    line.len() - line.trim_start_matches(' ').len()
}

/// An edit of bytes `start..end` of `t.yaml`, all on line 1: for tests.
#[cfg(test)]
pub(crate) fn edit_at(kind: crate::lint::EditKind, start: u32, end: u32, text: &str) -> Edit {
    Edit {
        kind,
        file: "t.yaml".into(),
        line: 1,
        column: start + 1,
        end_line: 1,
        end_column: end + 1,
        start,
        end,
        text: text.into(),
        key: None,
    }
}

#[cfg(test)]
mod tests {
    use super::edit_at as edit;
    use super::*;
    use crate::lint::EditKind;

    #[test]
    fn edits_apply_in_byte_order_and_keep_the_rest() {
        let text = "a: 1 # one\nb: [2, 3]\n";
        let edits = [
            edit(EditKind::Remove, 16, 19, ""),
            edit(EditKind::Replace, 3, 4, "9"),
        ];
        assert_eq!(apply(text, &edits).unwrap(), "a: 9 # one\nb: [2]\n");
    }

    #[test]
    fn insertions_at_one_point_keep_their_order_and_duplicates_apply_once() {
        let text = "{ a: 1 }";
        let x = edit(EditKind::Insert, 6, 6, ", b: 2");
        let y = edit(EditKind::Insert, 6, 6, ", c: 3");
        assert_eq!(
            apply(text, &[x.clone(), y, x]).unwrap(),
            "{ a: 1, b: 2, c: 3 }"
        );
    }

    #[test]
    fn lines_inserted_at_one_point_go_deepest_first() {
        let text = "a:\n  b:\n    c: 1\nd: 2\n";
        let outer = edit(EditKind::Insert, 17, 17, "  x: 1\n");
        let inner = edit(EditKind::Insert, 17, 17, "    y: 2\n");
        assert_eq!(
            apply(text, &[outer, inner]).unwrap(),
            "a:\n  b:\n    c: 1\n    y: 2\n  x: 1\nd: 2\n"
        );
    }

    #[test]
    fn overlapping_edits_are_refused_with_the_place() {
        let a = edit(EditKind::Replace, 0, 4, "x");
        let b = edit(EditKind::Replace, 2, 6, "y");
        let err = apply("012345", &[a.clone(), b.clone()]).unwrap_err();
        assert_eq!(
            err.reason,
            "it overlaps another fix's edit at line 1, column 1"
        );
        // An insertion strictly inside a replaced range collides; one at its
        // end does not.
        assert!(edit(EditKind::Insert, 2, 2, "z").conflict(&a).is_some());
        assert!(edit(EditKind::Insert, 4, 4, "z").conflict(&a).is_none());
        assert_eq!(
            apply("012345", &[a, edit(EditKind::Insert, 4, 4, "z")]).unwrap(),
            "xz45"
        );
    }

    #[test]
    fn two_insertions_of_one_key_collide() {
        let mut a = edit(EditKind::Insert, 3, 3, "k: 1\n");
        let mut b = edit(EditKind::Insert, 3, 3, "k: 2\n");
        a.key = Some("k".into());
        b.key = Some("k".into());
        assert!(a.conflict(&b).is_some());
    }

    #[test]
    fn a_range_outside_the_text_is_refused() {
        assert!(apply("ab", &[edit(EditKind::Replace, 1, 5, "")]).is_err());
    }
}
