//! Byte spans: `&text[span]` is the value as written, for every scalar style and
//! every kind of collection — a table of cases, then random documents rendered
//! while the text of each node is noted.

use proptest::prelude::*;

use super::*;

/// Every node's text, in document order (a node, then its items or its keys
/// and values).
fn texts<'t>(text: &'t str, node: &Node, out: &mut Vec<&'t str>) {
    out.push(&text[node.span.range()]);
    match &node.value {
        Value::Seq(items) => items.iter().for_each(|n| texts(text, n, out)),
        Value::Map(entries) => {
            for (k, v) in entries {
                texts(text, k, out);
                texts(text, v, out);
            }
        }
        _ => {}
    }
}

#[track_caller]
fn assert_texts(text: &str, want: &[&str]) {
    let root = parse(text).unwrap_or_else(|e| panic!("{text:?}: {}", e.message));
    let mut got = Vec::new();
    texts(text, &root, &mut got);
    assert_eq!(got, want, "{text:?}");
}

#[test]
fn scalars_of_every_style() {
    assert_texts(
        "a: plain words  # c\n",
        &["a: plain words", "a", "plain words"],
    );
    assert_texts("a: 'it''s'\n", &["a: 'it''s'", "a", "'it''s'"]);
    assert_texts("a: \"q\\tq\" # c\n", &["a: \"q\\tq\"", "a", "\"q\\tq\""]);
    assert_texts("\"k\": 1\n", &["\"k\": 1", "\"k\"", "1"]);
    assert_texts(
        "a: multi\n  line\nb: 2\n",
        &["a: multi\n  line\nb: 2", "a", "multi\n  line", "b", "2"],
    );
    assert_texts(
        "a: \"two\n  lines\"\n",
        &["a: \"two\n  lines\"", "a", "\"two\n  lines\""],
    );
    assert_texts(
        "a: |\n  lit\n  eral\n\nb: >-\n  fold\n  ed\n",
        &[
            "a: |\n  lit\n  eral\n\nb: >-\n  fold\n  ed",
            "a",
            "|\n  lit\n  eral",
            "b",
            ">-\n  fold\n  ed",
        ],
    );
    assert_texts(
        "- |+ # keep\n  x\n\n- >2\n    y\n",
        &[
            "- |+ # keep\n  x\n\n- >2\n    y",
            "|+ # keep\n  x",
            ">2\n    y",
        ],
    );
    assert_texts("a: |\nb: 1\n", &["a: |\nb: 1", "a", "|", "b", "1"]);
    assert_texts(
        "a: | # note\nb: 1\n",
        &["a: | # note\nb: 1", "a", "|", "b", "1"],
    );
    assert_texts("top\n", &["top"]);
    assert_texts("'top'\n", &["'top'"]);
}

#[test]
fn empty_values_sit_after_their_indicator() {
    let text = "a:\nb: \nc:\n- \n-\n- x\nd: {e: , f: }\n";
    let root = parse(text).unwrap();
    let Value::Map(m) = &root.value else { panic!() };
    for (i, at) in [(0usize, 2u32), (1, 5)] {
        assert_eq!(m[i].1.span, Span { start: at, end: at }, "entry {i}");
    }
    assert_texts(
        text,
        &[
            text.trim_end(),
            "a",
            "",
            "b",
            "",
            "c",
            "- \n-\n- x",
            "",
            "",
            "x",
            "d",
            "{e: , f: }",
            "e",
            "",
            "f",
            "",
        ],
    );
}

#[test]
fn collections() {
    assert_texts(
        "f: {p: 1, q: [2, 3] }  # c\n",
        &[
            "f: {p: 1, q: [2, 3] }",
            "f",
            "{p: 1, q: [2, 3] }",
            "p",
            "1",
            "q",
            "[2, 3]",
            "2",
            "3",
        ],
    );
    assert_texts(
        "g:\n  - x\n  - y: 1\n    z: 2\n  # end\nh: 3\n",
        &[
            "g:\n  - x\n  - y: 1\n    z: 2\n  # end\nh: 3",
            "g",
            "- x\n  - y: 1\n    z: 2",
            "x",
            "y: 1\n    z: 2",
            "y",
            "1",
            "z",
            "2",
            "h",
            "3",
        ],
    );
    // A sequence as indented as its key, and one whose first item is a number.
    assert_texts(
        "s:\n- -1\n- - a\n  - b\nt: 1\n",
        &[
            "s:\n- -1\n- - a\n  - b\nt: 1",
            "s",
            "- -1\n- - a\n  - b",
            "-1",
            "- a\n  - b",
            "a",
            "b",
            "t",
            "1",
        ],
    );
    assert_texts(
        "-\n  - a\n- [b,\n   c]\n",
        &["-\n  - a\n- [b,\n   c]", "- a", "a", "[b,\n   c]", "b", "c"],
    );
}

#[test]
fn anchors_tags_and_aliases() {
    // A node's own properties are not part of it; a key's are part of its mapping.
    assert_texts(
        "a: &x !!str v\nb: *x\n",
        &["a: &x !!str v\nb: *x", "a", "v", "b", "*x"],
    );
    assert_texts(
        "a: &m\n  k: 1\nb: *m\n",
        &[
            "a: &m\n  k: 1\nb: *m",
            "a",
            "k: 1",
            "k",
            "1",
            "b",
            "*m",
            "k",
            "1",
        ],
    );
    assert_texts(
        "- &k key: v\n- !!map\n  &n n: w\n",
        &[
            "- &k key: v\n- !!map\n  &n n: w",
            "&k key: v",
            "key",
            "v",
            "&n n: w",
            "n",
            "w",
        ],
    );
    assert_texts(
        "l: &l [1, 2]\nm: !!seq\n- 3\n",
        &[
            "l: &l [1, 2]\nm: !!seq\n- 3",
            "l",
            "[1, 2]",
            "1",
            "2",
            "m",
            "- 3",
            "3",
        ],
    );
    // Merged entries keep the text of their definition; the mapping ends where
    // it is written.
    assert_texts(
        "d: &d {p: 1}\ns:\n  q: 2\n  <<: *d\n",
        &[
            "d: &d {p: 1}\ns:\n  q: 2\n  <<: *d",
            "d",
            "{p: 1}",
            "p",
            "1",
            "s",
            "q: 2\n  <<: *d",
            "q",
            "2",
            "p",
            "1",
        ],
    );
    // A collection key.
    assert_texts(
        "? [a, b]\n: 1\n",
        &["? [a, b]\n: 1", "[a, b]", "a", "b", "1"],
    );
}

#[test]
fn generated_topology_spans_are_exact() {
    let text = "version: 1\nx-defaults: &defaults\n  latency: { p50: 2ms, p99: 20ms }\nservices:\n  s0:\n    <<: *defaults\n    calls:\n      - to: s1\n        timeout: 250ms\n  s1: {}\n";
    let root = parse(text).unwrap();
    let mut got = Vec::new();
    texts(text, &root, &mut got);
    assert_eq!(got[0], text.trim_end());
    assert!(got.contains(&"to: s1\n        timeout: 250ms"), "{got:?}");
    assert!(got.contains(&"- to: s1\n        timeout: 250ms"), "{got:?}");
    assert!(got.contains(&"{ p50: 2ms, p99: 20ms }"), "{got:?}");
}

// ---------------------------------------------------------------------------
// Random documents. Each node is rendered while the text it must span is noted;
// the parse must give back exactly those texts.

#[derive(Debug, Clone)]
enum Doc {
    Scalar(&'static str),
    Block(&'static str, Vec<&'static str>),
    FlowSeq(Vec<Doc>),
    FlowMap(Vec<(&'static str, Doc)>),
    Seq(Vec<Doc>),
    Map(Vec<(&'static str, Doc)>),
    Anchored(Box<Doc>),
}

/// Scalars as written; each is a whole value in block and flow context.
const SCALARS: &[&str] = &[
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
    "\"a\\tb\"",
    "\"q:\"",
    "'#'",
    "http://x",
    "a-b",
    "!!str 5",
    "!!int 7",
];
const KEYS: &[&str] = &["k", "key", "'q'", "\"d\"", "1", "a b", "&kk k2", "!!str k3"];
const HEADERS: &[&str] = &["|", ">", "|-", ">+", "|2", "| # c"];
const LINES: &[&str] = &["text", "more text", "", "  indented"];

fn doc() -> impl Strategy<Value = Doc> {
    let scalar = prop::sample::select(SCALARS).prop_map(Doc::Scalar);
    let leaf = prop_oneof![
        6 => scalar.clone(),
        1 => (prop::sample::select(HEADERS), prop::collection::vec(prop::sample::select(LINES), 1..4))
            .prop_map(|(h, mut lines)| {
                // A block scalar's first line sets its indentation.
                lines[0] = "first";
                Doc::Block(h, lines)
            }),
    ];
    leaf.prop_recursive(4, 40, 4, move |inner| {
        let flow = prop_oneof![
            scalar.clone(),
            prop::collection::vec(scalar.clone(), 0..3).prop_map(Doc::FlowSeq),
        ];
        prop_oneof![
            2 => prop::collection::vec(inner.clone(), 1..4).prop_map(Doc::Seq),
            3 => prop::collection::vec((prop::sample::select(KEYS), inner.clone()), 1..4)
                .prop_map(|entries| {
                    let mut seen = std::collections::HashSet::new();
                    Doc::Map(entries.into_iter().filter(|(k, _)| seen.insert(*k)).collect())
                }),
            1 => prop::collection::vec(flow.clone(), 0..3).prop_map(Doc::FlowSeq),
            1 => prop::collection::vec((prop::sample::select(&["p", "q", "'r'"][..]), flow), 0..3)
                .prop_map(|entries| {
                    let mut seen = std::collections::HashSet::new();
                    Doc::FlowMap(entries.into_iter().filter(|(k, _)| seen.insert(*k)).collect())
                }),
            1 => inner.prop_map(|d| match d {
                // One anchor per node.
                Doc::Anchored(_) => d,
                d => Doc::Anchored(Box::new(d)),
            }),
        ]
    })
}

/// The texts a node must span, in the order `texts` lists them.
#[derive(Default)]
struct Render {
    out: String,
    want: Vec<(usize, usize)>,
    anchors: usize,
    /// The last thing written is a block scalar's line: a comment there would
    /// be content.
    in_block_scalar: bool,
    /// Just past the last value written (comments after it excluded).
    end: usize,
}

/// How far a node's own text reaches past a property (`!!str 5` spans `5`).
fn without_property(s: &str) -> usize {
    if s.starts_with('!') || s.starts_with('&') {
        s.find(' ').map_or(0, |i| i + 1)
    } else {
        0
    }
}

impl Render {
    /// Notes a node's place in the list, to be filled in once it is written.
    fn slot(&mut self) -> usize {
        self.want.push((0, 0));
        self.want.len() - 1
    }

    fn scalar(&mut self, s: &str) {
        self.in_block_scalar = false;
        let start = self.out.len() + without_property(s);
        self.out.push_str(s);
        self.end = self.out.len();
        self.want.push((start, self.end));
    }

    fn flow(&mut self, d: &Doc) {
        match d {
            Doc::Scalar(s) => self.scalar(s),
            Doc::FlowSeq(items) => {
                self.in_block_scalar = false;
                let slot = self.slot();
                let start = self.out.len();
                self.out.push('[');
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.flow(it);
                }
                self.out.push(']');
                self.end = self.out.len();
                self.want[slot] = (start, self.end);
            }
            Doc::FlowMap(entries) => {
                self.in_block_scalar = false;
                let slot = self.slot();
                let start = self.out.len();
                self.out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.scalar(k);
                    self.out.push_str(": ");
                    self.flow(v);
                }
                self.out.push('}');
                self.end = self.out.len();
                self.want[slot] = (start, self.end);
            }
            _ => unreachable!("only scalars and flow collections are flow"),
        }
    }

    fn is_block(d: &Doc) -> bool {
        match d {
            Doc::Seq(_) | Doc::Map(_) | Doc::Block(..) => true,
            Doc::Anchored(inner) => Self::is_block(inner),
            _ => false,
        }
    }

    /// A value after `key:` or `-`: on the same line, or on the next lines at
    /// `indent`. Ends without a line break.
    fn value(&mut self, d: &Doc, indent: usize) {
        match d {
            Doc::Anchored(inner) => {
                self.anchors += 1;
                self.out.push_str(&format!(" &a{}", self.anchors));
                if Self::is_block(inner) {
                    self.value(inner, indent);
                } else {
                    self.value_inline(inner, indent);
                }
            }
            Doc::Seq(_) | Doc::Map(_) => {
                self.out.push('\n');
                self.pad(indent);
                self.block(d, indent);
            }
            _ => self.value_inline(d, indent),
        }
    }

    fn value_inline(&mut self, d: &Doc, indent: usize) {
        match d {
            Doc::Block(header, lines) => {
                self.out.push(' ');
                let start = self.out.len();
                self.out.push_str(header);
                let mut end = start + header.find(' ').unwrap_or(header.len());
                for line in lines {
                    self.out.push('\n');
                    if !line.is_empty() {
                        self.pad(indent);
                        self.out.push_str(line);
                        end = self.out.len();
                    }
                }
                self.want.push((start, end));
                self.end = end;
                self.in_block_scalar = true;
            }
            Doc::Anchored(inner) => self.value(&Doc::Anchored(inner.clone()), indent),
            _ => {
                self.out.push(' ');
                self.flow(d);
            }
        }
    }

    fn pad(&mut self, indent: usize) {
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    /// A block collection starting at the cursor (already indented).
    fn block(&mut self, d: &Doc, indent: usize) {
        let slot = self.slot();
        let start = self.out.len();
        match d {
            Doc::Seq(items) => {
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push('\n');
                        self.pad(indent);
                    }
                    self.out.push('-');
                    match it {
                        Doc::Seq(_) | Doc::Map(_) => {
                            self.out.push(' ');
                            self.block(it, indent + 2);
                        }
                        _ => self.value(it, indent + 2),
                    }
                }
            }
            Doc::Map(entries) => {
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.out.push('\n');
                        self.pad(indent);
                    }
                    self.scalar(k);
                    self.out.push(':');
                    self.value(v, indent + 2);
                }
            }
            _ => unreachable!("a block collection"),
        }
        self.want[slot] = (start, self.end);
        if !self.in_block_scalar && i_ends_in_comment(self.out.len()) {
            self.out.push_str(" # after");
        }
    }
}

/// Now and then a comment after a block collection (it is not part of it).
fn i_ends_in_comment(len: usize) -> bool {
    len.is_multiple_of(3)
}

fn render(d: &Doc) -> Render {
    let mut r = Render::default();
    match d {
        Doc::Seq(_) | Doc::Map(_) => r.block(d, 0),
        Doc::Block(..) | Doc::Anchored(_) => {
            let wrapped = Doc::Map(vec![("top", d.clone())]);
            r.block(&wrapped, 0);
        }
        _ => r.flow(d),
    }
    r.out.push('\n');
    r
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_documents_span_what_was_written(d in doc()) {
        let r = render(&d);
        let root = parse(&r.out).map_err(|e| TestCaseError::fail(format!("{:?}: {}", r.out, e.message)))?;
        let mut got = Vec::new();
        texts(&r.out, &root, &mut got);
        let want: Vec<&str> = r.want.iter().map(|&(s, e)| &r.out[s..e]).collect();
        prop_assert_eq!(got, want, "{:?}", r.out);
    }
}
