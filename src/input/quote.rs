//! How a string is written into YAML so that it reads back as itself, the
//! one rule of every writer (the topology writer, the exported manifests, the
//! probe's snippets): plain only when no YAML 1.1 or 1.2 reader can take it
//! for anything else (a number, a boolean, null, a key, a document marker),
//! else double-quoted with every character a reader could fold or drop
//! escaped.

use std::fmt::Write as _;

/// `s` as a YAML scalar: plain when that cannot be misread, else quoted.
pub(crate) fn scalar(s: &str) -> String {
    if plain_ok(s) { s.to_owned() } else { quote(s) }
}

/// Whether `s` reads back as the same string when written plain, in block
/// context, by YAML 1.1 and 1.2 readers alike.
pub(crate) fn plain_ok(s: &str) -> bool {
    const RESERVED: &[&str] = &["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    let b = s.as_bytes();
    let starts_well = match b {
        [c, ..] if c.is_ascii_alphabetic() || *c == b'/' => true,
        [b'-', b'-', c, ..] => c.is_ascii_alphabetic(),
        _ => false,
    };
    starts_well
        && !s.ends_with(':')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"._/:-".contains(c))
        && !RESERVED.iter().any(|r| s.eq_ignore_ascii_case(r))
}

/// `s` double-quoted, escaping what a reader would otherwise fold, drop or
/// take for a line break.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{feff}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_only_when_it_cannot_be_misread() {
        for plain in [
            "web",
            "checkout-v2",
            "GET",
            "/healthz",
            "--service",
            "a.b_c",
        ] {
            assert_eq!(scalar(plain), plain);
        }
        for quoted in ["", "8080", "yes", "No", "null", "a b", "key:", "-x", "#c"] {
            assert!(scalar(quoted).starts_with('"'), "{quoted}");
        }
        assert_eq!(quote("a\"b\\c\n\u{85}\u{1}"), r#""a\"b\\c\n\N\u0001""#);
    }
}
