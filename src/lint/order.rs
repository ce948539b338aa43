//! Every rule's findings in one list: the topology's own first, then each
//! source file's, each by line, column and code; at one place, a rule's
//! findings in the order it gave them. Repeats are dropped.

use super::finding::Finding;
use crate::topology::Topology;

/// A finding's place, packed in one number so that tens of thousands sort
/// fast: from the top, its file's rank (24 bits), line and column (32 each),
/// then 40 bits left for the rule and the index in the rule's list. The
/// topology's own file ranks 0; an imported file 1 until the files are ranked
/// by name.
type Key = u128;

/// Files past this many (imports are refused long before) share the last rank.
const FILE_RANKS: usize = 1 << 24;

fn place(file: usize, line: u32, column: u32) -> Key {
    let file = file.min(FILE_RANKS - 1) as u128;
    file << 104 | u128::from(line) << 72 | u128::from(column) << 40
}

/// One rule's findings and their places.
#[derive(Default)]
pub(super) struct Placed {
    keys: Vec<Key>,
    findings: Vec<Finding>,
}

impl Placed {
    /// Places `findings` where they are made (on the rule's thread, while
    /// they are still in its cache): reading tens of thousands of findings
    /// again later costs more than the merge itself.
    pub(super) fn new(t: &Topology, findings: Vec<Finding>) -> Placed {
        let keys = findings
            .iter()
            .map(|f| place(usize::from(f.file != t.file), f.line, f.column))
            .collect();
        Placed { keys, findings }
    }
}

/// The rules' lists, in the catalogue's order (which is the codes' order),
/// merged in file order.
///
/// Only the keys are sorted (a rule's list is nearly always in order
/// already), and each finding, some 200 bytes with tens of thousands on a
/// large topology, is moved once: from its list straight to its place.
pub(super) fn in_file_order(per_rule: Vec<Placed>) -> Vec<Finding> {
    // Imported files rank after the topology's own, by name; only their
    // findings are looked at again.
    let mut others: Vec<&str> = per_rule
        .iter()
        .flat_map(|p| p.keys.iter().zip(&p.findings))
        .filter(|(k, _)| **k >> 104 != 0)
        .map(|(_, f)| f.file.as_str())
        .collect();
    others.sort_unstable();
    others.dedup();
    let others: Vec<String> = others.into_iter().map(str::to_owned).collect();
    let total = per_rule.iter().map(|p| p.findings.len()).sum();
    // Every finding's place, then its rule, then its index in the rule's
    // list: no two are equal, and ties at one place go to the earlier rule,
    // then to the rule's own order.
    let mut places: Vec<Key> = Vec::with_capacity(total);
    let mut lists = Vec::with_capacity(per_rule.len());
    for (rule, Placed { mut keys, findings }) in per_rule.into_iter().enumerate() {
        if !others.is_empty() {
            for (k, f) in keys
                .iter_mut()
                .zip(&findings)
                .filter(|(k, _)| **k >> 104 != 0)
            {
                let rank = 1 + others
                    .binary_search_by(|o| o.as_str().cmp(&f.file))
                    .unwrap_or_else(|i| i);
                *k = place(rank, f.line, f.column);
            }
        }
        lists.push(if keys.is_sorted() {
            List::InOrder(findings.into_iter())
        } else {
            List::Anywhere(findings.into_iter().map(Some).collect())
        });
        let rule = (rule as u128) << 32;
        places.extend(
            keys.into_iter()
                .enumerate()
                .map(|(i, k)| k | rule | i as u128),
        );
    }
    // No two keys are equal (each holds its rule and index): the unstable
    // sort gives the one order there is.
    places.sort_unstable();
    let mut out: Vec<Finding> = Vec::with_capacity(total);
    let mut last = None;
    for key in places {
        let (rule, i) = ((key >> 32) as u8 as usize, key as u32 as usize);
        let Some(f) = lists[rule].take(i) else {
            continue;
        };
        // A repeat is at the same place, from the same rule, as the finding
        // before it.
        let at = key >> 32;
        if last == Some(at) && out.last() == Some(&f) {
            continue;
        }
        last = Some(at);
        out.push(f);
    }
    out
}

/// A rule's findings, taken one by one in file order.
enum List {
    /// Already in order: taken front to back.
    InOrder(std::vec::IntoIter<Finding>),
    /// Taken from anywhere.
    Anywhere(Vec<Option<Finding>>),
}

impl List {
    /// The `i`th finding; a list in order is asked for its findings in turn.
    fn take(&mut self, i: usize) -> Option<Finding> {
        match self {
            List::InOrder(findings) => findings.next(),
            List::Anywhere(findings) => findings.get_mut(i)?.take(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::finding::Severity;

    fn finding(code: &'static str, file: &str, line: u32, message: &str) -> Finding {
        Finding {
            code,
            rule: "",
            severity: Severity::Warning,
            message: message.into(),
            help: String::new(),
            service: "s".into(),
            call: None,
            layer: None,
            file: file.into(),
            line,
            column: 1,
            fix: None,
            label: String::new(),
        }
    }

    fn topology() -> Topology {
        crate::topology::load_str(
            "version: 1\nentry: a\nservices:\n  a: {}\n",
            "top.yaml",
            "top",
            &crate::topology::Presets::embedded(),
        )
        .expect("valid")
    }

    /// What one stable sort of everything, then dropping repeats, gives.
    fn one_stable_sort(t: &Topology, per_rule: &[Vec<Finding>]) -> Vec<Finding> {
        let mut want: Vec<Finding> = per_rule.iter().flatten().cloned().collect();
        want.sort_by(|a, b| {
            (a.file != t.file, &a.file, a.line, a.column, a.code).cmp(&(
                b.file != t.file,
                &b.file,
                b.line,
                b.column,
                b.code,
            ))
        });
        want.dedup();
        want
    }

    fn merged(t: &Topology, per_rule: Vec<Vec<Finding>>) -> Vec<Finding> {
        in_file_order(per_rule.into_iter().map(|f| Placed::new(t, f)).collect())
    }

    #[test]
    fn findings_are_merged_in_file_order_as_one_stable_sort_would() {
        let t = topology();
        let per_rule = vec![
            // In order, with a repeat, and one in an imported file.
            vec![
                finding("RL001", "top.yaml", 3, "x"),
                finding("RL001", "top.yaml", 3, "x"),
                finding("RL001", "mesh/a.yaml", 1, "m"),
                finding("RL001", "top.yaml", 9, "y"),
            ],
            // Out of order, two at one place in the order given.
            vec![
                finding("RL002", "top.yaml", 7, "second"),
                finding("RL002", "top.yaml", 2, "first"),
                finding("RL002", "top.yaml", 7, "third"),
                finding("RL002", "b.yaml", 1, "b"),
            ],
            Vec::new(),
        ];
        // What one stable sort of everything, then dropping repeats, gives.
        let want = one_stable_sort(&t, &per_rule);
        let got = merged(&t, per_rule);
        let shown = |f: &[Finding]| -> Vec<String> {
            f.iter()
                .map(|f| format!("{}:{} {} {}", f.file, f.line, f.code, f.message))
                .collect()
        };
        assert_eq!(shown(&got), shown(&want));
        assert_eq!(
            shown(&got)[..3],
            [
                "top.yaml:2 RL002 first",
                "top.yaml:3 RL001 x",
                "top.yaml:7 RL002 second"
            ]
        );
        assert_eq!(got.len(), 7, "the repeat is dropped");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x0bde_0001),
            ..Default::default()
        })]

        /// Any lists, one rule's each, in or out of order, with repeats and
        /// several files: the merge is the stable sort's result.
        #[test]
        fn any_lists_merge_as_one_stable_sort_would(
            lists in proptest::collection::vec(
                proptest::collection::vec((0usize..3, 1u32..6, 0usize..3), 0..12),
                0..5,
            )
        ) {
            const CODES: [&str; 5] = ["RL001", "RL002", "RL003", "RL004", "RL005"];
            const FILES: [&str; 3] = ["top.yaml", "b.yaml", "a.yaml"];
            let t = topology();
            let per_rule: Vec<Vec<Finding>> = lists
                .iter()
                .enumerate()
                .map(|(r, list)| {
                    list.iter()
                        .map(|&(file, line, message)| {
                            finding(CODES[r], FILES[file], line, ["x", "y", "z"][message])
                        })
                        .collect()
                })
                .collect();
            let want = one_stable_sort(&t, &per_rule);
            proptest::prop_assert_eq!(merged(&t, per_rule), want);
        }
    }
}
