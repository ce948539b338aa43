//! The fast scanner on a thread of its own, a few batches of events ahead of
//! the builder: on a large file the two halves of parsing use two cores. The
//! events, their order, a give-up and where it happens are the scanner's own.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::Scope;

use super::fast::{FastEvent, FastScanner, GiveUp};
use super::{Pos, Span};

/// Files from this size on are scanned ahead; a smaller one is parsed before
/// a thread would have started.
pub(super) const AHEAD_FROM: usize = 1 << 20;
/// Events per batch, and batches waiting: a few MB at most, whatever the file.
const BATCH: usize = 1024;
const WAITING: usize = 16;

type Item<'a> = (FastEvent<'a>, Pos, Span);

enum Batch<'a> {
    Events(Vec<Item<'a>>),
    /// The scanner gave up after the events sent before this.
    GaveUp,
}

/// The scanner's events, read from its thread.
pub(super) struct ScanAhead<'a> {
    batches: Receiver<Batch<'a>>,
    current: std::vec::IntoIter<Item<'a>>,
    done: bool,
}

impl<'a> ScanAhead<'a> {
    /// Starts `scanner` on a thread of `scope`. It stops at the end of the
    /// text, at a give-up, or as soon as this reader is dropped.
    pub(super) fn start<'scope>(
        scope: &'scope Scope<'scope, '_>,
        mut scanner: FastScanner<'a>,
    ) -> Self
    where
        'a: 'scope,
    {
        let (sender, batches) = sync_channel(WAITING);
        scope.spawn(move || scan(&mut scanner, &sender));
        ScanAhead {
            batches,
            current: Vec::new().into_iter(),
            done: false,
        }
    }

    /// As [`FastScanner::next`].
    pub(super) fn next(&mut self) -> Option<Result<Item<'a>, GiveUp>> {
        loop {
            if let Some(item) = self.current.next() {
                return Some(Ok(item));
            }
            if self.done {
                return None;
            }
            match self.batches.recv() {
                Ok(Batch::Events(events)) => self.current = events.into_iter(),
                Ok(Batch::GaveUp) => {
                    self.done = true;
                    return Some(Err(GiveUp));
                }
                // The scanner has reached the end of the text.
                Err(_) => self.done = true,
            }
        }
    }
}

/// Scans into batches until the end, a give-up, or nobody is reading.
fn scan<'a>(scanner: &mut FastScanner<'a>, batches: &SyncSender<Batch<'a>>) {
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(item) = scanner.next() {
        let Ok(item) = item else {
            let _ = batches.send(Batch::Events(batch));
            let _ = batches.send(Batch::GaveUp);
            return;
        };
        batch.push(item);
        if batch.len() == BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            if batches.send(Batch::Events(full)).is_err() {
                return;
            }
        }
    }
    let _ = batches.send(Batch::Events(batch));
}
