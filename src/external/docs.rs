//! A file as documents: multi-document YAML split at its `---` lines, each
//! parsed by the located reader with its positions and byte spans shifted
//! back to where the document sits in the file. A JSON file is one document.

use crate::input::error::LoadError;
use crate::input::read::syntax_error_in;
use crate::input::yaml::{self, Span};
use crate::input::{Node, Value};

pub(crate) struct Document {
    pub root: Node,
}

/// The documents of `text`; empty documents are dropped.
pub(crate) fn split(file: &str, text: &str) -> Result<Vec<Document>, LoadError> {
    let mut out = Vec::new();
    for (start, line0, chunk) in chunks(text) {
        if chunk
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            continue;
        }
        let mut root = yaml::parse_config(&chunk).map_err(|e| {
            let mut err = syntax_error_in(file, &chunk, e);
            if let Some(p) = &mut err.pos {
                p.line += line0;
            }
            err
        })?;
        if line0 > 0 || start > 0 {
            shift(&mut root, line0, start as u32);
        }
        if root.value != Value::Null {
            out.push(Document { root });
        }
    }
    Ok(out)
}

/// `(byte offset, lines before it, text)` of each document. A marker line
/// (`---`, `--- # c`, `...`) is blanked to spaces so columns stay put.
fn chunks(text: &str) -> Vec<(usize, u32, String)> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut line0 = 0u32;
    let mut offset = 0usize;
    let mut current = String::new();
    for (line, l) in (0u32..).zip(text.split_inclusive('\n')) {
        let bare = l.trim_end_matches(['\n', '\r']);
        let marker =
            bare == "---" || bare.starts_with("--- ") || bare.starts_with("---\t") || bare == "...";
        if marker {
            if !current.is_empty() || line > line0 {
                out.push((start, line0, std::mem::take(&mut current)));
            }
            start = offset;
            line0 = line;
            // Content after `--- ` stays in the document at its column.
            current.push_str(&" ".repeat(3.min(bare.len())));
            current.push_str(&l[3.min(bare.len())..]);
        } else {
            current.push_str(l);
        }
        offset += l.len();
    }
    out.push((start, line0, current));
    out
}

fn shift(node: &mut Node, lines: u32, bytes: u32) {
    node.pos.line += lines;
    node.span = Span {
        start: node.span.start + bytes,
        end: node.span.end + bytes,
    };
    match &mut node.value {
        Value::Seq(items) => items.iter_mut().for_each(|n| shift(n, lines, bytes)),
        Value::Map(entries) => entries.iter_mut().for_each(|(k, v)| {
            shift(k, lines, bytes);
            shift(v, lines, bytes);
        }),
        _ => {}
    }
}

/// How `--verbose` names a skipped document: `apps/v1 Deployment productpage-v1`.
pub fn describe(root: &Node) -> String {
    use super::node::{get, path, str_at};
    match get(root, "apiVersion").and_then(str_at) {
        Some(api) => {
            let kind = get(root, "kind").and_then(str_at).unwrap_or("(no kind)");
            match path(root, &["metadata", "name"]).and_then(str_at) {
                Some(name) => format!("{api} {kind} {name}"),
                None => format!("{api} {kind}"),
            }
        }
        None => "a document of no known kind".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::node::{get, path};
    use crate::input::Pos;

    #[test]
    fn documents_keep_their_lines_columns_and_bytes() {
        let text = "a: 1\n---\nkind: X\nspec:\n  b: 2\n--- # third\n\n  # only a comment\n---\nc: [1, 2]\n";
        let docs = split("f.yaml", text).unwrap();
        assert_eq!(docs.len(), 3);
        let b = path(&docs[1].root, &["spec", "b"]).unwrap();
        assert_eq!(b.pos, Pos { line: 5, column: 6 });
        assert_eq!(&text[b.span.range()], "2");
        let c = get(&docs[2].root, "c").unwrap();
        assert_eq!(
            c.pos,
            Pos {
                line: 10,
                column: 4
            }
        );
        assert_eq!(&text[c.span.range()], "[1, 2]");
    }

    #[test]
    fn json_is_read_located_by_the_yaml_reader() {
        let text = "{\n  \"methodConfig\": [{\n    \"retryPolicy\": {\n      \"maxAttempts\": 4,\n      \"initialBackoff\": \".01s\"\n    }\n  }]\n}\n";
        let docs = split("f.json", text).unwrap();
        let rp = get(&docs[0].root, "methodConfig").unwrap();
        let Value::Seq(items) = &rp.value else {
            panic!("a list")
        };
        let m = path(&items[0], &["retryPolicy", "maxAttempts"]).unwrap();
        assert_eq!(
            m.pos,
            Pos {
                line: 4,
                column: 22
            }
        );
        assert_eq!(m.value, Value::Int(4));
        assert_eq!(&text[m.span.range()], "4");
        let b = path(&items[0], &["retryPolicy", "initialBackoff"]).unwrap();
        assert_eq!(&text[b.span.range()], "\".01s\"");
    }

    #[test]
    fn a_syntax_error_in_a_later_document_names_its_real_line() {
        let text = "a: 1\n---\nb: [1, 2\n";
        let e = split("f.yaml", text).err().unwrap();
        assert!(e.pos.unwrap().line >= 3, "{e}");
    }
}
