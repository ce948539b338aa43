//! A block read in two halves against one read of the whole: wherever the
//! halves are joined, the tree is the one one read builds, positions and spans
//! included; where they cannot be, they are not; and where a half fails, one
//! read fails too.

use proptest::prelude::*;

use super::fast::FastScanner;
use super::split::{self, Halves, Split};
use super::*;

#[allow(clippy::duplicate_mod)]
#[path = "../../../tests/common/generate.rs"]
mod generate;

/// One read of the whole text on the fast path.
fn whole(text: &str) -> Result<Node, SyntaxError> {
    let scanner = FastScanner::new(text).expect("plain text");
    parse_fast(text, scanner, Mode::Config)
}

/// The text read in two halves cut at `cut`.
fn halves(text: &str, cut: Split) -> Halves {
    let scanner = FastScanner::new(text).expect("plain text");
    split::parse(text, scanner, Mode::Config, cut)
}

/// The line the second half starts with.
fn line_at(text: &str, cut: Split) -> &str {
    text[cut.at()..].lines().next().unwrap_or_default()
}

#[test]
fn a_topology_read_in_two_halves_is_the_tree_one_read_builds() {
    let text = generate::random_dag(300, 3, 7);
    // After the block: a key of the root, the root's span reaching it.
    let with_tail = format!("{text}# after\nx-after:\n  a: [1, 2]\n");
    for text in [&text, &with_tail] {
        let one = whole(text).expect("parses");
        for fraction in [0.0, 0.1, 0.5, 0.9, 1.0] {
            let Some(cut) = split::find(text, fraction) else {
                if fraction == 1.0 {
                    // No entry starts past the end of the block.
                    continue;
                }
                panic!("{fraction}: not cut");
            };
            assert!(
                line_at(text, cut).starts_with("  s") && line_at(text, cut).ends_with(':'),
                "{fraction}: cut at {:?}",
                line_at(text, cut)
            );
            let Halves::Joined(two) = halves(text, cut) else {
                panic!("{fraction}: not joined")
            };
            assert!(two == one, "{fraction}: the trees differ");
        }
    }
}

#[test]
fn a_cut_is_where_each_half_starts_with_an_entry() {
    // The first entry is `a`, so the earliest cut is at `b`; `b`'s value ends
    // with an empty `c:` and `d:` is empty at the end of the block.
    let text = "head: 1\nblock:\n  a: 1\n  # c\n\n  b:\n    - x\n    - c:\n  d:\n";
    let at = |fraction| split::find(text, fraction).map(|cut| line_at(text, cut).to_owned());
    assert_eq!(at(0.0).as_deref(), Some("  b:"));
    assert_eq!(at(0.6).as_deref(), Some("  d:"));
    assert_eq!(at(1.0), None);
    for fraction in [0.0, 0.6] {
        let cut = split::find(text, fraction).expect("cut");
        assert!(halves(text, cut) == Halves::Joined(whole(text).expect("parses")));
    }
}

#[test]
fn what_a_cut_cannot_see_is_not_cut() {
    let base = "x: &d {p: 1}\nblock:\n  a:\n    <<: *d\n  b: 2\n  c: 3\n";
    assert!(
        split::find(base, 0.5).is_some(),
        "an alias to the head is read"
    );
    let declined = [
        // An anchor inside the block: the other half could not see it.
        "block:\n  a: &x 1\n  b: *x\n  c: 3\n",
        // A merge at the block's own level: its entries go last.
        "x: &d {p: 1}\nblock:\n  a: 1\n  <<: *d\n  c: 3\n",
        // A block that is a list, one at column 1.
        "block:\n  - a\n  - b\n  - c\n",
        "block:\na: 1\nb: 2\n",
        // An anchor or a comment on the block's key.
        "block: &all\n  a: 1\n  b: 2\n  c: 3\n",
        "block: # here\n  a: 1\n  b: 2\n  c: 3\n",
        // The block is not the larger part of the file.
        "block:\n  a: 1\n  b: 2\nother: [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n",
    ];
    for text in declined {
        assert_eq!(split::find(text, 0.5), None, "{text:?}");
    }
    // What the fast path gives up on is cut, and a half fails.
    let failing = [
        "block:\n  ? a\n  : 1\n  b: 2\n  c: 3\n",
        "block:\n  a: 1\n  ? b\n  : 2\n  c: 3\n",
        "block:\n    a: 1\n  b: 2\n    c: 3\n",
    ];
    for text in failing {
        let cut = split::find(text, 0.5).expect("cut");
        assert_eq!(halves(text, cut), Halves::Failed, "{text:?}");
    }
}

#[test]
fn halves_that_cannot_be_joined_are_not() {
    let text = generate::random_dag(300, 3, 7);
    let cut = split::find(&text, 0.5).expect("cut");
    let late = line_at(&text, cut).to_owned();
    let early = "  s1:";
    assert!(text.contains("  s1:\n") && late != early);
    // A key in both halves: one read reports it; the halves are not joined.
    let twice = text.replacen(
        &format!("{late}\n"),
        &format!("{late}\n    x: 1\n{early}\n"),
        1,
    );
    // Each case, and what its halves come to: read, but not joined as one
    // read would join them; or failed, as one read on the fast path fails.
    let cases = [
        (twice, Halves::Unjoined),
        // An error, and a give-up, in the second half.
        (
            text.replacen(&format!("{late}\n"), &format!("{late}\n    x: [1\n"), 1),
            Halves::Failed,
        ),
        (
            text.replacen(
                &format!("{late}\n"),
                &format!("{late}\n    x: |\n      y\n"),
                1,
            ),
            Halves::Failed,
        ),
        // A key that is not a string.
        (
            text.replacen(&format!("{late}\n"), "  7:\n", 1),
            Halves::Unjoined,
        ),
        // An alias to an anchor after the block.
        (
            text.replacen(&format!("{late}\n"), &format!("{late}\n    x: *later\n"), 1)
                + "z: &later 1\n",
            Halves::Failed,
        ),
    ];
    for (text, want) in &cases {
        let cut = split::find(text, 0.5).expect("still cut");
        assert_eq!(&halves(text, cut), want, "{}", line_at(text, cut));
        if *want == Halves::Failed {
            assert!(whole(text).is_err(), "one read fails too");
        }
    }
    let e = whole(&cases[0].0).expect_err("a repeated key");
    assert!(e.message.contains("duplicate"), "{}", e.message);
}

#[test]
fn a_large_file_is_parsed_in_two_halves_when_there_are_cores() {
    // Over 1 MB: `parse_config` takes the split path on two cores or more,
    // and its tree is the one read's.
    let text = generate::random_dag(2_000, 3, 7);
    assert!(text.len() >= 1 << 20, "{} bytes", text.len());
    assert!(split::find(&text, 0.5).is_some());
    assert!(parse_config(&text).expect("parses") == whole(&text).expect("parses"));
}

/// A random value as a block entry's (indented by `indent`).
fn entry_value(y: &fast_tests::Y, indent: usize) -> String {
    let text = fast_tests::render(&fast_tests::Y::Map(vec![("k", y.clone())]));
    text.lines()
        .map(|l| format!("{}{l}\n", " ".repeat(indent)))
        .collect()
}

/// [`split::column_one_lines`] as a plain walk over every line.
fn column_one_lines_walked(b: &[u8]) -> Vec<usize> {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', b).map(|i| i + 1))
        .filter(|&at| at < b.len() && !matches!(b[at], b' ' | b'#' | b'\n'))
        .collect()
}

#[test]
fn column_one_lines_at_span_edges() {
    // A line start on either side of each 256-byte span's edge, and at the end.
    for len in [0, 1, 2, 255, 256, 257, 511, 512, 513, 700] {
        for at in 0..len {
            for c in [b'\n', b' ', b'#', b'a'] {
                let mut b = vec![b' '; len];
                b[at] = b'\n';
                if at + 1 < len {
                    b[at + 1] = c;
                }
                let got: Vec<usize> = split::column_one_lines(&b).collect();
                assert_eq!(
                    got,
                    column_one_lines_walked(&b),
                    "len {len}, break at {at}, then {c}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn column_one_lines_are_those_a_walk_finds(
        text in prop::collection::vec(prop::sample::select(b"\n #a:".to_vec()), 0..1500),
    ) {
        let got: Vec<usize> = split::column_one_lines(&text).collect();
        prop_assert_eq!(got, column_one_lines_walked(&text));
    }

    #[test]
    fn random_blocks_joined_are_the_whole(
        values in prop::collection::vec(fast_tests::y(), 2..10),
        odd in prop::option::of((fast_tests::y(), any::<prop::sample::Index>())),
        fraction in 0.0..1.0f64,
        tail in any::<bool>(),
    ) {
        // Entries the fast path reads whole, without anchors of their own;
        // perhaps one that is anything, where it falls.
        let mut entries: Vec<String> = values
            .iter()
            .map(|y| entry_value(y, 4))
            .filter(|e| !e.contains('&') && FastScanner::new(e).is_some() && whole(e).is_ok())
            .collect();
        if let Some((y, at)) = odd {
            entries.insert(at.index(entries.len() + 1), entry_value(&y, 4));
        }
        let mut text = String::from("head: &h {a: 1}\nblock:\n");
        for (i, entry) in entries.iter().enumerate() {
            text.push_str(&format!("  e{i}:\n{entry}"));
        }
        if tail {
            text.push_str("tail: *h\n");
        }
        if FastScanner::new(&text).is_none() {
            return Ok(());
        }
        let Some(cut) = split::find(&text, fraction) else {
            return Ok(());
        };
        let one = whole(&text);
        match halves(&text, cut) {
            Halves::Joined(two) => {
                prop_assert!(one.as_ref().ok() == Some(&two), "{}\n{:?}", text, one);
            }
            // What lets a failed half skip the one-piece fast read.
            Halves::Failed => prop_assert!(one.is_err(), "{}", text),
            Halves::Unjoined => {}
        }
    }
}
