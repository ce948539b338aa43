//! A large file's largest top-level block (a topology's `services:`) read in
//! two halves side by side, each half on its own core.
//!
//! The fast path reads line by line and takes no construct that spans lines
//! except block collections, so a line that starts an entry of the block is a
//! clean cut: the scanner's state there is the block's mapping inside the
//! root's, whatever came before. The first half is the whole file with the
//! block's second half passed over; the second half is the head of the file (for
//! its anchors) with the block's first half passed over, up to the block's end.
//! Each yields the events one parse would yield for its lines, so the second
//! half's entries, appended to the first's, are the block one parse would build.
//!
//! What a cut cannot see is kept out, not patched: a block defining an anchor,
//! merging at its own level or with a key that is not a string is not split,
//! and the two halves are only joined when neither failed, no key is in both,
//! and their counts together stay within the budget. Otherwise the file is read
//! again in one piece, which has the last word on any error.

use std::collections::HashSet;

use super::budget::Budget;
use super::fast::{FastScanner, Skip};
use super::reader::Events;
use super::{Mode, Node, SyntaxError, Value, build};

/// Where a block is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Split {
    /// The start of the block's key line (`services:` at column 1).
    key: usize,
    /// The line after the key's.
    first: usize,
    /// The line of the entry the second half starts with.
    at: usize,
    /// The first line after the block (or the end of the text).
    end: usize,
    /// Line breaks in `first..at`, and in `at..end`.
    lines_before: usize,
    lines_after: usize,
}

impl Split {
    /// The line the second half starts with (for tests).
    #[cfg(test)]
    pub(super) fn at(&self) -> usize {
        self.at
    }
}

/// The lines of `text[from..to]`: (start, end without the line break, next start).
fn lines(text: &str, from: usize, to: usize) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let mut at = from;
    std::iter::from_fn(move || {
        if at >= to {
            return None;
        }
        let start = at;
        let end = text[start..to].find('\n').map_or(to, |i| start + i);
        at = (end + 1).min(to);
        Some((start, end, at))
    })
}

/// `name:` alone on its line (trailing spaces allowed), at column 1: a key
/// whose value is the block below it, with no anchor, tag or comment.
fn is_block_key(line: &[u8]) -> bool {
    let Some(colon) = line.iter().position(|&c| c == b':') else {
        return false;
    };
    let name = &line[..colon];
    name.first()
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        && name
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        && line[colon + 1..].iter().all(|&c| c == b' ')
}

/// The cut for `text`, when its largest top-level block is at least half of
/// it and can be cut (see the module's doc); `fraction` (0..1) of the way
/// into the block is where the second half starts, at the next entry.
pub(super) fn find(text: &str, fraction: f64) -> Option<Split> {
    let b = text.as_bytes();
    let mut best: Option<(usize, usize, usize)> = None;
    let mut open: Option<(usize, usize)> = None;
    let mut consider = |key: usize, first: usize, end: usize| {
        if best.is_none_or(|(_, f, e)| end - first > e - f) {
            best = Some((key, first, end));
        }
    };
    for (start, end, next) in lines(text, 0, b.len()) {
        // Only a line written at column 1 ends a top-level block.
        if start == end || matches!(b[start], b' ' | b'#') {
            continue;
        }
        if let Some((key, first)) = open.take() {
            consider(key, first, start);
        }
        if is_block_key(&b[start..end]) {
            open = Some((start, next));
        }
    }
    if let Some((key, first)) = open {
        consider(key, first, b.len());
    }
    let (key, first, end) = best?;
    if (end - first) * 2 < b.len() || b[first..end].contains(&b'&') {
        return None;
    }
    let cut_from = first + ((end - first) as f64 * fraction.clamp(0.0, 1.0)) as usize;
    let mut indent = None;
    let mut seen_entry = false;
    let mut at = None;
    let mut line_breaks = 0;
    for (start, line_end, next) in lines(text, first, end) {
        let spaces = b[start..line_end]
            .iter()
            .take_while(|&&c| c == b' ')
            .count();
        let content = start + spaces;
        if content < line_end && b[content] != b'#' {
            let c = b[content];
            let n = *indent.get_or_insert(spaces);
            let explicit = matches!(c, b'?' | b':') || b[content..].starts_with(b"<<");
            if spaces == 0 || spaces < n || spaces == n && explicit {
                return None;
            }
            if spaces == n && c != b'-' {
                if !seen_entry {
                    seen_entry = true;
                } else if at.is_none() && start >= cut_from {
                    at = Some((start, line_breaks));
                }
            } else if !seen_entry {
                // The block is a list.
                return None;
            }
        }
        if next > line_end {
            line_breaks += 1;
        }
    }
    let (at, lines_before) = at?;
    Some(Split {
        key,
        first,
        at,
        end,
        lines_before,
        lines_after: line_breaks - lines_before,
    })
}

/// `text` read in two halves cut at `split`, side by side (each half scans
/// its own lines: the two are as long, and each keeps one core busy); `None` when they cannot be joined as one read would
/// (a half failed or gave up, a key in both, the budget), for the caller to
/// read the file in one piece.
pub(super) fn parse<'a>(
    text: &'a str,
    scanner: FastScanner<'a>,
    mode: Mode,
    split: Split,
) -> Option<Node> {
    let second = scanner.clone().window(
        split.end,
        Some(Skip {
            from: split.first,
            to: split.at,
            lines: split.lines_before,
        }),
    );
    let first = scanner.window(
        text.len(),
        Some(Skip {
            from: split.at,
            to: split.end,
            lines: split.lines_after,
        }),
    );
    let (first, second) = std::thread::scope(|scope| {
        let second = scope
            .spawn(move || build::Builder::new(text, Events::Fast(second), mode).run_counted());
        let first = build::Builder::new(text, Events::Fast(first), mode).run_counted();
        let second = second
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (first, second)
    });
    join(first, second, split)
}

/// The second half's entries of the block appended to the first's.
fn join(
    first: Result<(Node, Budget), SyntaxError>,
    second: Result<(Node, Budget), SyntaxError>,
    split: Split,
) -> Option<Node> {
    let ((mut root, spent), (other, other_spent)) = (first.ok()?, second.ok()?);
    if !spent.fits_with(&other_spent) {
        return None;
    }
    let block_of = |entries: &[(Node, Node)]| {
        entries
            .iter()
            .position(|(k, _)| k.span.start as usize == split.key)
    };
    let Value::Map(mut others) = other.value else {
        return None;
    };
    let theirs = others.swap_remove(block_of(&others)?).1;
    let Value::Map(rest) = theirs.value else {
        return None;
    };
    let Value::Map(entries) = &mut root.value else {
        return None;
    };
    let i = block_of(entries)?;
    let ours = &mut entries[i].1;
    let Value::Map(block) = &mut ours.value else {
        return None;
    };
    let mut keys = HashSet::with_capacity(block.len());
    for (k, _) in block.iter() {
        let Value::Str(k) = &k.value else {
            return None;
        };
        keys.insert(k.as_str());
    }
    for (k, _) in &rest {
        match &k.value {
            Value::Str(k) if !keys.contains(k.as_str()) => {}
            _ => return None,
        }
    }
    block.extend(rest);
    ours.span.end = ours.span.end.max(theirs.span.end);
    root.span.end = root.span.end.max(theirs.span.end);
    Some(root)
}
