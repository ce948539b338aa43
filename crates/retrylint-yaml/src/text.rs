//! The text of a string scalar: shared, so that the thousands of scalars a large
//! file repeats (`timeout`, `250ms`, a service named in every call to it) are
//! one allocation each rather than one per use. Reads as a `str`.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Arc::from(s))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Arc::from(s))
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

/// One `Text` per distinct string of the source. Hashed with a per-run random
/// seed (foldhash), so that no file can be written to make its strings collide.
#[derive(Default)]
pub(super) struct Interner<'a> {
    seen: HashMap<&'a str, Text, foldhash::fast::RandomState>,
}

impl<'a> Interner<'a> {
    pub(super) fn intern(&mut self, s: &'a str) -> Text {
        if let Some(t) = self.seen.get(s) {
            return t.clone();
        }
        let t = Text::from(s);
        self.seen.insert(s, t.clone());
        t
    }
}
