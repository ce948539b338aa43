//! The resource budget of one parse: sized for large topologies (a 10,000-service
//! file is ~1M nodes), closed to alias bombs and pathological nesting. Every count
//! is checked as it grows, so a hostile file stops at the first event past a limit.

use std::fmt;

use super::event::{Event, EventKind};
use super::{Pos, SyntaxError, error};

/// Nesting deeper than this many collections is refused.
pub(super) const MAX_DEPTH: usize = 64;
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

/// A budget error, in serde-saphyr's words (`budget breached: Nodes { nodes: N }`).
fn breached(pos: Pos, what: impl fmt::Display) -> SyntaxError {
    error(pos, format!("budget breached: {what}"))
}

impl Budget {
    pub(super) fn event(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.events += 1;
        if self.events > MAX_EVENTS {
            return Err(breached(
                pos,
                format!("Events {{ events: {} }}", self.events),
            ));
        }
        Ok(())
    }

    pub(super) fn node(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(breached(pos, format!("Nodes {{ nodes: {} }}", self.nodes)));
        }
        Ok(())
    }

    pub(super) fn scalar_bytes(&mut self, n: usize, pos: Pos) -> Result<(), SyntaxError> {
        self.scalar_bytes = self.scalar_bytes.saturating_add(n);
        if self.scalar_bytes > MAX_SCALAR_BYTES {
            return Err(breached(
                pos,
                format!(
                    "ScalarBytes {{ total_scalar_bytes: {} }}",
                    self.scalar_bytes
                ),
            ));
        }
        Ok(())
    }

    /// An anchor defined (granit numbers them from 1; 0 is none).
    pub(super) fn anchor(&mut self, anchor: usize, pos: Pos) -> Result<(), SyntaxError> {
        if anchor != 0 {
            self.anchors += 1;
            if self.anchors > MAX_ANCHORS {
                return Err(breached(
                    pos,
                    format!("Anchors {{ anchors: {} }}", self.anchors),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn alias(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.aliases += 1;
        if self.aliases > MAX_ALIASES {
            return Err(breached(
                pos,
                format!("Aliases {{ aliases: {} }}", self.aliases),
            ));
        }
        Ok(())
    }

    /// A collection opened.
    pub(super) fn enter(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(breached(pos, format!("Depth {{ depth: {} }}", self.depth)));
        }
        Ok(())
    }

    /// A collection closed.
    pub(super) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// `n` event copies kept for anchored nodes.
    pub(super) fn recorded(&mut self, n: usize, pos: Pos) -> Result<(), SyntaxError> {
        self.recorded += n;
        if self.recorded > MAX_RECORDED {
            return Err(breached(
                pos,
                format!(
                    "RecordedAnchorEvents {{ recorded_anchor_events: {} }}",
                    self.recorded
                ),
            ));
        }
        Ok(())
    }

    /// An event replayed by an alias used at `at`: counted as written there.
    pub(super) fn replayed(&mut self, e: &Event<'_>, at: Pos) -> Result<(), SyntaxError> {
        self.replayed += 1;
        if self.replayed > MAX_REPLAYED {
            return Err(breached(
                at,
                format!("AliasReplay {{ events: {} }}", self.replayed),
            ));
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
