//! A located YAML tree.
//!
//! serde-saphyr parses and enforces the resource budget; we deserialize into this
//! small generic tree (every node keeps its line and column) and convert it to the
//! schema by hand in `schema.rs`. Doing the conversion ourselves is what lets every
//! error name the exact line, the key that was wrong and the key that was meant —
//! serde's derived messages cannot, and `Spanned` loses its location inside untagged
//! enums, which is exactly the shape of "a preset name or a map".

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// A position in a source file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

/// A YAML node with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub pos: Pos,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Value {
    /// What a user would call this kind of value, for "expected X, found Y" messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "nothing (null)",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

fn pos_of<T>(s: &Spanned<T>) -> Pos {
    let loc = s.referenced;
    Pos {
        line: u32::try_from(loc.line()).unwrap_or(u32::MAX),
        column: u32::try_from(loc.column()).unwrap_or(u32::MAX),
    }
}

impl From<Spanned<Value>> for Node {
    fn from(s: Spanned<Value>) -> Self {
        Node {
            pos: pos_of(&s),
            value: s.value,
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Ok(Value::Int(i128::try_from(v).unwrap_or(i128::MAX)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Value>>()? {
            items.push(Node::from(item));
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<Value>>()? {
            let value = map.next_value::<Spanned<Value>>()?;
            entries.push((Node::from(key), Node::from(value)));
        }
        Ok(Value::Map(entries))
    }
}

/// Why a document could not be parsed as YAML.
#[derive(Debug, Clone)]
pub struct SyntaxError {
    pub pos: Pos,
    pub message: String,
}

/// Parses `text` into a located tree under a resource budget sized for large
/// topologies but closed to alias bombs and pathological nesting.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut budget = serde_saphyr::Budget::default();
    // A 10,000-service topology is ~1M nodes; leave room, keep a ceiling.
    budget.max_nodes = 20_000_000;
    budget.max_events = 50_000_000;
    budget.max_aliases = 1_000_000;
    // Large topologies merge one `defaults` anchor into every service; the ratio
    // heuristic would reject them. The replay limits below still stop alias bombs.
    budget.enforce_alias_anchor_ratio = false;
    budget.max_depth = 64;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = 2_000_000;
    options.with_snippet = false;
    match serde_saphyr::from_str_with_options::<Spanned<Value>>(text, options) {
        Ok(root) => Ok(Node::from(root)),
        Err(e) => {
            let pos = e
                .location()
                .map(|l| Pos {
                    line: u32::try_from(l.line()).unwrap_or(u32::MAX),
                    column: u32::try_from(l.column()).unwrap_or(u32::MAX),
                })
                .unwrap_or(Pos { line: 1, column: 1 });
            let mut opts = serde_saphyr::RenderOptions::default();
            opts.snippets = serde_saphyr::SnippetMode::Off;
            let message = e.render_with_options(opts);
            Err(SyntaxError { pos, message })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_positions() {
        let n = parse("a:\n  b: [1, x]\n  c: {d: 2.5}\n").unwrap();
        println!("{n:#?}");
        let Value::Map(m) = &n.value else { panic!() };
        assert_eq!(m[0].0.pos, Pos { line: 1, column: 1 });
        let Value::Map(inner) = &m[0].1.value else {
            panic!()
        };
        assert_eq!(inner[0].0.pos, Pos { line: 2, column: 3 });
        let Value::Seq(s) = &inner[0].1.value else {
            panic!()
        };
        assert_eq!(
            s[1].pos,
            Pos {
                line: 2,
                column: 10
            }
        );
    }

    #[test]
    fn errors() {
        for t in ["a: [", "a: *x", "\u{0}\u{1}\u{ff}", "a: 1\na: 2"] {
            let e = parse(t).unwrap_err();
            println!("{t:?} -> {:?} {}", e.pos, e.message);
        }
    }
}
