//! The topology's text with its located tree, read once for every fix: where
//! a byte is (line and column), which nodes are shared through an anchor, and
//! finding a service, call or layer's mapping by the topology's coordinates.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::input::yaml::Span;
use crate::input::yaml::{self, Node, Value};
use crate::lint::{Edit, EditKind};

pub struct Doc<'a> {
    pub text: &'a str,
    pub file: &'a str,
    pub root: Cow<'a, Node>,
    line_starts: Vec<u32>,
    /// Nodes written with an anchor that an alias or merge key uses: an edit
    /// inside one changes every place that uses it.
    shared: Vec<(Span, String)>,
    /// Entry index under `services:` by name: a topology of 10,000 services
    /// has as many findings, and each looks its service up.
    services: HashMap<String, usize>,
}

impl<'a> Doc<'a> {
    /// Reads `text` again; `None` when it is not YAML (a topology built in
    /// memory, or a source that is not the topology file).
    pub fn new(text: &'a str, file: &'a str) -> Option<Self> {
        let root = yaml::parse_config(text).ok()?;
        Some(Self::with_tree(text, file, Cow::Owned(root)))
    }

    /// `text` with the tree the loader already read from it: reading 10,000
    /// services again costs more than every fix together.
    pub(crate) fn with_tree(text: &'a str, file: &'a str, root: Cow<'a, Node>) -> Self {
        let mut line_starts = vec![0u32];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        let services = match get(&root, "services").map(|(_, v)| &v.value) {
            Some(Value::Map(entries)) => entries
                .iter()
                .enumerate()
                .filter_map(|(i, (k, _))| match &k.value {
                    Value::Str(name) => Some((name.to_string(), i)),
                    _ => None,
                })
                .collect(),
            _ => HashMap::new(),
        };
        let mut doc = Doc {
            text,
            file,
            root,
            line_starts,
            shared: Vec::new(),
            services,
        };
        // Anchors are rare; most files have none and skip the walk.
        if text.contains('&') && text.contains('*') {
            let mut found = Vec::new();
            let mut aliased = HashMap::new();
            collect_shared(text, &doc.root, &mut aliased, &mut found);
            doc.shared = found;
        }
        doc
    }

    /// 1-based line and column (in characters) of byte `offset`.
    pub fn position(&self, offset: u32) -> (u32, u32) {
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1] as usize;
        let column = self.text[start..offset as usize].chars().count() + 1;
        (line as u32, column as u32)
    }

    pub(crate) fn edit(&self, kind: EditKind, start: u32, end: u32, text: String) -> Edit {
        let (line, column) = self.position(start);
        let (end_line, end_column) = self.position(end);
        Edit {
            kind,
            file: self.file.to_owned(),
            line,
            column,
            end_line,
            end_column,
            start,
            end,
            text,
            key: None,
        }
    }

    /// Why `node` cannot be edited in place, if it cannot: it is (inside) an
    /// anchor used elsewhere, or an alias.
    pub(crate) fn unsafe_to_edit(&self, node: &Node, what: &str) -> Option<String> {
        let s = node.span;
        if let Some((_, name)) = self
            .shared
            .iter()
            .find(|(r, _)| r.start <= s.start && s.end <= r.end)
        {
            return Some(format!(
                "{what} is written under the anchor `&{name}`, which is used elsewhere: editing it would change every place that uses it"
            ));
        }
        if self.text[s.range()].starts_with('*') {
            return Some(format!(
                "{what} is an alias (`{}`): editing it would change the anchor it names",
                &self.text[s.range()]
            ));
        }
        None
    }

    /// The text of `node` as written.
    pub fn written(&self, node: &Node) -> &'a str {
        &self.text[node.span.range()]
    }

    pub fn top(&self, key: &str) -> Option<&Node> {
        get(&self.root, key).map(|(_, v)| v)
    }

    /// The value of service `name` under `services:`.
    pub fn service(&self, name: &str) -> Option<&Node> {
        let i = *self.services.get(name)?;
        match &self.top("services")?.value {
            Value::Map(entries) => entries.get(i).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Item `index` of service `name`'s `calls:`.
    pub fn call(&self, service: &str, index: usize) -> Option<&Node> {
        match &get(self.service(service)?, "calls")?.1.value {
            Value::Seq(items) => items.get(index),
            _ => None,
        }
    }
}

/// The entry `key` of a mapping.
pub(super) fn get<'n>(map: &'n Node, key: &str) -> Option<(&'n Node, &'n Node)> {
    match &map.value {
        Value::Map(entries) => entries
            .iter()
            .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == key))
            .map(|(k, v)| (k, v)),
        _ => None,
    }
}

fn is_name_char(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}')
}

/// The anchor written just before byte `at`, if any: `&name`, maybe with a
/// tag beside it, maybe on the line before (a block collection's anchor sits
/// after its key).
fn anchor_before(text: &str, at: usize) -> Option<&str> {
    let mut end = at;
    for _ in 0..2 {
        let before = text[..end].trim_end();
        let start = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !is_name_char(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let token = &before[start..];
        if let Some(name) = token.strip_prefix('&') {
            return Some(name);
        }
        if !token.starts_with('!') {
            return None;
        }
        end = start;
    }
    None
}

/// Whether `*name` appears in `text`.
fn alias_used(text: &str, name: &str) -> bool {
    let pattern = format!("*{name}");
    text.match_indices(&pattern).any(|(i, _)| {
        text[i + pattern.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_name_char(c))
    })
}

fn collect_shared(
    text: &str,
    node: &Node,
    aliased: &mut HashMap<String, bool>,
    out: &mut Vec<(Span, String)>,
) {
    if !node.span.is_empty()
        && let Some(name) = anchor_before(text, node.span.start as usize)
    {
        let used = *aliased
            .entry(name.to_owned())
            .or_insert_with(|| alias_used(text, name));
        if used && !out.iter().any(|(s, _)| *s == node.span) {
            out.push((node.span, name.to_owned()));
        }
    }
    match &node.value {
        Value::Seq(items) => items
            .iter()
            .for_each(|n| collect_shared(text, n, aliased, out)),
        Value::Map(entries) => entries.iter().for_each(|(k, v)| {
            collect_shared(text, k, aliased, out);
            collect_shared(text, v, aliased, out);
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "a: 1\nbé: 2\n";
        let doc = Doc::new(text, "t.yaml").unwrap();
        assert_eq!(doc.position(0), (1, 1));
        assert_eq!(doc.position(5), (2, 1));
        // `2` is byte 10 (é is two bytes) and character 5.
        assert_eq!(doc.position(10), (2, 5));
    }

    #[test]
    fn anchors_used_elsewhere_are_shared_and_unused_ones_are_not() {
        let text = "x-d: &d\n  timeout: 1s\nx-u: &u { a: 1 }\nb:\n  <<: *d\n  c: 2\n";
        let doc = Doc::new(text, "t.yaml").unwrap();
        let merged = get(doc.top("b").unwrap(), "timeout").unwrap().1;
        assert!(
            doc.unsafe_to_edit(merged, "`timeout`")
                .unwrap()
                .contains("`&d`")
        );
        let own = get(doc.top("b").unwrap(), "c").unwrap().1;
        assert_eq!(doc.unsafe_to_edit(own, "`c`"), None);
        let unused = doc.top("x-u").unwrap();
        assert_eq!(doc.unsafe_to_edit(unused, "it"), None);
    }

    #[test]
    fn an_anchor_is_found_past_a_tag_and_on_the_line_before() {
        assert_eq!(anchor_before("a: &x !!str v", 12), Some("x"));
        assert_eq!(anchor_before("a: &x\n  b: 1", 8), Some("x"));
        assert_eq!(anchor_before("a: [&x 1, *x]", 7), Some("x"));
        assert_eq!(anchor_before("a: 1", 3), None);
        assert!(alias_used("[*x, 2]", "x"));
        assert!(!alias_used("[*xy, 2]", "x"));
    }
}
