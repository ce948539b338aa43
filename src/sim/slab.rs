//! Storage for the things alive in a trial (requests at services, retry-layer
//! invocations, attempts): a vector with a free list, addressed by index and
//! generation. Removing an entry bumps its generation, so an event or a parent
//! link that outlived what it pointed at finds nothing instead of a stranger
//! — which is how timeouts that lost the race, abandoned attempts and
//! cancelled retries are ignored without searching the queue.

/// The address of an entry: index and generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    idx: u32,
    generation: u32,
}

#[derive(Debug)]
struct Entry<T> {
    generation: u32,
    value: Option<T>,
}

#[derive(Debug)]
pub(crate) struct Slab<T> {
    entries: Vec<Entry<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            entries: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// Forgets everything, keeping the memory. Keys of before must not be used
    /// again (the event queue is cleared at the same time).
    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.free.clear();
    }

    pub(super) fn insert(&mut self, value: T) -> Key {
        if let Some(idx) = self.free.pop() {
            let e = &mut self.entries[idx as usize];
            e.value = Some(value);
            return Key {
                idx,
                generation: e.generation,
            };
        }
        let idx = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
        self.entries.push(Entry {
            generation: 0,
            value: Some(value),
        });
        Key { idx, generation: 0 }
    }

    pub(super) fn get(&self, k: Key) -> Option<&T> {
        match self.entries.get(k.idx as usize) {
            Some(e) if e.generation == k.generation => e.value.as_ref(),
            _ => None,
        }
    }

    pub(crate) fn get_mut(&mut self, k: Key) -> Option<&mut T> {
        match self.entries.get_mut(k.idx as usize) {
            Some(e) if e.generation == k.generation => e.value.as_mut(),
            _ => None,
        }
    }

    pub(super) fn remove(&mut self, k: Key) -> Option<T> {
        let e = self.entries.get_mut(k.idx as usize)?;
        if e.generation != k.generation {
            return None;
        }
        let value = e.value.take()?;
        e.generation = e.generation.wrapping_add(1);
        self.free.push(k.idx);
        Some(value)
    }

    /// Slots ever allocated: the high-water mark of entries alive at once.
    pub(crate) fn allocated(&self) -> usize {
        self.entries.len()
    }

    /// Entries alive now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_keys_find_nothing() {
        let mut s = Slab::default();
        let a = s.insert("a");
        assert_eq!(s.remove(a), Some("a"));
        let b = s.insert("b");
        assert_eq!(s.get(a), None, "the slot is reused under a new generation");
        assert_eq!(s.remove(a), None);
        assert_eq!(s.get(b), Some(&"b"));
        assert_eq!(s.len(), 1);
    }
}
