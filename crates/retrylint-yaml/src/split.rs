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
//! What a cut cannot see is kept out, not patched: a block defining an anchor
//! or merging at its own level is not cut, and the two halves are only joined
//! when neither failed or gave up, every key is a string, no key is in both,
//! and their counts together stay within the budget. Halves that cannot be
//! joined are read again in one piece; a half that failed sends the file to
//! granit-parser, which has the last word on any error (one read on the fast
//! path would fail too: a half's events are one read's for its lines).

use std::collections::HashSet;

use super::budget::Budget;
use super::fast::{FastScanner, Skip};
use super::reader::Events;
use super::{Mode, Node, SyntaxError, Value, build};

/// Files from this size on are tried in two halves; a smaller one is parsed
/// before a thread would have started.
pub(super) const SPLIT_FROM: usize = 1 << 20;

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

/// The starts of the lines of `b[from..to]` after its first.
fn line_starts(b: &[u8], from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b'\n', &b[from..to]).map(move |i| from + i + 1)
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

/// Where a line written from column 1 starts: the text's first, and each after
/// a `\n`, unless it is blank, a comment or indented. A large file has
/// hundreds of thousands of lines and a handful of these: spans of the text
/// are first checked with no branch per byte, which the compiler does many
/// bytes at a time, and only a span holding one is walked.
pub(super) fn column_one_lines(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    const SPAN: usize = 256;
    // `&`, not `&&`: no branch, so a span's check runs many bytes at a time.
    let starts_one = |c: u8| (c != b' ') & (c != b'#') & (c != b'\n');
    let first = b.first().is_some_and(|&c| starts_one(c)).then_some(0);
    let breaks = b.len().saturating_sub(1);
    let after_breaks = (0..breaks).step_by(SPAN).flat_map(move |from| {
        let to = (from + SPAN).min(breaks);
        let any = b[from..to]
            .iter()
            .zip(&b[from + 1..=to])
            .fold(false, |any, (&c, &next)| {
                any | ((c == b'\n') & starts_one(next))
            });
        let walk = if any { from..to } else { 0..0 };
        walk.filter(move |&i| b[i] == b'\n' && starts_one(b[i + 1]))
            .map(|i| i + 1)
    });
    first.into_iter().chain(after_breaks)
}

/// The largest top-level block: (its key's line, its first line, its end).
fn largest_block(b: &[u8]) -> Option<(usize, usize, usize)> {
    let mut best: Option<(usize, usize, usize)> = None;
    let mut open: Option<(usize, usize)> = None;
    let mut consider = |key: usize, first: usize, end: usize| {
        if best.is_none_or(|(_, f, e)| end - first > e - f) {
            best = Some((key, first, end));
        }
    };
    // Only a line written at column 1 ends a top-level block.
    for start in column_one_lines(b) {
        if let Some((key, first)) = open.take() {
            consider(key, first, start);
        }
        let end = memchr::memchr(b'\n', &b[start..]).map_or(b.len(), |i| start + i);
        if is_block_key(&b[start..end]) {
            open = Some((start, (end + 1).min(b.len())));
        }
    }
    if let Some((key, first)) = open {
        consider(key, first, b.len());
    }
    best
}

/// The cut for `text`, when its largest top-level block is at least half of
/// it and can be cut (see the module's doc); `fraction` (0..1) of the way
/// into the block is where the second half starts, at the next entry.
///
/// Lines the fast path gives up on (a key less indented than the entries, an
/// explicit `? key`) need no look here: a half holding one fails, and the
/// file is read whole.
pub(super) fn find(text: &str, fraction: f64) -> Option<Split> {
    let b = text.as_bytes();
    let (key, first, end) = largest_block(b)?;
    if (end - first) * 2 < b.len() || memchr::memchr(b'&', &b[first..end]).is_some() {
        return None;
    }
    // The entries' indentation, from the first line with content.
    let entry = std::iter::once(first)
        .chain(line_starts(b, first, end))
        .take_while(|&at| at < end)
        .find(|&at| !matches!(b[at + indent_of(&b[at..end])], b'#' | b'\n'))
        .filter(|&at| at + indent_of(&b[at..end]) < end)?;
    let n = indent_of(&b[entry..end]);
    if n == 0 || b[entry + n] == b'-' {
        return None;
    }
    // A merge key at the entries' level: its entries go last, after both halves'.
    let mut merge = vec![b'\n'];
    merge.extend(std::iter::repeat_n(b' ', n));
    merge.extend(b"<<");
    if memchr::memmem::find(&b[first - 1..end], &merge).is_some() {
        return None;
    }
    let cut_from = first + ((end - first) as f64 * fraction.clamp(0.0, 1.0)) as usize;
    // The lines from the cut on: every start after `from` is at or past both.
    let from = entry.max(cut_from.saturating_sub(1));
    let at = line_starts(b, from, end)
        .filter(|&at| at < end)
        .find(|&at| indent_of(&b[at..end]) == n && !matches!(b[at + n], b'-' | b'#' | b'\n'))?;
    let breaks = |from: usize, to: usize| memchr::memchr_iter(b'\n', &b[from..to]).count();
    Some(Split {
        key,
        first,
        at,
        end,
        lines_before: breaks(first, at),
        lines_after: breaks(at, end),
    })
}

/// The spaces a line starts with.
fn indent_of(line: &[u8]) -> usize {
    line.iter().take_while(|&&c| c == b' ').count()
}

/// `text` read in two halves cut at `split`, side by side (each half scans
/// its own lines: the two are as long, and each keeps one core busy).
pub(super) fn parse<'a>(
    text: &'a str,
    scanner: FastScanner<'a>,
    mode: Mode,
    split: Split,
) -> Halves {
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
    let (second, first) = std::thread::scope(|scope| {
        let second = scope
            .spawn(move || build::Builder::new(text, Events::Fast(second), mode).run_counted());
        let first = build::Builder::new(text, Events::Fast(first), mode).run_counted();
        let second = second
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (second, first)
    });
    join(first, second, split)
}

/// What reading the two halves came to.
#[derive(Debug, PartialEq)]
pub(super) enum Halves {
    /// The tree one read builds.
    Joined(Node),
    /// A half failed or gave up: one read on the fast path would too (a
    /// half's events are one read's for its lines, its counts at most one
    /// read's), so granit-parser has the last word next.
    Failed,
    /// Both were read, but one read might not build them joined (a key in
    /// both, one that is not a string, the budget of both together): the
    /// fast path reads the file in one piece.
    Unjoined,
}

/// The second half's entries of the block appended to the first's.
fn join(
    first: Result<(Node, Budget), SyntaxError>,
    second: Result<(Node, Budget), SyntaxError>,
    split: Split,
) -> Halves {
    let (Ok(first), Ok(second)) = (first, second) else {
        return Halves::Failed;
    };
    joined(first, second, split).map_or(Halves::Unjoined, Halves::Joined)
}

fn joined(
    (mut root, spent): (Node, Budget),
    (other, other_spent): (Node, Budget),
    split: Split,
) -> Option<Node> {
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
