//! `check --fix --diff`: the change as a unified diff, through `similar` (the
//! diff library insta already brings in, so it costs no new crate in the
//! build; a hand-written diff would need its own Myers implementation and
//! tests for hunks, context and a missing final newline).
//!
//! Patience diff, not similar's default Myers: a topology repeats the same
//! lines in every service (`method: GET`), and fixes change thousands of
//! them, where Myers' cost grows with the product of the file's length and
//! the number of changes (11–14 s on a 10,000-service file). Patience anchors
//! on the lines written once (each service's key) and diffs between them
//! (about 2 s for that whole `--fix --diff`); on every file the tests and
//! examples fix, and on that one, its diff is the same as Myers'.

/// A unified diff from `old` to `new`, both named `file` (apply with
/// `patch -p0` or `git apply -p0`); empty when they are equal.
pub fn unified(file: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(file, file)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_with_context() {
        let old = "a: 1\nb: 2\nc: 3\n";
        let new = "a: 1\nb: 9\nc: 3\n";
        assert_eq!(
            unified("t.yaml", old, new),
            "--- t.yaml\n+++ t.yaml\n@@ -1,3 +1,3 @@\n a: 1\n-b: 2\n+b: 9\n c: 3\n"
        );
        assert_eq!(unified("t.yaml", old, old), "");
    }

    /// `old` with the hunks of `diff` applied, as `patch` applies them.
    fn patched(old: &str, diff: &str) -> String {
        let old: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0;
        for line in diff.split_inclusive('\n').skip(2) {
            if let Some(hunk) = line.strip_prefix("@@ -") {
                let start: usize = hunk
                    .split([',', ' '])
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("a hunk header");
                while at + 1 < start {
                    out.push_str(old[at]);
                    at += 1;
                }
            } else if let Some(kept) = line.strip_prefix(' ') {
                out.push_str(kept);
                at += 1;
            } else if line.starts_with('-') {
                at += 1;
            } else if let Some(added) = line.strip_prefix('+') {
                out.push_str(added);
            }
        }
        out.extend(old[at..].iter().copied());
        out
    }

    #[test]
    fn repeated_lines_changed_in_many_places_diff_line_for_line() {
        let service = |i: usize, attempts: usize| {
            format!(
                "  s{i}:\n    calls:\n      - to: db\n        method: GET\n        retry: {{ max_attempts: {attempts} }}\n"
            )
        };
        let old: String = (0..300).map(|i| service(i, 3)).collect();
        let new: String = (0..300)
            .map(|i| service(i, if i % 3 == 0 { 1 } else { 3 }))
            .collect();
        let diff = unified("t.yaml", &old, &new);
        assert_eq!(patched(&old, &diff), new);
        let removed = diff.lines().filter(|l| l.starts_with("-  ")).count();
        let added = diff.lines().filter(|l| l.starts_with("+  ")).count();
        assert_eq!(
            (removed, added),
            (100, 100),
            "one line out, one in, per change"
        );
    }
}
