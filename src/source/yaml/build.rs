//! The builder: the tree from granit-parser's events, with serde-saphyr's event model.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::rc::Rc;

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, StrInput, Tag};

use super::keys::{Fp, FpTag, KeySet, ScalarFp, canonical_tag, exception, node_fp};
use super::resolve::{NodeKind, TagKind, check_tag, resolve_scalar, scalar_is_null};
use super::{Node, Pos, SyntaxError, Value, error, pos_at, scan_error};

// ---------------------------------------------------------------------------
// The budget. A 10,000-service topology is ~1M nodes; leave room, keep a ceiling.

/// Nesting deeper than this many collections is refused.
const MAX_DEPTH: usize = 64;
/// Parser events, and events replayed for aliases.
const MAX_EVENTS: usize = 50_000_000;
/// Nodes, written out or replayed for aliases.
const MAX_NODES: usize = 20_000_000;
/// Events replayed for aliases: what stops an alias bomb.
const MAX_REPLAYED: usize = 2_000_000;
/// Event copies kept for anchored nodes.
const MAX_RECORDED: usize = 1_000_000;
/// Alias tokens.
const MAX_ALIASES: usize = 1_000_000;
/// Anchors.
const MAX_ANCHORS: usize = 50_000;
/// Bytes of scalar text, written out or replayed for aliases.
const MAX_SCALAR_BYTES: usize = 64 * 1024 * 1024;

// ---------------------------------------------------------------------------
// Events. The builder reads the parser's events, the replay of an anchor's events
// for an alias, or the recorded entries of merged mappings, as serde-saphyr does.

/// Where a node is used when that is not where it was written: at the alias that
/// copied it, or at what it was merged from. That is its position in the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Direct,
    Alias(Pos),
    Merge(Pos),
}

/// A tag's spelling, kept only where it tells keys apart (custom tags, `!map`).
type TagText = Option<Rc<str>>;

#[derive(Debug, Clone)]
enum Ev<'a> {
    Scalar(Cow<'a, str>, ScalarStyle, TagKind, TagText),
    SeqStart(TagKind, TagText),
    SeqEnd,
    MapStart(TagKind, TagText),
    MapEnd,
    /// An alias inside the node its anchor names: an error where it is used.
    Recursive(usize),
}

/// An event, where it was written and where it is used.
#[derive(Debug, Clone)]
struct BEv<'a> {
    ev: Ev<'a>,
    pos: Pos,
    origin: Origin,
}

impl BEv<'_> {
    /// The position of the node this event starts.
    fn at(&self) -> Pos {
        match self.origin {
            Origin::Direct => self.pos,
            Origin::Alias(p) | Origin::Merge(p) => p,
        }
    }

    /// Where the node is used inside something merged at `r`.
    fn at_within(&self, r: Pos) -> Pos {
        match self.origin {
            Origin::Alias(p) => p,
            _ => r,
        }
    }

    /// The event as part of an entry merged at `r`.
    fn merged_at(&self, r: Pos) -> Self {
        BEv {
            ev: self.ev.clone(),
            pos: self.pos,
            origin: match self.origin {
                Origin::Alias(p) => Origin::Alias(p),
                _ => Origin::Merge(r),
            },
        }
    }

    fn is_merge_key(&self) -> bool {
        matches!(&self.ev, Ev::Scalar(v, style, kind, _)
            if v == "<<"
                && (*kind == TagKind::Merge
                    || (*kind == TagKind::None && *style == ScalarStyle::Plain)))
    }

    /// The text a duplicate-key message names.
    fn key_text(&self) -> Option<&str> {
        match &self.ev {
            Ev::Scalar(v, _, kind, _) if kind.can_parse_into_string() => Some(v),
            _ => None,
        }
    }
}

fn tag_text(kind: TagKind, tag: Option<&Tag>) -> TagText {
    match kind {
        TagKind::Other | TagKind::Map => tag.map(|t| Rc::from(t.to_string())),
        _ => None,
    }
}

/// The index just past the node starting at `i`.
fn node_end(buf: &[BEv<'_>], i: usize) -> usize {
    if !matches!(buf[i].ev, Ev::SeqStart(..) | Ev::MapStart(..)) {
        return i + 1;
    }
    let mut depth = 0usize;
    for (j, b) in buf.iter().enumerate().skip(i) {
        match b.ev {
            Ev::SeqStart(..) | Ev::MapStart(..) => depth += 1,
            Ev::SeqEnd | Ev::MapEnd => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    buf.len()
}

/// The fingerprint of the node starting at `i`, and the index past it.
fn fp_of(buf: &[BEv<'_>], i: usize) -> (Fp, usize) {
    match &buf[i].ev {
        Ev::Scalar(v, style, kind, text) => (
            match ScalarFp::new(v, *style, *kind, text.as_ref()) {
                ScalarFp::Int(n, m) => Fp::Int(n, m),
                ScalarFp::Str(s) => Fp::Scalar(s.to_owned(), FpTag::Sem(TagKind::String)),
                ScalarFp::Owned(fp) => fp,
            },
            i + 1,
        ),
        Ev::Recursive(id) => (Fp::Recursive(*id), i + 1),
        Ev::SeqStart(kind, text) => {
            let tag = canonical_tag(*kind, text.as_ref(), TagKind::Seq);
            let mut items = Vec::new();
            let mut j = i + 1;
            while j < buf.len() && !matches!(buf[j].ev, Ev::SeqEnd) {
                let (fp, next) = fp_of(buf, j);
                items.push(fp);
                j = next;
            }
            (Fp::Seq(tag, items), j + 1)
        }
        Ev::MapStart(kind, text) => {
            let tag = canonical_tag(*kind, text.as_ref(), TagKind::Map);
            let mut entries = Vec::new();
            let mut j = i + 1;
            while j < buf.len() && !matches!(buf[j].ev, Ev::MapEnd) {
                let (k, next) = fp_of(buf, j);
                let (v, next) = fp_of(buf, next);
                entries.push((k, v));
                j = next;
            }
            entries.sort();
            (Fp::Map(tag, entries), j + 1)
        }
        Ev::SeqEnd | Ev::MapEnd => (Fp::Recursive(usize::MAX), i + 1),
    }
}

fn merge_value_error(pos: Pos) -> SyntaxError {
    error(
        pos,
        "YAML merge value must be mapping or sequence of mappings",
    )
}

fn recursive_error(pos: Pos) -> SyntaxError {
    error(
        pos,
        "recursive alias: an anchored node cannot contain an alias to itself",
    )
}

fn duplicate_key(text: Option<&str>, pos: Pos) -> SyntaxError {
    match text {
        Some(k) => error(pos, format!("duplicate mapping key: {k}")),
        None => error(pos, "duplicate mapping key"),
    }
}

/// One entry a merge brings: its key's events, then its value's.
struct Pending<'a> {
    events: Vec<BEv<'a>>,
}

/// The entries a recorded merge value brings, merged at `r`: a mapping's, a list
/// of mappings' (lists nested in it too), or none for null.
fn pending_from<'a>(
    buf: &[BEv<'a>],
    r: Pos,
    out: &mut Vec<Pending<'a>>,
) -> Result<(), SyntaxError> {
    let first = &buf[0];
    match &first.ev {
        Ev::Scalar(v, style, kind, _) if scalar_is_null(*kind, v, *style) => Ok(()),
        Ev::Recursive(_) => Err(recursive_error(first.pos)),
        Ev::MapStart(..) => entries_of_map(buf, r, out),
        Ev::SeqStart(..) => {
            let mut i = 1;
            while i < buf.len() && !matches!(buf[i].ev, Ev::SeqEnd) {
                let end = node_end(buf, i);
                pending_from(&buf[i..end], buf[i].at_within(r), out)?;
                i = end;
            }
            Ok(())
        }
        _ => Err(merge_value_error(first.pos)),
    }
}

/// A merged mapping's entries: its own (no key twice), then those it merges itself.
fn entries_of_map<'a>(
    buf: &[BEv<'a>],
    r: Pos,
    out: &mut Vec<Pending<'a>>,
) -> Result<(), SyntaxError> {
    let mut fields: Vec<Pending<'a>> = Vec::new();
    let mut nested = Vec::new();
    let mut i = 1;
    while i < buf.len() && !matches!(buf[i].ev, Ev::MapEnd) {
        // A key is looked at before it is recorded; a value only when merged.
        if let Ev::Recursive(_) = buf[i].ev {
            return Err(recursive_error(buf[i].pos));
        }
        let key_end = node_end(buf, i);
        let end = node_end(buf, key_end);
        if key_end == i + 1 && buf[i].is_merge_key() {
            let value = &buf[key_end..end];
            let first = &value[0];
            let at = first.at_within(r);
            match &first.ev {
                Ev::Recursive(_) => return Err(recursive_error(first.pos)),
                Ev::SeqStart(..) => {
                    let mut j = 1;
                    while j < value.len() && !matches!(value[j].ev, Ev::SeqEnd) {
                        let item_end = node_end(value, j);
                        pending_from(&value[j..item_end], value[j].at_within(r), &mut nested)?;
                        j = item_end;
                    }
                }
                _ => pending_from(value, at, &mut nested)?,
            }
        } else {
            fields.push(Pending {
                events: buf[i..end].iter().map(|b| b.merged_at(r)).collect(),
            });
        }
        i = end;
    }
    let mut seen = HashSet::with_capacity(fields.len());
    for f in &fields {
        if !seen.insert(fp_of(&f.events, 0).0) {
            let key = &f.events[0];
            return Err(duplicate_key(key.key_text(), key.pos));
        }
    }
    out.extend(fields);
    out.extend(nested);
    Ok(())
}

// ---------------------------------------------------------------------------
// The builder.

enum MapState {
    Key,
    Value {
        key: Node,
        fp: Option<Fp>,
    },
    /// The next node is a merge value.
    Merge,
    /// A collection key, recorded and checked, is being built from its events.
    ReplayKey {
        fp: Fp,
    },
    /// Merged entries are being added.
    FlushKey {
        fp: Fp,
    },
    FlushValue {
        key: Node,
        fp: Fp,
    },
}

struct MapFrame<'a> {
    entries: Vec<(Node, Node)>,
    keys: KeySet,
    state: MapState,
    merges: Vec<Pending<'a>>,
    queue: std::vec::IntoIter<Pending<'a>>,
}

// At most 64 frames are ever open; boxing the mapping would cost an allocation per
// mapping read.
#[allow(clippy::large_enum_variant)]
enum Frame<'a> {
    Seq {
        pos: Pos,
        items: Vec<Node>,
        wrap: Option<Pos>,
    },
    Map {
        pos: Pos,
        map: MapFrame<'a>,
        wrap: Option<Pos>,
    },
    /// A list of merge values (`<<: [*a, *b]`): its elements are recorded.
    MergeSeq {
        entries: Vec<Pending<'a>>,
        wrap: Option<Pos>,
    },
}

impl Frame<'_> {
    /// Where errors inside this node are reported: at the alias that copied it, when
    /// it (or a list or mapping holding it) came through an alias as an element or a
    /// value, as serde-saphyr reports them.
    fn wrap(&self) -> Option<Pos> {
        match self {
            Frame::Seq { wrap, .. } | Frame::Map { wrap, .. } | Frame::MergeSeq { wrap, .. } => {
                *wrap
            }
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
            error(at, message)
        }
        _ => e,
    }
}

enum Purpose {
    Key,
    Merge,
    MergeItem,
}

/// A node being recorded rather than built.
struct Capture<'a> {
    buf: Vec<BEv<'a>>,
    depth: usize,
    purpose: Purpose,
}

enum Source<'a> {
    /// An alias: its anchor's events, used at `at`.
    Alias { id: usize, next: usize, at: Pos },
    /// Recorded events: merged entries, a collection key.
    Replay(std::vec::IntoIter<BEv<'a>>),
}

/// An anchored collection being recorded.
struct Rec<'a> {
    id: usize,
    depth: usize,
    buf: Vec<BEv<'a>>,
}

pub(super) struct Builder<'a> {
    parser: Parser<'a, StrInput<'a>>,
    sources: Vec<Source<'a>>,
    stack: Vec<Frame<'a>>,
    capture: Option<Capture<'a>>,
    /// Recorded events by anchor id (granit's ids are dense and increasing).
    anchors: Vec<Option<Rc<[BEv<'a>]>>>,
    rec: Vec<Rec<'a>>,
    /// Anchors are only recorded when the text could hold an alias.
    keep_anchors: bool,
    /// The position of the last event read from the parser.
    last: Pos,
    depth: usize,
    events: usize,
    nodes: usize,
    aliases: usize,
    anchors_defined: usize,
    recorded: usize,
    replayed: usize,
    scalar_bytes: usize,
    root: Option<Node>,
}

fn budget(pos: Pos, what: impl fmt::Display) -> SyntaxError {
    error(pos, format!("budget breached: {what}"))
}

fn tag_len(tag: Option<&Tag>) -> usize {
    tag.map_or(0, |t| {
        let (h, s) = t.parts();
        h.len() + s.len()
    })
}

impl<'a> Builder<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Builder {
            parser: Parser::new_from_str(text),
            sources: Vec::new(),
            stack: Vec::new(),
            capture: None,
            anchors: Vec::new(),
            rec: Vec::new(),
            keep_anchors: text.contains('*'),
            last: Pos { line: 1, column: 1 },
            depth: 0,
            events: 0,
            nodes: 0,
            aliases: 0,
            anchors_defined: 0,
            recorded: 0,
            replayed: 0,
            scalar_bytes: 0,
            root: None,
        }
    }

    pub(super) fn run(mut self) -> Result<Node, SyntaxError> {
        while self.root.is_none() {
            let Some(b) = self.next_event()? else {
                // A stream without documents is one null.
                return Ok(Node {
                    pos: self.last,
                    value: Value::Null,
                });
            };
            self.handle(b)?;
        }
        // One document only: anything after it is an error.
        if let Some(b) = self.next_event()? {
            return Err(error(
                b.pos,
                "multiple YAML documents detected; a file holds one document",
            ));
        }
        Ok(self.root.take().unwrap_or(Node {
            pos: self.last,
            value: Value::Null,
        }))
    }

    // --- reading events ---

    fn next_event(&mut self) -> Result<Option<BEv<'a>>, SyntaxError> {
        loop {
            match self.sources.last_mut() {
                Some(Source::Replay(events)) => match events.next() {
                    Some(b) => return Ok(Some(b)),
                    None => {
                        self.sources.pop();
                        continue;
                    }
                },
                Some(Source::Alias { id, next, at }) => {
                    let (id, at) = (*id, *at);
                    let ev = self
                        .anchors
                        .get(id)
                        .and_then(Option::as_ref)
                        .and_then(|events| events.get(*next))
                        .cloned();
                    let Some(mut b) = ev else {
                        self.sources.pop();
                        continue;
                    };
                    *next += 1;
                    b.origin = Origin::Alias(at);
                    self.count_replayed(&b, at)?;
                    self.record(&b)?;
                    return Ok(Some(b));
                }
                None => {}
            }
            let Some(item) = self.parser.next() else {
                return Ok(None);
            };
            let (event, span) = item.map_err(|e| scan_error(&e))?;
            let pos = pos_at(&span.start);
            self.last = pos;
            self.count_event(pos)?;
            let is_map = matches!(event, Event::MappingStart(..));
            let (ev, anchor) = match event {
                Event::Scalar(value, style, anchor, tag) => {
                    let tag = tag.as_deref();
                    self.count_node(pos)?;
                    self.count_bytes(value.len() + tag_len(tag), pos)?;
                    self.count_anchor(anchor, pos)?;
                    let kind = TagKind::of(tag);
                    check_tag(tag, kind, NodeKind::Scalar, pos)?;
                    (Ev::Scalar(value, style, kind, tag_text(kind, tag)), anchor)
                }
                Event::SequenceStart(_, anchor, tag) | Event::MappingStart(_, anchor, tag) => {
                    let tag = tag.as_deref();
                    self.count_node(pos)?;
                    self.enter(pos)?;
                    self.count_bytes(tag_len(tag), pos)?;
                    self.count_anchor(anchor, pos)?;
                    let kind = TagKind::of(tag);
                    let text = tag_text(kind, tag);
                    if is_map {
                        check_tag(tag, kind, NodeKind::Map, pos)?;
                        (Ev::MapStart(kind, text), anchor)
                    } else {
                        check_tag(tag, kind, NodeKind::Seq, pos)?;
                        (Ev::SeqStart(kind, text), anchor)
                    }
                }
                Event::SequenceEnd => {
                    self.depth = self.depth.saturating_sub(1);
                    (Ev::SeqEnd, 0)
                }
                Event::MappingEnd => {
                    self.depth = self.depth.saturating_sub(1);
                    (Ev::MapEnd, 0)
                }
                Event::Alias(id) => {
                    self.aliases += 1;
                    if self.aliases > MAX_ALIASES {
                        return Err(budget(
                            pos,
                            format!("Aliases {{ aliases: {} }}", self.aliases),
                        ));
                    }
                    if self.rec.iter().any(|r| r.id == id) {
                        let b = BEv {
                            ev: Ev::Recursive(id),
                            pos,
                            origin: Origin::Direct,
                        };
                        self.record(&b)?;
                        return Ok(Some(b));
                    }
                    if self.anchors.get(id).is_none_or(Option::is_none) {
                        return Err(error(pos, "alias references unknown anchor"));
                    }
                    self.sources.push(Source::Alias {
                        id,
                        next: 0,
                        at: pos,
                    });
                    continue;
                }
                Event::DocumentStart(..) | Event::DocumentEnd => {
                    // Anchors belong to their document.
                    self.anchors.clear();
                    self.rec.clear();
                    continue;
                }
                _ => continue,
            };
            let b = BEv {
                ev,
                pos,
                origin: Origin::Direct,
            };
            if self.keep_anchors {
                self.record_live(&b, anchor)?;
            }
            return Ok(Some(b));
        }
    }

    fn count_event(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.events += 1;
        if self.events > MAX_EVENTS {
            return Err(budget(pos, format!("Events {{ events: {} }}", self.events)));
        }
        Ok(())
    }

    fn count_node(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(budget(pos, format!("Nodes {{ nodes: {} }}", self.nodes)));
        }
        Ok(())
    }

    fn count_bytes(&mut self, n: usize, pos: Pos) -> Result<(), SyntaxError> {
        self.scalar_bytes = self.scalar_bytes.saturating_add(n);
        if self.scalar_bytes > MAX_SCALAR_BYTES {
            return Err(budget(
                pos,
                format!(
                    "ScalarBytes {{ total_scalar_bytes: {} }}",
                    self.scalar_bytes
                ),
            ));
        }
        Ok(())
    }

    fn count_anchor(&mut self, anchor: usize, pos: Pos) -> Result<(), SyntaxError> {
        if anchor != 0 {
            self.anchors_defined += 1;
            if self.anchors_defined > MAX_ANCHORS {
                return Err(budget(
                    pos,
                    format!("Anchors {{ anchors: {} }}", self.anchors_defined),
                ));
            }
        }
        Ok(())
    }

    fn enter(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(budget(pos, format!("Depth {{ depth: {} }}", self.depth)));
        }
        Ok(())
    }

    /// The budget for an event replayed by an alias used at `at`.
    fn count_replayed(&mut self, b: &BEv<'_>, at: Pos) -> Result<(), SyntaxError> {
        self.replayed += 1;
        if self.replayed > MAX_REPLAYED {
            return Err(budget(
                at,
                format!("AliasReplay {{ events: {} }}", self.replayed),
            ));
        }
        self.count_event(at)?;
        match &b.ev {
            Ev::Scalar(v, ..) => {
                self.count_node(at)?;
                self.count_bytes(v.len(), at)
            }
            Ev::SeqStart(..) | Ev::MapStart(..) => {
                self.count_node(at)?;
                self.enter(at)
            }
            Ev::SeqEnd | Ev::MapEnd => {
                self.depth = self.depth.saturating_sub(1);
                Ok(())
            }
            Ev::Recursive(_) => self.count_node(at),
        }
    }

    /// Adds an event to every anchored collection being recorded.
    fn record(&mut self, b: &BEv<'a>) -> Result<(), SyntaxError> {
        if self.rec.is_empty() {
            return Ok(());
        }
        self.recorded += self.rec.len();
        if self.recorded > MAX_RECORDED {
            return Err(budget(
                b.pos,
                format!(
                    "RecordedAnchorEvents {{ recorded_anchor_events: {} }}",
                    self.recorded
                ),
            ));
        }
        for r in &mut self.rec {
            r.buf.push(BEv {
                origin: Origin::Direct,
                ..b.clone()
            });
        }
        Ok(())
    }

    /// Records a parser event: opens, fills and closes anchored recordings.
    fn record_live(&mut self, b: &BEv<'a>, anchor: usize) -> Result<(), SyntaxError> {
        match b.ev {
            Ev::Scalar(..) => {
                self.record(b)?;
                if anchor != 0 {
                    self.count_recorded(b.pos)?;
                    self.store_anchor(anchor, vec![b.clone()]);
                }
            }
            Ev::SeqStart(..) | Ev::MapStart(..) => {
                for r in &mut self.rec {
                    r.depth += 1;
                }
                self.record(b)?;
                if anchor != 0 {
                    self.count_recorded(b.pos)?;
                    self.rec.push(Rec {
                        id: anchor,
                        depth: 1,
                        buf: vec![b.clone()],
                    });
                }
            }
            Ev::SeqEnd | Ev::MapEnd => {
                self.record(b)?;
                for r in &mut self.rec {
                    r.depth -= 1;
                }
                while self.rec.last().is_some_and(|r| r.depth == 0) {
                    let r = self.rec.pop().expect("checked");
                    self.store_anchor(r.id, r.buf);
                }
            }
            Ev::Recursive(_) => self.record(b)?,
        }
        Ok(())
    }

    fn count_recorded(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.recorded += 1;
        if self.recorded > MAX_RECORDED {
            return Err(budget(
                pos,
                format!(
                    "RecordedAnchorEvents {{ recorded_anchor_events: {} }}",
                    self.recorded
                ),
            ));
        }
        Ok(())
    }

    fn store_anchor(&mut self, id: usize, events: Vec<BEv<'a>>) {
        if id >= self.anchors.len() {
            self.anchors.resize_with(id + 1, || None);
        }
        self.anchors[id] = Some(events.into());
    }

    // --- building ---

    fn handle(&mut self, b: BEv<'a>) -> Result<(), SyntaxError> {
        if let Some(cap) = &mut self.capture {
            match b.ev {
                Ev::SeqStart(..) | Ev::MapStart(..) => cap.depth += 1,
                Ev::SeqEnd | Ev::MapEnd => cap.depth -= 1,
                _ => {}
            }
            cap.buf.push(b);
            if cap.depth == 0 {
                let cap = self.capture.take().expect("checked");
                let outer = self.stack.last().and_then(Frame::wrap);
                return self.captured(cap).map_err(|e| relocate(e, outer));
            }
            return Ok(());
        }
        let outer = self.stack.last().and_then(Frame::wrap);
        // Elements and values copied through an alias report errors at the alias.
        let own = match (&b.origin, self.stack.last()) {
            (Origin::Alias(p), None | Some(Frame::Seq { .. })) => Some(*p),
            (Origin::Alias(p), Some(Frame::Map { map, .. }))
                if matches!(
                    map.state,
                    MapState::Value { .. } | MapState::FlushValue { .. }
                ) =>
            {
                Some(*p)
            }
            _ => None,
        };
        match self.stack.last() {
            Some(Frame::Map { map, .. }) => match map.state {
                MapState::Key => {
                    return match b.ev {
                        Ev::SeqStart(..) | Ev::MapStart(..) => self.start_capture(b, Purpose::Key),
                        Ev::Scalar(..) => self.scalar_key(b),
                        Ev::Recursive(_) => Err(recursive_error(b.pos)),
                        Ev::MapEnd => self.end_map(),
                        Ev::SeqEnd => Ok(()),
                    }
                    .map_err(|e| relocate(e, outer));
                }
                MapState::Merge => return self.merge_value(b).map_err(|e| relocate(e, outer)),
                _ => {}
            },
            Some(Frame::MergeSeq { .. }) => {
                if matches!(b.ev, Ev::SeqEnd) {
                    let Some(Frame::MergeSeq { entries, .. }) = self.stack.pop() else {
                        unreachable!("checked above")
                    };
                    let map = self.top_map();
                    map.merges.extend(entries);
                    map.state = MapState::Key;
                    return Ok(());
                }
                return self
                    .start_capture(b, Purpose::MergeItem)
                    .map_err(|e| relocate(e, outer));
            }
            _ => {}
        }
        let at = b.at();
        let wrap = own.or(outer);
        match b.ev {
            Ev::Scalar(value, style, kind, _) => {
                let value =
                    resolve_scalar(value, style, kind, b.pos).map_err(|e| relocate(e, wrap))?;
                self.deliver(Node { pos: at, value })
            }
            Ev::SeqStart(..) => {
                self.stack.push(Frame::Seq {
                    pos: at,
                    items: Vec::new(),
                    wrap,
                });
                Ok(())
            }
            Ev::MapStart(..) => {
                self.stack.push(Frame::Map {
                    pos: at,
                    map: MapFrame {
                        entries: Vec::new(),
                        keys: KeySet::default(),
                        state: MapState::Key,
                        merges: Vec::new(),
                        queue: Vec::new().into_iter(),
                    },
                    wrap,
                });
                Ok(())
            }
            Ev::SeqEnd => match self.stack.pop() {
                Some(Frame::Seq { pos, items, .. }) => self.deliver(Node {
                    pos,
                    value: Value::Seq(items),
                }),
                _ => Ok(()),
            },
            Ev::MapEnd => self.end_map().map_err(|e| relocate(e, outer)),
            Ev::Recursive(_) => Err(relocate(recursive_error(b.pos), wrap)),
        }
    }

    fn top_map(&mut self) -> &mut MapFrame<'a> {
        match self.stack.last_mut() {
            Some(Frame::Map { map, .. }) => map,
            _ => unreachable!("a mapping is being built"),
        }
    }

    fn start_capture(&mut self, b: BEv<'a>, purpose: Purpose) -> Result<(), SyntaxError> {
        let depth = usize::from(matches!(b.ev, Ev::SeqStart(..) | Ev::MapStart(..)));
        let cap = Capture {
            buf: vec![b],
            depth,
            purpose,
        };
        if depth == 0 {
            return self.captured(cap);
        }
        self.capture = Some(cap);
        Ok(())
    }

    fn captured(&mut self, cap: Capture<'a>) -> Result<(), SyntaxError> {
        let r = cap.buf[0].at();
        match cap.purpose {
            Purpose::Key => {
                let (fp, _) = fp_of(&cap.buf, 0);
                let map = self.top_map();
                if map.keys.contains(&map.entries, fp.as_ref()) {
                    return Err(duplicate_key(None, cap.buf[0].pos));
                }
                map.state = MapState::ReplayKey { fp };
                self.sources.push(Source::Replay(cap.buf.into_iter()));
                Ok(())
            }
            Purpose::Merge => {
                let mut entries = Vec::new();
                pending_from(&cap.buf, r, &mut entries)?;
                let map = self.top_map();
                map.merges.extend(entries);
                map.state = MapState::Key;
                Ok(())
            }
            Purpose::MergeItem => {
                let Some(Frame::MergeSeq { entries, .. }) = self.stack.last_mut() else {
                    unreachable!("a merge list is being read")
                };
                pending_from(&cap.buf, r, entries)
            }
        }
    }

    /// The first event of a merge value (`<<: …`).
    fn merge_value(&mut self, b: BEv<'a>) -> Result<(), SyntaxError> {
        match &b.ev {
            Ev::Scalar(v, style, kind, _) => {
                if scalar_is_null(*kind, v, *style) {
                    self.top_map().state = MapState::Key;
                    Ok(())
                } else {
                    Err(merge_value_error(b.pos))
                }
            }
            Ev::Recursive(_) => Err(recursive_error(b.pos)),
            Ev::MapStart(..) => self.start_capture(b, Purpose::Merge),
            Ev::SeqStart(..) => {
                let wrap = self.stack.last().and_then(Frame::wrap);
                self.stack.push(Frame::MergeSeq {
                    entries: Vec::new(),
                    wrap,
                });
                Ok(())
            }
            Ev::SeqEnd | Ev::MapEnd => Ok(()),
        }
    }

    fn scalar_key(&mut self, b: BEv<'a>) -> Result<(), SyntaxError> {
        if b.is_merge_key() {
            self.top_map().state = MapState::Merge;
            return Ok(());
        }
        let at = b.at();
        let Ev::Scalar(value, style, kind, text) = b.ev else {
            unreachable!("a scalar key")
        };
        let fp = ScalarFp::new(&value, style, kind, text.as_ref());
        let map = self.top_map();
        if map.keys.contains(&map.entries, fp.as_ref()) {
            return Err(duplicate_key(
                kind.can_parse_into_string().then_some(&*value),
                b.pos,
            ));
        }
        let key = Node {
            pos: at,
            value: resolve_scalar(Cow::Borrowed(value.as_ref()), style, kind, b.pos)?,
        };
        let fp = fp.as_ref();
        let fp = (node_fp(&key) != Some(fp)).then(|| fp.to_owned_fp());
        self.top_map().state = MapState::Value { key, fp };
        Ok(())
    }

    /// A mapping's end: merged entries first, if any.
    fn end_map(&mut self) -> Result<(), SyntaxError> {
        let map = self.top_map();
        if map.merges.is_empty() {
            return self.finish_map();
        }
        map.queue = std::mem::take(&mut map.merges).into_iter();
        self.flush_next()
    }

    /// Starts on the next merged entry whose key is not there yet.
    fn flush_next(&mut self) -> Result<(), SyntaxError> {
        let Some(Frame::Map { map, .. }) = self.stack.last_mut() else {
            return Ok(());
        };
        for p in map.queue.by_ref() {
            let (fp, _) = fp_of(&p.events, 0);
            if map.keys.contains(&map.entries, fp.as_ref()) {
                continue;
            }
            map.state = MapState::FlushKey { fp };
            self.sources.push(Source::Replay(p.events.into_iter()));
            return Ok(());
        }
        self.finish_map()
    }

    fn finish_map(&mut self) -> Result<(), SyntaxError> {
        match self.stack.pop() {
            Some(Frame::Map { pos, map, .. }) => self.deliver(Node {
                pos,
                value: Value::Map(map.entries),
            }),
            _ => Ok(()),
        }
    }

    /// Hands a finished node to its parent.
    fn deliver(&mut self, node: Node) -> Result<(), SyntaxError> {
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::MergeSeq { .. }) => {}
            Some(Frame::Map { map, .. }) => {
                match std::mem::replace(&mut map.state, MapState::Key) {
                    MapState::ReplayKey { fp } => {
                        let fp = exception(&node, fp);
                        map.state = MapState::Value { key: node, fp };
                    }
                    MapState::Value { key, fp } => {
                        map.entries.push((key, node));
                        map.keys.push(&map.entries, fp);
                    }
                    MapState::FlushKey { fp } => map.state = MapState::FlushValue { key: node, fp },
                    MapState::FlushValue { key, fp } => {
                        let fp = exception(&key, fp);
                        map.entries.push((key, node));
                        map.keys.push(&map.entries, fp);
                        return self.flush_next();
                    }
                    MapState::Key | MapState::Merge => {}
                }
            }
        }
        Ok(())
    }
}
