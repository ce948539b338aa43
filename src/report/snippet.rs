//! rustc-style snippets: the YAML line with a caret under the culprit, rendered by
//! annotate-snippets. Shared by the table format and the error printer.

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

/// One diagnostic to draw.
pub struct Annotated<'a> {
    pub level: Level<'a>,
    pub code: Option<&'a str>,
    pub title: &'a str,
    pub file: &'a str,
    /// The text of line `line` (see [`Lines`]).
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

/// A source split into lines once, so that reporting thousands of findings
/// does not scan the file once per finding.
pub struct Lines<'a>(Vec<&'a str>);

impl<'a> Lines<'a> {
    pub fn new(source: &'a str) -> Self {
        Lines(source.lines().collect())
    }

    /// The text of 1-based `line`; empty when there is no such line.
    pub fn get(&self, line: u32) -> &'a str {
        (line as usize)
            .checked_sub(1)
            .and_then(|i| self.0.get(i))
            .copied()
            .unwrap_or("")
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

pub fn render(a: &Annotated, color: bool) -> String {
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
    renderer.render(&[group]).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
