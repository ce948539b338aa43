//! What to write instead, for the commonest slip in a hand-written YAML file: a
//! key indented one space off the keys it belongs with. The parser then says
//! "did not find expected key" or "mapping values are not allowed here"; the
//! fix is to line the key up with its siblings, and this says by how much.

use super::{Pos, SyntaxError};

/// The parser's words for a block key that does not line up.
const MISALIGNED: &[&str] = &[
    "did not find expected key",
    "did not find expected '-' indicator",
    "mapping values are not allowed in this context",
];

/// `line` as (indentation, key) when it is `key: …` or `key:` (after `- `
/// for an item), with the column the key starts at.
fn key_line(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let mut rest = &line[indent..];
    let mut column = indent;
    if let Some(item) = rest.strip_prefix("- ") {
        let spaces = item.len() - item.trim_start_matches(' ').len();
        column += 2 + spaces;
        rest = &item[spaces..];
    }
    if rest.starts_with(['#', '-', '[', '{', '?', '&', '*', '!', '|', '>']) {
        return None;
    }
    let colon = rest
        .find(": ")
        .or_else(|| rest.ends_with(':').then(|| rest.len() - 1))?;
    let key = rest[..colon].trim_end();
    (!key.is_empty()).then_some((column, key))
}

/// `e` with a hint when its line holds a key one space off the key on the line
/// with content above it.
pub(super) fn with_indentation_hint(text: &str, mut e: SyntaxError) -> SyntaxError {
    if e.help.is_some() || !MISALIGNED.iter().any(|m| e.message.contains(m)) {
        return e;
    }
    let mut lines = text.lines().take(e.pos.line as usize).collect::<Vec<_>>();
    let Some(here) = lines.pop() else {
        return e;
    };
    let content = |l: &&&str| {
        let t = l.trim_start();
        !t.is_empty() && !t.starts_with('#')
    };
    let Some(above) = lines.iter().rev().find(content) else {
        return e;
    };
    let (Some((at, key)), Some((sibling_at, sibling))) = (key_line(here), key_line(above)) else {
        return e;
    };
    // A line starting with `- ` is an item, not a key of the mapping above.
    if here.trim_start().starts_with("- ") || at.abs_diff(sibling_at) != 1 {
        return e;
    }
    let spaces = |n: usize| {
        if n == 1 {
            "1 space".to_owned()
        } else {
            format!("{n} spaces")
        }
    };
    e.help = Some(format!(
        "`{key}` is indented {} and `{sibling}` above it {}: keys of one mapping line up, so indent `{key}` by {} like `{sibling}`",
        spaces(at),
        spaces(sibling_at),
        spaces(sibling_at),
    ));
    e.pos = Pos {
        line: e.pos.line,
        column: at as u32 + 1,
    };
    e
}

#[cfg(test)]
mod tests {
    use super::super::parse_config;

    #[test]
    fn a_key_one_space_off_its_siblings_says_how_far_to_move_it() {
        for (text, line, column, says) in [
            (
                "services:\n  web:\n    latency: 1ms\n   capacity: 4\n",
                4,
                4,
                "`capacity` is indented 3 spaces and `latency` above it 4 spaces: keys of one mapping line up, so indent `capacity` by 4 spaces like `latency`",
            ),
            (
                "a:\n  b: 1\n   c: 2\n",
                3,
                4,
                "`c` is indented 3 spaces and `b` above it 2 spaces",
            ),
            (
                "services:\n  web:\n    calls:\n      - to: api\n       timeout: 1s\n",
                5,
                8,
                "indent `timeout` by 8 spaces like `to`",
            ),
            (
                "a:\n  b: 1\n  # a comment\n   c: 2\n",
                4,
                4,
                "indent `c` by 2 spaces like `b`",
            ),
        ] {
            let e = parse_config(text).unwrap_err();
            let help = e.help.unwrap_or_default();
            assert!(help.contains(says), "{text:?}: {help}");
            assert_eq!((e.pos.line, e.pos.column), (line, column), "{text:?}");
        }
        // Other errors get no such hint.
        for text in ["a: [1, 2\nb: 3\n", "a: b: c\n", "a:\n    b: 1\n  c: 2\n"] {
            let e = parse_config(text).unwrap_err();
            assert!(e.help.is_none(), "{text:?}: {:?}", e.help);
        }
    }
}
