//! The event-built tree against serde-saphyr's (`parse_via_serde`): the same tree,
//! or an error at the same place, on every YAML file in the repository, generated
//! topologies, hand-written corner cases and random documents.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;

#[path = "../../../tests/common/generate.rs"]
mod generate;

#[test]
fn keeps_positions() {
    let n = parse("a:\n  b: [1, x]\n  c: {d: 2.5}\n").unwrap();
    let Value::Map(m) = &n.value else { panic!() };
    assert_eq!(m[0].0.pos, Pos { line: 1, column: 1 });
    let Value::Map(inner) = &m[0].1.value else {
        panic!()
    };
    assert_eq!(inner[0].0.pos, Pos { line: 2, column: 3 });
    let Value::Seq(s) = &inner[0].1.value else {
        panic!()
    };
    assert_eq!(
        s[1].pos,
        Pos {
            line: 2,
            column: 10
        }
    );
}

#[test]
fn errors() {
    for t in ["a: [", "a: *x", "\u{0}\u{1}\u{ff}", "a: 1\na: 2"] {
        let e = parse(t).unwrap_err();
        assert!(e.message.contains(" at line "), "{t:?} -> {}", e.message);
    }
    let e = parse("a: 1\na: 2").unwrap_err();
    assert_eq!(e.pos, Pos { line: 2, column: 1 });
    assert!(
        e.message.starts_with("duplicate mapping key: a at line"),
        "{}",
        e.message
    );
}

/// What kind of error a message reports, for comparing the two parsers.
#[derive(Debug, PartialEq)]
enum Class {
    Duplicate,
    Depth,
    Budget,
    Other,
}

fn class(message: &str) -> Class {
    if message.starts_with("duplicate mapping key") {
        Class::Duplicate
    } else if message.contains("recursion limit") || message.contains("Depth") {
        Class::Depth
    } else if message.contains("budget breached") || message.contains("alias replay") {
        Class::Budget
    } else {
        Class::Other
    }
}

/// The old parser recurses on the stack; give it room for deep inputs.
fn old(text: &str) -> Result<Node, SyntaxError> {
    let text = text.to_owned();
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || parse_via_serde(&text))
        .unwrap()
        .join()
        .unwrap()
}

/// The first place two trees differ, as a path.
fn first_difference(a: &Node, b: &Node, path: &str) -> Option<String> {
    if a.pos != b.pos {
        return Some(format!("{path}: pos {:?} vs {:?}", a.pos, b.pos));
    }
    match (&a.value, &b.value) {
        (Value::Seq(x), Value::Seq(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items vs {}", x.len(), y.len()));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]")))
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() {
                let keys = |m: &Vec<(Node, Node)>| {
                    m.iter()
                        .map(|(k, _)| format!("{:?}", k.value))
                        .collect::<Vec<_>>()
                };
                return Some(format!("{path}: keys {:?} vs {:?}", keys(x), keys(y)));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, ((k1, v1), (k2, v2)))| {
                    first_difference(k1, k2, &format!("{path}{{key {i}}}"))
                        .or_else(|| first_difference(v1, v2, &format!("{path}{{{:?}}}", k1.value)))
                })
        }
        (Value::Float(x), Value::Float(y)) if x.to_bits() == y.to_bits() => None,
        (x, y) if x == y && !matches!(x, Value::Float(_)) => None,
        (x, y) => Some(format!("{path}: {x:?} vs {y:?}")),
    }
}

/// Both parsers agree on `text`: the same tree, or errors of the same kind at the
/// same place (budget errors may stop at a different node).
fn agree_with(text: &str, old: Result<Node, SyntaxError>) -> Result<(), String> {
    let new = parse(text);
    match (new, old) {
        (Ok(n), Ok(o)) => match first_difference(&n, &o, "") {
            None => Ok(()),
            Some(d) => Err(format!("trees differ at {d}\n--- input:\n{text}")),
        },
        (Err(n), Err(o)) => {
            let (cn, co) = (class(&n.message), class(&o.message));
            if cn != co {
                return Err(format!(
                    "error kinds differ:\n new {:?} {}\n old {:?} {}\n--- input:\n{text}",
                    n.pos, n.message, o.pos, o.message
                ));
            }
            if n.pos != o.pos && cn != Class::Budget {
                return Err(format!(
                    "error positions differ:\n new {:?} {}\n old {:?} {}\n--- input:\n{text}",
                    n.pos, n.message, o.pos, o.message
                ));
            }
            Ok(())
        }
        (Ok(_), Err(o)) => Err(format!(
            "only the old parser fails: {:?} {}\n--- input:\n{text}",
            o.pos, o.message
        )),
        (Err(n), Ok(_)) => Err(format!(
            "only the new parser fails: {:?} {}\n--- input:\n{text}",
            n.pos, n.message
        )),
    }
}

fn agree(text: &str) -> Result<(), String> {
    agree_with(text, old(text))
}

#[track_caller]
fn assert_agree(text: &str) {
    if let Err(e) = agree(text) {
        panic!("{e}");
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
    assert!(files.len() > 30, "{} files", files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(parse(&text).is_ok(), "{}", f.display());
        if let Err(e) = agree(&text) {
            panic!("{}: {e}", f.display());
        }
    }
}

#[test]
fn generated_topologies() {
    // The 10,000-service case takes most of a minute in a debug build: it
    // runs in release (`cargo test --release`) or with RETRYLINT_LARGE_TESTS=1.
    let large = !cfg!(debug_assertions) || std::env::var_os("RETRYLINT_LARGE_TESTS").is_some();
    let sizes: &[(usize, u64)] = if large {
        &[(1, 1), (2, 2), (50, 3), (1_000, 7), (10_000, 7)]
    } else {
        &[(1, 1), (2, 2), (50, 3), (1_000, 7)]
    };
    for &(n, seed) in sizes {
        let text = generate::random_dag(n, 3, seed);
        let new = parse(&text).unwrap();
        let old = old(&text).unwrap();
        if let Some(d) = first_difference(&new, &old, "") {
            panic!("{n} services: {d}");
        }
    }
}

/// Corner cases found while reading serde-saphyr, each as a document.
const CASES: &[&str] = &[
    // Aliases: every copied node at the alias.
    "a: &x {p: 1, q: [2, 3]}\nb: *x\n",
    "a: &a [1]\nb: *a\nc: *a\n",
    "a: &a x\nb: &a y\nc: *a\n",
    "x: &k key\n*k : 1\nother: 2\n",
    "x: &k key\n*k : 1\nkey: 2\n",
    "*a : 1\n",
    "a: 1\nb: *x\n",
    "s: &s\n  a: 1\n  b: *s\n",
    "s: &s {<<: *s}\n",
    "a: &a [*a]\n",
    // Merge keys.
    "d: &d\n  p: 1\n  q: 2\ns:\n  <<: *d\n  q: 3\n  r: 4\n",
    "s:\n  <<: {p: 1, q: [2]}\n  r: 4\n",
    "a: &a {p: 1}\nb: &b {q: 2, p: 3}\ns:\n  <<: [*a, *b]\n  r: 4\n",
    "a: &d {x: 1}\nb:\n  <<: *d\n  <<: {y: 2, x: 5}\n",
    "x: &x {a: 1, b: [2]}\ns:\n  <<: {<<: *x, c: 3, d: [*x, 4]}\n  e: 5\n",
    "s:\n  <<: {<<: {a: 1}, c: 3}\n",
    "x: &x {a: 1}\nm: &m {<<: *x, c: 3}\ns:\n  <<: *m\n",
    "s:\n  <<: [{a: 1}, {a: 2, b: 3}]\n  <<:\n    c: 1\n    d: 2\n",
    "s:\n  <<: ~\n  <<: []\n  a: 1\n",
    "s:\n  <<: [1]\n",
    "s:\n  <<: [[{a: 1}]]\n",
    "s:\n  <<: [~]\n",
    "s:\n  <<: {a: 1, a: 2}\n",
    "s:\n  <<: 5\n",
    "s: &s 1\nm:\n  <<: *s\n",
    "s: &s [1]\nm:\n  <<: *s\n",
    "s: &s [{a: 1}, 2]\nm:\n  <<: *s\n",
    "s: &s 1\nl: &l [*s]\nm:\n  <<: *l\n",
    "s: &s 1\nm:\n  <<: [*s]\n",
    "s:\n  !!merge <<: {a: 1}\n  \"<<\": {b: 1}\n",
    "k: &k <<\ns:\n  *k : {a: 1}\n",
    "x: &x {true: 1, 1: 2}\ns:\n  <<: *x\n  \"true\": 5\n  0x1: 6\n",
    "x: &x {~: 1, null: 2, 1.5: 3}\ns:\n  <<: *x\n  \"1.5\": 4\n  \"null\": 5\n",
    "x: &x [{a: 1}, {b: 2}]\ns: {<<: *x, a: 0}\n",
    "x: &x {a: &y {b: 1}}\ns: {<<: *y, c: *x}\n",
    "s: {<<: {a: [1, {b: 2}]}, c: 1}\n",
    "l: &l [{a: 1}]\ns: {<<: [*l, {b: 2}]}\n",
    "s: {<<: {a: .inf}, a: 1}\n",
    "s: {<<: {a: {x: 1, x: 2}}, a: 1}\n",
    "s: {<<: {a: .inf}}\n",
    "s: {<<: {a: {x: 1, x: 2}}}\n",
    "s: {<<: [{a: 1}, 5]}\n",
    "s: {<<: [{a: 1}, {b: 1, b: 2}], c: [}\n",
    "s: {<<: {a: 1, a: 2}, c: [}\n",
    "s: {<<: {b: {a: 1, a: 2}}, c: [}\n",
    "<<: {a: 1}\nb: 2\n",
    "a: &x {b: &y [1]}\nc: *y\nd: *x\n",
    "a: &x [&y 1, *y]\nb: *x\n",
    "m: &m {<<: {a: .inf}, a: 1}\nn: *m\n",
    "m: &m {a: 1}\nn: {<<: [*m, *m]}\n",
    "m: &m {<<: *m}\n",
    "m: {<<: [&m {a: 1}, *m]}\n",
    // Found by `random_documents`.
    "[]: a\n[]: a\n",
    "<<: [{k0: {k2: a, k2: a, k0: a}}]\nk9:#\n  <<: []\n  k9: x y\n",
    "<<: &a2\n  [1e999]: ~\n*a2 : a\n",
    "&a3 {<<: [{*a3 : a, *a3 : a}], k9: a}\n",
    // Duplicate keys, compared as serde-saphyr compares them.
    "1: a\n0x1: b\n",
    "1: a\n0X1: b\n",
    "true: a\n\"true\": b\n",
    "true: a\nyes: b\n",
    "~: 1\nnull: 2\n",
    "null: 1\n\"null\": 2\n",
    "1.5: 1\n\"1.5\": 2\n",
    "? [a, b]\n: 1\n? [a, b]\n: 2\n",
    "? [a, {b: 1}]\n: 1\n? [a, {b: 1}]\n: 2\n",
    "? {a: 1, b: 2}\n: 1\n? {b: 2, a: 1}\n: 2\n",
    "? [~]\n: 1\n? [null]\n: 2\n",
    "? [1]\n: 1\n? [0x1]\n: 2\n",
    "a: 1\na: [\n",
    "{a: 1, a: [}\n",
    "!!str a: 1\na: 2\n",
    "!foo a: 1\na: 2\n",
    "!!int 1: 1\n1: 2\n",
    "a,b: 1\na,b: 2\n",
    "a: &k x\nx: 1\n*k : 2\n",
    "? &k [a]\n: 1\n? *k\n: 2\n",
    "? {<<: {a: 1}, b: 2}\n: 1\n? {a: 1, b: 2}\n: 2\n",
    "? {<<: {a: 1}, b: 2}\n: 1\n? {<<: {a: 1}, b: 2}\n: 2\n",
    "? [.inf]\n: 1\n",
    "? [a, a]\n: 1\n? {a: 1, a: 2}\n: 2\n",
    // Scalars.
    "a: [-.nan, 1e999x, 0x1F, 0o17, 0b11, 012, -012, 99999999999999999999, -9999999999999999999, 18446744073709551615, -9223372036854775808, 1_000, yes, No, on, y, ~, null, Null, \"\", \"x\", 1.5, +3, -0, 0X1, 1e3, .5, 5., inf, nan, 0x_1, 1__0, _1, +0x10, -0x10, 0o, 1e, -1.5e-3, 0b2, \"1\", 0x, -0x8000000000000000, 340282366920938463463374607431768211456, 1.5_0, NULL, TRUE, tRuE, OFF, \" 1\", +.5, -5.e2, 0.0e+0, 1E5, 1_0.5, 0o8, 00, -00, +0, 1e-400, 0b1_0]\n",
    "a: .inf\n",
    "a: [.nan]\n",
    "a: -.inf\n",
    "a: 1e999\n",
    "a: '.inf'\n",
    "a: |\n  lit\n  eral\nb: >\n  fold\n  ed\nc: |-\n  x\nd: \"q\\tq\"\ne: 'it''s'\n",
    "a:\n  - x\n  -\n  - y: 1\n    z:\n",
    // Tags.
    "a: !!str 5\nb: !!int \"7\"\nc: !foo bar\nd: !!null x\n",
    "a: !!bool yes\nb: !!float 1\nc: !!str ~\nd: ! 12\ne: !!binary aGVsbG8=\ng: !!null \"\"\nh: !!int \"0x10\"\ni: !!int -5\nj: !foo 5\nk: !foo ~\nl: !!str\nm: !!float \"2.5\"\nn: !<tag:yaml.org,2002:int> 7\no: !!merge 5\np: !!value x\n",
    "a: !!timestamp 2001-12-14\n",
    "a: !!int 99999999999999999999\n",
    "a: !!int abc\n",
    "a: !!float abc\n",
    "a: !!float .inf\n",
    "a: !!bool maybe\n",
    "a: !!str [1]\n",
    "a: !!null [1]\n",
    "a: !!map [1]\n",
    "a: !!seq {}\n",
    "a: !!map 5\n",
    "a: !!binary \"aGVsbG8\"\n",
    "a: !!binary /w==\n",
    "a: !int 5\nb: !!int -0x10\nc: !!bool \"true\"\n",
    "!!str a: [!!seq [1], !!map {a: 1}, !foo {b: 2}, !!str \"x\"]\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n",
    // Documents.
    "",
    "# nothing\n",
    "---\n",
    "...\n",
    "a: 1\n...\n",
    "a: 1\n---\n",
    "a: 1\n---\nb: 2\n",
    "a: 1\n--- *x\n",
    "a: &x 1\n---\nb: *x\n",
    "a: 1\n--- !!map x\n",
    "--- a\n",
    "\u{feff}a: 1\n",
    // Malformed.
    "a: [1, 2\nb: 3\n",
    "a: \"abc\n",
    "a:\n- b\n  c: d\n",
    "\t- a\n",
    "%YAML 1.2\n%YAML 1.2\n---\na\n",
    "key: value\n- item\n",
    "a: 1\n  b: 2\n",
    "a: [\n",
    "a: {b: 1\n",
    "[a, b]: c\n",
    "- a\nb: c\n",
    "a: b: c\n",
    "&a &b x\n",
    "a: *\n",
    "a: 'x\n",
    "\u{0}\u{1}\u{ff}",
];

#[test]
fn corner_cases() {
    let failures: Vec<String> = CASES.iter().filter_map(|t| agree(t).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn nesting_limits_and_alias_bombs() {
    let open = |n| format!("{}{}\n", "[".repeat(n), "]".repeat(n));
    for text in [
        open(64),
        open(65),
        format!("a: {}", open(64)),
        format!("a: {}", open(63)),
        (0..70)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect(),
        format!("{}x\n", "- ".repeat(64)),
        format!("{}x\n", "- ".repeat(65)),
        format!(
            "a: &a {}b: {}*a{}\n",
            open(40),
            "[".repeat(30),
            "]".repeat(30)
        ),
        format!(
            "a: &a {}b: {}*a{}\n",
            open(40),
            "[".repeat(23),
            "]".repeat(23)
        ),
        format!(
            "a: &a {}b: {}*a{}\n",
            open(40),
            "[".repeat(24),
            "]".repeat(24)
        ),
        format!("a: {}\n", "[".repeat(100_000)),
    ] {
        assert_agree(&text);
    }
    // The old parser refuses these at another node, for its own budget; both refuse.
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10 {
        let prev = if i == 1 {
            "a".to_owned()
        } else {
            format!("b{}", i - 1)
        };
        bomb.push_str(&format!(
            "b{i}: &b{i} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
    }
    // Bounded by the parser's event budget (a counter), not by a clock.
    let e = parse(&bomb).unwrap_err();
    assert!(
        e.message.contains("budget breached: RecordedAnchorEvents"),
        "{}",
        e.message
    );
    assert_agree(&bomb);
}

#[test]
fn large_mappings_and_merges_stay_linear() {
    // 50,000 keys, then a merge bringing the same 50,000 again: every merged key is
    // looked up among the explicit ones, and skipped.
    let n = 50_000;
    let mut text = String::from("base: &base\n");
    for i in 0..n {
        text.push_str(&format!("  k{i}: {i}\n"));
    }
    text.push_str("copy:\n  <<: *base\n");
    for i in 0..n {
        text.push_str(&format!("  k{i}: {i}\n"));
    }
    // Linear by construction (one hash set of key fingerprints per
    // mapping); its speed is measured in `cargo bench --bench check`, not
    // timed here.
    let root = parse(&text).unwrap();
    let Value::Map(top) = &root.value else {
        panic!()
    };
    let Value::Map(copy) = &top[1].1.value else {
        panic!()
    };
    assert_eq!(copy.len(), n);
    // A duplicate at the end of a large mapping is still found.
    text.push_str("  k7: again\n");
    let e = parse(&text).unwrap_err();
    assert!(
        e.message.starts_with("duplicate mapping key: k7"),
        "{}",
        e.message
    );
}

// ---------------------------------------------------------------------------
// Random documents: a small tree rendered in block and flow styles, with anchors,
// aliases and merge keys, sometimes with one character changed.

#[derive(Debug, Clone)]
enum Y {
    S(&'static str),
    Alias(u8),
    Anchored(u8, Box<Y>),
    Tagged(&'static str, Box<Y>),
    Seq(Vec<Y>, bool),
    Map(Vec<(Y, Y)>, bool),
}

const VALUES: &[&str] = &[
    "a",
    "b",
    "x y",
    "1",
    "-2",
    "0x1F",
    "0X1",
    "012",
    "1.5",
    "1e3",
    "true",
    "yes",
    "n",
    "~",
    "null",
    "''",
    "\"\"",
    "\"1\"",
    "'true'",
    "\"a\\tb\"",
    "\"<<\"",
    "!!str 5",
    "!!int 7",
    "!!float 2",
    "!!bool no",
    "!!null x",
    "! x",
    "!foo 3",
    "-.nan",
    "18446744073709551616",
    "-0",
    "+5",
    "1_000",
    ".5",
    "1e999",
    ".inf",
    "!!int x",
    "<<",
];

const TAGS: &[&str] = &[
    "!!map", "!!seq", "!!str", "!!int", "!!null", "!foo", "!", "!!merge",
];

const KEYS: &[&str] = &[
    "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "a", "b", "1", "0x1", "true", "\"true\"", "~",
    "null", "\"a\"", "'b'", "1.5", "\"1.5\"", "<<", "<<", "!!str a", "!!int 1", "y", "''",
];

fn scalar(pool: &'static [&'static str]) -> impl Strategy<Value = Y> {
    prop::sample::select(pool).prop_map(Y::S)
}

/// Mostly `a0`..`a2`; `a3` now and then.
fn alias() -> impl Strategy<Value = Y> {
    prop_oneof![9 => 0u8..3, 1 => Just(3u8)].prop_map(Y::Alias)
}

fn key() -> impl Strategy<Value = Y> {
    prop_oneof![
        8 => scalar(KEYS),
        1 => alias(),
        1 => prop::collection::vec(scalar(VALUES), 0..3).prop_map(|v| Y::Seq(v, true)),
    ]
}

fn tree() -> impl Strategy<Value = Y> {
    let leaf = prop_oneof![
        6 => scalar(VALUES),
        2 => alias(),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            2 => (prop::collection::vec(inner.clone(), 0..5), any::<bool>())
                .prop_map(|(v, flow)| Y::Seq(v, flow)),
            4 => (prop::collection::vec((key(), inner.clone()), 0..5), any::<bool>())
                .prop_map(|(v, flow)| Y::Map(v, flow)),
            2 => ((0u8..4), inner.clone()).prop_map(|(i, y)| Y::Anchored(i, Box::new(y))),
            1 => (prop::sample::select(TAGS), inner.clone())
                .prop_map(|(t, y)| Y::Tagged(t, Box::new(y))),
            1 => (prop::collection::vec(prop_oneof![
                    alias(),
                    prop::collection::vec((key(), inner.clone()), 0..3).prop_map(|v| Y::Map(v, true)),
                ], 0..3), inner)
                .prop_map(|(merged, y)| Y::Map(
                    vec![(Y::S("<<"), Y::Seq(merged, true)), (Y::S("k9"), y)],
                    false,
                )),
        ]
    })
}

/// Rendering state: which anchors are defined so far. Aliases to `a0`..`a2` before
/// their anchor become null; `a3` is left as written, to keep some unknown
/// and recursive aliases.
#[derive(Default)]
struct Out {
    text: String,
    defined: [bool; 4],
}

impl Out {
    fn push_str(&mut self, s: &str) {
        self.text.push_str(s);
    }
    fn push(&mut self, c: char) {
        self.text.push(c);
    }
    fn alias(&mut self, i: u8) {
        if self.defined[usize::from(i)] || i == 3 {
            self.text.push_str(&format!("*a{i}"));
        } else {
            self.text.push('~');
        }
    }
}

fn flow(y: &Y, out: &mut Out) {
    match y {
        Y::S(s) => out.push_str(s),
        Y::Alias(i) => out.alias(*i),
        Y::Anchored(i, inner) => {
            out.push_str(&format!("&a{i} "));
            flow(inner, out);
            out.defined[usize::from(*i)] = true;
        }
        Y::Tagged(t, inner) => {
            out.push_str(t);
            out.push(' ');
            flow(inner, out);
        }
        Y::Seq(items, _) => {
            out.push('[');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                flow(it, out);
            }
            out.push(']');
        }
        Y::Map(entries, _) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                key_text(k, out);
                out.push(' ');
                flow(v, out);
            }
            out.push('}');
        }
    }
}

fn key_text(k: &Y, out: &mut Out) {
    flow(k, out);
    if matches!(k, Y::Alias(_)) {
        out.push(' ');
    }
    out.push(':');
}

fn is_block(y: &Y) -> bool {
    match y {
        Y::Seq(v, false) => !v.is_empty(),
        Y::Map(v, false) => !v.is_empty(),
        _ => false,
    }
}

fn pad(indent: usize, out: &mut Out) {
    out.text.extend(std::iter::repeat_n(' ', indent));
}

/// After `key:`: the value and its line end.
fn block_value(y: &Y, indent: usize, out: &mut Out) {
    match y {
        Y::Anchored(i, inner) if is_block(inner) => {
            out.push_str(&format!(" &a{i}"));
            block_value(inner, indent, out);
            out.defined[usize::from(*i)] = true;
        }
        y if is_block(y) => {
            out.push('\n');
            block_body(y, indent, out);
        }
        y => {
            out.push(' ');
            flow(y, out);
            out.push('\n');
        }
    }
}

/// A block collection's lines at `indent`.
fn block_body(y: &Y, indent: usize, out: &mut Out) {
    match y {
        Y::Seq(items, _) => {
            for it in items {
                pad(indent, out);
                out.push('-');
                block_value(it, indent + 2, out);
            }
        }
        Y::Map(entries, _) => {
            for (k, v) in entries {
                pad(indent, out);
                key_text(k, out);
                block_value(v, indent + 2, out);
            }
        }
        _ => unreachable!(),
    }
}

fn render(y: &Y) -> String {
    let mut out = Out::default();
    match y {
        y if is_block(y) => block_body(y, 0, &mut out),
        y => {
            flow(y, &mut out);
            out.push('\n');
        }
    }
    out.text
}

fn mutate(text: &str, at: usize, what: u8) -> String {
    const INSERT: &[char] = &[
        ':', '-', '[', ']', '{', '}', ',', '&', '*', '!', '"', '\'', ' ', '\n', '#', '?',
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
    // PROPTEST_CASES raises the count for a longer run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(768),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_documents(y in tree(), edit in prop::option::weighted(0.3, (any::<usize>(), any::<u8>()))) {
        let mut text = render(&y);
        if let Some((at, what)) = edit {
            text = mutate(&text, at, what);
        }
        if let Err(e) = agree(&text) {
            prop_assert!(false, "{}", e);
        }
    }
}
