//! The event loop: the parser's events turned into ours, tags classified and
//! checked, aliases expanded through their anchors, and every event counted
//! against the budget before the builder sees it. The parser is granit-parser,
//! or the fast path (`fast.rs`) for the plain YAML it takes.

use std::borrow::Cow;

use serde_saphyr::granit_parser::{
    ErrorKind, Event as ParserEvent, Parser, StrInput, StructureStyle, Tag,
};

use super::anchors::Anchors;
use super::budget::Budget;
use super::budget::{Limit, breached};
use super::event::{Event, EventKind, Origin, tag_text};
use super::fast::{FastEvent, FastScanner, GiveUp};
use super::resolve::{NodeKind, TagKind, check_tag};
use super::spans::SpanCursor;
use super::{Mode, Pos, Span, SyntaxError, error, pos_at, scan_error};

/// Where the events come from.
// One per parse: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub(super) enum Events<'a> {
    Fast(FastScanner<'a>),
    Granit(Parser<'a, StrInput<'a>>),
}

/// The fast path gave up: the text is parsed again by granit-parser.
pub(super) const FAST_PATH_GAVE_UP: &str = "left to granit-parser";

/// A fast-path event, its give-up as an error at `last`, the event before it.
fn fast_event<'a>(
    item: Option<Result<(FastEvent<'a>, Pos, Span), GiveUp>>,
    last: Pos,
) -> Result<Option<(FastEvent<'a>, Pos, Span)>, SyntaxError> {
    match item {
        None => Ok(None),
        Some(Ok(item)) => Ok(Some(item)),
        Some(Err(GiveUp)) => Err(error(last, FAST_PATH_GAVE_UP)),
    }
}

/// A node event of granit-parser's as the fast path's, and its tag; `None`
/// for the stream's and documents' bounds.
fn untagged(event: ParserEvent<'_>) -> Option<(FastEvent<'_>, Option<Cow<'_, Tag>>)> {
    Some(match event {
        ParserEvent::Scalar(value, style, anchor, tag) => {
            (FastEvent::Scalar(value, style, anchor), tag)
        }
        ParserEvent::SequenceStart(style, anchor, tag) => {
            (FastEvent::SequenceStart(style, anchor), tag)
        }
        ParserEvent::MappingStart(style, anchor, tag) => {
            (FastEvent::MappingStart(style, anchor), tag)
        }
        ParserEvent::SequenceEnd => (FastEvent::SequenceEnd, None),
        ParserEvent::MappingEnd => (FastEvent::MappingEnd, None),
        ParserEvent::Alias(id) => (FastEvent::Alias(id), None),
        _ => return None,
    })
}

pub(super) struct EventReader<'a> {
    text: &'a str,
    events: Events<'a>,
    spans: SpanCursor,
    anchors: Anchors<'a>,
    /// Anchors are only recorded when the text could hold an alias.
    keep_anchors: bool,
    budget: Budget,
    mode: Mode,
    /// The position of the last event read from the parser, and the bytes of
    /// its text.
    last: Pos,
    last_span: Span,
}

/// A custom tag where only plain values are read; `pos` is the tag's.
fn custom_tag(tag: &Tag, pos: Pos) -> SyntaxError {
    error(pos, format!("custom tag `{}`", tag.original()))
}

fn tag_len(tag: Option<&Tag>) -> usize {
    tag.map_or(0, |t| {
        let (h, s) = t.parts();
        h.len() + s.len()
    })
}

impl<'a> EventReader<'a> {
    pub(super) fn new(text: &'a str, events: Events<'a>, mode: Mode) -> Self {
        EventReader {
            text,
            events,
            spans: SpanCursor::default(),
            anchors: Anchors::default(),
            keep_anchors: text.contains('*'),
            budget: Budget::default(),
            mode,
            last: Pos { line: 1, column: 1 },
            last_span: Span::default(),
        }
    }

    /// What the parse has spent.
    pub(super) fn into_budget(self) -> Budget {
        self.budget
    }

    /// The position of the last event read from the parser.
    pub(super) fn last(&self) -> Pos {
        self.last
    }

    /// Replays recorded events (a collection key, a merged entry) next.
    pub(super) fn replay(&mut self, events: Vec<Event<'a>>) {
        self.anchors.replay(events);
    }

    /// Refuses a tag outside the core schema where only plain values are read.
    fn check_custom(&self, tag: &Tag, kind: TagKind, pos: Pos) -> Result<(), SyntaxError> {
        match (self.mode, kind) {
            (Mode::Config, TagKind::Other | TagKind::Include) => Err(custom_tag(tag, pos)),
            _ => Ok(()),
        }
    }

    /// `e` (about an anchor) moved onto the `&name` before the node at byte
    /// `node`: the parser places a node after its anchor and tag.
    fn at_anchor(&self, mut e: SyntaxError, node: u32) -> SyntaxError {
        let text = self.text.as_bytes();
        let mut i = node as usize;
        let anchor = loop {
            while i > 0 && matches!(text[i - 1], b' ' | b'\n') {
                i -= 1;
            }
            let end = i;
            while i > 0 && !matches!(text[i - 1], b' ' | b'\n') {
                i -= 1;
            }
            match text.get(i) {
                Some(b'&') => break i,
                Some(b'!') if i < end => continue,
                _ => return e,
            }
        };
        let lines_between = text[anchor..node as usize]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        let line_start = text[..anchor]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let column = self.text[line_start..anchor].chars().count() + 1;
        e.pos = Pos {
            line: e.pos.line.saturating_sub(lines_between as u32),
            column: column as u32,
        };
        e
    }

    /// granit-parser stops at its own nesting limit, which it may reach
    /// scanning ahead, past the bracket that crossed ours: find that bracket,
    /// counting from the last event read, and report the depth there.
    fn too_deep(&self, e: &serde_saphyr::granit_parser::ScanError) -> SyntaxError {
        let text = self.text.as_bytes();
        let (mut line, mut column) = (self.last.line, self.last.column);
        let mut depth = self.budget.depth();
        let from = self.last_span.start as usize;
        let counted_from = self.last_span.end as usize;
        for (i, &b) in text.iter().enumerate().skip(from) {
            if i >= counted_from {
                match b {
                    b'[' | b'{' => {
                        depth += 1;
                        if depth > Limit::Depth.max() {
                            return breached(Pos { line, column }, Limit::Depth, depth);
                        }
                    }
                    b']' | b'}' => depth = depth.saturating_sub(1),
                    // Quotes and comments: leave it to the parser's position.
                    b'"' | b'\'' | b'#' => break,
                    _ => {}
                }
            }
            if b == b'\n' {
                line += 1;
                column = 1;
            } else if b & 0xC0 != 0x80 {
                column += 1;
            }
        }
        breached(pos_at(e.marker()), Limit::Depth, depth + 1)
    }

    /// The next event: replayed ones first, then the parser's.
    // Inlined into the builder's loop, the event is built where it is read
    // rather than written out and read back.
    #[inline(always)]
    pub(super) fn next(&mut self) -> Result<Option<Event<'a>>, SyntaxError> {
        loop {
            if let Some(e) = self.anchors.next_replayed(&mut self.budget)? {
                return Ok(Some(e));
            }
            let mut tag_pos = None;
            // The fast path's events have no tags: the scanner gives up on one.
            let (event, tag, pos, span) = match &mut self.events {
                Events::Fast(fast) => match fast_event(fast.next(), self.last)? {
                    Some((event, pos, span)) => (event, None, pos, span),
                    None => return Ok(None),
                },
                Events::Granit(parser) => {
                    let Some(item) = parser.next() else {
                        return Ok(None);
                    };
                    let (event, parser_span) = match item {
                        Ok(item) => item,
                        Err(e)
                            if self.mode == Mode::Config
                                && matches!(e.kind(), ErrorKind::RecursionLimitExceeded) =>
                        {
                            return Err(self.too_deep(&e));
                        }
                        Err(e) => return Err(scan_error(&e)),
                    };
                    tag_pos = parser_span.tag_start.as_ref().map(pos_at);
                    let offset = |m: &serde_saphyr::granit_parser::Marker| {
                        u32::try_from(m.byte_offset().unwrap_or(0)).unwrap_or(u32::MAX)
                    };
                    let span = Span {
                        start: offset(&parser_span.start),
                        end: offset(&parser_span.end),
                    };
                    let pos = pos_at(&parser_span.start);
                    let bounds = matches!(
                        event,
                        ParserEvent::DocumentStart(..) | ParserEvent::DocumentEnd
                    );
                    let Some((event, tag)) = untagged(event) else {
                        // The stream's and documents' bounds count as events too.
                        self.last = pos;
                        self.last_span = span;
                        self.budget.event(pos)?;
                        if bounds {
                            self.anchors.clear();
                        }
                        continue;
                    };
                    (event, tag, pos, span)
                }
            };
            self.last = pos;
            self.last_span = span;
            self.budget.event(pos)?;
            let is_map = matches!(event, FastEvent::MappingStart(..));
            let tag = tag.as_deref();
            let (kind, anchor, span) = match event {
                FastEvent::Scalar(value, style, anchor) => {
                    self.budget.node(pos)?;
                    self.budget.scalar_bytes(value.len() + tag_len(tag), pos)?;
                    self.budget
                        .anchor(anchor, pos)
                        .map_err(|e| self.at_anchor(e, span.start))?;
                    let (kind, text) = match tag {
                        // Most scalars have no tag.
                        None => (TagKind::None, None),
                        Some(t) => {
                            let kind = TagKind::of(tag);
                            self.check_custom(t, kind, tag_pos.unwrap_or(pos))?;
                            check_tag(tag, kind, NodeKind::Scalar, pos)?;
                            (kind, tag_text(kind, tag))
                        }
                    };
                    let span = self.spans.scalar(self.text, span, style);
                    (EventKind::Scalar(value, style, kind, text), anchor, span)
                }
                FastEvent::SequenceStart(style, anchor)
                | FastEvent::MappingStart(style, anchor) => {
                    self.budget.node(pos)?;
                    self.budget.enter(pos)?;
                    self.budget.scalar_bytes(tag_len(tag), pos)?;
                    self.budget
                        .anchor(anchor, pos)
                        .map_err(|e| self.at_anchor(e, span.start))?;
                    let kind = TagKind::of(tag);
                    if let Some(t) = tag {
                        self.check_custom(t, kind, tag_pos.unwrap_or(pos))?;
                    }
                    let text = tag_text(kind, tag);
                    let flow = style == StructureStyle::Flow;
                    let span = self.spans.open(self.text, span, !is_map, flow);
                    if is_map {
                        check_tag(tag, kind, NodeKind::Map, pos)?;
                        (EventKind::MapStart(kind, text), anchor, span)
                    } else {
                        check_tag(tag, kind, NodeKind::Seq, pos)?;
                        (EventKind::SeqStart(kind, text), anchor, span)
                    }
                }
                FastEvent::SequenceEnd => {
                    self.budget.leave();
                    (EventKind::SeqEnd, 0, self.spans.close(span))
                }
                FastEvent::MappingEnd => {
                    self.budget.leave();
                    (EventKind::MapEnd, 0, self.spans.close(span))
                }
                FastEvent::Alias(id) => {
                    self.budget.alias(pos)?;
                    let span = self.spans.alias(span);
                    if self.anchors.is_recording(id) {
                        let e = Event {
                            kind: EventKind::RecursiveAlias(id),
                            pos,
                            span,
                            origin: Origin::Written,
                            is_alias_use: false,
                        };
                        self.anchors.record(&e, &mut self.budget)?;
                        return Ok(Some(e));
                    }
                    if !self.anchors.is_defined(id) {
                        return Err(error(pos, "alias references unknown anchor"));
                    }
                    self.anchors.replay_alias(id, pos, span);
                    continue;
                }
            };
            let e = Event {
                kind,
                pos,
                span,
                origin: Origin::Written,
                is_alias_use: false,
            };
            if self.keep_anchors {
                self.anchors.record_written(&e, anchor, &mut self.budget)?;
            }
            return Ok(Some(e));
        }
    }
}
