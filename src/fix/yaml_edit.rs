//! The three edits on the located tree, in flow and block style: replace a
//! value, insert `key: value` into a mapping, remove items from a sequence.
//! Each returns the byte edit, or why it cannot be made safely.

use super::doc::{Doc, get};
use crate::input::yaml::{Node, Value};
use crate::lint::{Edit, EditKind};

/// `node`'s value replaced by `value`, or nothing when it already reads so.
pub(super) fn replace(
    doc: &Doc,
    node: &Node,
    value: &str,
    what: &str,
) -> Result<Option<Edit>, String> {
    if let Some(why) = doc.unsafe_to_edit(node, what) {
        return Err(why);
    }
    if matches!(node.value, Value::Seq(_) | Value::Map(_)) {
        return Err(format!(
            "{what} is written as a collection, not a single value"
        ));
    }
    let s = node.span;
    if doc.written(node) == value {
        return Ok(None);
    }
    // `key:` with nothing after the colon: the value needs its own space.
    let text = if s.is_empty() {
        format!(" {value}")
    } else {
        value.to_owned()
    };
    let (end, text) = keep_comment_column(doc, node, text);
    Ok(Some(doc.edit(EditKind::Replace, s.start, end, text)))
}

/// A comment aligned after the value (two or more spaces, then `#`) stays in
/// its column: a longer value takes from the spaces (leaving one), a shorter
/// one is padded. Returns the end of the replaced range and the text.
fn keep_comment_column(doc: &Doc, node: &Node, mut text: String) -> (u32, String) {
    let end = node.span.end;
    let rest = doc.text[end as usize..].split('\n').next().unwrap_or("");
    let spaces = rest.len() - rest.trim_start_matches(' ').len();
    if spaces < 2 || !rest[spaces..].starts_with('#') || text.contains('\n') {
        return (end, text);
    }
    let old = doc.written(node).chars().count();
    let new = text.chars().count();
    if new > old {
        return (end + (new - old).min(spaces - 1) as u32, text);
    }
    text.push_str(&" ".repeat(old - new));
    (end, text)
}

/// `key: value` added to the mapping `map`: in block style a new line at the
/// mapping's indentation after its last entry (and after that line's
/// comment), in flow style `, key: value` after the last entry.
pub(super) fn insert(
    doc: &Doc,
    map: &Node,
    key: &str,
    value: &str,
    what: &str,
) -> Result<Edit, String> {
    if let Some(why) = doc.unsafe_to_edit(map, what) {
        return Err(why);
    }
    let text = doc.text;
    let s = map.span;
    let entry = format!("{key}: {value}");
    let mut edit = match &map.value {
        // `db:` (nothing) or `db: ~`: the mapping is written from scratch.
        Value::Null if s.is_empty() => {
            doc.edit(EditKind::Insert, s.start, s.end, format!(" {{ {entry} }}"))
        }
        Value::Null => doc.edit(EditKind::Replace, s.start, s.end, format!("{{ {entry} }}")),
        Value::Map(entries) => {
            // Entries a merge key brought are written elsewhere.
            let own: Vec<&(Node, Node)> = entries
                .iter()
                .filter(|(k, _)| s.start <= k.span.start && k.span.end <= s.end)
                .collect();
            let flow = text[s.range()].starts_with('{');
            let last_end = own.iter().map(|(k, v)| k.span.end.max(v.span.end)).max();
            // Only a merge key written (`{ <<: *d }`): after what is written.
            let merged_only = || {
                let inner = &text[s.start as usize + 1..s.end as usize - 1];
                let kept = inner.trim_end();
                (!kept.is_empty()).then(|| s.start + 1 + kept.len() as u32)
            };
            match (flow, last_end) {
                (true, None) => match merged_only() {
                    Some(end) => doc.edit(EditKind::Insert, end, end, format!(", {entry}")),
                    None => doc.edit(EditKind::Replace, s.start, s.end, format!("{{ {entry} }}")),
                },
                (true, Some(end)) => doc.edit(EditKind::Insert, end, end, format!(", {entry}")),
                (false, last_end) => {
                    // A block mapping of only a merge key spans that key.
                    let end = last_end.unwrap_or(s.end);
                    let first = own
                        .iter()
                        .map(|(k, _)| k.span.start)
                        .min()
                        .unwrap_or(s.start);
                    let line_start = text[..first as usize].rfind('\n').map_or(0, |i| i + 1);
                    let indent = " ".repeat(text[line_start..first as usize].chars().count());
                    match text[end as usize..].find('\n') {
                        Some(nl) => {
                            let at = end + nl as u32 + 1;
                            doc.edit(EditKind::Insert, at, at, format!("{indent}{entry}\n"))
                        }
                        None => {
                            let at = text.len() as u32;
                            doc.edit(EditKind::Insert, at, at, format!("\n{indent}{entry}"))
                        }
                    }
                }
            }
        }
        other => {
            return Err(format!(
                "{what} is written as {}, not a mapping",
                other.kind()
            ));
        }
    };
    edit.key = Some(key.to_owned());
    Ok(edit)
}

/// Items `remove` (indices, ascending) taken out of the sequence `seq`, the
/// value of `key`. Flow style: the item with the separator before it (after
/// it, for items before the first one kept). Block style: the item's line.
/// Removing every item leaves `[]`.
pub(crate) fn remove_items(
    doc: &Doc,
    key: &Node,
    seq: &Node,
    remove: &[usize],
    what: &str,
) -> Result<Vec<Edit>, String> {
    if let Some(why) = doc.unsafe_to_edit(seq, what) {
        return Err(why);
    }
    let text = doc.text;
    let items = match &seq.value {
        Value::Seq(items) => items.as_slice(),
        // `retry_on: 4xx`, one condition written alone.
        _ if remove == [0] => {
            let s = seq.span;
            return Ok(vec![doc.edit(
                EditKind::Remove,
                s.start,
                s.end,
                "[]".into(),
            )]);
        }
        _ => return Err(format!("{what} is not a list")),
    };
    if remove.is_empty() {
        return Ok(Vec::new());
    }
    let flow = text[seq.span.range()].starts_with('[');
    let all = remove.len() == items.len();
    if flow {
        if all {
            let (a, b) = (items[0].span.start, items[items.len() - 1].span.end);
            return Ok(vec![doc.edit(EditKind::Remove, a, b, String::new())]);
        }
        let first_kept = (0..items.len()).find(|i| !remove.contains(i)).unwrap_or(0);
        return Ok(remove
            .iter()
            .map(|&i| {
                let (a, b) = if i < first_kept {
                    (items[i].span.start, items[i + 1].span.start)
                } else {
                    (items[i - 1].span.end, items[i].span.end)
                };
                doc.edit(EditKind::Remove, a, b, String::new())
            })
            .collect());
    }
    let line_of = |item: &Node| -> Result<(u32, u32), String> {
        let start = text[..item.span.start as usize]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let prefix = &text[start..item.span.start as usize];
        if prefix.trim() != "-" {
            return Err(format!(
                "{what} has an item not written on a line of its own (`- item`)"
            ));
        }
        let end = text[item.span.end as usize..]
            .find('\n')
            .map_or(text.len(), |i| item.span.end as usize + i + 1);
        Ok((start as u32, end as u32))
    };
    if all {
        // `retry_on:` followed by nothing would read as null: write `[]`.
        let colon = text[key.span.end as usize..seq.span.start as usize]
            .find(':')
            .map(|i| key.span.end + i as u32 + 1)
            .ok_or_else(|| format!("{what}: no `:` after its key"))?;
        let (_, mut end) = line_of(&items[items.len() - 1])?;
        if text[..end as usize].ends_with('\n') {
            end -= 1;
        }
        return Ok(vec![doc.edit(EditKind::Remove, colon, end, " []".into())]);
    }
    remove
        .iter()
        .map(|&i| {
            let (a, b) = line_of(&items[i])?;
            Ok(doc.edit(EditKind::Remove, a, b, String::new()))
        })
        .collect()
}

/// A value written as one word expanded into a flow mapping with one more
/// entry: a call `- db` becomes `{ to: db, timeout: 2s }`, a `via` layer
/// `istio-default` becomes `{ name: istio-default, retry: istio-default, … }`.
pub(super) fn expand(
    doc: &Doc,
    node: &Node,
    keys: &[&str],
    key: &str,
    value: &str,
    what: &str,
) -> Result<Edit, String> {
    if let Some(why) = doc.unsafe_to_edit(node, what) {
        return Err(why);
    }
    let word = doc.written(node);
    let mut entries: Vec<String> = keys.iter().map(|k| format!("{k}: {word}")).collect();
    entries.push(format!("{key}: {value}"));
    let (end, text) = keep_comment_column(doc, node, format!("{{ {} }}", entries.join(", ")));
    let mut edit = doc.edit(EditKind::Replace, node.span.start, end, text);
    edit.key = Some(key.to_owned());
    Ok(edit)
}

/// The entry `key` of `map`, replaced or inserted.
pub(super) fn set(
    doc: &Doc,
    map: &Node,
    key: &str,
    value: &str,
    what: &str,
) -> Result<Option<Edit>, String> {
    match get(map, key) {
        Some((_, v)) => replace(doc, v, value, &format!("`{key}` of {what}")),
        None => insert(doc, map, key, value, what).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::edit::apply;

    fn doc(text: &str) -> Doc<'_> {
        Doc::new(text, "t.yaml").unwrap()
    }

    fn run(text: &str, f: impl Fn(&Doc) -> Vec<Edit>) -> String {
        let d = doc(text);
        let edits = f(&d);
        apply(text, &edits).unwrap()
    }

    #[test]
    fn insert_in_block_style_goes_after_the_last_entry_and_its_comment() {
        let text = "a:\n  b: 1\n  c:\n    d: 2 # deep\n# after\ne: 3\n";
        let out = run(text, |d| {
            vec![insert(d, d.top("a").unwrap(), "k", "v", "a").unwrap()]
        });
        assert_eq!(
            out,
            "a:\n  b: 1\n  c:\n    d: 2 # deep\n  k: v\n# after\ne: 3\n"
        );
    }

    #[test]
    fn insert_into_a_mapping_in_a_list_item_aligns_with_its_first_key() {
        let text = "calls:\n  - to: api\n    retry: { max_attempts: 3 }\n";
        let out = run(text, |d| {
            let item = match &d.top("calls").unwrap().value {
                Value::Seq(items) => &items[0],
                _ => unreachable!(),
            };
            vec![insert(d, item, "timeout", "1s", "call").unwrap()]
        });
        assert_eq!(
            out,
            "calls:\n  - to: api\n    retry: { max_attempts: 3 }\n    timeout: 1s\n"
        );
    }

    #[test]
    fn insert_at_the_end_of_a_file_without_a_final_newline() {
        let out = run("a:\n  b: 1", |d| {
            vec![insert(d, d.top("a").unwrap(), "k", "v", "a").unwrap()]
        });
        assert_eq!(out, "a:\n  b: 1\n  k: v");
    }

    #[test]
    fn insert_in_flow_style_and_into_empty_or_null_mappings() {
        let out = run("a: { b: 1 }  # c\n", |d| {
            vec![insert(d, d.top("a").unwrap(), "k", "v", "a").unwrap()]
        });
        assert_eq!(out, "a: { b: 1, k: v }  # c\n");
        let out = run("a: {}\n", |d| {
            vec![insert(d, d.top("a").unwrap(), "k", "v", "a").unwrap()]
        });
        assert_eq!(out, "a: { k: v }\n");
        let out = run("a:\nb: 1\n", |d| {
            vec![insert(d, d.top("a").unwrap(), "k", "v", "a").unwrap()]
        });
        assert_eq!(out, "a: { k: v }\nb: 1\n");
    }

    #[test]
    fn an_aligned_comment_keeps_its_column() {
        let out = run("a: 50ms    # c\nb: 1\n", |d| {
            replace(d, d.top("a").unwrap(), "180ms", "a")
                .unwrap()
                .into_iter()
                .collect()
        });
        assert_eq!(out, "a: 180ms   # c\nb: 1\n");
        let out = run("a: 180ms  # c\n", |d| {
            replace(d, d.top("a").unwrap(), "5ms", "a")
                .unwrap()
                .into_iter()
                .collect()
        });
        assert_eq!(out, "a: 5ms    # c\n");
        // Never less than one space.
        let out = run("a: 1  # c\n", |d| {
            replace(d, d.top("a").unwrap(), "1000", "a")
                .unwrap()
                .into_iter()
                .collect()
        });
        assert_eq!(out, "a: 1000 # c\n");
    }

    #[test]
    fn insert_beside_a_merge_key_keeps_it() {
        let text = "x: &d { a: 1 }\nf: { <<: *d }\nb:\n  <<: *d\nc: 2\n";
        let out = run(text, |d| {
            vec![
                insert(d, d.top("f").unwrap(), "k", "v", "f").unwrap(),
                insert(d, d.top("b").unwrap(), "k", "v", "b").unwrap(),
            ]
        });
        assert_eq!(
            out,
            "x: &d { a: 1 }\nf: { <<: *d, k: v }\nb:\n  <<: *d\n  k: v\nc: 2\n"
        );
    }

    #[test]
    fn replace_keeps_the_comment_and_skips_a_no_op() {
        let out = run("a: 10 # ten\n", |d| {
            replace(d, d.top("a").unwrap(), "3", "a")
                .unwrap()
                .into_iter()
                .collect()
        });
        assert_eq!(out, "a: 3 # ten\n");
        let d = doc("a: 3\n");
        assert_eq!(replace(&d, d.top("a").unwrap(), "3", "a").unwrap(), None);
    }

    fn remove(text: &str, which: &[usize]) -> String {
        run(text, |d| {
            let (k, v) = get(&d.root, "r").unwrap();
            remove_items(d, k, v, which, "r").unwrap()
        })
    }

    #[test]
    fn remove_from_a_flow_sequence() {
        assert_eq!(remove("r: [503, 400]\n", &[1]), "r: [503]\n");
        assert_eq!(remove("r: [400, 503]\n", &[0]), "r: [503]\n");
        assert_eq!(
            remove("r: [400, 404, 503, 422, 4xx]\n", &[0, 1, 3, 4]),
            "r: [503]\n"
        );
        assert_eq!(remove("r: [ 400, 404 ]\n", &[0, 1]), "r: [  ]\n");
    }

    #[test]
    fn remove_from_a_block_sequence_takes_the_line() {
        let text = "r:\n  - 503 # keep\n  - 400 # drop\n  - 504\nx: 1\n";
        assert_eq!(remove(text, &[1]), "r:\n  - 503 # keep\n  - 504\nx: 1\n");
        assert_eq!(
            remove("r:\n  - 400\n  - 4xx\nx: 1\n", &[0, 1]),
            "r: []\nx: 1\n"
        );
        assert_eq!(remove("r: 4xx\n", &[0]), "r: []\n");
    }

    #[test]
    fn expand_a_shorthand() {
        let out = run("calls: [db]\n", |d| {
            let item = match &d.top("calls").unwrap().value {
                Value::Seq(items) => &items[0],
                _ => unreachable!(),
            };
            vec![expand(d, item, &["to"], "timeout", "1s", "call").unwrap()]
        });
        assert_eq!(out, "calls: [{ to: db, timeout: 1s }]\n");
    }
}
