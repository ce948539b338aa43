//! Byte spans for written events. The parser's spans are exact for scalars,
//! aliases and flow brackets; three need the text looked at: a block sequence
//! (the parser may point at its first item instead of its `-`), a block scalar
//! (the parser starts it at its content, after the `|` or `>` header) and an
//! empty value (the parser puts it on the `:` before it).
//!
//! A cursor follows the text consumed so far, and a stack of the written
//! collections says where a block sequence's `-` indicators are, so that a
//! scan from the cursor never takes a parent's `-` for a child's.

use serde_saphyr::granit_parser::ScalarStyle;

use super::Span;

/// Where the next written token may start, and the open written collections.
#[derive(Default)]
pub(super) struct SpanCursor {
    /// Just past the last token consumed.
    at: usize,
    open: Vec<Open>,
}

#[derive(Clone, Copy)]
enum Open {
    /// A block sequence; `dash_pending` once the next item has a `-` of its
    /// own ahead of the cursor (the first item's was read with the sequence).
    BlockSeq {
        dash_pending: bool,
    },
    Other,
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// The end of the whitespace-delimited token at `i`.
fn token_end(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && !is_blank(text[i]) {
        i += 1;
    }
    i
}

/// Whether `text[i]` is an indicator such as `-` standing alone (followed by
/// white space or the end).
fn alone(text: &[u8], i: usize) -> bool {
    text.get(i + 1).is_none_or(|&b| is_blank(b))
}

/// What may stand between the last token and the one looked for.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    /// A block sequence's `-`; `skip_dash` skips one item indicator of the
    /// parent sequence first.
    Dash { skip_dash: bool },
    /// A block scalar's `|` or `>`.
    BlockHeader,
}

/// The first token at or after `from` that is what `want` looks for, skipping
/// white space, comments, the indicators `:` and `?` (and `-` for a block
/// scalar), anchors and tags, and a document marker. `None` on anything else.
fn find(text: &[u8], mut i: usize, want: Want) -> Option<usize> {
    let mut skip_dash = matches!(want, Want::Dash { skip_dash: true });
    while i < text.len() {
        let b = text[i];
        if is_blank(b) {
            i += 1;
            continue;
        }
        match b {
            b'#' => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
            }
            b':' | b'?' if alone(text, i) => i += 1,
            b'-' if alone(text, i) => {
                if want == Want::BlockHeader || skip_dash {
                    skip_dash = false;
                    i += 1;
                } else {
                    return Some(i);
                }
            }
            b'|' | b'>' if want == Want::BlockHeader => return Some(i),
            b'&' | b'!' => i = token_end(text, i),
            b'-' if text[i..].starts_with(b"---") => i = token_end(text, i),
            _ => return None,
        }
    }
    None
}

impl SpanCursor {
    /// A node event's parent is the innermost open collection; a block
    /// sequence's items after the first are behind a `-` of their own.
    fn item_dash_pending(&mut self) -> bool {
        match self.open.last_mut() {
            Some(Open::BlockSeq { dash_pending }) => std::mem::replace(dash_pending, true),
            _ => false,
        }
    }

    /// A scalar: `span` as the parser gives it.
    pub(super) fn scalar(&mut self, text: &str, span: Span, style: ScalarStyle) -> Span {
        self.item_dash_pending();
        let bytes = text.as_bytes();
        let span = match style {
            ScalarStyle::Literal | ScalarStyle::Folded => block_scalar(bytes, self.at, span),
            _ if span.is_empty() && bytes.get(span.start as usize) == Some(&b':') => Span {
                start: span.start + 1,
                end: span.start + 1,
            },
            _ => span,
        };
        self.at = self.at.max(span.end as usize);
        span
    }

    /// An alias: its `*name` token.
    pub(super) fn alias(&mut self, span: Span) -> Span {
        self.item_dash_pending();
        self.at = span.end as usize;
        span
    }

    /// A collection opens: `span` as the parser gives it.
    pub(super) fn open(&mut self, text: &str, span: Span, seq: bool, flow: bool) -> Span {
        let skip_dash = self.item_dash_pending();
        if flow {
            self.at = span.end as usize;
            self.open.push(Open::Other);
            span
        } else if seq {
            let start = find(text.as_bytes(), self.at, Want::Dash { skip_dash })
                .unwrap_or(span.start as usize);
            self.at = start + 1;
            self.open.push(Open::BlockSeq {
                dash_pending: false,
            });
            empty_at(start)
        } else {
            self.open.push(Open::Other);
            empty_at(span.start as usize)
        }
    }

    /// A collection closes: a flow collection's bracket, or empty.
    pub(super) fn close(&mut self, span: Span) -> Span {
        self.open.pop();
        if span.is_empty() {
            return empty_at(self.at);
        }
        self.at = span.end as usize;
        span
    }
}

fn empty_at(at: usize) -> Span {
    let at = u32::try_from(at).unwrap_or(u32::MAX);
    Span { start: at, end: at }
}

/// A block scalar: from its header's indicator to its last non-blank byte.
fn block_scalar(text: &[u8], from: usize, content: Span) -> Span {
    let Some(start) = find(text, from, Want::BlockHeader) else {
        return content;
    };
    let mut header_end = start + 1;
    while text
        .get(header_end)
        .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-'))
    {
        header_end += 1;
    }
    let mut end = (content.end as usize).min(text.len());
    while end > header_end && is_blank(text[end - 1]) {
        end -= 1;
    }
    // The comment after the header is not content; an empty scalar ends at it.
    if end > header_end && (content.start as usize) >= end {
        end = header_end;
    }
    Span {
        start: u32::try_from(start).unwrap_or(u32::MAX),
        end: u32::try_from(end.max(header_end)).unwrap_or(u32::MAX),
    }
}
