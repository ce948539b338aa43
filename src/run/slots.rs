//! Slot numbers of the retry layers, the same in both engines and in the
//! report: slot 0 is the `client:` layer in front of the entry (a layer
//! without retries when the topology has none), then every layer of every
//! call, in file order, outermost (the caller's app layer) first. A call
//! without layers (a hand-built topology; the loader always gives a call its
//! app layer) still sends through one slot: a layer that never retries.

use crate::topology::{ServiceId, Topology};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `first[service][call]`: the slot of the call's outermost layer; its
    /// other layers follow it.
    first: Vec<Vec<u32>>,
    slots: u32,
}

impl Layout {
    /// The client layer's slot.
    pub const CLIENT: usize = 0;

    pub fn new(t: &Topology) -> Self {
        let mut next = 1u32;
        let first = t
            .services
            .iter()
            .map(|s| {
                s.calls
                    .iter()
                    .map(|c| {
                        let at = next;
                        next += (c.layers.len() as u32).max(1);
                        at
                    })
                    .collect()
            })
            .collect();
        Layout { first, slots: next }
    }

    /// The slot of layer `layer` (0 = app) of call `call` of `service`.
    pub fn slot(&self, service: ServiceId, call: usize, layer: usize) -> usize {
        self.first[service][call] as usize + layer
    }

    /// How many slots there are, the client's included.
    pub fn slots(&self) -> usize {
        self.slots as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::load_str;

    #[test]
    fn client_first_then_every_layer_in_file_order() {
        let t = load_str(
            "version: 1\nentry: a\nservices:\n  a: { calls: [ { to: b, via: [ { name: s1 }, { name: s2 } ] }, c ] }\n  b: { calls: [c] }\n  c: {}\n",
            "t.yaml",
            "t",
            &Default::default(),
        )
        .unwrap();
        let l = Layout::new(&t);
        assert_eq!(l.slot(0, 0, 0), 1);
        assert_eq!(l.slot(0, 0, 2), 3);
        assert_eq!(l.slot(0, 1, 0), 4);
        assert_eq!(l.slot(1, 0, 0), 5);
        assert_eq!(l.slots(), 6);
        let mut bare = t.clone();
        bare.services[1].calls[0].layers.clear();
        let l = Layout::new(&bare);
        assert_eq!(
            (l.slot(1, 0, 0), l.slots()),
            (5, 6),
            "a call without layers keeps a slot"
        );
    }
}
