//! The event loop: granit-parser's events turned into ours, tags classified and
//! checked, aliases expanded through their anchors, and every event counted
//! against the budget before the builder sees it.

use serde_saphyr::granit_parser::{Event as ParserEvent, Parser, StrInput, Tag};

use super::anchors::Anchors;
use super::budget::Budget;
use super::event::{Event, EventKind, Origin, tag_text};
use super::resolve::{NodeKind, TagKind, check_tag};
use super::{Pos, SyntaxError, error, pos_at, scan_error};

pub(super) struct EventReader<'a> {
    parser: Parser<'a, StrInput<'a>>,
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
    pub(super) fn new(text: &'a str) -> Self {
        EventReader {
            parser: Parser::new_from_str(text),
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
            let Some(item) = self.parser.next() else {
                return Ok(None);
            };
            let (event, span) = item.map_err(|e| scan_error(&e))?;
            let pos = pos_at(&span.start);
            self.last = pos;
            self.budget.event(pos)?;
            let is_map = matches!(event, ParserEvent::MappingStart(..));
            let (kind, anchor) = match event {
                ParserEvent::Scalar(value, style, anchor, tag) => {
                    let tag = tag.as_deref();
                    self.budget.node(pos)?;
                    self.budget.scalar_bytes(value.len() + tag_len(tag), pos)?;
                    self.budget.anchor(anchor, pos)?;
                    let kind = TagKind::of(tag);
                    check_tag(tag, kind, NodeKind::Scalar, pos)?;
                    (
                        EventKind::Scalar(value, style, kind, tag_text(kind, tag)),
                        anchor,
                    )
                }
                ParserEvent::SequenceStart(_, anchor, tag)
                | ParserEvent::MappingStart(_, anchor, tag) => {
                    let tag = tag.as_deref();
                    self.budget.node(pos)?;
                    self.budget.enter(pos)?;
                    self.budget.scalar_bytes(tag_len(tag), pos)?;
                    self.budget.anchor(anchor, pos)?;
                    let kind = TagKind::of(tag);
                    let text = tag_text(kind, tag);
                    if is_map {
                        check_tag(tag, kind, NodeKind::Map, pos)?;
                        (EventKind::MapStart(kind, text), anchor)
                    } else {
                        check_tag(tag, kind, NodeKind::Seq, pos)?;
                        (EventKind::SeqStart(kind, text), anchor)
                    }
                }
                ParserEvent::SequenceEnd => {
                    self.budget.leave();
                    (EventKind::SeqEnd, 0)
                }
                ParserEvent::MappingEnd => {
                    self.budget.leave();
                    (EventKind::MapEnd, 0)
                }
                ParserEvent::Alias(id) => {
                    self.budget.alias(pos)?;
                    if self.anchors.is_recording(id) {
                        let e = Event {
                            kind: EventKind::RecursiveAlias(id),
                            pos,
                            origin: Origin::Written,
                        };
                        self.anchors.record(&e, &mut self.budget)?;
                        return Ok(Some(e));
                    }
                    if !self.anchors.is_defined(id) {
                        return Err(error(pos, "alias references unknown anchor"));
                    }
                    self.anchors.replay_alias(id, pos);
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
                origin: Origin::Written,
            };
            if self.keep_anchors {
                self.anchors.record_written(&e, anchor, &mut self.budget)?;
            }
            return Ok(Some(e));
        }
    }
}
