//! Reading typed values out of located YAML nodes, with errors that say where,
//! what was expected and what to write instead.

use std::time::Duration;

use super::duration;
use super::error::{ErrorKind, LoadError, nearest};
use super::yaml::{Node, Pos, Value};

/// Reads one file: every error names it, and echoes values as written in it.
#[derive(Clone, Copy)]
pub struct Fields<'f> {
    pub file: &'f str,
    /// The file's text.
    pub text: &'f str,
}

/// A mapping whose keys have been checked against the keys its place allows.
pub(crate) struct MapView<'a> {
    pub pos: Pos,
    entries: &'a [(Node, Node)],
}

impl<'a> MapView<'a> {
    pub(crate) fn get(&self, key: &str) -> Option<&'a Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The key and value of `key`: findings point at keys, errors at values.
    pub(crate) fn entry(&self, key: &str) -> Option<(&'a Node, &'a Node)> {
        self.entries
            .iter()
            .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == key))
            .map(|(k, v)| (k, v))
    }

    /// Where `key` is written, or where the map is when it is absent.
    pub(crate) fn key_pos(&self, key: &str) -> Pos {
        self.entry(key).map_or(self.pos, |(k, _)| k.pos)
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = (&'a Node, &'a Node)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

impl<'f> Fields<'f> {
    pub fn new(file: &'f str, text: &'f str) -> Self {
        Fields { file, text }
    }

    /// `node`'s value as written (`1e20`, not `100000000000000000000`), or
    /// `shown` when the text is not at hand.
    pub fn written(&self, node: &Node, shown: impl std::fmt::Display) -> String {
        match self.text.get(node.span.range()) {
            Some(w) if !w.is_empty() => w.to_owned(),
            _ => shown.to_string(),
        }
    }

    pub fn error(&self, pos: Pos, message: impl Into<String>) -> LoadError {
        LoadError::new(ErrorKind::Schema, self.file, Some(pos), message)
    }

    /// `node` as a mapping whose keys are all in `allowed`; `what` names the
    /// place in messages ("a service", "a retry policy").
    pub(crate) fn map<'a>(
        &self,
        node: &'a Node,
        what: &str,
        allowed: &[&str],
    ) -> Result<MapView<'a>, LoadError> {
        let Value::Map(entries) = &node.value else {
            return Err(self.expected(node, &format!("a mapping for {what}")));
        };
        for (k, _) in entries {
            let Value::Str(key) = &k.value else {
                return Err(self.error(
                    k.pos,
                    format!("keys of {what} are names, found {}", k.value.kind()),
                ));
            };
            if !allowed.contains(&key.as_str()) {
                return Err(self.unknown_key(k.pos, key, what, allowed));
            }
        }
        Ok(MapView {
            pos: node.pos,
            entries,
        })
    }

    pub fn unknown_key(&self, pos: Pos, key: &str, what: &str, allowed: &[&str]) -> LoadError {
        let err = self.error(pos, format!("unknown key `{key}` in {what}"));
        match nearest(key, allowed.iter().copied()) {
            Some(near) => err.with_help(format!("did you mean `{near}`?")),
            None => err.with_help(format!("valid keys here: {}", allowed.join(", "))),
        }
    }

    pub fn expected(&self, node: &Node, expected: &str) -> LoadError {
        self.error(
            node.pos,
            format!("expected {expected}, found {}", node.value.kind()),
        )
    }

    pub fn str<'a>(&self, node: &'a Node, what: &str) -> Result<&'a str, LoadError> {
        match &node.value {
            Value::Str(s) => Ok(s),
            _ => Err(self
                .expected(node, &format!("a string for {what}"))
                .with_help("quote a value YAML would read as a number or true/false: `\"123\"`")),
        }
    }

    pub fn bool(&self, node: &Node, key: &str) -> Result<bool, LoadError> {
        match &node.value {
            Value::Bool(b) => Ok(*b),
            _ => Err(self
                .expected(node, &format!("true or false for `{key}`"))
                .with_help(format!("write `{key}: true` or `{key}: false`"))),
        }
    }

    /// A whole number in `min..=max`.
    pub fn int(&self, node: &Node, key: &str, min: i128, max: i128) -> Result<i128, LoadError> {
        let n = match &node.value {
            Value::Int(n) => *n,
            Value::Float(f) if f.fract() == 0.0 && f.is_finite() => *f as i128,
            _ => return Err(self.expected(node, &format!("a whole number for `{key}`"))),
        };
        if n < min || n > max {
            return Err(self.error(
                node.pos,
                format!(
                    "`{key}: {}` is out of range; it must be between {min} and {max}",
                    self.written(node, n)
                ),
            ));
        }
        Ok(n)
    }

    pub fn number(&self, node: &Node, key: &str) -> Result<f64, LoadError> {
        match &node.value {
            Value::Int(n) => Ok(*n as f64),
            Value::Float(f) if f.is_finite() => Ok(*f),
            _ => Err(self.expected(node, &format!("a number for `{key}`"))),
        }
    }

    /// A ratio in 0..=1; `10%` is accepted too.
    pub fn ratio(&self, node: &Node, key: &str) -> Result<f64, LoadError> {
        let r = match &node.value {
            Value::Str(s) if s.trim().ends_with('%') => s
                .trim()
                .trim_end_matches('%')
                .trim()
                .parse::<f64>()
                .map(|p| p / 100.0)
                .map_err(|_| {
                    self.expected(node, &format!("a ratio between 0 and 1 for `{key}`"))
                })?,
            _ => self.number(node, key)?,
        };
        if !(0.0..=1.0).contains(&r) {
            return Err(self
                .error(
                    node.pos,
                    format!("`{key}` is {}, outside 0..=1", self.written(node, r)),
                )
                .with_help(format!(
                    "a ratio is a share between 0 and 1: write `{key}: 0.1` for 10 %"
                )));
        }
        Ok(r)
    }

    pub fn duration(&self, node: &Node, key: &str) -> Result<Duration, LoadError> {
        match &node.value {
            Value::Str(s) => duration::parse(s).map_err(|fix| {
                self.error(node.pos, format!("invalid duration for `{key}`: {fix}"))
            }),
            Value::Int(0) => Ok(Duration::ZERO),
            Value::Int(n) if *n < 0 => Err(self.error(
                node.pos,
                format!(
                    "`{key}: {}` is negative; durations are zero or more, e.g. `100ms`",
                    self.written(node, n)
                ),
            )),
            Value::Int(n) => {
                let n = self.written(node, n);
                Err(self
                    .error(node.pos, format!("`{key}: {n}` has no unit"))
                    .with_help(format!("write `{key}: {n}ms` or `{key}: {n}s`")))
            }
            Value::Float(f) => {
                let f = self.written(node, f);
                Err(self
                    .error(node.pos, format!("`{key}: {f}` has no unit"))
                    .with_help(format!("write `{key}: {f}s`")))
            }
            _ => Err(self.expected(node, &format!("a duration such as `100ms` for `{key}`"))),
        }
    }

    /// A list, or a single value taken as a list of one.
    pub fn list<'a>(&self, node: &'a Node) -> Vec<&'a Node> {
        match &node.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![node],
        }
    }
}
