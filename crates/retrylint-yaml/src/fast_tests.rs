//! The fast path against granit-parser, event for event: wherever the fast path
//! does not give up, it must yield exactly granit's events, positions and spans,
//! and the same tree.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_saphyr::granit_parser::{Event, Parser};

use super::fast::FastScanner;
use super::*;

// The same generator the differential test against serde-saphyr includes.
#[allow(clippy::duplicate_mod)]
#[path = "../../../tests/common/generate.rs"]
mod generate;

/// (event, line, 0-based column, start byte, end byte)
type Seen<'a> = (Event<'a>, u32, u32, u32, u32);

fn granit(text: &str) -> Result<Vec<Seen<'_>>, String> {
    let mut out = Vec::new();
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| e.to_string())?;
        if matches!(
            event,
            Event::StreamStart | Event::StreamEnd | Event::DocumentStart(..) | Event::DocumentEnd
        ) {
            continue;
        }
        let at = |m: &serde_saphyr::granit_parser::Marker| m.byte_offset().unwrap() as u32;
        out.push((
            event,
            span.start.line() as u32,
            span.start.col() as u32,
            at(&span.start),
            at(&span.end),
        ));
    }
    Ok(out)
}

/// The fast path's events, or `None` where it gives up.
fn fast(text: &str) -> Option<Vec<Seen<'_>>> {
    let mut scanner = FastScanner::new(text)?;
    let mut out = Vec::new();
    while let Some(item) = scanner.next() {
        let (event, pos, span) = item.ok()?;
        out.push((
            event.into_parser_event(),
            pos.line,
            pos.column - 1,
            span.start,
            span.end,
        ));
    }
    Some(out)
}

/// Where the fast path takes `text`, it agrees with granit; says whether it took it.
fn agrees(text: &str) -> Result<bool, String> {
    let Some(fast) = fast(text) else {
        return Ok(false);
    };
    let granit = granit(text).map_err(|e| format!("only granit fails: {e}\n--- input:\n{text}"))?;
    if let Some(i) = (0..fast.len().max(granit.len())).find(|&i| fast.get(i) != granit.get(i)) {
        return Err(format!(
            "event {i} differs:\n fast   {:?}\n granit {:?}\n--- input:\n{text}",
            fast.get(i),
            granit.get(i)
        ));
    }
    let (a, b) = (parse(text), parse_with_granit(text, Mode::AsSerdeSaphyr));
    match (a, b) {
        (Ok(a), Ok(b)) if a == b => Ok(true),
        (Err(_), Err(_)) => Ok(true),
        (a, b) => Err(format!(
            "trees differ: {a:?}\n vs {b:?}\n--- input:\n{text}"
        )),
    }
}

#[track_caller]
fn assert_taken(text: &str) {
    match agrees(text) {
        Ok(true) => {}
        Ok(false) => panic!("the fast path gave up on:\n{text}"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn takes_the_yaml_topologies_are_written_in() {
    assert_taken(&generate::random_dag(200, 3, 7));
    for text in [
        "a: 1\n",
        "a: 1",
        "a:\n",
        "a:",
        "a: &x\nb: 1\n",
        "a:\n  b: 1\n  c:\n    - x\n    - y: 1\n      z: 2\n    -\n    - \n  d: 2\n",
        "a:\n- 1\n- 2\nb: 3\n",
        "a:\n- k: 1\n  j: 2\n-\n- x\n",
        "x: &d\n  p: 1\ny:\n  <<: *d\n  q: [1, 'a''b', \"c\", {k: v}, []]\n",
        "l:\n  - &i x\n  - *i\n",
        "a: 'q' # c\nb: \"r\"   # c\n# c\n   # c\n\nc: x y z\n",
        "- a\n- b: [1, 2]\n  c: {d: e}\n",
        "k: http://x.y/z\nv: a#b\nw: -1\nx: ~\n",
        "'q': 1\n\"r\": 2\n",
        "a:\n  - b:\n      c: 1\n",
        "top:\n    deep: 1\n    other:\n        - 1\n",
    ] {
        assert_taken(text);
    }
}

#[test]
fn gives_up_on_what_it_does_not_read() {
    for text in [
        "a: |\n  x\n",
        "a: !!str 5\n",
        "a: multi\n  line\n",
        "a: [1,\n  2]\n",
        "? a\n: b\n",
        "a: \"esc\\n\"\n",
        "---\na: 1\n",
        "%YAML 1.2\n---\na: 1\n",
        "a:\tb\n",
        "a: é\n",
        "a: 1\r\n",
        "[1, 2]\n",
        "scalar\n",
        "# only a comment\n",
        "",
        "a: [1, ]\n",
        "a: {b}\n",
        "a: *nope\n",
        "- - a\n",
        "a: b: c\n",
        "a: 1\n  b: 2\n",
        "a:\n  value\n",
    ] {
        assert!(fast(text).is_none(), "took {text:?}");
        // And the whole parse agrees with granit alone.
        let (a, b) = (parse(text), parse_with_granit(text, Mode::AsSerdeSaphyr));
        match (a, b) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text:?}"),
            (Err(a), Err(b)) => {
                assert_eq!((a.pos, &a.message), (b.pos, &b.message), "{text:?}")
            }
            (a, b) => panic!("{text:?}: {a:?} vs {b:?}"),
        }
    }
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(p);
        }
    }
}

#[test]
fn every_yaml_file_in_the_repository() {
    // The repository's files: this crate is two levels below its root.
    let root = &Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["examples", "policies", "faults", "tests/fixtures"] {
        yaml_files(&root.join(dir), &mut files);
    }
    let mut taken = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        match agrees(&text) {
            Ok(t) => taken += usize::from(t),
            Err(e) => panic!("{}: {e}", f.display()),
        }
    }
    // Most shipped files are plain YAML; the rest use what only granit reads.
    assert!(taken * 2 > files.len(), "{taken} of {}", files.len());
}

// ---------------------------------------------------------------------------
// Random documents: block and flow collections, scalars of every style,
// anchors, aliases, comments and odd indentation, sometimes with one
// character changed.

#[derive(Debug, Clone)]
pub(super) enum Y {
    S(&'static str),
    Alias,
    Anchored(Box<Y>),
    Flow(Vec<Y>, bool),
    Seq(Vec<Y>),
    Map(Vec<(&'static str, Y)>),
}

const VALUES: &[&str] = &[
    "a",
    "x y",
    "1",
    "-2",
    "0x1F",
    "1.5",
    "true",
    "~",
    "''",
    "\"\"",
    "'it''s'",
    "\"q\"",
    "http://x",
    "a#b",
    "-x",
    "?y",
    ":z",
    "<<",
    "a # comment",
    "\"a\" # c",
    "!!str 5",
    "|",
    "\"e\\n\"",
    "[a, ]",
    "{a}",
    "- x",
    "a: b",
    "é",
    "a\tb",
    "",
];
const KEYS: &[&str] = &[
    "k", "key", "'q'", "\"d\"", "1", "a b", "<<", "k:x", "-k", "? k",
];

pub(super) fn y() -> impl Strategy<Value = Y> {
    let leaf = prop_oneof![
        8 => prop::sample::select(VALUES).prop_map(Y::S),
        1 => Just(Y::Alias),
    ];
    leaf.prop_recursive(4, 40, 4, |inner| {
        prop_oneof![
            2 => prop::collection::vec(inner.clone(), 1..4).prop_map(Y::Seq),
            3 => prop::collection::vec((prop::sample::select(KEYS), inner.clone()), 1..4)
                .prop_map(Y::Map),
            1 => (prop::collection::vec(inner.clone(), 0..3), any::<bool>())
                .prop_map(|(v, map)| Y::Flow(v, map)),
            1 => inner.prop_map(|y| Y::Anchored(Box::new(y))),
        ]
    })
}

#[derive(Default)]
struct Out {
    text: String,
    anchors: usize,
}

impl Out {
    fn flow(&mut self, y: &Y) {
        match y {
            Y::S(s) => self.text.push_str(s),
            Y::Alias => self.text.push_str(&format!("*a{}", self.anchors)),
            Y::Anchored(inner) => {
                self.anchors += 1;
                self.text.push_str(&format!("&a{} ", self.anchors));
                self.flow(inner);
            }
            Y::Flow(items, false) | Y::Seq(items) => {
                self.text.push('[');
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str(", ");
                    }
                    self.flow(it);
                }
                self.text.push(']');
            }
            Y::Flow(items, true) => {
                self.text.push('{');
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str(", ");
                    }
                    self.text.push_str(&format!("f{i}: "));
                    self.flow(it);
                }
                self.text.push('}');
            }
            Y::Map(entries) => {
                self.text.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str(", ");
                    }
                    self.text.push_str(k);
                    self.text.push_str(": ");
                    self.flow(v);
                }
                self.text.push('}');
            }
        }
    }

    fn pad(&mut self, n: usize) {
        self.text.extend(std::iter::repeat_n(' ', n));
    }

    /// After `key:` or `-`: the value, its line end, and lines under it.
    fn value(&mut self, y: &Y, indent: usize, indentless: bool) {
        match y {
            Y::Seq(items) if !items.is_empty() => {
                self.text.push('\n');
                let at = if indentless { indent - 2 } else { indent };
                for it in items {
                    self.pad(at);
                    self.text.push('-');
                    self.value(it, at + 2, false);
                }
            }
            Y::Map(entries) if !entries.is_empty() => {
                self.text.push('\n');
                self.block_map(entries, indent);
            }
            Y::Anchored(inner) if matches!(**inner, Y::Seq(_) | Y::Map(_)) => {
                self.anchors += 1;
                self.text.push_str(&format!(" &a{}", self.anchors));
                self.value(inner, indent, indentless);
            }
            y => {
                self.text.push(' ');
                self.flow(y);
                self.text.push('\n');
            }
        }
    }

    fn block_map(&mut self, entries: &[(&str, Y)], indent: usize) {
        for (i, (k, v)) in entries.iter().enumerate() {
            if i % 3 == 2 {
                self.pad(indent + 1);
                self.text.push_str("# between\n");
            }
            self.pad(indent);
            self.text.push_str(k);
            self.text.push(':');
            self.value(v, indent + 2, i % 2 == 1);
        }
    }
}

pub(super) fn render(y: &Y) -> String {
    let mut out = Out::default();
    match y {
        Y::Map(entries) if !entries.is_empty() => out.block_map(entries, 0),
        y => {
            out.text.push_str("root:");
            out.value(y, 2, false);
        }
    }
    out.text
}

fn mutate(text: &str, at: usize, what: u8) -> String {
    const INSERT: &[char] = &[
        ':', '-', '[', ']', '{', '}', ',', '&', '*', '!', '"', '\'', ' ', '\n', '#', '?', '|',
    ];
    let mut chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return text.to_owned();
    }
    let at = at % chars.len();
    if what.is_multiple_of(3) {
        chars.remove(at);
    } else {
        chars.insert(at, INSERT[usize::from(what) % INSERT.len()]);
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1024),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_documents(y in y(), edit in prop::option::weighted(0.4, (any::<usize>(), any::<u8>()))) {
        let mut text = render(&y);
        if let Some((at, what)) = edit {
            text = mutate(&text, at, what);
        }
        if let Err(e) = agrees(&text) {
            prop_assert!(false, "{}", e);
        }
    }
}
