//! Merge keys (`<<: *defaults`, `<<: [*a, *b]`), as serde-saphyr merges them: a
//! merge value is recorded, and when its mapping ends, each entry it brings is
//! added unless the mapping already has that key. Explicit keys win, then earlier
//! merges over later ones; nested merges inside merged mappings count too.

use std::collections::HashSet;

use super::anchors::recursive_alias_error;
use super::event::{Event, EventKind, node_end};
use super::keys::{duplicate_key_error, fingerprint_of_events};
use super::resolve::scalar_is_null;
use super::{Pos, SyntaxError, error};

pub(super) fn merge_value_error(pos: Pos) -> SyntaxError {
    error(
        pos,
        "YAML merge value must be mapping or sequence of mappings",
    )
}

/// One entry a merge brings: its key's events, then its value's.
pub(super) struct MergedEntry<'a> {
    pub(super) events: Vec<Event<'a>>,
}

/// The entries a recorded merge value brings, merged at `merged_at`: a mapping's,
/// a list of mappings' (lists nested in it too), or none for null.
pub(super) fn merged_entries<'a>(
    events: &[Event<'a>],
    merged_at: Pos,
    out: &mut Vec<MergedEntry<'a>>,
) -> Result<(), SyntaxError> {
    let first = &events[0];
    match &first.kind {
        EventKind::Scalar(v, style, kind, _) if scalar_is_null(*kind, v, *style) => Ok(()),
        EventKind::RecursiveAlias(_) => Err(recursive_alias_error(first.pos)),
        EventKind::MapStart(..) => entries_of_map(events, merged_at, out),
        EventKind::SeqStart(..) => {
            let mut i = 1;
            while i < events.len() && !matches!(events[i].kind, EventKind::SeqEnd) {
                let end = node_end(events, i);
                merged_entries(&events[i..end], events[i].used_within(merged_at), out)?;
                i = end;
            }
            Ok(())
        }
        _ => Err(merge_value_error(first.pos)),
    }
}

/// A merged mapping's entries: its own (no key twice), then those it merges itself.
fn entries_of_map<'a>(
    events: &[Event<'a>],
    merged_at: Pos,
    out: &mut Vec<MergedEntry<'a>>,
) -> Result<(), SyntaxError> {
    let mut fields: Vec<MergedEntry<'a>> = Vec::new();
    let mut nested = Vec::new();
    let mut i = 1;
    while i < events.len() && !matches!(events[i].kind, EventKind::MapEnd) {
        // A key is looked at before it is recorded; a value only when merged.
        if let EventKind::RecursiveAlias(_) = events[i].kind {
            return Err(recursive_alias_error(events[i].pos));
        }
        let key_end = node_end(events, i);
        let end = node_end(events, key_end);
        if key_end == i + 1 && events[i].is_merge_key() {
            let value = &events[key_end..end];
            let first = &value[0];
            let at = first.used_within(merged_at);
            match &first.kind {
                EventKind::RecursiveAlias(_) => return Err(recursive_alias_error(first.pos)),
                EventKind::SeqStart(..) => {
                    let mut j = 1;
                    while j < value.len() && !matches!(value[j].kind, EventKind::SeqEnd) {
                        let item_end = node_end(value, j);
                        merged_entries(
                            &value[j..item_end],
                            value[j].used_within(merged_at),
                            &mut nested,
                        )?;
                        j = item_end;
                    }
                }
                _ => merged_entries(value, at, &mut nested)?,
            }
        } else {
            fields.push(MergedEntry {
                events: events[i..end]
                    .iter()
                    .map(|e| e.merged_at(merged_at))
                    .collect(),
            });
        }
        i = end;
    }
    let mut seen = HashSet::with_capacity(fields.len());
    for f in &fields {
        if !seen.insert(fingerprint_of_events(&f.events, 0).0) {
            let key = &f.events[0];
            return Err(duplicate_key_error(key.key_text(), key.pos));
        }
    }
    out.extend(fields);
    out.extend(nested);
    Ok(())
}
