//! The events the tree is built from: the parser's, with where each was written
//! and where it is used. An alias replays its anchor's events and a merge its
//! entries' (serde-saphyr's event model), so one event may be used far from where
//! it was written, and errors must name the place of use.

use std::borrow::Cow;
use std::rc::Rc;

use serde_saphyr::granit_parser::{ScalarStyle, Tag};

use super::resolve::TagKind;
use super::{Pos, Span};

/// Where a node is used when that is not where it was written: at the alias that
/// copied it, or at what it was merged from. That is its position in the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    Written,
    Alias(Pos),
    Merge(Pos),
}

/// A tag's spelling, kept only where it tells keys apart (custom tags, `!map`).
pub(super) type TagText = Option<Rc<str>>;

#[derive(Debug, Clone)]
pub(super) enum EventKind<'a> {
    Scalar(Cow<'a, str>, ScalarStyle, TagKind, TagText),
    SeqStart(TagKind, TagText),
    SeqEnd,
    MapStart(TagKind, TagText),
    MapEnd,
    /// An alias inside the node its anchor names: an error where it is used.
    RecursiveAlias(usize),
}

impl EventKind<'_> {
    pub(super) fn opens_collection(&self) -> bool {
        matches!(self, EventKind::SeqStart(..) | EventKind::MapStart(..))
    }

    pub(super) fn closes_collection(&self) -> bool {
        matches!(self, EventKind::SeqEnd | EventKind::MapEnd)
    }
}

/// An event, where it was written and where it is used.
#[derive(Debug, Clone)]
pub(super) struct Event<'a> {
    pub(super) kind: EventKind<'a>,
    /// Where it was written.
    pub(super) pos: Pos,
    /// Its text: a scalar's or an alias's, a flow collection's bracket, the
    /// first entry of a block collection (empty at its end).
    pub(super) span: Span,
    pub(super) origin: Origin,
    /// The first event of a node written as an alias: `span` is the alias's,
    /// and a collection it opens spans the alias whole.
    pub(super) is_alias_use: bool,
}

impl Event<'_> {
    /// The position of the node this event starts.
    pub(super) fn used_at(&self) -> Pos {
        match self.origin {
            Origin::Written => self.pos,
            Origin::Alias(p) | Origin::Merge(p) => p,
        }
    }

    /// Where the node is used inside something merged at `merged_at`.
    pub(super) fn used_within(&self, merged_at: Pos) -> Pos {
        match self.origin {
            Origin::Alias(p) => p,
            _ => merged_at,
        }
    }

    /// The event as part of an entry merged at `merged_at`.
    pub(super) fn merged_at(&self, merged_at: Pos) -> Self {
        Event {
            kind: self.kind.clone(),
            pos: self.pos,
            span: self.span,
            is_alias_use: self.is_alias_use,
            origin: match self.origin {
                Origin::Alias(p) => Origin::Alias(p),
                _ => Origin::Merge(merged_at),
            },
        }
    }

    pub(super) fn is_merge_key(&self) -> bool {
        matches!(&self.kind, EventKind::Scalar(v, style, kind, _)
            if v == "<<"
                && (*kind == TagKind::Merge
                    || (*kind == TagKind::None && *style == ScalarStyle::Plain)))
    }

    /// The text a duplicate-key message names.
    pub(super) fn key_text(&self) -> Option<&str> {
        match &self.kind {
            EventKind::Scalar(v, _, kind, _) if kind.can_parse_into_string() => Some(v),
            _ => None,
        }
    }
}

pub(super) fn tag_text(kind: TagKind, tag: Option<&Tag>) -> TagText {
    match kind {
        TagKind::Other | TagKind::Map => tag.map(|t| Rc::from(t.to_string())),
        _ => None,
    }
}

/// The index just past the node starting at `i`.
pub(super) fn node_end(events: &[Event<'_>], i: usize) -> usize {
    if !events[i].kind.opens_collection() {
        return i + 1;
    }
    let mut depth = 0usize;
    for (j, e) in events.iter().enumerate().skip(i) {
        if e.kind.opens_collection() {
            depth += 1;
        } else if e.kind.closes_collection() {
            depth -= 1;
            if depth == 0 {
                return j + 1;
            }
        }
    }
    events.len()
}
