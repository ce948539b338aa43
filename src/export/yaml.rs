//! Writing YAML as text: the manifests are built as a small tree and printed
//! here, so quoting and indentation are decided in one place. A string is
//! written plain only when no YAML 1.1 or 1.2 reader can take it for
//! anything else (a number, a boolean, null, a key, a document marker);
//! otherwise it is double-quoted with every character that a reader could
//! fold or drop escaped. File contents go out as literal blocks, exact to the
//! byte, or quoted when a block could not hold them exactly.
//!
//! No YAML-writing crate: serde-saphyr only reads, and the manifests need
//! comments (where the figures come from, which names were mapped), which
//! serializers do not write.

use std::fmt::Write as _;

pub use crate::input::quote::quote;

pub(crate) use crate::input::quote::{plain_ok, scalar};

/// A YAML value to print.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Yaml {
    Str(String),
    Int(i64),
    Bool(bool),
    /// A file's contents: a literal block when it can be one exactly.
    Text(String),
    Seq(Vec<Yaml>),
    Map(Vec<Entry>),
}

/// An entry of a mapping: a key and its value, or a comment line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    Pair(String, Yaml),
    Comment(String),
}

/// `Yaml::Str` from anything string-like.
pub(crate) fn s(text: impl Into<String>) -> Yaml {
    Yaml::Str(text.into())
}

/// A sequence of strings.
pub(crate) fn strs<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Yaml {
    Yaml::Seq(items.into_iter().map(|i| s(i.as_ref())).collect())
}

/// Builds a mapping entry by entry.
#[derive(Debug, Clone, Default)]
pub(crate) struct MapBuilder(Vec<Entry>);

/// A new mapping.
pub(crate) fn map() -> MapBuilder {
    MapBuilder::default()
}

impl MapBuilder {
    pub(crate) fn put(mut self, key: &str, value: impl Into<Yaml>) -> Self {
        self.0.push(Entry::Pair(key.to_owned(), value.into()));
        self
    }

    /// `put` when `value` is `Some`.
    pub(crate) fn put_some(self, key: &str, value: Option<impl Into<Yaml>>) -> Self {
        match value {
            Some(v) => self.put(key, v),
            None => self,
        }
    }

    /// A comment line before the next entry (one line per `\n`).
    pub(crate) fn comment(mut self, text: &str) -> Self {
        self.0
            .extend(text.lines().map(|l| Entry::Comment(l.to_owned())));
        self
    }

    pub(crate) fn build(self) -> Yaml {
        Yaml::Map(self.0)
    }
}

impl From<MapBuilder> for Yaml {
    fn from(m: MapBuilder) -> Yaml {
        m.build()
    }
}

impl From<&str> for Yaml {
    fn from(v: &str) -> Yaml {
        s(v)
    }
}

impl From<String> for Yaml {
    fn from(v: String) -> Yaml {
        Yaml::Str(v)
    }
}

impl From<&String> for Yaml {
    fn from(v: &String) -> Yaml {
        s(v.as_str())
    }
}

impl From<i64> for Yaml {
    fn from(v: i64) -> Yaml {
        Yaml::Int(v)
    }
}

impl From<bool> for Yaml {
    fn from(v: bool) -> Yaml {
        Yaml::Bool(v)
    }
}

impl From<Vec<Yaml>> for Yaml {
    fn from(v: Vec<Yaml>) -> Yaml {
        Yaml::Seq(v)
    }
}

/// One document: `header` as comment lines, then `root` (a mapping).
pub(crate) fn document(header: &str, root: &Yaml) -> String {
    let mut out = String::new();
    for line in header.lines() {
        comment_line(&mut out, 0, line);
    }
    write_value_block(&mut out, 0, root);
    out
}

/// Several documents in one file, `---` between them.
pub fn documents(docs: &[String]) -> String {
    docs.join("---\n")
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn comment_line(out: &mut String, indent: usize, text: &str) {
    pad(out, indent);
    if text.is_empty() {
        out.push_str("#\n");
    } else {
        let _ = writeln!(out, "# {text}");
    }
}

/// A mapping or sequence printed as a block at `indent`.
fn write_value_block(out: &mut String, indent: usize, v: &Yaml) {
    match v {
        Yaml::Map(entries) => write_map(out, indent, entries),
        Yaml::Seq(items) => write_seq(out, indent, items),
        other => {
            pad(out, indent);
            out.push_str(&inline(other, indent));
            out.push('\n');
        }
    }
}

fn write_map(out: &mut String, indent: usize, entries: &[Entry]) {
    for e in entries {
        match e {
            Entry::Comment(c) => comment_line(out, indent, c),
            Entry::Pair(k, v) => {
                debug_assert!(plain_ok(k), "key {k:?} needs quoting");
                pad(out, indent);
                out.push_str(k);
                out.push(':');
                match v {
                    Yaml::Map(m) if !m.is_empty() => {
                        out.push('\n');
                        write_map(out, indent + 2, m);
                    }
                    Yaml::Seq(items) if !items.is_empty() => {
                        out.push('\n');
                        write_seq(out, indent + 2, items);
                    }
                    _ => {
                        out.push(' ');
                        out.push_str(&inline(v, indent + 2));
                        out.push('\n');
                    }
                }
            }
        }
    }
}

fn write_seq(out: &mut String, indent: usize, items: &[Yaml]) {
    for item in items {
        match item {
            Yaml::Map(m) if !m.is_empty() => {
                // The first line of the item's mapping goes on the dash line.
                let mut inner = String::new();
                write_map(&mut inner, indent + 2, m);
                pad(out, indent);
                out.push_str("- ");
                out.push_str(&inner[indent + 2..]);
            }
            Yaml::Seq(s) if !s.is_empty() => {
                pad(out, indent);
                out.push_str("-\n");
                write_seq(out, indent + 2, s);
            }
            _ => {
                pad(out, indent);
                out.push_str("- ");
                out.push_str(&inline(item, indent + 2));
                out.push('\n');
            }
        }
    }
}

/// A value that fits after `key: ` or `- ` (a block scalar continues on the
/// following lines at `indent`).
fn inline(v: &Yaml, indent: usize) -> String {
    match v {
        Yaml::Str(s) => scalar(s),
        Yaml::Int(i) => i.to_string(),
        Yaml::Bool(b) => b.to_string(),
        Yaml::Text(t) => block(t, indent).unwrap_or_else(|| quote(t)),
        Yaml::Seq(_) => "[]".into(),
        Yaml::Map(_) => "{}".into(),
    }
}

/// `text` as a literal block scalar whose lines sit at `indent`, or `None`
/// when a literal block could not hold it exactly (characters a reader
/// treats as line breaks or drops, or a first line that would be taken for
/// indentation).
fn block(text: &str, indent: usize) -> Option<String> {
    let unsafe_char = |c: char| {
        (c < ' ' && c != '\n' && c != '\t')
            || matches!(
                c,
                '\u{7f}' | '\u{85}' | '\u{feff}' | '\u{2028}' | '\u{2029}'
            )
    };
    if text.trim().is_empty() || text.chars().any(unsafe_char) {
        return None;
    }
    // Indentation is detected from the first line with content; blank
    // lines before it may not hold spaces, nor may it start with one.
    let mut lines = text.split('\n');
    for line in lines.by_ref() {
        if line.is_empty() {
            continue;
        }
        if line.starts_with([' ', '\t']) || line.trim().is_empty() {
            return None;
        }
        break;
    }
    let body = text.trim_end_matches('\n');
    let chomp = match text.len() - body.len() {
        0 => "|-",
        1 => "|",
        _ => "|+",
    };
    let mut out = String::from(chomp);
    out.push('\n');
    let mut lines: Vec<&str> = body.split('\n').collect();
    // Under `|+` the trailing line breaks are content; print them as lines.
    lines.extend(std::iter::repeat_n(
        "",
        (text.len() - body.len()).saturating_sub(1),
    ));
    for line in lines {
        if !line.is_empty() {
            pad(&mut out, indent);
            out.push_str(line);
        }
        out.push('\n');
    }
    out.pop();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::yaml::{Value, parse};

    fn read_back(doc: &str, key: &str) -> Value {
        let root = parse(doc).unwrap_or_else(|e| panic!("{doc}\n{}", e.message));
        let Value::Map(entries) = root.value else {
            panic!("{doc}")
        };
        entries
            .into_iter()
            .find(|(k, _)| k.value == Value::Str(key.into()))
            .map(|(_, v)| v.value)
            .unwrap()
    }

    #[test]
    fn strings_read_back_as_themselves() {
        let cases = [
            "web",
            "8080",
            "0.0.0.0:8080",
            "true",
            "No",
            "null",
            "~",
            "",
            "-",
            "---",
            "--service",
            "--",
            "http://web:8080",
            "a: b",
            "a #b",
            "key:",
            "'x'",
            "\"x\"",
            "line\nbreak",
            "tab\there",
            " lead",
            "trail ",
            "1e3",
            "0x1f",
            ".inf",
            "@x",
            "`x",
            "{a}",
            "[a]",
            "*a",
            "&a",
            "!a",
            "|a",
            ">a",
            "%a",
            "é",
            "\u{85}",
            "\u{2028}",
            "\u{7f}",
            "\u{1}",
            "/etc/retrylint/fault.yaml",
            "12:30",
        ];
        for c in cases {
            let doc = document("", &map().put("k", c).build());
            assert_eq!(read_back(&doc, "k"), Value::Str(c.into()), "{c:?} → {doc}");
        }
        assert_eq!(scalar("web"), "web");
        assert_eq!(scalar("--service"), "--service");
        assert_eq!(scalar("8080"), "\"8080\"");
        assert_eq!(scalar("yes"), "\"yes\"");
    }

    #[test]
    fn file_contents_read_back_to_the_byte() {
        let cases = [
            "version: 1\nservices:\n  web: {}\n",
            "no final newline",
            "two final newlines\n\n",
            "blank\n\nlines\n   \nwith spaces \n",
            "# a comment first\n---\nkey: v\n...\n",
            "\n\nleading blank lines\n",
            "  indented first line\n",
            "tab\tinside\n\tand leading\n",
            "crlf\r\nline\r\n",
            "",
            "   \nspaces before content\n",
        ];
        for c in cases {
            let doc = document("", &map().put("k", Yaml::Text(c.into())).build());
            assert_eq!(read_back(&doc, "k"), Value::Str(c.into()), "{c:?} → {doc}");
        }
        let doc = document("", &map().put("k", Yaml::Text("a\nb\n".into())).build());
        assert_eq!(doc, "k: |\n  a\n  b\n");
    }

    #[test]
    fn nesting_comments_and_empty_collections() {
        let root = map()
            .comment("why")
            .put(
                "spec",
                map()
                    .put(
                        "list",
                        vec![map().put("name", "a").put("count", 1).build(), s("b")],
                    )
                    .put("empty", Yaml::Seq(vec![]))
                    .put("none", map()),
            )
            // `y` is a boolean to a YAML 1.1 reader.
            .put("nested", Yaml::Seq(vec![strs(["x", "y"])]))
            .build();
        let doc = document("head\n\nline", &root);
        assert_eq!(
            doc,
            "# head\n#\n# line\n# why\nspec:\n  list:\n    - name: a\n      count: 1\n    - b\n  empty: []\n  none: {}\nnested:\n  -\n    - x\n    - \"y\"\n"
        );
        parse(&doc).unwrap();
    }
}
