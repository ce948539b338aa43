//! `check --fix --diff`: the change as a unified diff, through `similar` (the
//! diff library insta already brings in, so it costs no new crate in the
//! build; a hand-written diff would need its own Myers implementation and
//! tests for hunks, context and a missing final newline).

/// A unified diff from `old` to `new`, both named `file` (apply with
/// `patch -p0` or `git apply -p0`); empty when they are equal.
pub fn unified(file: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::from_lines(old, new)
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
}
