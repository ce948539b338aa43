//! GitHub suggestions for a pull request: the fixes of the findings on lines
//! the change touches, each as the lines of the current file it rewrites and
//! what to write instead — what a reviewer pastes into a ```` ```suggestion ````
//! block of a review comment on those lines.
//!
//! "Changed" is a line diff of the file against its version before the
//! change (`report --base`), through `similar` as `check --fix --diff` does.
//! GitHub takes a suggestion only on lines the pull request's diff shows (a
//! hunk: the changed lines and 3 lines of context around them), so a
//! suggestion whose lines leave every hunk is not made; the fix is still in
//! the findings. The fix is the finding's own (`finding.fix`, byte edits in
//! the current text), made on the whole lines it touches and nothing else.

use similar::{DiffTag, TextDiff};

use crate::fix::apply;
use crate::lint::Edit;
use crate::lint::Finding;

/// Lines of context around a change in the diff GitHub shows.
const CONTEXT: usize = 3;

/// The suggestions of one file against its base.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestions {
    /// The base file, as given (`base.yaml`).
    pub base: String,
    /// Lines of the current file that differ from the base.
    pub(crate) changed_lines: usize,
    /// In line order.
    pub(crate) items: Vec<Suggestion>,
}

/// Replace lines `line..=end_line` of `file` with `text`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Suggestion {
    pub file: String,
    /// 1-based, inclusive.
    pub line: u32,
    pub(crate) end_line: u32,
    /// The lines with the fix made, without the final line break (empty when
    /// the fix removes the lines).
    pub text: String,
    /// The findings it fixes (two rules may propose one edit).
    pub findings: Vec<Fixed>,
}

/// A finding a suggestion fixes.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixed {
    pub code: &'static str,
    pub rule: &'static str,
    pub line: u32,
    /// The fix in words (`set jitter: full on …`).
    pub description: String,
}

/// The suggestions for `findings` of the file `file`, whose text is `head`
/// now and was `base` before the change (`base_name` names it).
pub fn suggest(
    base_name: &str,
    base: &str,
    file: &str,
    head: &str,
    findings: &[Finding],
) -> Suggestions {
    let lines = Lines::new(head);
    let diff = TextDiff::from_lines(base, head);
    let mut changed = vec![false; lines.count()];
    for op in diff.ops() {
        if op.tag() != DiffTag::Equal {
            for i in op.new_range() {
                if let Some(c) = changed.get_mut(i) {
                    *c = true;
                }
            }
        }
    }
    // The new-side line ranges of the hunks GitHub shows.
    let hunks: Vec<std::ops::Range<usize>> = diff
        .grouped_ops(CONTEXT)
        .iter()
        .filter_map(|group| {
            let start = group.first()?.new_range().start;
            let end = group.last()?.new_range().end;
            Some(start..end)
        })
        .collect();
    let mut items: Vec<Suggestion> = Vec::new();
    for f in findings {
        let on_changed_line = f.file == file
            && (f.line as usize)
                .checked_sub(1)
                .is_some_and(|i| changed.get(i).copied().unwrap_or(false));
        if !on_changed_line {
            continue;
        }
        let Some(fix) = &f.fix else { continue };
        if fix.refused.is_some() || fix.edits.is_empty() || fix.edits.iter().any(|e| e.file != file)
        {
            continue;
        }
        let Some((first, last)) = lines.span(&fix.edits) else {
            continue;
        };
        if !hunks.iter().any(|h| h.start <= first && last < h.end) {
            continue;
        }
        let Some(text) = rewrite(head, &lines, first, last, &fix.edits) else {
            continue;
        };
        let fixed = Fixed {
            code: f.code,
            rule: f.rule,
            line: f.line,
            description: fix.description.clone(),
        };
        let (line, end_line) = (first as u32 + 1, last as u32 + 1);
        match items
            .iter_mut()
            .find(|s| s.line == line && s.end_line == end_line && s.text == text)
        {
            Some(same) => same.findings.push(fixed),
            None => items.push(Suggestion {
                file: file.to_owned(),
                line,
                end_line,
                text,
                findings: vec![fixed],
            }),
        }
    }
    items.sort_by_key(|s| (s.line, s.end_line));
    Suggestions {
        base: base_name.to_owned(),
        changed_lines: changed.iter().filter(|c| **c).count(),
        items,
    }
}

/// Lines `first..=last` (0-based) of `head` with `edits` made, without the
/// final line break; `None` if an edit leaves those lines or cannot be made.
fn rewrite(head: &str, lines: &Lines, first: usize, last: usize, edits: &[Edit]) -> Option<String> {
    let from = lines.start(first);
    let to = lines.end(last);
    if edits
        .iter()
        .any(|e| (e.start as usize) < from || e.end as usize > to)
    {
        return None;
    }
    let local: Vec<Edit> = edits
        .iter()
        .map(|e| Edit {
            start: e.start - from as u32,
            end: e.end - from as u32,
            ..e.clone()
        })
        .collect();
    let mut text = apply(&head[from..to], &local).ok()?;
    if head[from..to].ends_with('\n') && text.ends_with('\n') {
        text.pop();
    }
    Some(text)
}

/// Where the lines of a text start.
struct Lines {
    starts: Vec<usize>,
    len: usize,
}

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        // A final line break ends the last line; it starts none.
        if starts.len() > 1 && *starts.last().unwrap() == text.len() {
            starts.pop();
        }
        Lines {
            starts,
            len: text.len(),
        }
    }

    fn count(&self) -> usize {
        self.starts.len()
    }

    fn start(&self, line: usize) -> usize {
        self.starts[line]
    }

    /// Just past the line's break (or the end of the text).
    fn end(&self, line: usize) -> usize {
        self.starts.get(line + 1).copied().unwrap_or(self.len)
    }

    /// The line holding byte `at` (0-based).
    fn of(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at).saturating_sub(1)
    }

    /// The first and last line (0-based) a suggestion of `edits` replaces.
    /// Whole lines inserted at the start of a line belong to the line
    /// before (a key added after a mapping's last entry: that entry's line
    /// and the new ones); a range that ends at a line's start ends on the
    /// line before (its break is the last byte it takes).
    fn span(&self, edits: &[Edit]) -> Option<(usize, usize)> {
        let mut span: Option<(usize, usize)> = None;
        for e in edits {
            let (start, end) = (e.start as usize, e.end as usize);
            if end > self.len || start > end {
                return None;
            }
            let at_line_start = |b: usize| b > 0 && self.starts.binary_search(&b).is_ok();
            let (first, last) = if start == end {
                let line = self.of(start);
                if at_line_start(start) && e.text.ends_with('\n') {
                    (line - 1, line - 1)
                } else {
                    (line, line)
                }
            } else if at_line_start(end) {
                (self.of(start), self.of(end - 1))
            } else {
                (self.of(start), self.of(end))
            };
            span = Some(match span {
                Some((a, b)) => (a.min(first), b.max(last)),
                None => (first, last),
            });
        }
        span
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::edit_at as edit;
    use crate::lint::EditKind;

    #[test]
    fn lines_and_spans() {
        let text = "a: 1\nb:\n  c: 2\nd: 3\n";
        let l = Lines::new(text);
        assert_eq!(l.count(), 4);
        assert_eq!((l.of(0), l.of(4), l.of(5), l.of(19)), (0, 0, 1, 3));
        // A value replaced: its line.
        assert_eq!(l.span(&[edit(EditKind::Replace, 3, 4, "9")]), Some((0, 0)));
        // A key inserted as a line before `d:`: the line before it.
        assert_eq!(
            l.span(&[edit(EditKind::Insert, 15, 15, "  e: 4\n")]),
            Some((2, 2))
        );
        // A line removed with its break: that line only.
        assert_eq!(l.span(&[edit(EditKind::Remove, 8, 15, "")]), Some((2, 2)));
        let fixed = rewrite(
            text,
            &l,
            2,
            2,
            &[edit(EditKind::Insert, 15, 15, "  e: 4\n")],
        );
        assert_eq!(fixed.as_deref(), Some("  c: 2\n  e: 4"));
        let removed = rewrite(text, &l, 2, 2, &[edit(EditKind::Remove, 8, 15, "")]);
        assert_eq!(removed.as_deref(), Some(""));
        // An edit outside the lines is not made.
        assert_eq!(
            rewrite(text, &l, 0, 0, &[edit(EditKind::Replace, 8, 9, "x")]),
            None
        );
    }

    const BASE: &str = "version: 1\nname: a\nentry: web\nservices:\n  web:\n    calls:\n      - to: api\n        timeout: 1s\n  api:\n    latency: 10ms\n  db:\n    latency: 10ms\n";

    fn findings(text: &str) -> Vec<Finding> {
        let presets = crate::topology::Presets::embedded();
        let (_, report) = crate::fix::check_text(
            text,
            "t.yaml",
            "t",
            &presets,
            &crate::lint::CliLevels::default(),
        )
        .unwrap();
        report
            .findings
            .into_iter()
            .filter(|f| f.code == "RL011")
            .collect()
    }

    #[test]
    fn a_finding_on_a_changed_line_is_suggested_and_others_are_not() {
        // The change adds the call web -> db without a timeout, on line 9.
        let head = BASE.replace(
            "        timeout: 1s\n",
            "        timeout: 1s\n      - to: db\n",
        );
        let found = findings(&head);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].line, 9);
        let s = suggest("b.yaml", BASE, "t.yaml", &head, &found);
        assert_eq!(s.changed_lines, 1);
        assert_eq!(s.items.len(), 1);
        let item = &s.items[0];
        assert_eq!((item.line, item.end_line), (9, 9));
        assert_eq!(item.text, "      - to: db\n        timeout: 15ms");
        assert_eq!(item.findings[0].code, "RL011");
        // The same finding on a line the change leaves alone: nothing.
        assert!(
            suggest("b.yaml", &head, "t.yaml", &head, &found)
                .items
                .is_empty()
        );
        // A finding of another file, or a refused fix: nothing.
        let mut other = found.clone();
        other[0].file = "u.yaml".into();
        assert!(
            suggest("b.yaml", BASE, "t.yaml", &head, &other)
                .items
                .is_empty()
        );
        let mut refused = found.clone();
        refused[0].fix.as_mut().unwrap().refused = Some("a preset's value".into());
        assert!(
            suggest("b.yaml", BASE, "t.yaml", &head, &refused)
                .items
                .is_empty()
        );
    }

    #[test]
    fn a_fix_outside_the_diff_github_shows_is_not_suggested() {
        // Only line 2 changes; the fix inserts after line 9, more than 3
        // lines of context away, where a review comment cannot go.
        let head = BASE.replace("name: a", "name: b").replace(
            "        timeout: 1s\n",
            "        timeout: 1s\n      - to: db\n",
        );
        let base = BASE.replace(
            "        timeout: 1s\n",
            "        timeout: 1s\n      - to: db\n",
        );
        let mut found = findings(&head);
        assert_eq!(found[0].line, 9);
        found[0].line = 2;
        let s = suggest("b.yaml", &base, "t.yaml", &head, &found);
        assert_eq!(s.changed_lines, 1);
        assert!(s.items.is_empty());
    }

    #[test]
    fn a_last_line_without_a_break() {
        let text = "a: 1\nb: 2";
        let l = Lines::new(text);
        assert_eq!(l.count(), 2);
        assert_eq!(l.span(&[edit(EditKind::Replace, 8, 9, "3")]), Some((1, 1)));
        assert_eq!(
            rewrite(text, &l, 1, 1, &[edit(EditKind::Replace, 8, 9, "3")]).as_deref(),
            Some("b: 3")
        );
    }
}
