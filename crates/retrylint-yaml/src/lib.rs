//! retrylint's located YAML reader: a small generic tree in which every node
//! keeps where it was written, under a resource budget, with errors that name
//! the line and column to look at.
//!
//! [`parse`] and [`parse_config`] read one YAML document into a [`Node`]: a
//! [`Value`] (null, boolean, integer, float, string, list or mapping, keys in
//! file order) with its [`Pos`] (1-based line and column, where the node is
//! used) and its [`Span`] (the bytes of its text, for edits in place). retrylint
//! converts the tree to its schema by hand: doing the conversion itself is what
//! lets every error name the exact line, the key that was wrong and the key that
//! was meant — serde's derived messages cannot, and `Spanned` loses its
//! location inside untagged enums, which is exactly the shape of "a preset name
//! or a map".
//!
//! **What it reads.** YAML 1.2 as serde-saphyr reads it, and the same tree it
//! gives for `Spanned<Value>` — the same positions, scalar resolution, merge
//! keys, duplicate-key and tag handling, and the same errors at the same places —
//! in less than half the time, without serde in between. Two parsers produce the
//! events: a hand-written scanner (`fast`) takes the plain block YAML
//! configuration files are written in, and on anything else, or any error,
//! granit-parser (the parser under serde-saphyr) reads the file again and has
//! the last word. `parse_via_serde` (tests only) keeps serde-saphyr's own path,
//! and differential tests hold the three together.
//!
//! **Budgets.** One parse is held to limits sized for a 10,000-service topology
//! (~1M nodes) but closed to alias bombs and pathological nesting: depth,
//! events, nodes, alias replay, recorded anchor events, aliases, anchors and
//! scalar bytes ([`Limit`]). Every count is checked as it grows; crossing one
//! is a [`SyntaxError`] at the event that crossed it, with the figures in its
//! [`Breach`].
//!
//! **Errors.** A [`SyntaxError`] has the position to fix, serde-saphyr's
//! message (`… at line L, column C`), and when the reader can tell, what to
//! write instead (a key indented one space off its siblings). A crossed limit
//! carries its [`Breach`]. [`parse_config`] also refuses a custom tag where it
//! is written and places a too-deep nesting at the bracket that crossed the
//! limit.
//!
//! The parts: `reader` (the event loop over either parser), `fast` (the
//! hand-written scanner), `event` (what they yield), `anchors` (recording and
//! replay), `merge` (merge keys), `keys` (key identity), `budget` (the limits),
//! `resolve` (tags and scalars), `spans` (the byte spans), `text` (shared
//! string scalars), `hints` (what to write instead), `build` (the tree from the
//! events) and `split` (a large file's largest block read in two halves side
//! by side).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use serde_saphyr::granit_parser::{ErrorKind, Marker, ScanError};

mod anchors;
mod budget;
mod build;
mod event;
mod fast;
mod hints;
mod keys;
mod merge;
mod reader;
mod resolve;
mod spans;
mod split;
mod text;

pub use budget::{Breach, Limit};
pub use text::Text;

/// A position in a source file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

/// The bytes of a value in its source text: `start..end`, `end` just past the
/// value's last character, for edits that replace a value in place.
///
/// - A scalar spans its text as written: quotes included, a plain scalar
///   without trailing blanks, a block scalar from its `|` or `>` indicator to its
///   last non-blank character. An empty value (`key:`) is an empty span just
///   after the `:`.
/// - A flow collection spans its brackets; a block collection runs from its
///   first entry's `-` or key (the key's own anchor and tag included) to the end
///   of its last entry. Comments after it are not part of it.
/// - A node's own anchor and tag are not part of its span.
/// - A node written as an alias (`*name`) spans the alias; the nodes inside it,
///   and entries brought by a merge key, span their definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn is_empty(self) -> bool {
        self.start >= self.end
    }
}

/// A YAML node with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the node is used: its first character, or the alias or merge key
    /// that brought it here.
    pub pos: Pos,
    /// Where its text is (see [`Span`]).
    pub span: Span,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(Text),
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
            span: Span::default(),
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
        Ok(Value::Str(v.into()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v.into()))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Str(String::from_utf8_lossy(v).into_owned().into()))
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
    /// What to write instead, when the reader can tell.
    pub help: Option<String>,
    /// The resource limit crossed, with the figures.
    pub breach: Option<Breach>,
}

/// Parses `text` into a located tree under a resource budget sized for large
/// topologies but closed to alias bombs and pathological nesting.
///
/// Mode are read as serde-saphyr reads them: a custom tag (`!Ref x`) is dropped
/// and its value kept. Configuration files use [`parse_config`].
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    parse_with(text, Mode::AsSerdeSaphyr)
}

/// Parses a configuration file: as [`parse`], but a custom tag (`!Ref`,
/// `!!python/object`) is an error where it is written rather than silently
/// dropped, nesting too deep is reported at the bracket that crossed the limit,
/// and an error caused by a key indented one space off its siblings says which
/// indentation to use.
pub fn parse_config(text: &str) -> Result<Node, SyntaxError> {
    parse_with(text, Mode::Config).map_err(|e| hints::with_indentation_hint(text, e))
}

/// How a document is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// As serde-saphyr reads it: any tag (custom ones dropped), its error
    /// positions.
    AsSerdeSaphyr,
    /// As a configuration file: the core schema's tags only, and errors placed
    /// where a user fixes them (the bracket that nests too deep).
    Config,
}

fn parse_with(text: &str, mode: Mode) -> Result<Node, SyntaxError> {
    if u32::try_from(text.len()).is_err() {
        // Spans are 32-bit; files are refused long before this (64 MiB).
        return Err(budget::breached(
            Pos { line: 1, column: 1 },
            Limit::ScalarBytes,
            text.len(),
        ));
    }
    // The fast path takes the plain YAML configuration files are written in;
    // on anything else, or any error, granit-parser reads the file again and
    // has the last word. It buys 42 % of `check`'s instructions on the
    // 10,000-service bench file (3.15 G against 5.45 G, callgrind,
    // benches/RESULTS.md, #30 item 4).
    if let Some(fast) = fast::FastScanner::new(text) {
        // A large file is first tried in two halves side by side (1.14–1.18×
        // the one-piece parse in `check`'s wall time on that file), read in
        // one piece when they cannot be joined.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if text.len() >= split::SPLIT_FROM
            && cores > 1
            && let Some(cut) = split::find(text, 0.5)
        {
            match split::parse(text, fast.clone(), mode, cut) {
                split::Halves::Joined(root) => return Ok(root),
                split::Halves::Failed => return parse_with_granit(text, mode),
                split::Halves::Unjoined => {}
            }
        }
        if let Ok(root) = parse_fast(text, fast, mode) {
            return Ok(root);
        }
    }
    parse_with_granit(text, mode)
}

/// Parses `text` on the fast path alone.
fn parse_fast<'a>(
    text: &'a str,
    fast: fast::FastScanner<'a>,
    mode: Mode,
) -> Result<Node, SyntaxError> {
    build::Builder::new(text, reader::Events::Fast(fast), mode).run()
}

/// Parses `text` with granit-parser alone (the fast path's reference).
fn parse_with_granit(text: &str, mode: Mode) -> Result<Node, SyntaxError> {
    let parser = serde_saphyr::granit_parser::Parser::new_from_str(text);
    build::Builder::new(text, reader::Events::Granit(parser), mode).run()
}

fn pos_at(m: &Marker) -> Pos {
    Pos {
        line: u32::try_from(m.line()).unwrap_or(u32::MAX),
        column: u32::try_from(m.col().saturating_add(1)).unwrap_or(u32::MAX),
    }
}

/// An error at `pos`, worded as serde-saphyr words it (callers strip the suffix).
fn error(pos: Pos, message: impl fmt::Display) -> SyntaxError {
    SyntaxError {
        pos,
        message: format!("{message} at line {}, column {}", pos.line, pos.column),
        help: None,
        breach: None,
    }
}

fn scan_error(e: &ScanError) -> SyntaxError {
    let pos = pos_at(e.marker());
    match e.kind() {
        ErrorKind::UnknownAnchor => error(pos, "alias references unknown anchor"),
        _ => error(pos, e.info()),
    }
}

/// The previous implementation, through serde-saphyr's deserializer: kept for the
/// differential test.
#[cfg(test)]
pub(crate) fn parse_via_serde(text: &str) -> Result<Node, SyntaxError> {
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
            Err(SyntaxError {
                pos,
                message,
                help: None,
                breach: None,
            })
        }
    }
}

#[cfg(test)]
mod fast_tests;
#[cfg(test)]
mod span_tests;
#[cfg(test)]
mod split_tests;
#[cfg(test)]
mod tests;
