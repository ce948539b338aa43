//! Anchors and replay. An anchored node's events are recorded as it is read; an
//! alias replays them, counted against the budget at the alias. Recorded events
//! are replayed too for a collection used as a key and for merged entries, so the
//! builder sees every node as one stream of events.

use std::rc::Rc;

use super::budget::Budget;
use super::event::{Event, EventKind, Origin};
use super::{Pos, Span, SyntaxError, error};

/// An alias inside the node its anchor names, used where `pos` says.
pub(super) fn recursive_alias_error(pos: Pos) -> SyntaxError {
    error(
        pos,
        "recursive alias: an anchored node cannot contain an alias to itself",
    )
}

/// An anchored collection being recorded.
struct Recording<'a> {
    id: usize,
    /// Collections open inside it, itself included.
    depth: usize,
    events: Vec<Event<'a>>,
}

/// Where the next events come from before the parser's.
enum Replay<'a> {
    /// An alias: its anchor's events, used at `at`, written at `span`.
    Alias {
        events: Rc<[Event<'a>]>,
        next: usize,
        at: Pos,
        span: Span,
    },
    /// Recorded events: merged entries, a collection key.
    Recorded(std::vec::IntoIter<Event<'a>>),
}

#[derive(Default)]
pub(super) struct Anchors<'a> {
    /// Recorded events by anchor id (granit's ids are dense and increasing).
    stored: Vec<Option<Rc<[Event<'a>]>>>,
    /// Anchored collections being recorded, innermost last.
    open: Vec<Recording<'a>>,
    /// Replays in progress, innermost last.
    replays: Vec<Replay<'a>>,
}

impl<'a> Anchors<'a> {
    /// Whether anchor `id` names a node still being read (an alias to it recurses).
    pub(super) fn is_recording(&self, id: usize) -> bool {
        self.open.iter().any(|r| r.id == id)
    }

    pub(super) fn is_defined(&self, id: usize) -> bool {
        self.stored.get(id).is_some_and(Option::is_some)
    }

    /// Anchors belong to their document.
    pub(super) fn clear(&mut self) {
        self.stored.clear();
        self.open.clear();
    }

    /// Replays anchor `id` for an alias used at `at`, written at `span`.
    pub(super) fn replay_alias(&mut self, id: usize, at: Pos, span: Span) {
        if let Some(events) = self.stored.get(id).and_then(Option::as_ref) {
            self.replays.push(Replay::Alias {
                events: events.clone(),
                next: 0,
                at,
                span,
            });
        }
    }

    /// Replays recorded events (a collection key, a merged entry) next.
    pub(super) fn replay(&mut self, events: Vec<Event<'a>>) {
        self.replays.push(Replay::Recorded(events.into_iter()));
    }

    /// The next replayed event, if a replay is in progress. Events an alias
    /// replays are counted at the alias and recorded into open anchors.
    #[inline]
    pub(super) fn next_replayed(
        &mut self,
        budget: &mut Budget,
    ) -> Result<Option<Event<'a>>, SyntaxError> {
        if self.replays.is_empty() {
            return Ok(None);
        }
        self.next_replayed_slow(budget)
    }

    fn next_replayed_slow(
        &mut self,
        budget: &mut Budget,
    ) -> Result<Option<Event<'a>>, SyntaxError> {
        loop {
            match self.replays.last_mut() {
                None => return Ok(None),
                Some(Replay::Recorded(events)) => match events.next() {
                    Some(e) => return Ok(Some(e)),
                    None => {
                        self.replays.pop();
                    }
                },
                Some(Replay::Alias {
                    events,
                    next,
                    at,
                    span,
                }) => {
                    let Some(e) = events.get(*next) else {
                        self.replays.pop();
                        continue;
                    };
                    let mut e = e.clone();
                    if *next == 0 {
                        e.span = *span;
                        e.is_alias_use = true;
                    }
                    *next += 1;
                    e.origin = Origin::Alias(*at);
                    budget.replayed(&e, *at)?;
                    self.record(&e, budget)?;
                    return Ok(Some(e));
                }
            }
        }
    }

    /// Adds an event to every anchored collection being recorded.
    pub(super) fn record(&mut self, e: &Event<'a>, budget: &mut Budget) -> Result<(), SyntaxError> {
        if self.open.is_empty() {
            return Ok(());
        }
        budget.recorded(self.open.len(), e.pos)?;
        for r in &mut self.open {
            r.events.push(Event {
                origin: Origin::Written,
                ..e.clone()
            });
        }
        Ok(())
    }

    /// Records an event read from the parser, `anchor` its anchor id (0 for
    /// none): opens, fills and closes anchored recordings.
    #[inline]
    pub(super) fn record_written(
        &mut self,
        e: &Event<'a>,
        anchor: usize,
        budget: &mut Budget,
    ) -> Result<(), SyntaxError> {
        // Most events are outside every anchored node.
        if anchor == 0 && self.open.is_empty() {
            return Ok(());
        }
        self.record_written_slow(e, anchor, budget)
    }

    fn record_written_slow(
        &mut self,
        e: &Event<'a>,
        anchor: usize,
        budget: &mut Budget,
    ) -> Result<(), SyntaxError> {
        match e.kind {
            EventKind::Scalar(..) => {
                self.record(e, budget)?;
                if anchor != 0 {
                    budget.recorded(1, e.pos)?;
                    self.store(anchor, vec![e.clone()]);
                }
            }
            EventKind::SeqStart(..) | EventKind::MapStart(..) => {
                for r in &mut self.open {
                    r.depth += 1;
                }
                self.record(e, budget)?;
                if anchor != 0 {
                    budget.recorded(1, e.pos)?;
                    self.open.push(Recording {
                        id: anchor,
                        depth: 1,
                        events: vec![e.clone()],
                    });
                }
            }
            EventKind::SeqEnd | EventKind::MapEnd => {
                self.record(e, budget)?;
                for r in &mut self.open {
                    r.depth -= 1;
                }
                while self.open.last().is_some_and(|r| r.depth == 0) {
                    let r = self.open.pop().expect("checked");
                    self.store(r.id, r.events);
                }
            }
            EventKind::RecursiveAlias(_) => self.record(e, budget)?,
        }
        Ok(())
    }

    fn store(&mut self, id: usize, events: Vec<Event<'a>>) {
        if id >= self.stored.len() {
            self.stored.resize_with(id + 1, || None);
        }
        self.stored[id] = Some(events.into());
    }
}
