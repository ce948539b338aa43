//! Key identity for duplicate detection and merges, as serde-saphyr fingerprints keys:
//! integers by value (`0x1` is `1`), other scalars by their text and tag (`true` and
//! `"true"` are one key, `~` and `null` are two), collections by their contents.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};
use std::rc::Rc;

use serde_saphyr::granit_parser::ScalarStyle;

use super::resolve::{TagKind, parse_int_signed, parse_int_unsigned, scalar_is_nullish, yaml_trim};
use super::{Node, Value};

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum FpTag {
    Sem(TagKind),
    Custom(Rc<str>),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Fp {
    Recursive(usize),
    Int(bool, u128),
    Scalar(String, FpTag),
    Seq(FpTag, Vec<Fp>),
    Map(FpTag, Vec<(Fp, Fp)>),
}

/// A fingerprint seen through a borrow; `Scalar(_, String)` and `Int` are normalised
/// so they compare equal to the ones derived from a node's value.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum FpRef<'a> {
    Int(bool, u128),
    Str(&'a str),
    Other(&'a Fp),
}

impl Fp {
    pub(super) fn as_ref(&self) -> FpRef<'_> {
        match self {
            Fp::Int(n, m) => FpRef::Int(*n, *m),
            Fp::Scalar(s, FpTag::Sem(TagKind::String)) => FpRef::Str(s),
            other => FpRef::Other(other),
        }
    }
}

impl FpRef<'_> {
    pub(super) fn to_owned_fp(self) -> Fp {
        match self {
            FpRef::Int(n, m) => Fp::Int(n, m),
            FpRef::Str(s) => Fp::Scalar(s.to_owned(), FpTag::Sem(TagKind::String)),
            FpRef::Other(fp) => fp.clone(),
        }
    }
}

/// The fingerprint a key's value implies, for the common keys (strings, integers).
pub(super) fn node_fp(node: &Node) -> Option<FpRef<'_>> {
    match &node.value {
        Value::Str(s) => Some(FpRef::Str(s)),
        Value::Int(v) => Some(FpRef::Int(*v < 0, v.unsigned_abs())),
        _ => None,
    }
}

/// The fingerprint to keep beside a key: only what its value does not imply.
pub(super) fn exception(key: &Node, fp: Fp) -> Option<Fp> {
    (node_fp(key) != Some(fp.as_ref())).then_some(fp)
}

pub(super) fn canonical_tag(kind: TagKind, text: Option<&Rc<str>>, implicit: TagKind) -> FpTag {
    if let Some(text) = text
        && (kind == TagKind::Other
            || (implicit == TagKind::Map && kind == TagKind::Map && &**text == "!map"))
    {
        return FpTag::Custom(text.clone());
    }
    FpTag::Sem(match kind {
        TagKind::None | TagKind::NonSpecific => implicit,
        k if implicit == TagKind::String && k.can_parse_into_string() => TagKind::String,
        k => k,
    })
}

/// A scalar key's fingerprint, borrowing its text.
pub(super) enum ScalarFp<'a> {
    Int(bool, u128),
    Str(&'a str),
    Owned(Fp),
}

impl<'a> ScalarFp<'a> {
    pub(super) fn new(
        value: &'a str,
        style: ScalarStyle,
        kind: TagKind,
        text: Option<&Rc<str>>,
    ) -> Self {
        if kind == TagKind::Int || (kind == TagKind::None && style == ScalarStyle::Plain) {
            let t = yaml_trim(value);
            let parsed = if t.starts_with('-') {
                parse_int_signed(t).map(|v| (v < 0, v.unsigned_abs()))
            } else {
                parse_int_unsigned(t).map(|v| (false, v))
            };
            if let Some((n, m)) = parsed {
                return ScalarFp::Int(n, m);
            }
        }
        let kind = if kind == TagKind::None && scalar_is_nullish(value, style) {
            TagKind::Null
        } else {
            kind
        };
        match canonical_tag(kind, text, TagKind::String) {
            FpTag::Sem(TagKind::String) => ScalarFp::Str(value),
            t => ScalarFp::Owned(Fp::Scalar(value.to_owned(), t)),
        }
    }

    pub(super) fn as_ref(&self) -> FpRef<'_> {
        match self {
            ScalarFp::Int(n, m) => FpRef::Int(*n, *m),
            ScalarFp::Str(s) => FpRef::Str(s),
            ScalarFp::Owned(fp) => fp.as_ref(),
        }
    }
}

/// The keys of one mapping: fingerprints the key values do not imply, and a hash
/// index once the mapping is large.
#[derive(Default)]
pub(super) struct KeySet {
    /// (entry index, fingerprint), in index order.
    exc: Vec<(u32, Fp)>,
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
    fn fp_at<'e>(&'e self, entries: &'e [(Node, Node)], i: usize) -> Option<FpRef<'e>> {
        if !self.exc.is_empty()
            && let Ok(j) = self.exc.binary_search_by_key(&(i as u32), |(k, _)| *k)
        {
            return Some(self.exc[j].1.as_ref());
        }
        node_fp(&entries[i].0)
    }

    pub(super) fn contains(&self, entries: &[(Node, Node)], fp: FpRef<'_>) -> bool {
        if let Some(index) = &self.index {
            match index.first.get(&index.seed.hash_one(fp)) {
                None => return false,
                Some(&i) if self.fp_at(entries, i as usize) == Some(fp) => return true,
                // Two keys with one hash: look at them all.
                Some(_) => {}
            }
        }
        (0..entries.len()).any(|i| self.fp_at(entries, i) == Some(fp))
    }

    /// Records the key of the entry just pushed at `entries.len() - 1`.
    pub(super) fn push(&mut self, entries: &[(Node, Node)], exc: Option<Fp>) {
        let i = entries.len() - 1;
        if let Some(fp) = exc {
            self.exc.push((i as u32, fp));
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
            if let Some(fp) = self.fp_at(entries, j) {
                index
                    .first
                    .entry(index.seed.hash_one(fp))
                    .or_insert(j as u32);
            }
        }
        self.index = Some(index);
    }
}
