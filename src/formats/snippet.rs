//! rustc-style snippets: the YAML line with a caret under the culprit, rendered by
//! annotate-snippets. Shared by the table format and the error printer.

use std::fmt::Write as _;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use crate::input::lines::Lines;

/// One diagnostic to draw.
pub(crate) struct Annotated<'a> {
    pub level: Level<'a>,
    pub code: Option<&'a str>,
    pub title: &'a str,
    pub file: &'a str,
    /// The text of line `line` (see `input::lines::Lines`).
    pub text: &'a str,
    pub line: u32,
    pub column: u32,
    pub label: &'a str,
    pub help: Option<&'a str>,
}

/// The byte range of the token starting at 1-based `column` of `text`: a key up
/// to its colon, or a value up to the end of the word.
fn token(text: &str, column: u32) -> std::ops::Range<usize> {
    let start = text
        .char_indices()
        .nth(column.saturating_sub(1) as usize)
        .map_or(text.len(), |(i, _)| i);
    let rest = &text[start..];
    if rest.starts_with(['[', '{']) {
        return start..start + 1;
    }
    let len = rest.find([':', ',', '}', ']', '#']).unwrap_or(rest.len());
    let len = rest[..len]
        .trim_end()
        .len()
        .max(rest.chars().next().map_or(0, char::len_utf8));
    start..(start + len).min(text.len())
}

/// The lines of every file a report's findings point into: the topology's
/// and each merged source file's.
pub(crate) struct FileLines<'a> {
    main: &'a str,
    files: Vec<(&'a str, Lines<'a>)>,
}

impl<'a> FileLines<'a> {
    pub(crate) fn new(r: &'a crate::lint::CheckReport) -> Self {
        let mut files = vec![(r.file.as_str(), Lines::new(&r.source))];
        files.extend(r.sources.iter().map(|(f, t)| (f.as_str(), Lines::new(t))));
        FileLines {
            main: &r.file,
            files,
        }
    }

    /// The text of 1-based `line` of `file`.
    pub(crate) fn get(&self, file: &str, line: u32) -> &'a str {
        let file = if file.is_empty() { self.main } else { file };
        self.files
            .iter()
            .find(|(f, _)| *f == file)
            .map_or("", |(_, l)| l.get(line))
    }
}

/// The 1-based columns, in characters, of the token at `column` of a line's
/// `text`, end exclusive (SARIF's `endColumn`, GitHub's `endColumn`): the same
/// span the caret underlines. A position past the text is one column wide.
pub fn columns(text: &str, column: u32) -> (u32, u32) {
    let range = token(text, column);
    let start = column.max(1);
    let width = text[range].chars().count().max(1) as u32;
    (start, start.saturating_add(width))
}

/// `a`, drawn.
pub(crate) fn render(a: &Annotated, color: bool) -> String {
    let mut out = String::new();
    render_into(a, color, &mut out);
    out
}

/// Appends `a`, drawn, to `out`.
pub(crate) fn render_into(a: &Annotated, color: bool, out: &mut String) {
    if !color && write_plain(a, out) {
        return;
    }
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let line_text = a.text;
    let mut title = a.level.clone().primary_title(a.title);
    if let Some(code) = a.code {
        title = title.id(code);
    }
    let mut group = Group::with_title(title);
    if a.line > 0 {
        group = group.element(
            Snippet::source(line_text)
                .line_start(a.line as usize)
                .path(a.file)
                .annotation(
                    AnnotationKind::Primary
                        .span(token(line_text, a.column))
                        .label(a.label),
                ),
        );
    }
    if let Some(help) = a.help {
        group = group.element(Level::HELP.message(help));
    }
    let _ = write!(out, "{}", renderer.render(&[group]));
}

/// Keeps a plain snippet well inside annotate-snippets' 140 columns, where it
/// never trims the source line.
const PLAIN_WIDTH: usize = 100;
/// Padding and carets for lines at most `PLAIN_WIDTH` wide.
const SPACES: &str = "                                                                                                    ";
const CARETS: &str = "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^";

/// The plain rendering of the common shape — an ASCII source line without
/// tabs, one-line texts, nothing near the terminal width — written directly:
/// byte for byte what annotate-snippets draws (`plain_matches_annotate_snippets`
/// holds the two together), twenty times faster, which a `check` with tens of
/// thousands of findings needs, appended to `out`. Anything else is left to
/// annotate-snippets: nothing is written, and it returns false.
fn write_plain(a: &Annotated, out: &mut String) -> bool {
    let level = if a.level == Level::ERROR {
        "error"
    } else if a.level == Level::WARNING {
        "warning"
    } else if a.level == Level::INFO {
        "info"
    } else {
        return false;
    };
    // No control character: C0, DEL, or C1 (U+0080 to U+009F, `C2 80..9F`).
    // Folded without an early exit, so that it runs on whole vectors.
    let one_line = |s: &str| {
        let b = s.as_bytes();
        let (c0, c2) = b.iter().fold((false, false), |(c0, c2), &c| {
            (c0 | (c < 0x20) | (c == 0x7f), c2 | (c == 0xc2))
        });
        let c1 = c2 && b.windows(2).any(|w| w[0] == 0xc2 && w[1] < 0xa0);
        !(c0 || c1)
    };
    let plain_line = |s: &str| s.bytes().all(|b| (b' '..=b'~').contains(&b)) && !s.ends_with(' ');
    if a.line == 0
        || !plain_line(a.text)
        || ![
            a.title,
            a.file,
            a.label,
            a.code.unwrap_or(""),
            a.help.unwrap_or(""),
        ]
        .into_iter()
        .all(one_line)
    {
        return false;
    }
    let range = token(a.text, a.column);
    let carets = range.len().max(1);
    let gutter = a.line.ilog10() as usize + 1;
    let label_chars = a.label.chars().count();
    if gutter + 3 + a.text.len().max(range.start + carets + 1 + label_chars) > PLAIN_WIDTH {
        return false;
    }
    out.reserve(2 * a.text.len() + a.title.len() + a.file.len() + a.help.map_or(0, str::len) + 64);
    let pad = |out: &mut String, n: usize| out.push_str(&SPACES[..n]);
    out.push_str(level);
    if let Some(code) = a.code {
        out.push('[');
        out.push_str(code);
        out.push(']');
    }
    out.push_str(": ");
    out.push_str(a.title);
    out.push('\n');
    // Numbers through itoa: `write!` costs more than the rest of the drawing.
    let mut digits = itoa::Buffer::new();
    pad(out, gutter);
    out.push_str("--> ");
    out.push_str(a.file);
    out.push(':');
    out.push_str(digits.format(a.line));
    out.push(':');
    out.push_str(digits.format(range.start + 1));
    out.push('\n');
    pad(out, gutter + 1);
    out.push_str("|\n");
    out.push_str(digits.format(a.line));
    out.push_str(" |");
    if !a.text.is_empty() {
        out.push(' ');
        out.push_str(a.text);
    }
    out.push('\n');
    pad(out, gutter + 1);
    out.push_str("| ");
    pad(out, range.start);
    out.push_str(&CARETS[..carets]);
    if !a.label.is_empty() {
        out.push(' ');
        out.push_str(a.label);
    }
    if let Some(help) = a.help {
        out.push('\n');
        pad(out, gutter + 1);
        out.push_str("|\n");
        pad(out, gutter + 1);
        out.push_str("= help: ");
        out.push_str(help);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain drawing of `a`, when it has one.
    fn render_plain(a: &Annotated) -> Option<String> {
        let mut out = String::new();
        write_plain(a, &mut out).then_some(out)
    }

    #[test]
    fn carets_the_key() {
        let text = "    max_attempts: 4";
        assert_eq!(&text[token(text, 5)], "max_attempts");
        let text = "      retry: { max_attempts: 4 }";
        assert_eq!(&text[token(text, 16)], "max_attempts");
        assert_eq!(&text[token("x", 9)], "");
    }

    #[test]
    fn columns_count_characters() {
        let lines = Lines::new("a: 1\n  é: { max_attempts: 4 }\n");
        assert_eq!(columns(lines.get(2), 3), (3, 4));
        assert_eq!(columns(lines.get(2), 8), (8, 20));
        assert_eq!(columns(lines.get(9), 1), (1, 2));
        assert_eq!(lines.get(0), "");
    }

    /// annotate-snippets' own plain rendering, for the comparison.
    fn reference(a: &Annotated) -> String {
        let mut title = a.level.clone().primary_title(a.title);
        if let Some(code) = a.code {
            title = title.id(code);
        }
        let mut group = Group::with_title(title);
        group = group.element(
            Snippet::source(a.text)
                .line_start(a.line as usize)
                .path(a.file)
                .annotation(
                    AnnotationKind::Primary
                        .span(token(a.text, a.column))
                        .label(a.label),
                ),
        );
        if let Some(help) = a.help {
            group = group.element(Level::HELP.message(help));
        }
        Renderer::plain().render(&[group]).to_string()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        #[test]
        fn plain_matches_annotate_snippets(
            text in "[ a-z:{}\\[\\],#'\"-]{0,60}|[ a-z:é→\t]{0,20}",
            column in 0u32..70,
            line in 1u32..200_000,
            level in 0..4usize,
            code in proptest::option::of("RL0[0-9][0-9]"),
            title in "[a-z `→é<>µ\u{85}\u{9f}]{0,80}",
            label in "[a-z 0-9<→]{0,30}",
            help in proptest::option::of("[a-z ,:`→]{0,120}"),
        ) {
            let a = Annotated {
                level: [Level::ERROR, Level::WARNING, Level::INFO, Level::NOTE][level].clone(),
                code: code.as_deref(),
                title: &title,
                file: "dir/topology.yaml",
                text: &text,
                line,
                column,
                label: &label,
                help: help.as_deref(),
            };
            if let Some(plain) = render_plain(&a) {
                proptest::prop_assert_eq!(plain, reference(&a));
            }
        }
    }
}
