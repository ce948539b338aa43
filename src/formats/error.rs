//! Load errors as the user sees them: `error: file:line:col: message; fix`,
//! then the line with a caret when the source is at hand.

use annotate_snippets::Level;

use crate::formats::snippet::{Annotated, render as render_snippet};
use crate::topology::LoadError;

pub fn render(e: &LoadError, source: Option<&str>, color: bool) -> String {
    let mut out = format!("error: {e}\n");
    if let (Some(pos), Some(source)) = (e.pos, source)
        && pos.line > 0
        && let Some(text) = source.lines().nth(pos.line as usize - 1)
    {
        // The one-line message above says what and how to fix; below it, only
        // the line with its caret.
        let snippet = render_snippet(
            &Annotated {
                level: Level::ERROR,
                code: None,
                title: &e.message,
                file: &e.file,
                text,
                line: pos.line,
                column: pos.column,
                label: "here",
                help: None,
            },
            color,
        );
        for line in snippet.lines().skip(1) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
