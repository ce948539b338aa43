//! Where each line of a text fixed in passes was in the file as written:
//! a fix planned in a later pass is found on the lines of that pass's text,
//! and `--fix` (above all `--fix --diff`, read beside the original) names it
//! on the original's lines. A line a fix inserted is named by the original
//! line it follows.

/// Per line of the current text (0-based), its line in the original (1-based).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Origin(Vec<u32>);

impl Origin {
    /// The original itself: each line is where it is.
    pub(super) fn new(text: &str) -> Self {
        Origin((1..=lines(text) as u32).collect())
    }

    /// `line` (1-based, of the current text) in the original.
    pub(super) fn of(&self, line: u32) -> u32 {
        (line as usize)
            .checked_sub(1)
            .and_then(|i| self.0.get(i).copied())
            .unwrap_or(line)
    }

    /// The map once `old` (the current text) became `new`.
    pub(super) fn after(&self, old: &str, new: &str) -> Self {
        let diff = similar::TextDiff::configure()
            .algorithm(similar::Algorithm::Patience)
            .diff_lines(old, new);
        let mut map = Vec::with_capacity(lines(new));
        for op in diff.ops() {
            let (_, old_range, new_range) = op.as_tag_tuple();
            for k in 0..new_range.len() {
                // Equal or replaced lines keep their old line; inserted ones
                // take the line before them.
                let old_index = if old_range.is_empty() {
                    old_range.start.checked_sub(1)
                } else {
                    Some((old_range.start + k).min(old_range.end - 1))
                };
                map.push(old_index.map_or(1, |i| self.of(i as u32 + 1)));
            }
        }
        Origin(map)
    }
}

fn lines(text: &str) -> usize {
    text.lines().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserted_lines_keep_later_lines_at_their_original_place() {
        let old = "a: 1\nb:\n  c: 2\nd: 3\n";
        let new = "a: 1\nb:\n  c: 2\n  x: 9\nd: 3\n";
        let o = Origin::new(old).after(old, new);
        assert_eq!(
            (1..=5).map(|l| o.of(l)).collect::<Vec<_>>(),
            [1, 2, 3, 3, 4]
        );
        // A second pass on top of the first still names the original.
        let newer = "a: 1\nz: 0\nb:\n  c: 2\n  x: 9\nd: 3\n";
        let o = o.after(new, newer);
        assert_eq!(o.of(6), 4);
        assert_eq!(o.of(2), 1);
    }
}
