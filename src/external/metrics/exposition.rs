//! The Prometheus text exposition format (version 0.0.4), what Envoy's admin
//! `/stats/prometheus` writes: `# HELP` and `# TYPE` lines, other comments,
//! blank lines, and samples `name{label="value",…} value [timestamp]`.
//!
//! A hand-rolled reader rather than a crate: the rest of `--from` keeps a
//! file:line:column on every value, and a malformed line must be an error
//! at its column, never a panic or a silent skip. Only what the format
//! defines is taken; the values the metrics readers use are checked there.

use crate::input::Pos;

/// At most this many samples in one file: an Envoy with thousands of
/// clusters writes some hundreds of thousands; more is not one proxy's dump.
pub(crate) const MAX_SAMPLES: usize = 2_000_000;
/// At most this many labels on one sample (Envoy writes one to three).
pub(crate) const MAX_LABELS: usize = 64;

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
    /// The start of the line (the metric name).
    pub at: Pos,
    /// The value's first character.
    pub(crate) value_at: Pos,
}

/// What is wrong with a line, for callers that tell cases apart (the
/// message is the `Display`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Problem {
    #[error("expected a metric name (letters, digits, `_` and `:`, not starting with a digit)")]
    Name,
    #[error("expected a label name")]
    LabelName,
    #[error("expected `=` after the label name")]
    Equals,
    #[error("expected a quoted label value (`\"…\"`)")]
    Quote,
    #[error("a label value that is not closed by `\"` before the end of the line")]
    Unterminated,
    #[error("an escape other than `\\\\`, `\\\"` or `\\n` in a label value")]
    Escape,
    #[error("expected `,` or `}}` after a label")]
    LabelEnd,
    #[error("more than {MAX_LABELS} labels on one sample")]
    TooManyLabels,
    #[error("expected the sample's value (a number, `NaN`, `+Inf` or `-Inf`)")]
    Value,
    #[error("expected a timestamp (whole milliseconds) or the end of the line")]
    Timestamp,
    #[error("`# TYPE` needs a metric name and one of counter, gauge, histogram, summary, untyped")]
    Type,
    #[error("more than {MAX_SAMPLES} samples in one file")]
    TooManySamples,
}

/// A problem at a line and column of the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}")]
pub struct Error {
    pub pos: Pos,
    pub(crate) problem: Problem,
}

/// Whether `text` reads as an exposition rather than YAML or JSON: its first
/// line that is not blank or a plain comment is `# HELP`/`# TYPE` or a
/// sample (`name value` or `name{…`). A YAML mapping (`key: value`) or a
/// JSON document never reads so.
pub(crate) fn looks_like(text: &str) -> bool {
    for line in text.lines().take(10_000) {
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        if l.starts_with("# HELP ") || l.starts_with("# TYPE ") {
            return true;
        }
        if l.starts_with('#') {
            continue;
        }
        let name_end = l
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(l.len());
        let name = &l[..name_end];
        if name.is_empty() || name.ends_with(':') || name.as_bytes()[0].is_ascii_digit() {
            return false;
        }
        let rest = &l[name_end..];
        return rest.starts_with('{')
            || (rest.starts_with([' ', '\t'])
                && rest.split_whitespace().next().is_some_and(is_number));
    }
    false
}

fn is_number(s: &str) -> bool {
    parse_value(s).is_some()
}

/// A sample value as the format writes it: Go's `ParseFloat` syntax, with
/// `NaN`, `+Inf` and `-Inf`.
fn parse_value(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ if s
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) =>
        {
            s.parse().ok()
        }
        _ => None,
    }
}

/// Every sample of `text`, in order.
pub(crate) fn parse(text: &str) -> Result<Vec<Sample>, Error> {
    let mut out = Vec::new();
    for (n, raw) in (1u32..).zip(text.split('\n')) {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let mut c = Cursor {
            s: line,
            i: 0,
            line: n,
        };
        c.skip_space();
        if c.done() {
            continue;
        }
        if c.peek() == Some(b'#') {
            comment(&mut c)?;
            continue;
        }
        if out.len() >= MAX_SAMPLES {
            return Err(c.error(Problem::TooManySamples));
        }
        out.push(sample(&mut c)?);
    }
    Ok(out)
}

/// `# TYPE name kind` is checked; `# HELP` and other comments are text.
fn comment(c: &mut Cursor) -> Result<(), Error> {
    let rest = c.s[c.i..].trim_start_matches('#').trim_start();
    let Some(args) = rest.strip_prefix("TYPE") else {
        return Ok(());
    };
    if !args.is_empty() && !args.starts_with([' ', '\t']) {
        return Ok(());
    }
    let mut words = args.split_whitespace();
    let ok = words.next().is_some_and(valid_name)
        && matches!(
            words.next(),
            Some("counter" | "gauge" | "histogram" | "summary" | "untyped")
        )
        && words.next().is_none();
    if ok {
        Ok(())
    } else {
        Err(c.error(Problem::Type))
    }
}

fn valid_name(w: &str) -> bool {
    let b = w.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_digit()
        && b.iter()
            .all(|&x| x.is_ascii_alphanumeric() || x == b'_' || x == b':')
}

fn sample(c: &mut Cursor) -> Result<Sample, Error> {
    let at = c.pos();
    let name = c.word(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
    if !valid_name(name) {
        return Err(Error {
            pos: at,
            problem: Problem::Name,
        });
    }
    let name = name.to_owned();
    let mut labels = Vec::new();
    c.skip_space();
    if c.peek() == Some(b'{') {
        c.i += 1;
        loop {
            c.skip_space();
            if c.peek() == Some(b'}') {
                c.i += 1;
                break;
            }
            if labels.len() >= MAX_LABELS {
                return Err(c.error(Problem::TooManyLabels));
            }
            let label = c.word(|b| b.is_ascii_alphanumeric() || b == b'_');
            if label.is_empty() || label.as_bytes()[0].is_ascii_digit() {
                return Err(c.error(Problem::LabelName));
            }
            let label = label.to_owned();
            c.skip_space();
            if c.peek() != Some(b'=') {
                return Err(c.error(Problem::Equals));
            }
            c.i += 1;
            c.skip_space();
            let value = quoted(c)?;
            labels.push((label, value));
            c.skip_space();
            match c.peek() {
                Some(b',') => c.i += 1,
                Some(b'}') => {
                    c.i += 1;
                    break;
                }
                _ => return Err(c.error(Problem::LabelEnd)),
            }
        }
    }
    c.skip_space();
    let value_at = c.pos();
    let value = parse_value(c.word(|b| !b.is_ascii_whitespace())).ok_or(Error {
        pos: value_at,
        problem: Problem::Value,
    })?;
    c.skip_space();
    if !c.done() {
        let ts_at = c.pos();
        let ts = c.word(|b| !b.is_ascii_whitespace());
        let whole = ts.strip_prefix('-').unwrap_or(ts);
        c.skip_space();
        if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) || !c.done() {
            return Err(Error {
                pos: ts_at,
                problem: Problem::Timestamp,
            });
        }
    }
    Ok(Sample {
        name,
        labels,
        value,
        at,
        value_at,
    })
}

/// A label value from its opening quote to its closing one.
fn quoted(c: &mut Cursor) -> Result<String, Error> {
    if c.peek() != Some(b'"') {
        return Err(c.error(Problem::Quote));
    }
    let open = c.pos();
    c.i += 1;
    let mut out = String::new();
    let mut chars = c.s[c.i..].char_indices();
    while let Some((k, ch)) = chars.next() {
        match ch {
            '"' => {
                c.i += k + 1;
                return Ok(out);
            }
            '\\' => match chars.next() {
                Some((_, '\\')) => out.push('\\'),
                Some((_, '"')) => out.push('"'),
                Some((_, 'n')) => out.push('\n'),
                Some((j, _)) => {
                    c.i += j;
                    return Err(c.error(Problem::Escape));
                }
                None => break,
            },
            _ => out.push(ch),
        }
    }
    Err(Error {
        pos: open,
        problem: Problem::Unterminated,
    })
}

/// A position in one line; columns count characters from 1, as the YAML
/// reader's do.
struct Cursor<'a> {
    s: &'a str,
    i: usize,
    line: u32,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn word(&mut self, keep: impl Fn(u8) -> bool) -> &'a str {
        let start = self.i;
        while self.peek().is_some_and(&keep) {
            self.i += 1;
        }
        // `keep` takes ASCII bytes only, or every byte but whitespace: the
        // end is a character boundary either way, except inside a
        // multi-byte character that `keep` took in part, which cannot
        // happen since all its bytes are non-ASCII and not whitespace.
        &self.s[start..self.i]
    }

    fn pos(&self) -> Pos {
        let column = self.s.get(..self.i).map_or(self.i, |p| p.chars().count());
        Pos {
            line: self.line,
            column: u32::try_from(column + 1).unwrap_or(u32::MAX),
        }
    }

    fn error(&self, problem: Problem) -> Error {
        Error {
            pos: self.pos(),
            problem,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envoy_lines_with_empty_braces_blank_lines_and_histograms() {
        let text = "# TYPE envoy_cluster_upstream_rq_total counter\n\
            envoy_cluster_upstream_rq_total{envoy_cluster_name=\"outbound|8080||api.default.svc.cluster.local\"} 137\n\
            \n\
            envoy_server_uptime{} 3600\n\
            envoy_h_bucket{le=\"+Inf\"} 7\n\
            up 1 1700000000000\n";
        let s = parse(text).unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(
            s[0].labels[0].1,
            "outbound|8080||api.default.svc.cluster.local"
        );
        assert_eq!(s[0].value, 137.0);
        assert_eq!(s[0].at, Pos { line: 2, column: 1 });
        assert_eq!(s[0].value_at.line, 2);
        assert!(s[1].labels.is_empty());
        assert_eq!(s[3].name, "up");
    }

    #[test]
    fn escapes_and_their_errors() {
        let s = parse("m{a=\"x\\\"y\\\\z\\n\"} 1\n").unwrap();
        assert_eq!(s[0].labels[0].1, "x\"y\\z\n");
        let e = parse("m{a=\"x\\q\"} 1\n").unwrap_err();
        assert_eq!(e.problem, Problem::Escape);
        assert_eq!(e.pos, Pos { line: 1, column: 8 });
    }

    #[test]
    fn malformed_lines_are_errors_at_their_column() {
        let cases: &[(&str, Problem, u32)] = &[
            ("m{a=\"open} 1", Problem::Unterminated, 5),
            ("m{a=1} 1", Problem::Quote, 5),
            ("m{a \"x\"} 1", Problem::Equals, 5),
            ("m{a=\"x\" b=\"y\"} 1", Problem::LabelEnd, 9),
            ("m{a=\"x\"} twelve", Problem::Value, 10),
            ("m 1 soon", Problem::Timestamp, 5),
            ("9m 1", Problem::Name, 1),
            ("# TYPE m countr", Problem::Type, 1),
        ];
        for (line, problem, column) in cases {
            let text = format!("# HELP m fine\n{line}\n");
            let e = parse(&text).unwrap_err();
            assert_eq!(&e.problem, problem, "{line}");
            assert_eq!(
                e.pos,
                Pos {
                    line: 2,
                    column: *column
                },
                "{line}"
            );
        }
    }

    #[test]
    fn labels_are_bounded() {
        let labels: Vec<String> = (0..=MAX_LABELS).map(|i| format!("l{i}=\"v\"")).collect();
        let e = parse(&format!("m{{{}}} 1\n", labels.join(","))).unwrap_err();
        assert_eq!(e.problem, Problem::TooManyLabels);
        let ok: Vec<String> = (0..MAX_LABELS).map(|i| format!("l{i}=\"v\"")).collect();
        assert_eq!(
            parse(&format!("m{{{},}} 1\n", ok.join(","))).unwrap()[0]
                .labels
                .len(),
            MAX_LABELS
        );
    }

    #[test]
    fn what_looks_like_an_exposition() {
        assert!(looks_like("# HELP x y\n"));
        assert!(looks_like("\n# a comment\nenvoy_x{} 0\n"));
        assert!(looks_like("up 1\n"));
        assert!(!looks_like("# comment\napiVersion: v1\n"));
        assert!(!looks_like("{\"status\": \"success\"}"));
        assert!(!looks_like("key: 1\n"));
        assert!(!looks_like("- a\n"));
        assert!(!looks_like(""));
    }
}
