//! Helm and Go templates are not configuration: `{{ .Values.x }}` is not
//! what the cluster runs, so a template is refused with the way to render
//! it, before a YAML reader misreads it or fails on its braces. Actions in
//! comments, quoted scalars and block scalars are text: rendered output
//! carries templates of its own there (Istio's injector ConfigMap,
//! Prometheus rules).

use crate::input::Pos;
use crate::input::error::{ErrorKind, LoadError};

/// The words a Go template action starts with (text/template's actions and
/// Helm's usual functions), after `{{` and an optional `-`.
const ACTIONS: &[&str] = &[
    ".",
    "$",
    "if ",
    "else",
    "end",
    "range ",
    "with ",
    "define ",
    "template ",
    "include ",
    "block ",
    "toYaml ",
    "tpl ",
    "/*",
    "required ",
    "default ",
    "printf ",
    "quote ",
];

/// An error at the first template action in `text`, if it has one.
pub fn refuse(file: &str, text: &str) -> Result<(), LoadError> {
    if !text.contains("{{") {
        return Ok(());
    }
    // The indentation of the line that opened a block scalar (`key: |`),
    // while its lines last.
    let mut block: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        if let Some(b) = block {
            if line.trim().is_empty() || indent > b {
                continue;
            }
            block = None;
        }
        if line.trim_start().starts_with('#') {
            continue;
        }
        if opens_block(line) {
            block = Some(indent);
        }
        let mut rest = line;
        let mut col = 0;
        while let Some(at) = rest.find("{{") {
            let action = rest[at + 2..].trim_start_matches('-').trim_start();
            // Inside a quoted scalar, braces are text (Prometheus'
            // `"{{ $labels.instance }}"`); a chart's actions are not all
            // quoted, so one unquoted action finds it.
            let before = &line[..col + at];
            let quoted =
                before.matches('"').count() % 2 == 1 || before.matches('\'').count() % 2 == 1;
            if !quoted && ACTIONS.iter().any(|a| action.starts_with(a)) {
                return Err(LoadError::new(
                    ErrorKind::Syntax,
                    file,
                    Some(Pos {
                        line: i as u32 + 1,
                        column: (col + at) as u32 + 1,
                    }),
                    "a Helm/Go template, not configuration: render it first",
                )
                .with_help("render the chart and read that: `helm template RELEASE CHART | retrylint check --from -` (or `--exclude 'templates/*'` to skip the chart)"));
            }
            col += at + 2;
            rest = &rest[at + 2..];
        }
    }
    Ok(())
}

/// Whether a line ends in a block scalar indicator (`key: |`, `- >-`,
/// `key: |2`): the lines indented under it are text.
fn opens_block(line: &str) -> bool {
    let t = line.split(" #").next().unwrap_or("").trim_end();
    let Some(at) = t.rfind(['|', '>']) else {
        return false;
    };
    let (before, after) = (&t[..at], &t[at + 1..]);
    (before.ends_with(": ") || before.ends_with("- ") || before.trim().is_empty() && at == 0)
        && after
            .chars()
            .all(|c| c == '-' || c == '+' || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_actions_are_refused_at_their_column() {
        let t =
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ include \"x.fullname\" . }}\n";
        let e = refuse("svc.yaml", t).unwrap_err();
        assert_eq!(e.pos, Some(Pos { line: 4, column: 9 }));
        assert!(e.message.contains("render it first"), "{e}");
        let ctl = "{{- if .Values.enabled }}\nkind: X\n{{- end }}\n";
        assert_eq!(
            refuse("x", ctl).unwrap_err().pos,
            Some(Pos { line: 1, column: 1 })
        );
    }

    #[test]
    fn braces_in_values_and_comments_are_not_templates() {
        assert!(refuse("x", "summary: \"{{ $labels.instance }} down\"\n").is_ok());
        assert!(refuse("x", "a: \"{{alert}}\"\n# {{ .Values.x }}\n").is_ok());
        // Istio's injector ConfigMap: templates inside a block scalar.
        let cm = "data:\n  config: |-\n    {{- if .Values.x }}\n    a: b\n\n    {{- end }}\nafter: {{ .Values.y }}\n";
        assert_eq!(
            refuse("x", cm).unwrap_err().pos,
            Some(Pos { line: 7, column: 8 })
        );
    }
}
