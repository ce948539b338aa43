//! The event loop: the parser's events turned into ours, tags classified and
//! checked, aliases expanded through their anchors, and every event counted
//! against the budget before the builder sees it. The parser is granit-parser,
//! or the fast path (`fast.rs`) for the plain YAML it takes.

use serde_saphyr::granit_parser::{Event as ParserEvent, Parser, StrInput, StructureStyle, Tag};

use super::anchors::Anchors;
use super::budget::Budget;
use super::event::{Event, EventKind, Origin, tag_text};
use super::fast::FastScanner;
use super::resolve::{NodeKind, TagKind, check_tag};
use super::spans::SpanCursor;
use super::{Pos, Span, SyntaxError, error, pos_at, scan_error};

/// Where the events come from.
// One per parse: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub(super) enum Events<'a> {
    Fast(FastScanner<'a>),
    Granit(Parser<'a, StrInput<'a>>),
}

/// The fast path gave up: the text is parsed again by granit-parser.
pub(super) const FAST_PATH_GAVE_UP: &str = "left to granit-parser";

pub(super) struct EventReader<'a> {
    text: &'a str,
    events: Events<'a>,
    spans: SpanCursor,
    anchors: Anchors<'a>,
    /// Anchors are only recorded when the text could hold an alias.
    keep_anchors: bool,
    budget: Budget,
    /// The position of the last event read from the parser.
    last: Pos,
}

fn tag_len(tag: Option<&Tag>) -> usize {
    tag.map_or(0, |t| {
        let (h, s) = t.parts();
        h.len() + s.len()
    })
}

impl<'a> EventReader<'a> {
    pub(super) fn new(text: &'a str, events: Events<'a>) -> Self {
        EventReader {
            text,
            events,
            spans: SpanCursor::default(),
            anchors: Anchors::default(),
            keep_anchors: text.contains('*'),
            budget: Budget::default(),
            last: Pos { line: 1, column: 1 },
        }
    }

    /// The position of the last event read from the parser.
    pub(super) fn last(&self) -> Pos {
        self.last
    }

    /// Replays recorded events (a collection key, a merged entry) next.
    pub(super) fn replay(&mut self, events: Vec<Event<'a>>) {
        self.anchors.replay(events);
    }

    /// The next event: replayed ones first, then the parser's.
    pub(super) fn next(&mut self) -> Result<Option<Event<'a>>, SyntaxError> {
        loop {
            if let Some(e) = self.anchors.next_replayed(&mut self.budget)? {
                return Ok(Some(e));
            }
            let (event, pos, span) = match &mut self.events {
                Events::Fast(fast) => match fast.next() {
                    None => return Ok(None),
                    Some(Ok(e)) => e,
                    Some(Err(_)) => return Err(error(self.last, FAST_PATH_GAVE_UP)),
                },
                Events::Granit(parser) => {
                    let Some(item) = parser.next() else {
                        return Ok(None);
                    };
                    let (event, parser_span) = item.map_err(|e| scan_error(&e))?;
                    let offset = |m: &serde_saphyr::granit_parser::Marker| {
                        u32::try_from(m.byte_offset().unwrap_or(0)).unwrap_or(u32::MAX)
                    };
                    let span = Span {
                        start: offset(&parser_span.start),
                        end: offset(&parser_span.end),
                    };
                    (event, pos_at(&parser_span.start), span)
                }
            };
            self.last = pos;
            self.budget.event(pos)?;
            let is_map = matches!(event, ParserEvent::MappingStart(..));
            let (kind, anchor, span) = match event {
                ParserEvent::Scalar(value, style, anchor, tag) => {
                    let tag = tag.as_deref();
                    self.budget.node(pos)?;
                    self.budget.scalar_bytes(value.len() + tag_len(tag), pos)?;
                    self.budget.anchor(anchor, pos)?;
                    let (kind, text) = match tag {
                        // Most scalars have no tag.
                        None => (TagKind::None, None),
                        Some(_) => {
                            let kind = TagKind::of(tag);
                            check_tag(tag, kind, NodeKind::Scalar, pos)?;
                            (kind, tag_text(kind, tag))
                        }
                    };
                    let span = self.spans.scalar(self.text, span, style);
                    (EventKind::Scalar(value, style, kind, text), anchor, span)
                }
                ParserEvent::SequenceStart(style, anchor, tag)
                | ParserEvent::MappingStart(style, anchor, tag) => {
                    let tag = tag.as_deref();
                    self.budget.node(pos)?;
                    self.budget.enter(pos)?;
                    self.budget.scalar_bytes(tag_len(tag), pos)?;
                    self.budget.anchor(anchor, pos)?;
                    let kind = TagKind::of(tag);
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
                ParserEvent::SequenceEnd => {
                    self.budget.leave();
                    (EventKind::SeqEnd, 0, self.spans.close(span))
                }
                ParserEvent::MappingEnd => {
                    self.budget.leave();
                    (EventKind::MapEnd, 0, self.spans.close(span))
                }
                ParserEvent::Alias(id) => {
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
                ParserEvent::DocumentStart(..) | ParserEvent::DocumentEnd => {
                    self.anchors.clear();
                    continue;
                }
                _ => continue,
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
