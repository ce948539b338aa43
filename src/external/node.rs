//! Lenient access to located nodes: configuration kinds carry many fields
//! this reader does not need, so unknown keys are not errors here (the
//! topology reader is strict; Kubernetes objects are not ours to police).

use std::time::Duration;

use crate::input::error::LoadError;
use crate::input::fields::Fields;
use crate::input::{Node, Pos, Value};

/// The file being read: its errors, and its index in `Facts::files`.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'f> {
    pub f: Fields<'f>,
    pub file: usize,
}

impl Cx<'_> {
    pub(crate) fn at(&self, pos: Pos) -> super::At {
        super::At {
            file: self.file,
            pos,
        }
    }
}

/// A count of retries written as `key`'s value (`v`, its key at `k`): 0 up
/// to one less than the topology's attempt limit; `spans_at` learns where
/// the key is, for findings.
pub(crate) fn retries(
    cx: Cx,
    (k, v): (&Node, &Node),
    key: &str,
    spans_at: &mut Option<Pos>,
) -> Result<u32, LoadError> {
    *spans_at = Some(k.pos);
    let n = int(
        cx,
        v,
        key,
        0,
        i128::from(crate::policy::MAX_ATTEMPTS_LIMIT) - 1,
    )?;
    Ok(n as u32)
}

/// The value of `key` in a mapping.
pub fn get<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    entry(node, key).map(|(_, v)| v)
}

/// The key and value of `key` in a mapping; null values count as absent.
pub fn entry<'a>(node: &'a Node, key: &str) -> Option<(&'a Node, &'a Node)> {
    let Value::Map(entries) = &node.value else {
        return None;
    };
    entries
        .iter()
        .find(|(k, v)| matches!(&k.value, Value::Str(s) if s == key) && v.value != Value::Null)
        .map(|(k, v)| (k, v))
}

/// A path of keys: `path(n, &["metadata", "name"])`.
pub fn path<'a>(node: &'a Node, keys: &[&str]) -> Option<&'a Node> {
    keys.iter().try_fold(node, |n, k| get(n, k))
}

pub fn str_at(node: &Node) -> Option<&str> {
    match &node.value {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// The integer `port` of a Kubernetes Service's `spec.ports` entry.
pub(crate) fn port_number(port: &Node) -> Option<i128> {
    match get(port, "port")?.value {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

/// The items of a list; nothing for anything else.
pub fn items(node: &Node) -> &[Node] {
    match &node.value {
        Value::Seq(items) => items,
        _ => &[],
    }
}

/// A list at `key` that must be a list when present.
pub(crate) fn list<'a>(cx: Cx, node: &'a Node, key: &str) -> Result<&'a [Node], LoadError> {
    match get(node, key) {
        None => Ok(&[]),
        Some(n) => match &n.value {
            Value::Seq(items) => Ok(items),
            _ => Err(cx.f.expected(n, &format!("a list for `{key}`"))),
        },
    }
}

/// A string at `key`, which must be a string when present.
pub(crate) fn string<'a>(cx: Cx, node: &'a Node, key: &str) -> Result<Option<&'a str>, LoadError> {
    get(node, key)
        .map(|n| cx.f.str(n, &format!("`{key}`")))
        .transpose()
}

/// A protobuf JSON duration: `"1.5s"`, `".01s"`, `"0.100s"`; the topology's
/// forms (`100ms`) are taken too, as Istio takes them.
pub(crate) fn duration(cx: Cx, node: &Node, key: &str) -> Result<Duration, LoadError> {
    if let Value::Str(s) = &node.value {
        let t = s.trim();
        if let Some(secs) = t.strip_suffix('s')
            && !secs.is_empty()
            && secs.chars().all(|c| c.is_ascii_digit() || c == '.')
            && let Ok(x) = secs.parse::<f64>()
            && x.is_finite()
            && x < 1e9
        {
            return Ok(Duration::from_secs_f64(x));
        }
    }
    cx.f.duration(node, key)
}

/// A whole number, also when written as a JSON string (`"4"`: protobuf JSON
/// allows it for 64-bit fields).
pub(crate) fn int(cx: Cx, node: &Node, key: &str, min: i128, max: i128) -> Result<i128, LoadError> {
    if let Value::Str(s) = &node.value
        && let Ok(n) = s.trim().parse::<i128>()
    {
        let shadow = Node {
            pos: node.pos,
            span: node.span,
            value: Value::Int(n),
        };
        return cx.f.int(&shadow, key, min, max);
    }
    cx.f.int(node, key, min, max)
}
