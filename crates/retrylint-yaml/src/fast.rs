//! A fast path for the YAML configuration files are made of: block mappings and
//! sequences, one-line plain and quoted scalars, one-line flow collections,
//! anchors, aliases and merge keys, comments. On such text it yields exactly the
//! events granit-parser yields — the same values, positions and spans, checked
//! event for event by a differential test — in a fraction of the time.
//!
//! On anything else it gives up: tags, block scalars, multi-line scalars and flow
//! collections, explicit keys, escapes, tabs, carriage returns, non-ASCII text,
//! directives and document markers, and every error. The file is then parsed
//! again by granit-parser, which has the last word on what a YAML file means and
//! how an error in it is worded. Giving up costs at most one extra linear pass.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use serde_saphyr::granit_parser::{ScalarStyle, StructureStyle};

use super::{Pos, Span};

/// granit-parser's events without the tags the fast path never reads: less
/// than half the size, and every event is moved several times.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum FastEvent<'a> {
    Scalar(Cow<'a, str>, ScalarStyle, usize),
    SequenceStart(StructureStyle, usize),
    MappingStart(StructureStyle, usize),
    SequenceEnd,
    MappingEnd,
    Alias(usize),
}

impl<'a> FastEvent<'a> {
    /// The event as granit-parser gives it.
    #[cfg(test)]
    pub(super) fn into_parser_event(self) -> serde_saphyr::granit_parser::Event<'a> {
        use serde_saphyr::granit_parser::Event;
        match self {
            FastEvent::Scalar(value, style, anchor) => Event::Scalar(value, style, anchor, None),
            FastEvent::SequenceStart(style, anchor) => Event::SequenceStart(style, anchor, None),
            FastEvent::MappingStart(style, anchor) => Event::MappingStart(style, anchor, None),
            FastEvent::SequenceEnd => Event::SequenceEnd,
            FastEvent::MappingEnd => Event::MappingEnd,
            FastEvent::Alias(id) => Event::Alias(id),
        }
    }
}

/// The fast path does not take this text; granit-parser will.
#[derive(Debug)]
pub(super) struct GiveUp;

#[cfg(test)]
#[test]
fn plain_ascii_is_exact() {
    for b in 0..=255u8 {
        let want = (b' '..=b'~').contains(&b) || b == b'\n';
        for at in 0..16 {
            let mut text = vec![b'a'; 16];
            text[at] = b;
            assert_eq!(plain_ascii(&text), want, "byte {b:#x} at {at}");
        }
    }
}

type Result<T> = std::result::Result<T, GiveUp>;

/// Flow collections nested deeper than this are left to granit-parser (and its
/// budget), so the recursion here stays shallow.
const MAX_FLOW_DEPTH: usize = 64;
/// YAML's limit on an implicit key; longer ones are left to granit-parser.
const MAX_KEY_BYTES: usize = 1024;

#[derive(Clone, Copy)]
enum Block {
    Map {
        indent: usize,
    },
    /// `indentless`: as indented as the key whose value it is.
    Seq {
        indent: usize,
        indentless: bool,
    },
}

impl Block {
    fn indent(self) -> usize {
        match self {
            Block::Map { indent } | Block::Seq { indent, .. } => indent,
        }
    }
}

/// A value not on its line: `key:` or `-` at the end of a line. The next line
/// opens a block collection under it, or the value is empty.
#[derive(Clone)]
struct Pending {
    /// The indentation of the collection holding the key or item.
    parent: usize,
    /// A mapping value (an indentless sequence may follow at `parent`).
    in_map: bool,
    anchor: usize,
    /// Where granit puts an empty value.
    empty_at: usize,
    empty_pos: Pos,
}

/// Lines the scanner passes over as if they were not there: the other half of
/// a block read in two (`split.rs`). `from` and `to` are line starts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Skip {
    pub(super) from: usize,
    pub(super) to: usize,
    /// Line breaks in `from..to`.
    pub(super) lines: usize,
}

#[derive(Clone)]
pub(super) struct FastScanner<'a> {
    text: &'a str,
    /// The text up to where the scanner stops (all of it, unless windowed).
    bytes: &'a [u8],
    /// The next byte to read, the start of its line and that line's number.
    at: usize,
    line_start: usize,
    line: usize,
    stack: Vec<Block>,
    pending: Option<Pending>,
    /// The root has been read (a second one is an error).
    root_done: bool,
    queue: VecDeque<(FastEvent<'a>, Pos, Span)>,
    anchors: HashMap<&'a str, usize>,
    anchors_defined: usize,
    finished: bool,
    skip: Option<Skip>,
}

/// Whether every byte is printable ASCII or `\n`, eight at a time: each test
/// leaves a byte's verdict in its top bit, and no byte carries into the next.
fn plain_ascii(bytes: &[u8]) -> bool {
    const TOP: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let each = |b: u8| u64::from_ne_bytes([b; 8]);
    let nonzero = |x: u64| (((x & LOW7) + LOW7) | x) & TOP;
    let (words, rest) = bytes.as_chunks::<8>();
    for w in words {
        let w = u64::from_ne_bytes(*w);
        if w & TOP != 0 {
            return false;
        }
        let printable = (w + each(0x60)) & TOP;
        let not_del = nonzero(w ^ each(0x7f));
        let line_feed = !nonzero(w ^ each(b'\n')) & TOP;
        if (printable & not_del) | line_feed != TOP {
            return false;
        }
    }
    rest.iter()
        .all(|&c| (b' '..=b'~').contains(&c) || c == b'\n')
}

fn is_dash_item(b: &[u8], i: usize) -> bool {
    b.get(i) == Some(&b'-') && matches!(b.get(i + 1), None | Some(b' ' | b'\n'))
}

fn is_anchor_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')
}

fn span(start: usize, end: usize) -> Span {
    // The caller refuses texts over 4 GiB.
    Span {
        start: start as u32,
        end: end as u32,
    }
}

impl<'a> FastScanner<'a> {
    /// `None` when the text is not plain printable ASCII with `\n` line ends.
    pub(super) fn new(text: &'a str) -> Option<Self> {
        let bytes = text.as_bytes();
        if !plain_ascii(bytes) {
            return None;
        }
        Some(FastScanner {
            text,
            bytes,
            at: 0,
            line_start: 0,
            line: 1,
            stack: Vec::new(),
            pending: None,
            root_done: false,
            queue: VecDeque::new(),
            anchors: HashMap::new(),
            anchors_defined: 0,
            finished: false,
            skip: None,
        })
    }

    /// Scans only up to `end` (a line start, taken as the end of the text),
    /// passing over `skip`'s lines.
    pub(super) fn window(mut self, end: usize, skip: Option<Skip>) -> Self {
        self.bytes = &self.bytes[..end];
        self.skip = skip;
        self
    }

    /// The next event with where it starts and its span.
    pub(super) fn next(&mut self) -> Option<Result<(FastEvent<'a>, Pos, Span)>> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Some(Ok(e));
            }
            if self.finished {
                return None;
            }
            if let Err(e) = self.line_events() {
                self.finished = true;
                return Some(Err(e));
            }
        }
    }

    fn pos(&self, at: usize) -> Pos {
        Pos {
            line: self.line as u32,
            column: (at - self.line_start + 1) as u32,
        }
    }

    fn emit(&mut self, event: FastEvent<'a>, at: usize, end: usize) {
        let pos = self.pos(at);
        self.queue.push_back((event, pos, span(at, end)));
    }

    fn scalar(
        &mut self,
        value: Cow<'a, str>,
        style: ScalarStyle,
        anchor: usize,
        at: usize,
        end: usize,
    ) {
        self.emit(FastEvent::Scalar(value, style, anchor), at, end);
    }

    fn skip_spaces(&mut self) {
        while self.bytes.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
    }

    /// After a value: spaces, then a comment or the end of the line.
    fn end_of_line(&mut self) -> Result<()> {
        let before = self.at;
        self.skip_spaces();
        match self.bytes.get(self.at) {
            None | Some(b'\n') => Ok(()),
            Some(b'#') if self.at > before => Ok(()),
            _ => Err(GiveUp),
        }
    }

    /// Moves to the start of the next line.
    fn next_line(&mut self) {
        match self.bytes[self.at..].iter().position(|&c| c == b'\n') {
            Some(i) => {
                self.at += i + 1;
                self.line_start = self.at;
                self.line += 1;
            }
            None => self.at = self.bytes.len(),
        }
    }

    /// Reads the next line with content and queues its events; at the end of
    /// the text, closes everything.
    fn line_events(&mut self) -> Result<()> {
        let indent = loop {
            if let Some(skip) = self.skip
                && self.at == skip.from
            {
                self.at = skip.to;
                self.line_start = skip.to;
                self.line += skip.lines;
                self.skip = None;
            }
            if self.at >= self.bytes.len() {
                return self.finish();
            }
            let mut i = self.at;
            while self.bytes.get(i) == Some(&b' ') {
                i += 1;
            }
            match self.bytes.get(i) {
                None => {
                    self.at = i;
                    return self.finish();
                }
                Some(b'\n' | b'#') => self.next_line(),
                _ => break i - self.at,
            }
        };
        let first = self.at + indent;
        if indent == 0 && matches!(self.bytes[first], b'%')
            || self.bytes[first..].starts_with(b"---")
            || self.bytes[first..].starts_with(b"...")
        {
            return Err(GiveUp);
        }
        let dash = is_dash_item(self.bytes, first);
        if let Some(p) = self.pending.take() {
            let opens = indent > p.parent || (p.in_map && indent == p.parent && dash);
            if opens {
                self.at = first;
                self.open_block(indent, dash, p.parent == indent && p.in_map, p.anchor)?;
            } else {
                self.empty(&p);
            }
        }
        // Close what this line is not inside.
        while let Some(&top) = self.stack.last() {
            let closes = top.indent() > indent
                || matches!(top, Block::Seq { indentless: true, indent: i } if i == indent && !dash);
            if !closes {
                break;
            }
            self.close(first);
        }
        self.at = first;
        match self.stack.last() {
            None if self.root_done => Err(GiveUp),
            None => {
                self.open_block(indent, dash, false, 0)?;
                self.entry(indent, dash)
            }
            Some(&top) if top.indent() == indent => self.entry(indent, dash),
            Some(_) => Err(GiveUp),
        }
    }

    /// An empty value, as granit gives it: `~`, empty, where it was noted.
    fn empty(&mut self, p: &Pending) {
        let event = FastEvent::Scalar(Cow::Borrowed("~"), ScalarStyle::Plain, p.anchor);
        self.queue
            .push_back((event, p.empty_pos, span(p.empty_at, p.empty_at)));
    }

    fn pending(&mut self, parent: usize, in_map: bool, anchor: usize, empty_at: usize) {
        let empty_pos = self.pos(empty_at);
        self.pending = Some(Pending {
            parent,
            in_map,
            anchor,
            empty_at,
            empty_pos,
        });
        self.next_line();
    }

    /// Opens a block collection at the cursor (at indentation `indent`).
    fn open_block(
        &mut self,
        indent: usize,
        dash: bool,
        indentless: bool,
        anchor: usize,
    ) -> Result<()> {
        let at = self.at;
        if dash {
            // granit puts an indentless sequence where its first item starts.
            let start = if indentless {
                let mut i = at + 1;
                while self.bytes.get(i) == Some(&b' ') {
                    i += 1;
                }
                if self.bytes.get(i) == Some(&b'#') {
                    return Err(GiveUp);
                }
                i
            } else {
                at
            };
            self.emit(
                FastEvent::SequenceStart(StructureStyle::Block, anchor),
                start,
                start,
            );
            self.stack.push(Block::Seq { indent, indentless });
        } else {
            self.emit(
                FastEvent::MappingStart(StructureStyle::Block, anchor),
                at,
                at,
            );
            self.stack.push(Block::Map { indent });
        }
        Ok(())
    }

    fn close(&mut self, at: usize) {
        let event = match self.stack.pop() {
            Some(Block::Map { .. }) => FastEvent::MappingEnd,
            _ => FastEvent::SequenceEnd,
        };
        self.emit(event, at, at);
        if self.stack.is_empty() {
            self.root_done = true;
        }
    }

    fn finish(&mut self) -> Result<()> {
        let end = self.bytes.len();
        if self.stack.is_empty() && !self.root_done {
            // Nothing but comments: granit-parser says what that is.
            return Err(GiveUp);
        }
        if let Some(p) = self.pending.take() {
            self.empty(&p);
        }
        // `next_line` has left the line count at the end of the text.
        while !self.stack.is_empty() {
            self.close(end);
        }
        self.finished = true;
        Ok(())
    }

    /// A line's entry in the block collection on top: `- item` or `key: value`.
    fn entry(&mut self, indent: usize, dash: bool) -> Result<()> {
        match self.stack.last() {
            Some(Block::Seq { .. }) if dash => {
                self.at += 1;
                let empty_at = self.at;
                self.skip_spaces();
                match self.bytes.get(self.at) {
                    None | Some(b'\n') => {
                        let empty_at = self.at.max(empty_at);
                        self.pending(indent, false, 0, empty_at);
                        Ok(())
                    }
                    Some(b'#') => Err(GiveUp),
                    _ if is_dash_item(self.bytes, self.at) => Err(GiveUp),
                    _ => self.value(indent, true),
                }
            }
            Some(Block::Map { .. }) if !dash => {
                self.key()?;
                self.after_colon(indent)
            }
            _ => Err(GiveUp),
        }
    }

    /// A block mapping key at the cursor, up to and including its `:`.
    fn key(&mut self) -> Result<()> {
        let at = self.at;
        match self.bytes[at] {
            b'"' | b'\'' => {
                let (value, style, end) = self.quoted()?;
                if self.bytes.get(end) != Some(&b':')
                    || !matches!(self.bytes.get(end + 1), None | Some(b' ' | b'\n'))
                {
                    return Err(GiveUp);
                }
                self.scalar(value, style, 0, at, end);
                self.at = end + 1;
            }
            c if Self::starts_plain(c, self.bytes.get(at + 1).copied()) => {
                let (end, colon) = self.plain_block(at)?;
                let Some(colon) = colon else {
                    return Err(GiveUp);
                };
                if colon - at > MAX_KEY_BYTES {
                    return Err(GiveUp);
                }
                self.scalar(
                    Cow::Borrowed(&self.text[at..end]),
                    ScalarStyle::Plain,
                    0,
                    at,
                    end,
                );
                self.at = colon + 1;
            }
            _ => return Err(GiveUp),
        }
        Ok(())
    }

    /// After `key:` in a block mapping at `indent`.
    fn after_colon(&mut self, indent: usize) -> Result<()> {
        let colon = self.at - 1;
        self.skip_spaces();
        match self.bytes.get(self.at) {
            None | Some(b'\n') => {
                self.pending(indent, true, 0, colon);
                Ok(())
            }
            Some(b'#') => Err(GiveUp),
            _ => self.value(indent, false),
        }
    }

    /// Whether a plain scalar may start with `c` (then `next`) in block context.
    fn starts_plain(c: u8, next: Option<u8>) -> bool {
        match c {
            b'-' | b'?' | b':' => next.is_some_and(|n| n != b' ' && n != b'\n'),
            b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
            | b'"' | b'%' | b'@' | b'`' => false,
            _ => true,
        }
    }

    /// A plain scalar in block context starting at `at`: its end (trailing
    /// spaces excluded) and, when it is a key, the `:` after it.
    fn plain_block(&self, at: usize) -> Result<(usize, Option<usize>)> {
        let b = self.bytes;
        let mut i = at;
        let mut end = at;
        while i < b.len() {
            match b[i] {
                b'\n' => break,
                b' ' => {
                    if b.get(i + 1) == Some(&b'#') {
                        break;
                    }
                }
                b':' if matches!(b.get(i + 1), None | Some(b' ' | b'\n')) => {
                    return Ok((end, Some(i)));
                }
                _ => end = i + 1,
            }
            i += 1;
        }
        Ok((end, None))
    }

    /// A quoted scalar at the cursor, on one line and without escapes: its
    /// value, style and the index just past the closing quote.
    fn quoted(&self) -> Result<(Cow<'a, str>, ScalarStyle, usize)> {
        let b = self.bytes;
        let at = self.at;
        let quote = b[at];
        let mut i = at + 1;
        let mut doubled = false;
        loop {
            match b.get(i) {
                None | Some(b'\n') => return Err(GiveUp),
                Some(b'\\') if quote == b'"' => return Err(GiveUp),
                Some(&c) if c == quote => {
                    if quote == b'\'' && b.get(i + 1) == Some(&b'\'') {
                        doubled = true;
                        i += 2;
                        continue;
                    }
                    break;
                }
                Some(_) => i += 1,
            }
        }
        let inner = &self.text[at + 1..i];
        let (value, style) = if quote == b'"' {
            (Cow::Borrowed(inner), ScalarStyle::DoubleQuoted)
        } else if doubled {
            (
                Cow::Owned(inner.replace("''", "'")),
                ScalarStyle::SingleQuoted,
            )
        } else {
            (Cow::Borrowed(inner), ScalarStyle::SingleQuoted)
        };
        Ok((value, style, i + 1))
    }

    /// A value on the line of its key or `-`, at the cursor; `item` when it is
    /// a sequence item (which may be a compact mapping `- key: value`).
    fn value(&mut self, indent: usize, item: bool) -> Result<()> {
        let at = self.at;
        let b = self.bytes;
        match b[at] {
            b'&' => {
                let mut i = at + 1;
                while b.get(i).is_some_and(|&c| is_anchor_char(c)) {
                    i += 1;
                }
                if i == at + 1 || !matches!(b.get(i), None | Some(b' ' | b'\n')) {
                    return Err(GiveUp);
                }
                let name = &self.text[at + 1..i];
                self.anchors_defined += 1;
                let id = self.anchors_defined;
                self.anchors.insert(name, id);
                self.at = i;
                self.skip_spaces();
                match b.get(self.at) {
                    None | Some(b'\n') => {
                        self.pending(indent, !item, id, i);
                        Ok(())
                    }
                    Some(b'[' | b'{') => {
                        self.flow(id, 0)?;
                        self.end_of_line()?;
                        self.next_line();
                        Ok(())
                    }
                    Some(b'"' | b'\'') => {
                        let start = self.at;
                        let (value, style, end) = self.quoted()?;
                        self.scalar(value, style, id, start, end);
                        self.at = end;
                        self.end_of_line()?;
                        self.next_line();
                        Ok(())
                    }
                    Some(&c) if Self::starts_plain(c, b.get(self.at + 1).copied()) => {
                        let start = self.at;
                        let (end, colon) = self.plain_block(start)?;
                        if colon.is_some() {
                            return Err(GiveUp);
                        }
                        self.scalar(
                            Cow::Borrowed(&self.text[start..end]),
                            ScalarStyle::Plain,
                            id,
                            start,
                            end,
                        );
                        self.at = end;
                        self.end_of_line()?;
                        self.next_line();
                        Ok(())
                    }
                    _ => Err(GiveUp),
                }
            }
            b'*' => {
                let mut i = at + 1;
                while b.get(i).is_some_and(|&c| is_anchor_char(c)) {
                    i += 1;
                }
                let Some(&id) = self.anchors.get(&self.text[at + 1..i]) else {
                    return Err(GiveUp);
                };
                if i == at + 1 {
                    return Err(GiveUp);
                }
                self.emit(FastEvent::Alias(id), at, i);
                self.at = i;
                self.end_of_line()?;
                self.next_line();
                Ok(())
            }
            b'[' | b'{' => {
                self.flow(0, 0)?;
                self.end_of_line()?;
                self.next_line();
                Ok(())
            }
            b'"' | b'\'' => {
                let (value, style, end) = self.quoted()?;
                if item
                    && b.get(end) == Some(&b':')
                    && matches!(b.get(end + 1), None | Some(b' ' | b'\n'))
                {
                    // `- "key": value`
                    return self.compact_map(at);
                }
                self.scalar(value, style, 0, at, end);
                self.at = end;
                self.end_of_line()?;
                self.next_line();
                Ok(())
            }
            c if Self::starts_plain(c, b.get(at + 1).copied()) => {
                let (end, colon) = self.plain_block(at)?;
                match colon {
                    Some(_) if item => self.compact_map(at),
                    Some(_) => Err(GiveUp),
                    None => {
                        self.scalar(
                            Cow::Borrowed(&self.text[at..end]),
                            ScalarStyle::Plain,
                            0,
                            at,
                            end,
                        );
                        self.at = end;
                        self.end_of_line()?;
                        self.next_line();
                        Ok(())
                    }
                }
            }
            _ => Err(GiveUp),
        }
    }

    /// `- key: value`: a mapping opens at the key's column.
    fn compact_map(&mut self, at: usize) -> Result<()> {
        let indent = at - self.line_start;
        self.emit(FastEvent::MappingStart(StructureStyle::Block, 0), at, at);
        self.stack.push(Block::Map { indent });
        self.at = at;
        self.key()?;
        self.after_colon(indent)
    }

    /// A flow collection on one line at the cursor; `anchor` is its own.
    fn flow(&mut self, anchor: usize, depth: usize) -> Result<()> {
        if depth >= MAX_FLOW_DEPTH {
            return Err(GiveUp);
        }
        let b = self.bytes;
        let open = self.at;
        let is_map = b[open] == b'{';
        let close = if is_map { b'}' } else { b']' };
        let start = if is_map {
            FastEvent::MappingStart(StructureStyle::Flow, anchor)
        } else {
            FastEvent::SequenceStart(StructureStyle::Flow, anchor)
        };
        self.emit(start, open, open + 1);
        self.at = open + 1;
        self.skip_spaces();
        if b.get(self.at) == Some(&close) {
            return self.flow_end(is_map);
        }
        loop {
            if is_map {
                self.flow_key()?;
                self.skip_spaces();
            }
            self.flow_node(depth)?;
            self.skip_spaces();
            match b.get(self.at) {
                Some(b',') => {
                    self.at += 1;
                    self.skip_spaces();
                    // A trailing comma is left to granit-parser.
                    if b.get(self.at) == Some(&close) {
                        return Err(GiveUp);
                    }
                }
                Some(&c) if c == close => return self.flow_end(is_map),
                _ => return Err(GiveUp),
            }
        }
    }

    fn flow_end(&mut self, is_map: bool) -> Result<()> {
        let at = self.at;
        let event = if is_map {
            FastEvent::MappingEnd
        } else {
            FastEvent::SequenceEnd
        };
        self.emit(event, at, at + 1);
        self.at = at + 1;
        Ok(())
    }

    /// A flow mapping key and its `: `.
    fn flow_key(&mut self) -> Result<()> {
        let at = self.at;
        let end = match self.bytes[at] {
            b'"' | b'\'' => {
                let (value, style, end) = self.quoted()?;
                self.scalar(value, style, 0, at, end);
                end
            }
            _ => {
                let end = self.plain_flow(at)?;
                self.scalar(
                    Cow::Borrowed(&self.text[at..end]),
                    ScalarStyle::Plain,
                    0,
                    at,
                    end,
                );
                end
            }
        };
        if self.bytes.get(end) != Some(&b':') || self.bytes.get(end + 1) != Some(&b' ') {
            return Err(GiveUp);
        }
        self.at = end + 1;
        Ok(())
    }

    /// A value inside a flow collection: a scalar or a nested collection.
    fn flow_node(&mut self, depth: usize) -> Result<()> {
        let at = self.at;
        match self.bytes.get(at) {
            Some(b'[' | b'{') => self.flow(0, depth + 1),
            Some(b'"' | b'\'') => {
                let (value, style, end) = self.quoted()?;
                self.scalar(value, style, 0, at, end);
                self.at = end;
                self.no_pair_after()
            }
            Some(_) => {
                let end = self.plain_flow(at)?;
                self.scalar(
                    Cow::Borrowed(&self.text[at..end]),
                    ScalarStyle::Plain,
                    0,
                    at,
                    end,
                );
                self.at = end;
                self.no_pair_after()
            }
            None => Err(GiveUp),
        }
    }

    /// `[a: b]` (a pair inside a flow sequence) and `{a: b: c}` are left to
    /// granit-parser.
    fn no_pair_after(&mut self) -> Result<()> {
        let mut i = self.at;
        while self.bytes.get(i) == Some(&b' ') {
            i += 1;
        }
        match self.bytes.get(i) {
            Some(b':') => Err(GiveUp),
            _ => Ok(()),
        }
    }

    /// A plain scalar in flow context starting at `at`: its end, trailing
    /// spaces excluded. Stops before `,`, a bracket, `: ` or ` #`.
    fn plain_flow(&self, at: usize) -> Result<usize> {
        let b = self.bytes;
        match b[at] {
            b'-' | b'?' | b':'
                if matches!(
                    b.get(at + 1),
                    None | Some(b' ' | b'\n' | b',' | b'[' | b']' | b'{' | b'}')
                ) =>
            {
                return Err(GiveUp);
            }
            b'-' | b'?' | b':' => {}
            c if !Self::starts_plain(c, None) => return Err(GiveUp),
            _ => {}
        }
        let mut i = at;
        let mut end = at;
        while i < b.len() {
            match b[i] {
                b'\n' => return Err(GiveUp),
                b',' | b'[' | b']' | b'{' | b'}' => break,
                b' ' => {
                    if b.get(i + 1) == Some(&b'#') {
                        return Err(GiveUp);
                    }
                }
                b':' => {
                    if matches!(b.get(i + 1), Some(b' ' | b',' | b'[' | b']' | b'{' | b'}')) {
                        break;
                    }
                    return Err(GiveUp);
                }
                _ => end = i + 1,
            }
            i += 1;
        }
        if end == at {
            return Err(GiveUp);
        }
        Ok(end)
    }
}
