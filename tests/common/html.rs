//! What an HTML page would fetch: every URL in a `src`, `href`, `srcset`,
//! `poster`, `data`, `action` or `formaction` attribute of an element that
//! loads it (a link, `<a href>`, is not a fetch), and every `url(…)` or
//! `@import` in its styles. A small tag scanner, enough for pages we write.
#![allow(dead_code)]

/// Attributes whose value a browser fetches (on elements other than `<a>`).
const FETCHING: &[&str] = &[
    "src",
    "href",
    "xlink:href",
    "srcset",
    "poster",
    "data",
    "action",
    "formaction",
    "background",
];

/// The remote URLs (`http:`, `https:`, protocol-relative `//`) the page
/// would fetch.
pub fn remote_fetches(html: &str) -> Vec<String> {
    let remote = |v: &str| {
        let v = v.trim().to_ascii_lowercase();
        v.starts_with("http:") || v.starts_with("https:") || v.starts_with("//")
    };
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..end];
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == ':')
            .collect::<String>()
            .to_ascii_lowercase();
        for (attr, value) in attributes(tag) {
            if FETCHING.contains(&attr.as_str())
                && !(name == "a" && attr == "href")
                && remote(&value)
            {
                found.push(format!("<{name} {attr}=\"{value}\">"));
            }
        }
        rest = &rest[end.min(rest.len())..];
    }
    let lower = html.to_ascii_lowercase();
    for pat in ["url(", "@import"] {
        let mut at = 0;
        while let Some(i) = lower[at..].find(pat) {
            let start = at + i + pat.len();
            let value: String = lower[start..]
                .trim_start_matches([' ', '"', '\''])
                .chars()
                .take(40)
                .collect();
            if remote(&value) {
                found.push(format!("{pat}{value}"));
            }
            at = start;
        }
    }
    found
}

/// `(name, value)` of each `name="value"` or `name='value'` in a tag.
fn attributes(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let b = tag.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'=' && i + 1 < b.len() && (b[i + 1] == b'"' || b[i + 1] == b'\'') {
            let q = b[i + 1];
            let name_end = i;
            let mut s = name_end;
            while s > 0 && !b[s - 1].is_ascii_whitespace() {
                s -= 1;
            }
            let v_start = i + 2;
            let v_end = tag[v_start..]
                .find(q as char)
                .map_or(tag.len(), |e| v_start + e);
            out.push((
                tag[s..name_end].to_ascii_lowercase(),
                tag[v_start..v_end].to_owned(),
            ));
            i = v_end + 1;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_fetches_not_links() {
        let page = r#"<a href="https://example.com">ok</a><img src="https://x/y.png"><link rel="stylesheet" href='//cdn/x.css'><style>body{background:url( "http://z/b.png")}</style><script src="app.js"></script>"#;
        let found = remote_fetches(page);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].contains("img src"));
        assert!(found[1].contains("link href"));
        assert!(found[2].starts_with("url(http://z"));
    }
}
