//! Text from the input, made safe to show: a control character (ESC, BEL, a
//! CR or LF inside a name, DEL, C1) is written as its Rust escape (`\u{1b}`),
//! the one visible replacement every human-readable output uses. A raw ESC
//! would drive the reader's terminal; a raw newline would forge lines.
//! Machine formats (JSON, SARIF) keep the text as it is: their encoders
//! escape it.

use std::borrow::Cow;

/// `s` with every control character escaped.
pub fn name(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

/// A document's text with every control character escaped but its line
/// structure: LF, tab and the CR of a CRLF stay.
pub fn text(s: &str) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    escape(s, |(i, c)| {
        c == '\n' || c == '\t' || (c == '\r' && bytes.get(i + 1) == Some(&b'\n'))
    })
}

/// Whether `s` has a control character [`name`] would escape.
pub(crate) fn needs_escape(s: &str) -> bool {
    s.contains(char::is_control)
}

fn escape(s: &str, keep: impl Fn((usize, char)) -> bool) -> Cow<'_, str> {
    if !s
        .char_indices()
        .any(|(i, c)| c.is_control() && !keep((i, c)))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (i, c) in s.char_indices() {
        if c.is_control() && !keep((i, c)) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_escape_every_control_character() {
        assert_eq!(name("db\u{1b}[31m\u{7}"), "db\\u{1b}[31m\\u{7}");
        assert_eq!(name("a\nb\rc\u{9b}"), "a\\nb\\rc\\u{9b}");
        assert!(matches!(name("plain ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn texts_keep_their_lines() {
        assert_eq!(text("a: 1\r\nb:\t2\n"), "a: 1\r\nb:\t2\n");
        assert_eq!(text("a\rb\u{1b}\n"), "a\\rb\\u{1b}\n");
    }
}
