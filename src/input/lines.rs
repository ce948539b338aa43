//! A source text split into numbered lines once: the reporters' snippets
//! and the review page's excerpts look up thousands of lines of one file.

/// A source split into lines once, so that reporting thousands of findings
/// does not scan the file once per finding.
pub struct Lines<'a> {
    source: &'a str,
    /// Where each line ends: its `\n`, or the end of the text for a last
    /// line without one. One word per line, not a slice: a large file has
    /// hundreds of thousands.
    ends: Vec<usize>,
}

impl<'a> Lines<'a> {
    /// As `str::lines` (a `\r` before a line's `\n` is not part of it), one
    /// search for the line breaks.
    pub fn new(source: &'a str) -> Self {
        let breaks = memchr::memchr_iter(b'\n', source.as_bytes());
        let mut ends = Vec::with_capacity(breaks.clone().count() + 1);
        ends.extend(breaks);
        if ends.last().map_or(0, |end| end + 1) < source.len() {
            ends.push(source.len());
        }
        Lines { source, ends }
    }

    /// The text of 1-based `line`; empty when there is no such line.
    pub fn get(&self, line: u32) -> &'a str {
        let Some(i) = (line as usize).checked_sub(1) else {
            return "";
        };
        let Some(&end) = self.ends.get(i) else {
            return "";
        };
        let start = i.checked_sub(1).map_or(0, |before| self.ends[before] + 1);
        let line = &self.source[start..end];
        // `\r\n` ends a line; a last line's own `\r` is its text.
        if end < self.source.len() {
            line.strip_suffix('\r').unwrap_or(line)
        } else {
            line
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lines;

    #[test]
    fn lines_are_those_of_str_lines() {
        for text in [
            "",
            "a",
            "a\n",
            "a\r\nb",
            "a\n\nb\n",
            "\r\n",
            "a\r",
            "a\r\r\nb\r",
            "\n\n",
        ] {
            let want: Vec<&str> = text.lines().collect();
            let lines = Lines::new(text);
            let got: Vec<&str> = (1..=want.len() as u32).map(|i| lines.get(i)).collect();
            assert_eq!(got, want, "{text:?}");
            assert_eq!(
                lines.get(want.len() as u32 + 1),
                "",
                "{text:?}: past the end"
            );
        }
    }
}
