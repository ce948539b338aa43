//! `--exclude GLOB`: shell-style patterns over the paths a directory walk
//! finds. `*` and `?` stay within a path segment, `**` crosses segments;
//! a pattern without `/` is matched against the file's name as well, so
//! `--exclude '*.golden.json'` and `--exclude 'charts/**'` both work.

use std::path::Path;

/// Whether any pattern names `path`.
pub(crate) fn excluded(patterns: &[String], path: &Path) -> bool {
    if patterns.is_empty() {
        return false;
    }
    let full = path.to_string_lossy().replace('\\', "/");
    let full = full.trim_start_matches("./");
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    patterns.iter().any(|p| {
        let p = p.trim_start_matches("./");
        matches(p.as_bytes(), full.as_bytes())
            || (p.starts_with("**/") || !p.contains('/'))
                && name.as_deref().is_some_and(|n| matches(p.trim_start_matches("**/").as_bytes(), n.as_bytes()))
            // A pattern matches a path that has it as trailing segments
            // (`templates/*` names `chart/templates/a.yaml`).
            || full
                .match_indices('/')
                .any(|(i, _)| matches(p.as_bytes(), &full.as_bytes()[i + 1..]))
    })
}

/// Glob matching with backtracking; iterative in `*`, bounded by the
/// lengths (patterns and paths are short).
fn matches(p: &[u8], s: &[u8]) -> bool {
    if let Some(rest) = p.strip_prefix(b"**") {
        let rest = rest.strip_prefix(b"/").unwrap_or(rest);
        if rest.is_empty() {
            return true;
        }
        return (0..=s.len()).any(|i| (i == 0 || s[i - 1] == b'/') && matches(rest, &s[i..]));
    }
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            let rest = &p[1..];
            let mut i = 0;
            loop {
                if matches(rest, &s[i..]) {
                    return true;
                }
                if i == s.len() || s[i] == b'/' {
                    return false;
                }
                i += 1;
            }
        }
        (Some(b'?'), Some(c)) if *c != b'/' => matches(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => matches(&p[1..], &s[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(p: &str, path: &str) -> bool {
        excluded(&[p.to_owned()], Path::new(path))
    }

    #[test]
    fn segments_names_and_double_stars() {
        assert!(ex("*.golden.json", "kuma/testdata/a.golden.json"));
        assert!(!ex("*.golden.json", "kuma/testdata/a.json"));
        assert!(ex("charts/**", "charts/x/templates/a.yaml"));
        assert!(ex("templates/*", "deploy/chart/templates/svc.yaml"));
        assert!(!ex("templates/*", "deploy/chart/templates/sub/svc.yaml"));
        assert!(ex("**/out/*.yaml", "a/b/out/r.yaml"));
        assert!(ex("k8s/a?.yaml", "k8s/ab.yaml"));
        assert!(!ex("k8s/*.yaml", "k8s/sub/ab.yaml"));
    }
}
