//! Key identity for duplicate detection and merges, as serde-saphyr fingerprints keys:
//! integers by value (`0x1` is `1`), other scalars by their text and tag (`true` and
//! `"true"` are one key, `~` and `null` are two), collections by their contents.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};
use std::rc::Rc;

use serde_saphyr::granit_parser::ScalarStyle;

use super::event::{Event, EventKind};
use super::resolve::{TagKind, parse_int_signed, parse_int_unsigned, scalar_is_nullish, yaml_trim};
use super::{Node, Pos, SyntaxError, Value, error};

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
/// The tag part of a key's identity: what it means, or a custom tag's spelling.
pub(super) enum FingerprintTag {
    Semantic(TagKind),
    Custom(Rc<str>),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
/// A key's identity: two keys are one key when their fingerprints are equal.
pub(super) enum Fingerprint {
    RecursiveAlias(usize),
    /// (negative, magnitude)
    Int(bool, u128),
    Scalar(String, FingerprintTag),
    Seq(FingerprintTag, Vec<Fingerprint>),
    Map(FingerprintTag, Vec<(Fingerprint, Fingerprint)>),
}

/// A fingerprint seen through a borrow; `Scalar(_, String)` and `Int` are normalised
/// so they compare equal to the ones derived from a node's value.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum FingerprintRef<'a> {
    Int(bool, u128),
    Str(&'a str),
    Other(&'a Fingerprint),
}

impl Fingerprint {
    pub(super) fn as_ref(&self) -> FingerprintRef<'_> {
        match self {
            Fingerprint::Int(n, m) => FingerprintRef::Int(*n, *m),
            Fingerprint::Scalar(s, FingerprintTag::Semantic(TagKind::String)) => {
                FingerprintRef::Str(s)
            }
            other => FingerprintRef::Other(other),
        }
    }
}

impl FingerprintRef<'_> {
    pub(super) fn to_owned_fingerprint(self) -> Fingerprint {
        match self {
            FingerprintRef::Int(n, m) => Fingerprint::Int(n, m),
            FingerprintRef::Str(s) => {
                Fingerprint::Scalar(s.to_owned(), FingerprintTag::Semantic(TagKind::String))
            }
            FingerprintRef::Other(fp) => fp.clone(),
        }
    }
}

/// The fingerprint of the node whose events start at `i`, and the index past it.
pub(super) fn fingerprint_of_events(events: &[Event<'_>], i: usize) -> (Fingerprint, usize) {
    match &events[i].kind {
        EventKind::Scalar(v, style, kind, text) => (
            match ScalarFingerprint::new(v, *style, *kind, text.as_ref()) {
                ScalarFingerprint::Int(n, m) => Fingerprint::Int(n, m),
                ScalarFingerprint::Str(s) => {
                    Fingerprint::Scalar(s.to_owned(), FingerprintTag::Semantic(TagKind::String))
                }
                ScalarFingerprint::Owned(fp) => fp,
            },
            i + 1,
        ),
        EventKind::RecursiveAlias(id) => (Fingerprint::RecursiveAlias(*id), i + 1),
        EventKind::SeqStart(kind, text) => {
            let tag = canonical_tag(*kind, text.as_ref(), TagKind::Seq);
            let mut items = Vec::new();
            let mut j = i + 1;
            while j < events.len() && !matches!(events[j].kind, EventKind::SeqEnd) {
                let (fp, next) = fingerprint_of_events(events, j);
                items.push(fp);
                j = next;
            }
            (Fingerprint::Seq(tag, items), j + 1)
        }
        EventKind::MapStart(kind, text) => {
            let tag = canonical_tag(*kind, text.as_ref(), TagKind::Map);
            let mut entries = Vec::new();
            let mut j = i + 1;
            while j < events.len() && !matches!(events[j].kind, EventKind::MapEnd) {
                let (k, next) = fingerprint_of_events(events, j);
                let (v, next) = fingerprint_of_events(events, next);
                entries.push((k, v));
                j = next;
            }
            entries.sort();
            (Fingerprint::Map(tag, entries), j + 1)
        }
        EventKind::SeqEnd | EventKind::MapEnd => (Fingerprint::RecursiveAlias(usize::MAX), i + 1),
    }
}

/// A key written twice in one mapping; `text` names it when it is a scalar.
pub(super) fn duplicate_key_error(text: Option<&str>, pos: Pos) -> SyntaxError {
    match text {
        Some(k) => error(pos, format!("duplicate mapping key: {k}")),
        None => error(pos, "duplicate mapping key"),
    }
}

/// The fingerprint a key's value implies, for the common keys (strings, integers).
pub(super) fn node_fingerprint(node: &Node) -> Option<FingerprintRef<'_>> {
    match &node.value {
        Value::Str(s) => Some(FingerprintRef::Str(s)),
        Value::Int(v) => Some(FingerprintRef::Int(*v < 0, v.unsigned_abs())),
        _ => None,
    }
}

/// The fingerprint to keep beside a key: only what its value does not imply.
pub(super) fn fingerprint_unless_implied(key: &Node, fp: Fingerprint) -> Option<Fingerprint> {
    (node_fingerprint(key) != Some(fp.as_ref())).then_some(fp)
}

pub(super) fn canonical_tag(
    kind: TagKind,
    text: Option<&Rc<str>>,
    implicit: TagKind,
) -> FingerprintTag {
    if let Some(text) = text
        && (kind == TagKind::Other
            || (implicit == TagKind::Map && kind == TagKind::Map && &**text == "!map"))
    {
        return FingerprintTag::Custom(text.clone());
    }
    FingerprintTag::Semantic(match kind {
        TagKind::None | TagKind::NonSpecific => implicit,
        k if implicit == TagKind::String && k.can_parse_into_string() => TagKind::String,
        k => k,
    })
}

/// A scalar key's fingerprint, borrowing its text.
pub(super) enum ScalarFingerprint<'a> {
    Int(bool, u128),
    Str(&'a str),
    Owned(Fingerprint),
}

impl<'a> ScalarFingerprint<'a> {
    pub(super) fn new(
        value: &'a str,
        style: ScalarStyle,
        kind: TagKind,
        text: Option<&Rc<str>>,
    ) -> Self {
        // Most keys are untagged words: neither integers nor nulls.
        if kind == TagKind::None
            && (style != ScalarStyle::Plain
                || value
                    .as_bytes()
                    .first()
                    .is_some_and(|&b| b.is_ascii_alphabetic() && b != b'n' && b != b'N'))
        {
            return ScalarFingerprint::Str(value);
        }
        if kind == TagKind::Int || (kind == TagKind::None && style == ScalarStyle::Plain) {
            let t = yaml_trim(value);
            let parsed = if t.starts_with('-') {
                parse_int_signed(t).map(|v| (v < 0, v.unsigned_abs()))
            } else {
                parse_int_unsigned(t).map(|v| (false, v))
            };
            if let Some((n, m)) = parsed {
                return ScalarFingerprint::Int(n, m);
            }
        }
        let kind = if kind == TagKind::None && scalar_is_nullish(value, style) {
            TagKind::Null
        } else {
            kind
        };
        match canonical_tag(kind, text, TagKind::String) {
            FingerprintTag::Semantic(TagKind::String) => ScalarFingerprint::Str(value),
            t => ScalarFingerprint::Owned(Fingerprint::Scalar(value.to_owned(), t)),
        }
    }

    pub(super) fn as_ref(&self) -> FingerprintRef<'_> {
        match self {
            ScalarFingerprint::Int(n, m) => FingerprintRef::Int(*n, *m),
            ScalarFingerprint::Str(s) => FingerprintRef::Str(s),
            ScalarFingerprint::Owned(fp) => fp.as_ref(),
        }
    }
}

/// The keys of one mapping: fingerprints the key values do not imply, and a hash
/// index once the mapping is large.
#[derive(Default)]
pub(super) struct KeySet {
    /// (entry index, fingerprint), in index order.
    exceptions: Vec<(u32, Fingerprint)>,
    index: Option<Index>,
}

/// Key hashes to the first entry with that hash. Seeded per mapping, so that no
/// input can be written to make its hashes collide.
struct Index {
    seed: RandomState,
    first: HashMap<u64, u32, BuildHasherDefault<IdHasher>>,
}

/// The keys are already hashes.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Mappings with this many keys get a hash index; smaller ones are scanned.
const INDEX_FROM: usize = 16;

impl KeySet {
    fn fingerprint_at<'e>(
        &'e self,
        entries: &'e [(Node, Node)],
        i: usize,
    ) -> Option<FingerprintRef<'e>> {
        if !self.exceptions.is_empty()
            && let Ok(j) = self
                .exceptions
                .binary_search_by_key(&(i as u32), |(k, _)| *k)
        {
            return Some(self.exceptions[j].1.as_ref());
        }
        node_fingerprint(&entries[i].0)
    }

    pub(super) fn contains(&self, entries: &[(Node, Node)], fp: FingerprintRef<'_>) -> bool {
        if let Some(index) = &self.index {
            match index.first.get(&index.seed.hash_one(fp)) {
                None => return false,
                Some(&i) if self.fingerprint_at(entries, i as usize) == Some(fp) => return true,
                // Two keys with one hash: look at them all.
                Some(_) => {}
            }
        }
        (0..entries.len()).any(|i| self.fingerprint_at(entries, i) == Some(fp))
    }

    /// Records the key of the entry just pushed at `entries.len() - 1`.
    pub(super) fn push(&mut self, entries: &[(Node, Node)], exception: Option<Fingerprint>) {
        let i = entries.len() - 1;
        if let Some(fp) = exception {
            self.exceptions.push((i as u32, fp));
        }
        // A new index takes in every key so far; an existing one the new key.
        let (mut index, from) = match self.index.take() {
            Some(index) => (index, i),
            None if entries.len() >= INDEX_FROM => {
                let index = Index {
                    seed: RandomState::new(),
                    first: HashMap::default(),
                };
                (index, 0)
            }
            None => return,
        };
        for j in from..=i {
            if let Some(fp) = self.fingerprint_at(entries, j) {
                index
                    .first
                    .entry(index.seed.hash_one(fp))
                    .or_insert(j as u32);
            }
        }
        self.index = Some(index);
    }
}
