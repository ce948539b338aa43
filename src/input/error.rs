//! Load errors: one clear message naming file:line:column, what is wrong and
//! what to write instead.

use std::fmt;

use super::yaml::Pos;

/// What kind of problem stopped loading, for callers that must tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file could not be read, or is too large, empty or not text.
    Io,
    /// Not valid YAML, or over the parser's resource budget.
    Syntax,
    /// Valid YAML that is not a valid topology, preset or fault scenario.
    Schema,
    /// The call graph is not a DAG or names unknown services.
    Graph,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    pub kind: ErrorKind,
    pub file: String,
    pub pos: Option<Pos>,
    pub message: String,
    /// What to write instead.
    pub help: Option<String>,
}

impl LoadError {
    pub fn new(kind: ErrorKind, file: &str, pos: Option<Pos>, message: impl Into<String>) -> Self {
        LoadError {
            kind,
            file: file.to_owned(),
            pos,
            message: one_line(message.into()),
            help: None,
        }
    }

    pub(crate) fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(one_line(help.into()));
        self
    }
}

/// The text on one line whatever it quotes: a key or value with line breaks
/// (a quoted or folded YAML scalar can hold them) would split the error over
/// several lines, so control characters are written as escapes (`\n`).
fn one_line(text: String) -> String {
    match crate::visible::name(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(shown) => shown,
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The file keeps its real name (it is read again for the snippet).
        let file = one_line(self.file.clone());
        match self.pos {
            Some(p) => write!(f, "{file}:{}:{}: {}", p.line, p.column, self.message)?,
            None => write!(f, "{file}: {}", self.message)?,
        }
        if let Some(help) = &self.help {
            write!(f, "; {help}")?;
        }
        Ok(())
    }
}

/// The candidate closest to `word` by edit distance, if it is close enough to
/// be what the user meant.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word_l = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (edit_distance(&word_l, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 2).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance, with a transposition counted as one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(256).collect();
    let b: Vec<char> = b.chars().take(256).collect();
    let mut prev2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_line_break_keeps_the_error_on_one_line() {
        let e = LoadError::new(
            ErrorKind::Schema,
            "a\nb.yaml",
            Some(Pos {
                line: 3,
                column: 23,
            }),
            "unknown key `retr\n\nretry`",
        )
        .with_help("valid keys\there");
        assert_eq!(
            e.to_string(),
            r"a\nb.yaml:3:23: unknown key `retr\n\nretry`; valid keys\there"
        );
        assert_eq!(e.file, "a\nb.yaml", "the real name, to read the file again");
    }

    #[test]
    fn suggests_the_nearest_key() {
        let keys = ["max_attempts", "backoff", "retry_on", "budget"];
        assert_eq!(nearest("max_attempt", keys), Some("max_attempts"));
        assert_eq!(nearest("maxAttempts", keys), Some("max_attempts"));
        assert_eq!(nearest("retyr_on", keys), Some("retry_on"));
        assert_eq!(nearest("zzzzzzzz", keys), None);
    }
}
