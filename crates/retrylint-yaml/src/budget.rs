//! The resource budget of one parse: sized for large topologies (a 10,000-service
//! file is ~1M nodes), closed to alias bombs and pathological nesting. Every count
//! is checked as it grows, so a hostile file stops at the first event past a limit.

use super::event::{Event, EventKind};
use super::{Pos, SyntaxError, error};

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

/// A limit of the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Collections nested inside one another.
    Depth,
    /// Parser events, and events replayed for aliases.
    Events,
    /// Nodes, written out or replayed for aliases.
    Nodes,
    /// Events replayed for aliases: what an alias bomb grows.
    AliasReplay,
    /// Event copies kept for anchored nodes (aliases inside anchors multiply them).
    RecordedAnchorEvents,
    /// Alias tokens (`*name`).
    Aliases,
    /// Anchors (`&name`).
    Anchors,
    /// Bytes of scalar text, written out or replayed for aliases.
    ScalarBytes,
}

impl Limit {
    /// The most allowed.
    pub fn max(self) -> usize {
        match self {
            Limit::Depth => MAX_DEPTH,
            Limit::Events => MAX_EVENTS,
            Limit::Nodes => MAX_NODES,
            Limit::AliasReplay => MAX_REPLAYED,
            Limit::RecordedAnchorEvents => MAX_RECORDED,
            Limit::Aliases => MAX_ALIASES,
            Limit::Anchors => MAX_ANCHORS,
            Limit::ScalarBytes => MAX_SCALAR_BYTES,
        }
    }

    /// serde-saphyr's words for it, which the parser's messages keep.
    fn saphyr(self, count: usize) -> String {
        match self {
            Limit::Depth => format!("Depth {{ depth: {count} }}"),
            Limit::Events => format!("Events {{ events: {count} }}"),
            Limit::Nodes => format!("Nodes {{ nodes: {count} }}"),
            Limit::AliasReplay => format!("AliasReplay {{ events: {count} }}"),
            Limit::RecordedAnchorEvents => {
                format!("RecordedAnchorEvents {{ recorded_anchor_events: {count} }}")
            }
            Limit::Aliases => format!("Aliases {{ aliases: {count} }}"),
            Limit::Anchors => format!("Anchors {{ anchors: {count} }}"),
            Limit::ScalarBytes => format!("ScalarBytes {{ total_scalar_bytes: {count} }}"),
        }
    }
}

/// A limit crossed: how much was reached when it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Breach {
    pub limit: Limit,
    pub count: usize,
}

/// What has been spent so far.
#[derive(Debug, Default)]
pub(super) struct Budget {
    depth: usize,
    events: usize,
    nodes: usize,
    aliases: usize,
    anchors: usize,
    recorded: usize,
    replayed: usize,
    scalar_bytes: usize,
}

/// A budget error, in serde-saphyr's words (`budget breached: Nodes { nodes: N }`),
/// with the breach for messages that give the figures.
pub(super) fn breached(pos: Pos, limit: Limit, count: usize) -> SyntaxError {
    SyntaxError {
        breach: Some(Breach { limit, count }),
        ..error(pos, format!("budget breached: {}", limit.saphyr(count)))
    }
}

impl Budget {
    /// Whether this parse and `other` together stay within every count: what
    /// one parse of both halves of a split block would have spent is at most
    /// that (depth is each half's own, and the same as the whole's).
    pub(super) fn fits_with(&self, other: &Budget) -> bool {
        let within = |a: usize, b: usize, max: usize| a.saturating_add(b) <= max;
        within(self.events, other.events, MAX_EVENTS)
            && within(self.nodes, other.nodes, MAX_NODES)
            && within(self.aliases, other.aliases, MAX_ALIASES)
            && within(self.anchors, other.anchors, MAX_ANCHORS)
            && within(self.recorded, other.recorded, MAX_RECORDED)
            && within(self.replayed, other.replayed, MAX_REPLAYED)
            && within(self.scalar_bytes, other.scalar_bytes, MAX_SCALAR_BYTES)
    }

    pub(super) fn event(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.events += 1;
        if self.events > MAX_EVENTS {
            return Err(breached(pos, Limit::Events, self.events));
        }
        Ok(())
    }

    pub(super) fn node(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(breached(pos, Limit::Nodes, self.nodes));
        }
        Ok(())
    }

    pub(super) fn scalar_bytes(&mut self, n: usize, pos: Pos) -> Result<(), SyntaxError> {
        self.scalar_bytes = self.scalar_bytes.saturating_add(n);
        if self.scalar_bytes > MAX_SCALAR_BYTES {
            return Err(breached(pos, Limit::ScalarBytes, self.scalar_bytes));
        }
        Ok(())
    }

    /// An anchor defined (granit numbers them from 1; 0 is none).
    pub(super) fn anchor(&mut self, anchor: usize, pos: Pos) -> Result<(), SyntaxError> {
        if anchor != 0 {
            self.anchors += 1;
            if self.anchors > MAX_ANCHORS {
                return Err(breached(pos, Limit::Anchors, self.anchors));
            }
        }
        Ok(())
    }

    pub(super) fn alias(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.aliases += 1;
        if self.aliases > MAX_ALIASES {
            return Err(breached(pos, Limit::Aliases, self.aliases));
        }
        Ok(())
    }

    /// A collection opened.
    pub(super) fn enter(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(breached(pos, Limit::Depth, self.depth));
        }
        Ok(())
    }

    /// How deeply the last event read is nested.
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    /// A collection closed.
    pub(super) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// `n` event copies kept for anchored nodes.
    pub(super) fn recorded(&mut self, n: usize, pos: Pos) -> Result<(), SyntaxError> {
        self.recorded += n;
        if self.recorded > MAX_RECORDED {
            return Err(breached(pos, Limit::RecordedAnchorEvents, self.recorded));
        }
        Ok(())
    }

    /// An event replayed by an alias used at `at`: counted as written there.
    pub(super) fn replayed(&mut self, e: &Event<'_>, at: Pos) -> Result<(), SyntaxError> {
        self.replayed += 1;
        if self.replayed > MAX_REPLAYED {
            return Err(breached(at, Limit::AliasReplay, self.replayed));
        }
        self.event(at)?;
        match &e.kind {
            EventKind::Scalar(v, ..) => {
                self.node(at)?;
                self.scalar_bytes(v.len(), at)
            }
            EventKind::SeqStart(..) | EventKind::MapStart(..) => {
                self.node(at)?;
                self.enter(at)
            }
            EventKind::SeqEnd | EventKind::MapEnd => {
                self.leave();
                Ok(())
            }
            EventKind::RecursiveAlias(_) => self.node(at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_halves_fit_only_when_their_counts_together_do() {
        let half = |aliases| Budget {
            aliases,
            events: 10,
            ..Budget::default()
        };
        assert!(half(MAX_ALIASES / 2).fits_with(&half(MAX_ALIASES / 2)));
        assert!(!half(MAX_ALIASES / 2).fits_with(&half(MAX_ALIASES / 2 + 1)));
        let deep = Budget {
            depth: MAX_DEPTH,
            ..Budget::default()
        };
        assert!(deep.fits_with(&deep), "depth is each half's own");
    }
}
