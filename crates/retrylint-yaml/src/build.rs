//! The builder: the located tree from the reader's events, with an explicit stack
//! (no recursion, so nesting costs no native stack). Collection keys and merge
//! values are captured as events and replayed; errors inside a node copied by an
//! alias are reported at the alias, as serde-saphyr reports them.

use super::anchors::recursive_alias_error;
use super::budget::Budget;
use super::event::{Event, EventKind, Origin};
use super::keys::{
    Fingerprint, FingerprintRef, KeySet, ScalarFingerprint, duplicate_key_error,
    fingerprint_of_events, fingerprint_unless_implied, node_fingerprint,
};
use super::merge::{MergedEntry, merge_value_error, merged_entries};
use super::reader::{EventReader, Events};
use super::resolve::{resolve_scalar, scalar_is_null};
use super::text::Interner;
use super::{Mode, Node, Pos, Span, SyntaxError, Value, error};

/// Where a mapping being built stands.
enum MapState {
    /// The next node is a key.
    Key,
    /// The next node is the value of `key`; `fingerprint` is the key's identity
    /// when its value does not imply it (a tagged or collection key).
    Value {
        key: Node,
        fingerprint: Option<Fingerprint>,
    },
    /// The next node is a merge value.
    Merge,
    /// A collection key, recorded and checked, is being built from its events.
    CollectionKey {
        fingerprint: Fingerprint,
    },
    /// Merged entries are being added: a key, then its value.
    MergedKey {
        fingerprint: Fingerprint,
    },
    MergedValue {
        key: Node,
        fingerprint: Fingerprint,
    },
}

struct MapFrame<'a> {
    /// Its entries are `Builder::entries[entries_from..]` while it is built.
    entries_from: usize,
    keys: KeySet,
    state: MapState,
    /// Entries its merge keys bring, added when it ends.
    merged: Vec<MergedEntry<'a>>,
    /// Those not added yet, once it has ended.
    merging: std::vec::IntoIter<MergedEntry<'a>>,
}

// At most 64 frames are ever open; boxing the mapping would cost an allocation per
// mapping read.
#[allow(clippy::large_enum_variant)]
enum Frame<'a> {
    /// Its items are `Builder::items[items_from..]` while it is built.
    Seq {
        pos: Pos,
        extent: Extent,
        items_from: usize,
        errors_at: Option<Pos>,
    },
    Map {
        pos: Pos,
        extent: Extent,
        map: MapFrame<'a>,
        errors_at: Option<Pos>,
    },
    /// A list of merge values (`<<: [*a, *event]`): its elements are recorded.
    MergeSeq {
        entries: Vec<MergedEntry<'a>>,
        errors_at: Option<Pos>,
    },
}

impl Frame<'_> {
    /// Where errors inside this node are reported: at the alias that copied it, when
    /// it (or a list or mapping holding it) came through an alias as an element or a
    /// value, as serde-saphyr reports them.
    fn errors_at(&self) -> Option<Pos> {
        match self {
            Frame::Seq { errors_at, .. }
            | Frame::Map { errors_at, .. }
            | Frame::MergeSeq { errors_at, .. } => *errors_at,
        }
    }
}

/// A collection's span while it is read: its start, and the furthest end of
/// what has been written inside it. Copies (aliases, merges) come from earlier
/// in the text, so they never reach further than what is written here.
struct Extent {
    span: Span,
    /// A node written as an alias spans the alias, whatever it holds.
    fixed: bool,
}

impl Extent {
    fn new(event: &Event<'_>) -> Self {
        Extent {
            span: event.span,
            fixed: event.is_alias_use,
        }
    }

    fn reach(&mut self, end: u32) {
        if !self.fixed && end > self.span.end {
            self.span.end = end;
        }
    }
}

/// `e`, reported at `at` instead when given.
fn relocate(e: SyntaxError, at: Option<Pos>) -> SyntaxError {
    match at {
        Some(at) if at != e.pos => {
            let message = match e.message.rfind(" at line ") {
                Some(i) => &e.message[..i],
                None => &e.message,
            };
            SyntaxError {
                help: e.help.clone(),
                breach: e.breach,
                ..error(at, message)
            }
        }
        _ => e,
    }
}

/// What a captured node is for.
enum CapturePurpose {
    Key,
    Merge,
    MergeItem,
}

/// A node being recorded rather than built.
struct Capture<'a> {
    events: Vec<Event<'a>>,
    depth: usize,
    purpose: CapturePurpose,
}

/// Builds the tree from the reader's events with an explicit stack.
pub(super) struct Builder<'a> {
    reader: EventReader<'a>,
    stack: Vec<Frame<'a>>,
    /// The items and entries of every open collection, innermost last: each
    /// collection gets one allocation of its exact size when it ends.
    items: Vec<Node>,
    entries: Vec<(Node, Node)>,
    interner: Interner<'a>,
    capture: Option<Capture<'a>>,
    root: Option<Node>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(text: &'a str, events: Events<'a>, mode: Mode) -> Self {
        Builder {
            reader: EventReader::new(text, events, mode),
            stack: Vec::new(),
            items: Vec::new(),
            entries: Vec::new(),
            interner: Interner::default(),
            capture: None,
            root: None,
        }
    }

    pub(super) fn run(self) -> Result<Node, SyntaxError> {
        self.run_counted().map(|(root, _)| root)
    }

    /// The tree, and what reading it spent.
    pub(super) fn run_counted(mut self) -> Result<(Node, Budget), SyntaxError> {
        while self.root.is_none() {
            let Some(event) = self.reader.next()? else {
                // A stream without documents is one null.
                let null = Node {
                    pos: self.reader.last(),
                    span: Span::default(),
                    value: Value::Null,
                };
                return Ok((null, self.reader.into_budget()));
            };
            self.handle(event)?;
        }
        // One document only: anything after it is an error.
        if let Some(event) = self.reader.next()? {
            return Err(error(
                event.pos,
                "multiple YAML documents detected; a file holds one document",
            ));
        }
        let root = self.root.take().unwrap_or(Node {
            pos: self.reader.last(),
            span: Span::default(),
            value: Value::Null,
        });
        Ok((root, self.reader.into_budget()))
    }

    /// The innermost collection being built reaches to `end`.
    fn reach(&mut self, end: u32) {
        for frame in self.stack.iter_mut().rev() {
            match frame {
                Frame::Seq { extent, .. } | Frame::Map { extent, .. } => {
                    extent.reach(end);
                    return;
                }
                Frame::MergeSeq { .. } => {}
            }
        }
    }

    fn handle(&mut self, event: Event<'a>) -> Result<(), SyntaxError> {
        self.reach(event.span.end);
        if let Some(capture) = &mut self.capture {
            match event.kind {
                EventKind::SeqStart(..) | EventKind::MapStart(..) => capture.depth += 1,
                EventKind::SeqEnd | EventKind::MapEnd => capture.depth -= 1,
                _ => {}
            }
            capture.events.push(event);
            if capture.depth == 0 {
                let capture = self.capture.take().expect("checked");
                let enclosing_errors_at = self.stack.last().and_then(Frame::errors_at);
                return self
                    .captured(capture)
                    .map_err(|e| relocate(e, enclosing_errors_at));
            }
            return Ok(());
        }
        let enclosing_errors_at = self.stack.last().and_then(Frame::errors_at);
        // Elements and values copied through an alias report errors at the alias.
        let alias_errors_at = match (&event.origin, self.stack.last()) {
            (Origin::Alias(p), None | Some(Frame::Seq { .. })) => Some(*p),
            (Origin::Alias(p), Some(Frame::Map { map, .. }))
                if matches!(
                    map.state,
                    MapState::Value { .. } | MapState::MergedValue { .. }
                ) =>
            {
                Some(*p)
            }
            _ => None,
        };
        match self.stack.last() {
            Some(Frame::Map { map, .. }) => match map.state {
                MapState::Key => {
                    return match event.kind {
                        EventKind::SeqStart(..) | EventKind::MapStart(..) => {
                            self.start_capture(event, CapturePurpose::Key)
                        }
                        EventKind::Scalar(..) => self.scalar_key(event),
                        EventKind::RecursiveAlias(_) => Err(recursive_alias_error(event.pos)),
                        EventKind::MapEnd => self.end_map(),
                        EventKind::SeqEnd => Ok(()),
                    }
                    .map_err(|e| relocate(e, enclosing_errors_at));
                }
                MapState::Merge => {
                    return self
                        .merge_value(event)
                        .map_err(|e| relocate(e, enclosing_errors_at));
                }
                _ => {}
            },
            Some(Frame::MergeSeq { .. }) => {
                if matches!(event.kind, EventKind::SeqEnd) {
                    let Some(Frame::MergeSeq { entries, .. }) = self.stack.pop() else {
                        unreachable!("checked above")
                    };
                    let map = self.top_map();
                    map.merged.extend(entries);
                    map.state = MapState::Key;
                    return Ok(());
                }
                return self
                    .start_capture(event, CapturePurpose::MergeItem)
                    .map_err(|e| relocate(e, enclosing_errors_at));
            }
            _ => {}
        }
        let at = event.used_at();
        let errors_at = alias_errors_at.or(enclosing_errors_at);
        match event.kind {
            EventKind::Scalar(value, style, kind, _) => {
                let value = resolve_scalar(value, style, kind, event.pos, &mut self.interner)
                    .map_err(|e| relocate(e, errors_at))?;
                self.deliver(Node {
                    pos: at,
                    span: event.span,
                    value,
                })
            }
            EventKind::SeqStart(..) => {
                self.stack.push(Frame::Seq {
                    pos: at,
                    extent: Extent::new(&event),
                    items_from: self.items.len(),
                    errors_at,
                });
                Ok(())
            }
            EventKind::MapStart(..) => {
                self.stack.push(Frame::Map {
                    pos: at,
                    extent: Extent::new(&event),
                    map: MapFrame {
                        entries_from: self.entries.len(),
                        keys: KeySet::default(),
                        state: MapState::Key,
                        merged: Vec::new(),
                        merging: Vec::new().into_iter(),
                    },
                    errors_at,
                });
                Ok(())
            }
            EventKind::SeqEnd => match self.stack.pop() {
                Some(Frame::Seq {
                    pos,
                    extent,
                    items_from,
                    ..
                }) => {
                    let items = self.items.split_off(items_from);
                    self.deliver(Node {
                        pos,
                        span: extent.span,
                        value: Value::Seq(items),
                    })
                }
                _ => Ok(()),
            },
            EventKind::MapEnd => self.end_map().map_err(|e| relocate(e, enclosing_errors_at)),
            EventKind::RecursiveAlias(_) => {
                Err(relocate(recursive_alias_error(event.pos), errors_at))
            }
        }
    }

    /// Whether the mapping being built has a key with this identity.
    fn has_key(&self, fingerprint: FingerprintRef<'_>) -> bool {
        match self.stack.last() {
            Some(Frame::Map { map, .. }) => map
                .keys
                .contains(&self.entries[map.entries_from..], fingerprint),
            _ => unreachable!("a mapping is being built"),
        }
    }

    fn top_map(&mut self) -> &mut MapFrame<'a> {
        match self.stack.last_mut() {
            Some(Frame::Map { map, .. }) => map,
            _ => unreachable!("a mapping is being built"),
        }
    }

    fn start_capture(
        &mut self,
        event: Event<'a>,
        purpose: CapturePurpose,
    ) -> Result<(), SyntaxError> {
        let depth = usize::from(matches!(
            event.kind,
            EventKind::SeqStart(..) | EventKind::MapStart(..)
        ));
        let capture = Capture {
            events: vec![event],
            depth,
            purpose,
        };
        if depth == 0 {
            return self.captured(capture);
        }
        self.capture = Some(capture);
        Ok(())
    }

    fn captured(&mut self, capture: Capture<'a>) -> Result<(), SyntaxError> {
        let used_at = capture.events[0].used_at();
        match capture.purpose {
            CapturePurpose::Key => {
                let (fingerprint, _) = fingerprint_of_events(&capture.events, 0);
                if self.has_key(fingerprint.as_ref()) {
                    return Err(duplicate_key_error(None, capture.events[0].pos));
                }
                self.top_map().state = MapState::CollectionKey { fingerprint };
                self.reader.replay(capture.events);
                Ok(())
            }
            CapturePurpose::Merge => {
                let mut entries = Vec::new();
                merged_entries(&capture.events, used_at, &mut entries)?;
                let map = self.top_map();
                map.merged.extend(entries);
                map.state = MapState::Key;
                Ok(())
            }
            CapturePurpose::MergeItem => {
                let Some(Frame::MergeSeq { entries, .. }) = self.stack.last_mut() else {
                    unreachable!("a merge list is being read")
                };
                merged_entries(&capture.events, used_at, entries)
            }
        }
    }

    /// The first event of a merge value (`<<: …`).
    fn merge_value(&mut self, event: Event<'a>) -> Result<(), SyntaxError> {
        match &event.kind {
            EventKind::Scalar(v, style, kind, _) => {
                if scalar_is_null(*kind, v, *style) {
                    self.top_map().state = MapState::Key;
                    Ok(())
                } else {
                    Err(merge_value_error(event.pos))
                }
            }
            EventKind::RecursiveAlias(_) => Err(recursive_alias_error(event.pos)),
            EventKind::MapStart(..) => self.start_capture(event, CapturePurpose::Merge),
            EventKind::SeqStart(..) => {
                let errors_at = self.stack.last().and_then(Frame::errors_at);
                self.stack.push(Frame::MergeSeq {
                    entries: Vec::new(),
                    errors_at,
                });
                Ok(())
            }
            EventKind::SeqEnd | EventKind::MapEnd => Ok(()),
        }
    }

    fn scalar_key(&mut self, event: Event<'a>) -> Result<(), SyntaxError> {
        if event.is_merge_key() {
            self.top_map().state = MapState::Merge;
            return Ok(());
        }
        let at = event.used_at();
        let EventKind::Scalar(value, style, kind, text) = event.kind else {
            unreachable!("a scalar key")
        };
        let fingerprint = ScalarFingerprint::new(&value, style, kind, text.as_ref());
        if self.has_key(fingerprint.as_ref()) {
            return Err(duplicate_key_error(
                kind.can_parse_into_string().then_some(&*value),
                event.pos,
            ));
        }
        let key = Node {
            pos: at,
            span: event.span,
            value: resolve_scalar(value.clone(), style, kind, event.pos, &mut self.interner)?,
        };
        let fingerprint = fingerprint.as_ref();
        let fingerprint = (node_fingerprint(&key) != Some(fingerprint))
            .then(|| fingerprint.to_owned_fingerprint());
        self.top_map().state = MapState::Value { key, fingerprint };
        Ok(())
    }

    /// A mapping's end: merged entries first, if any.
    fn end_map(&mut self) -> Result<(), SyntaxError> {
        let map = self.top_map();
        if map.merged.is_empty() {
            return self.finish_map();
        }
        map.merging = std::mem::take(&mut map.merged).into_iter();
        self.merge_next()
    }

    /// Starts on the next merged entry whose key is not there yet.
    fn merge_next(&mut self) -> Result<(), SyntaxError> {
        let Some(Frame::Map { map, .. }) = self.stack.last_mut() else {
            return Ok(());
        };
        let entries = &self.entries[map.entries_from..];
        for entry in map.merging.by_ref() {
            let (fingerprint, _) = fingerprint_of_events(&entry.events, 0);
            if map.keys.contains(entries, fingerprint.as_ref()) {
                continue;
            }
            map.state = MapState::MergedKey { fingerprint };
            self.reader.replay(entry.events);
            return Ok(());
        }
        self.finish_map()
    }

    fn finish_map(&mut self) -> Result<(), SyntaxError> {
        match self.stack.pop() {
            Some(Frame::Map {
                pos, extent, map, ..
            }) => {
                let entries = self.entries.split_off(map.entries_from);
                self.deliver(Node {
                    pos,
                    span: extent.span,
                    value: Value::Map(entries),
                })
            }
            _ => Ok(()),
        }
    }

    /// Hands a finished node to its parent.
    fn deliver(&mut self, node: Node) -> Result<(), SyntaxError> {
        self.reach(node.span.end);
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { .. }) => self.items.push(node),
            Some(Frame::MergeSeq { .. }) => {}
            Some(Frame::Map { map, .. }) => {
                match std::mem::replace(&mut map.state, MapState::Key) {
                    MapState::CollectionKey { fingerprint } => {
                        let fingerprint = fingerprint_unless_implied(&node, fingerprint);
                        map.state = MapState::Value {
                            key: node,
                            fingerprint,
                        };
                    }
                    MapState::Value { key, fingerprint } => {
                        self.entries.push((key, node));
                        map.keys
                            .push(&self.entries[map.entries_from..], fingerprint);
                    }
                    MapState::MergedKey { fingerprint } => {
                        map.state = MapState::MergedValue {
                            key: node,
                            fingerprint,
                        }
                    }
                    MapState::MergedValue { key, fingerprint } => {
                        let fingerprint = fingerprint_unless_implied(&key, fingerprint);
                        self.entries.push((key, node));
                        map.keys
                            .push(&self.entries[map.entries_from..], fingerprint);
                        return self.merge_next();
                    }
                    MapState::Key | MapState::Merge => {}
                }
            }
        }
        Ok(())
    }
}
