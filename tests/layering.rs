//! Every import points down (#30): the library's top-level modules are
//! layers, lowest first, and a module may only name the modules below it —
//! in a `use`, in a path in the code (`crate::run::Arrival`), or through
//! `super::super` out of its own module. The test reads `src/**/*.rs` as
//! text, comments and literals blanked, and names the file and line of
//! every reference that points up.
//!
//! The binary (`main.rs`, `cli/`) sits on top of the whole library and is
//! not read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The layers, lowest first. A new top-level module must be placed here.
const LAYERS: &[&str] = &[
    // Helpers with no import of the project.
    "visible",
    "large",
    "stop_signal",
    "memory_limits",
    // The ground floor: backoff, budgets, breakers, Retry-After.
    "policy",
    // The located YAML tree (the crate `retrylint-yaml`, below every module
    // here, re-exported as `input::yaml`), durations, rates, lines, errors.
    "input",
    // Mesh, gateway and gRPC configuration, read into policy values.
    "external",
    // The topology file, merged with what `external` read.
    "topology",
    // The static figures.
    "prediction",
    // Fault scenarios: plain data about what to do to a request.
    "faults",
    // The rules; a finding states its fix as an intent.
    "lint",
    // What a run means and its plain results.
    "run",
    // The simulator, in virtual time.
    "sim",
    // The chaos harness, `serve` and its admin port and metrics.
    "chaos",
    // Manifests for `serve` processes: DNS names, admin paths, the token.
    "export",
    // Resolving intents into edits, re-checking, judging by simulation.
    "fix",
    // A real client measured, its policy linted with fixes.
    "probe",
    // The review page's data.
    "review",
    // The formats.
    "formats",
];

/// A reference that points up, for the failure message.
#[derive(Debug, PartialEq)]
struct Up {
    file: String,
    line: usize,
    from: String,
    to: String,
}

#[test]
fn every_import_points_down() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let declared = top_level_modules(&std::fs::read_to_string(root.join("lib.rs")).unwrap());
    let layers: HashSet<&str> = LAYERS.iter().copied().collect();
    let mut unplaced: Vec<&String> = declared
        .iter()
        .filter(|m| !layers.contains(m.as_str()))
        .collect();
    unplaced.sort();
    assert!(
        unplaced.is_empty(),
        "modules of lib.rs missing from LAYERS: {unplaced:?}"
    );
    let gone: Vec<&&str> = LAYERS
        .iter()
        .filter(|m| !declared.iter().any(|d| d == *m))
        .collect();
    assert!(
        gone.is_empty(),
        "LAYERS names modules lib.rs lacks: {gone:?}"
    );

    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let mut up = Vec::new();
    let mut read = 0;
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap();
        let Some(module) = module_path(rel) else {
            continue;
        };
        read += 1;
        up.extend(violations(file, &module, &declared));
    }
    assert!(
        read > 100,
        "read only {read} files under {}",
        root.display()
    );
    let lines: Vec<String> = up
        .iter()
        .map(|u| {
            format!(
                "{}:{}: `{}` names `{}`, which is above it",
                u.file, u.line, u.from, u.to
            )
        })
        .collect();
    assert!(
        lines.is_empty(),
        "imports that point up (layers, lowest first: {}):\n{}",
        LAYERS.join(", "),
        lines.join("\n")
    );
}

/// The checker finds what it must and nothing in comments or literals.
#[test]
fn the_checker_sees_uses_paths_groups_and_escaping_supers() {
    let declared: Vec<String> = LAYERS.iter().map(|s| s.to_string()).collect();
    let module = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let text = "\
use crate::run::Arrival;
use crate::{policy::Rng, sim, input};
// crate::formats in a comment
/* crate::formats, /* nested */ crate::review */
fn f() -> &'static str { let _c = '{'; \"crate::formats {\" }
fn g() { crate::chaos::run(); }
mod tests {
    use super::super::super::review::Side;
    use super::super::x;
}
const R: &str = r#\"crate::probe \"# ;
pub(in crate::fix) fn h() {}
fn q() { let _ = ('\\'', '\\\\', b'{', \"}\"); crate::probe::x(); }
";
    let found = scan(text, &module(&["faults", "plan"]), &declared);
    let got: Vec<(usize, &str)> = found.iter().map(|(l, m)| (*l, m.as_str())).collect();
    assert_eq!(
        got,
        [
            (1, "run"),
            (2, "policy"),
            (2, "sim"),
            (2, "input"),
            (6, "chaos"),
            (8, "review"),
            (12, "fix"),
            (13, "probe"),
        ]
    );
    // From `faults`, run, sim, chaos, review, fix and probe are above.
    let ups = ups("src/faults/plan.rs", "faults", &found);
    let to: Vec<&str> = ups.iter().map(|u| u.to.as_str()).collect();
    assert_eq!(to, ["run", "sim", "chaos", "review", "fix", "probe"]);
}

/// The top-level modules `lib.rs` declares.
fn top_level_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_owned())
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file of the library (`faults/plan.rs` is
/// `faults::plan`); `None` for the crate roots and the binary's files.
fn module_path(rel: &Path) -> Option<Vec<String>> {
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.len() == 1 && matches!(parts[0].as_str(), "lib.rs" | "main.rs") {
        return None;
    }
    if parts[0] == "cli" {
        return None;
    }
    let mut path: Vec<String> = parts
        .iter()
        .map(|p| p.strip_suffix(".rs").unwrap_or(p).to_owned())
        .collect();
    if path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    Some(path)
}

/// The references of `file` (in `module`) that point up, those of files it
/// includes with `#[path]` counted as its own.
fn violations(file: &Path, module: &[String], declared: &[String]) -> Vec<Up> {
    let text = std::fs::read_to_string(file).unwrap();
    let shown = file
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(file)
        .display()
        .to_string();
    let mut up = ups(&shown, &module[0], &scan(&text, module, declared));
    for (name, target) in path_includes(&text) {
        let included = file.parent().unwrap().join(target);
        let mut inner = module.to_vec();
        inner.push(name);
        up.extend(violations(&included, &inner, declared));
    }
    up
}

/// `#[path = "…"] mod name;` in `text`: the module's name and the path.
fn path_includes(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.strip_prefix("#[path = \"") else {
            continue;
        };
        let Some(target) = rest.strip_suffix("\"]") else {
            continue;
        };
        let Some(decl) = lines[i + 1..].iter().find(|l| !l.starts_with("#[")) else {
            continue;
        };
        let decl = decl.strip_prefix("pub ").unwrap_or(decl);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
            out.push((name.trim().to_owned(), target.to_owned()));
        }
    }
    out
}

/// Of `found` in a file of top-level module `from`, those above it.
fn ups(file: &str, from: &str, found: &[(usize, String)]) -> Vec<Up> {
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let Some(own) = rank(from) else {
        return Vec::new();
    };
    found
        .iter()
        .filter(|(_, to)| rank(to).is_some_and(|r| r > own))
        .map(|(line, to)| Up {
            file: file.to_owned(),
            line: *line,
            from: from.to_owned(),
            to: to.clone(),
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Path,
    Open,
    Close,
    Comma,
    Other,
}

/// Every top-level module (of `declared`, other than the file's own) that
/// `text`, the source of a file in `module`, names: with its line.
fn scan(text: &str, module: &[String], declared: &[String]) -> Vec<(usize, String)> {
    let tokens = tokens(&blank(text));
    let top = |name: &str| declared.iter().any(|d| d == name) && name != module[0];
    let mut found = Vec::new();
    // Inline `mod x { … }` deepen the path; each entry is the brace depth
    // its block closes at.
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let (line, ref t) = tokens[i];
        let prev = i.checked_sub(1).map(|p| &tokens[p].1);
        match t {
            Token::Open => depth += 1,
            Token::Close => {
                depth = depth.saturating_sub(1);
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
            }
            Token::Ident(m)
                if m == "mod"
                    && matches!(tokens.get(i + 1), Some((_, Token::Ident(_))))
                    && matches!(tokens.get(i + 2), Some((_, Token::Open))) =>
            {
                inline.push(depth);
            }
            Token::Ident(root)
                if (root == "crate" || root == "retrylint")
                    && prev != Some(&Token::Path)
                    && tokens.get(i + 1).map(|t| &t.1) == Some(&Token::Path) =>
            {
                for name in named_after(&tokens, i + 2) {
                    if top(&name) {
                        found.push((line, name));
                    }
                }
            }
            Token::Ident(s) if s == "super" && prev != Some(&Token::Path) => {
                let mut k = 0;
                let mut j = i;
                while matches!(&tokens.get(j), Some((_, Token::Ident(s))) if s == "super")
                    && tokens.get(j + 1).map(|t| &t.1) == Some(&Token::Path)
                {
                    k += 1;
                    j += 2;
                }
                // Out of the file's top-level module: at the crate root.
                if k > 0 && k >= module.len() + inline.len() {
                    for name in named_after(&tokens, j) {
                        if top(&name) {
                            found.push((line, name));
                        }
                    }
                }
                i = j.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The names a path continues with at `at`: one identifier, or the first
/// identifier of every item of a `{ … }` group.
fn named_after(tokens: &[(usize, Token)], at: usize) -> Vec<String> {
    match tokens.get(at) {
        Some((_, Token::Ident(name))) => vec![name.clone()],
        Some((_, Token::Open)) => {
            let mut names = Vec::new();
            let mut depth = 0;
            let mut first = true;
            for (_, t) in &tokens[at..] {
                match t {
                    Token::Open => {
                        depth += 1;
                        if depth > 1 {
                            first = false;
                        }
                    }
                    Token::Close => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Token::Comma if depth == 1 => first = true,
                    Token::Ident(name) if depth == 1 && first => {
                        names.push(name.clone());
                        first = false;
                    }
                    _ => {
                        if depth == 1 {
                            first = false;
                        }
                    }
                }
            }
            names
        }
        _ => Vec::new(),
    }
}

/// Identifiers, `::`, braces and commas of `text`, each with its line.
fn tokens(text: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push((line, Token::Ident(word.trim_start_matches('$').to_owned())));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((line, Token::Path));
            i += 2;
        } else {
            out.push((
                line,
                match c {
                    '{' => Token::Open,
                    '}' => Token::Close,
                    ',' => Token::Comma,
                    _ => Token::Other,
                },
            ));
            i += 1;
        }
    }
    out
}

/// `text` with comments and string and character literals replaced by
/// spaces, line breaks kept.
fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let keep = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(i + k).copied();
        // A literal's prefix is part of a word only when it starts one.
        let word_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if at(0) == Some('/') && at(1) == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
                out.push(' ');
            }
        } else if at(0) == Some('/') && at(1) == Some('*') {
            let mut nest = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    nest += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    nest -= 1;
                    out.push_str("  ");
                    i += 2;
                    if nest == 0 {
                        break;
                    }
                } else {
                    keep(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if !word_before && raw_string_at(&c, i).is_some() {
            let (open, hashes) = raw_string_at(&c, i).unwrap();
            for _ in 0..open {
                out.push(' ');
            }
            i += open;
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while i < c.len() && !c[i..].starts_with(&close) {
                keep(&mut out, c[i]);
                i += 1;
            }
            for _ in 0..close.len().min(c.len() - i) {
                out.push(' ');
            }
            i += close.len();
        } else if c[i] == '"' || (!word_before && c[i] == 'b' && at(1) == Some('"')) {
            if c[i] == 'b' {
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' && i + 1 < c.len() {
                    keep(&mut out, c[i]);
                    i += 1;
                }
                keep(&mut out, c[i]);
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\''
            && (at(1) == Some('\\') || (at(2) == Some('\'') && at(1) != Some('\'')))
        {
            // A character literal (a lifetime has no closing quote).
            out.push(' ');
            i += 1;
            if c[i] == '\\' {
                // The escaped character, which may be a quote.
                out.push_str("  ");
                i += 2;
            }
            while i < c.len() && c[i] != '\'' {
                keep(&mut out, c[i]);
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// At a raw string (`r"`, `r#"`, `br##"` …): the length of its opening and
/// its number of `#`.
fn raw_string_at(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((j + 1 - i, hashes))
}
