//! Reading fault scenarios: the embedded `faults/NAME.yaml`, or a path. Errors
//! name file:line:column and what to write instead, like topology errors.

use std::path::Path;
use std::time::Duration;

use super::{FaultKind, Inject, KINDS, Phase, Scenario, Target, TargetAt};
use crate::input::embedded;
use crate::input::error::{ErrorKind, nearest};
use crate::input::fields::{Fields, MapView};
use crate::input::read::{FileKind, syntax_error_in};
use crate::input::yaml::{self, Node, Pos, Value};
use crate::topology::LoadError;

const TOP_KEYS: &[&str] = &["name", "description", "target", "phases"];
const PHASE_KEYS: &[&str] = &["after", "for", "inject"];

/// The names of the shipped scenarios, sorted.
pub(crate) fn embedded_names() -> impl Iterator<Item = &'static str> {
    embedded::FAULTS.iter().map(|(name, _)| *name)
}

/// A scenario by shipped name (`503-burst`) or by path (`faults/mine.yaml`).
/// A name that is not shipped is tried as a path.
pub fn load(name_or_path: &str) -> Result<Scenario, LoadError> {
    if let Some(text) = embedded::fault(name_or_path) {
        return load_str(text, &format!("faults/{name_or_path}.yaml"));
    }
    let path = Path::new(name_or_path);
    let looks_like_path = name_or_path.contains(['/', '\\'])
        || name_or_path.ends_with(".yaml")
        || name_or_path.ends_with(".yml");
    if !looks_like_path && !path.exists() {
        let err = LoadError::new(
            ErrorKind::Io,
            name_or_path,
            None,
            format!("no shipped fault scenario named `{name_or_path}` and no such file"),
        );
        return Err(match nearest(name_or_path, embedded_names()) {
            Some(n) => err.with_help(format!("did you mean `{n}`?")),
            None => err.with_help(format!(
                "shipped scenarios: {}; or pass the path of a fault file",
                embedded_names().collect::<Vec<_>>().join(", ")
            )),
        });
    }
    let shown = path.display().to_string();
    let text = crate::input::read::read_text(path, &shown, FileKind::FaultScenario)?;
    let mut s = load_str(&text, &shown)?;
    if s.name.is_empty() {
        s.name = path
            .file_stem()
            .map(|x| x.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    Ok(s)
}

/// A scenario from text; `file` is the name errors show. Without `name:` the
/// name is the file stem of `file`.
pub fn load_str(text: &str, file: &str) -> Result<Scenario, LoadError> {
    let f = Fields::new(file, text);
    let at_start = Pos { line: 1, column: 1 };
    if text.trim().is_empty() {
        return Err(
            LoadError::new(ErrorKind::Io, file, Some(at_start), "the file is empty").with_help(
                "a fault scenario has `target:` and `phases:`; see faults/503-burst.yaml",
            ),
        );
    }
    let root = yaml::parse_config(text).map_err(|e| syntax_error_in(file, text, e))?;
    let top = f.map(&root, "a fault scenario", TOP_KEYS)?;
    let stem = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match top.get("name") {
        Some(n) => f.str(n, "`name`")?.to_owned(),
        None => stem,
    };
    let description = match top.get("description") {
        Some(n) => f.str(n, "`description`")?.to_owned(),
        None => String::new(),
    };
    let target_at = top.get("target").map(|n| TargetAt {
        file: f.file.to_owned(),
        pos: n.pos,
    });
    let target = match top.get("target") {
        Some(n) => {
            let t = f.str(n, "`target`")?;
            if t.trim().is_empty() {
                return Err(f
                    .error(n.pos, "`target` is empty")
                    .with_help("name a service, or write `entry`, `leaves` or `all`"));
            }
            t.parse::<Target>().unwrap_or(Target::Leaves)
        }
        None => Target::Leaves,
    };
    let Some(phases_node) = top.get("phases") else {
        return Err(f
            .error(top.pos, "a fault scenario needs `phases:`")
            .with_help("add `phases: [ { inject: { kind: status, status: 503 } } ]`"));
    };
    let Value::Seq(items) = &phases_node.value else {
        return Err(f.expected(phases_node, "a list of phases (`- after: 1s …`)"));
    };
    let phases = items
        .iter()
        .map(|n| read_phase(f, n))
        .collect::<Result<Vec<_>, _>>()?;
    no_overlap(f, &phases, items)?;
    Ok(Scenario {
        name,
        description,
        target,
        target_at,
        phases,
    })
}

/// `after` to the end of a phase, as a message shows it.
fn stretch(p: &Phase) -> String {
    let at = crate::input::duration::format;
    match p.end() {
        Some(end) => format!("{} to {}", at(p.after), at(end)),
        None => format!("{} to the end of the run", at(p.after)),
    }
}

/// Refuses two phases in force at once: the scenario's target has one fault
/// at a time, and which one would win is nowhere written.
fn no_overlap(f: Fields, phases: &[Phase], nodes: &[Node]) -> Result<(), LoadError> {
    // An empty phase (`for: 0s`) is never in force.
    let mut order: Vec<usize> = (0..phases.len())
        .filter(|&i| phases[i].length != Some(Duration::ZERO))
        .collect();
    order.sort_by_key(|&i| (phases[i].after, i));
    // If any two overlap, two neighbours in start order do.
    for pair in order.windows(2) {
        let (first, next) = (&phases[pair[0]], &phases[pair[1]]);
        if first.end().is_none_or(|end| end > next.after) {
            let other = nodes[pair[0]].pos;
            let fix = match first.end() {
                Some(end) => format!(
                    "start this phase at {} or later, or end the other one by {}",
                    crate::input::duration::format(end),
                    crate::input::duration::format(next.after)
                ),
                None => format!(
                    "give the other phase a `for:` that ends it by {}",
                    crate::input::duration::format(next.after)
                ),
            };
            return Err(f
                .error(
                    nodes[pair[1]].pos,
                    format!(
                        "this phase ({}) overlaps the phase at {}:{}:{} ({}); the target has one fault at a time",
                        stretch(next),
                        f.file,
                        other.line,
                        other.column,
                        stretch(first)
                    ),
                )
                .with_help(fix));
        }
    }
    Ok(())
}

fn read_phase(f: Fields, node: &Node) -> Result<Phase, LoadError> {
    let m = f.map(node, "a phase", PHASE_KEYS)?;
    let after = m
        .get("after")
        .map(|n| f.duration(n, "after"))
        .transpose()?
        .unwrap_or(Duration::ZERO);
    let length = m.get("for").map(|n| f.duration(n, "for")).transpose()?;
    let Some(inject) = m.get("inject") else {
        return Err(f
            .error(node.pos, "a phase needs `inject:`")
            .with_help("add e.g. `inject: { kind: status, status: 503 }`"));
    };
    let (inject, ratio) = read_inject(f, inject)?;
    Ok(Phase {
        after,
        length,
        ratio,
        inject,
    })
}

fn read_inject(f: Fields, node: &Node) -> Result<(Inject, f64), LoadError> {
    // Check `kind` first so the allowed keys can depend on it.
    let Value::Map(entries) = &node.value else {
        return Err(f.expected(
            node,
            "a mapping for `inject:` (`{ kind: status, status: 503 }`)",
        ));
    };
    let kind_node = entries
        .iter()
        .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == "kind"))
        .map(|(_, v)| v);
    let Some(kind_node) = kind_node else {
        return Err(f
            .error(node.pos, "`inject:` needs `kind:`")
            .with_help(format!("add `kind:` with one of {}", KINDS.join(", "))));
    };
    let kind = f.str(kind_node, "`kind`")?;
    Inject::read(kind, f, node).unwrap_or_else(|| {
        let err = f.error(kind_node.pos, format!("unknown fault kind `{kind}`"));
        Err(match nearest(kind, KINDS.iter().copied()) {
            Some(n) => err.with_help(format!("did you mean `{n}`?")),
            None => err.with_help(format!("use one of {}", KINDS.join(", "))),
        })
    })
}

/// Reads an `inject:` map of kind `K`: its own keys and the shared `ratio`.
pub(super) fn read_kind<K: FaultKind>(
    f: Fields,
    node: &Node,
    wrap: fn(K) -> Inject,
) -> Result<(Inject, f64), LoadError> {
    let mut allowed = vec!["kind", "ratio"];
    allowed.extend_from_slice(K::KEYS);
    let what = format!("a `{}` fault", K::NAME);
    let m: MapView = f.map(node, &what, &allowed)?;
    let ratio = match m.get("ratio") {
        Some(n) => f.ratio(n, "ratio")?,
        None => 1.0,
    };
    // A whole-service fault has no share to roll; writing out the default
    // (`ratio: 1.0`) is harmless, anything less would be silently wrong.
    if ratio < 1.0
        && !K::PER_REQUEST
        && let Some(n) = m.get("ratio")
    {
        return Err(f
            .error(n.pos, format!("`ratio` does not apply to `{}`", K::NAME))
            .with_help(format!(
                "`{}` hits the whole service; remove `ratio`, or use `reset` or `status` for a share of requests",
                K::NAME
            )));
    }
    Ok((wrap(K::read(f, &m)?), ratio))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_scenario_loads_and_is_described() {
        let names: Vec<_> = embedded_names().collect();
        for want in [
            "503-burst",
            "total-outage",
            "latency-spike",
            "throttle-429",
            "connection-reset",
            "brownout",
            "overload",
            "flapping",
            "blackhole",
            "none",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for name in names {
            let s = load(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.name, name);
            assert!(!s.description.is_empty(), "{name} has no description");
        }
        // The baseline: outside every phase the target is healthy.
        assert!(load("none").unwrap().phases.is_empty());
        let s = load("throttle-429").unwrap();
        assert!(matches!(
            s.phases[0].inject,
            Inject::Status(crate::faults::Status {
                status: 429,
                retry_after: Some(_)
            })
        ));
    }

    #[test]
    fn reads_the_design_example() {
        let s = load_str(
            "name: 503-burst\ndescription: d\ntarget: leaves\nphases:\n  - after: 1s\n    for: 2s\n    inject:\n      kind: status\n      status: 503\n      retry_after: 1s\n      ratio: 1.0\n",
            "x.yaml",
        )
        .unwrap();
        assert_eq!(s.target, Target::Leaves);
        let p = &s.phases[0];
        assert_eq!(
            (p.after, p.length),
            (Duration::from_secs(1), Some(Duration::from_secs(2)))
        );
        assert_eq!(p.ratio, 1.0);
    }

    #[test]
    fn bad_files_name_line_column_and_fix() {
        let cases = [
            (
                "phases: [{ inject: { kind: statuz, status: 503 } }]",
                "1:28",
                "did you mean `status`",
            ),
            (
                "phases:\n  - afterr: 1s\n    inject: { kind: hang }",
                "2:5",
                "did you mean `after`",
            ),
            (
                "phases:\n  - inject: { kind: status, status: 503, ratio: 2 }",
                "2:49",
                "outside 0..=1",
            ),
            (
                "phases:\n  - after: soon\n    inject: { kind: hang }",
                "2:12",
                "not a duration",
            ),
            ("target: db", "1:1", "needs `phases:`"),
            (
                "phases: [ { inject: { status: 503 } } ]",
                "1:21",
                "needs `kind:`",
            ),
            ("phases: [", "", "invalid YAML"),
        ];
        for (text, at, says) in cases {
            let e = load_str(text, "f.yaml").unwrap_err().to_string();
            assert!(e.starts_with(&format!("f.yaml:{at}")), "{text:?} → {e}");
            assert!(e.contains(says), "{text:?} → {e}");
        }
    }

    #[test]
    fn overlapping_phases_name_both() {
        let e = load_str(
            "target: db\nphases:\n  - after: 1s\n    for: 2s\n    inject: { kind: hang }\n  - after: 2s\n    inject: { kind: status, status: 503 }\n",
            "f.yaml",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.yaml:6:5: this phase (2s to the end of the run) overlaps the phase at f.yaml:3:5 (1s to 3s); the target has one fault at a time; start this phase at 3s or later, or end the other one by 2s"
        );
        // Written out of order, and one without an end.
        let e = load_str(
            "phases:\n  - after: 5s\n    for: 1s\n    inject: { kind: hang }\n  - inject: { kind: down }\n",
            "f.yaml",
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("f.yaml:2:5: this phase (5s to 6s) overlaps the phase at f.yaml:5:5 (0s to the end of the run)"),
            "{e}"
        );
        assert!(
            e.to_string()
                .ends_with("give the other phase a `for:` that ends it by 5s"),
            "{e}"
        );
        // Touching phases and empty ones are fine.
        load_str(
            "phases:\n  - for: 1s\n    inject: { kind: hang }\n  - after: 1s\n    inject: { kind: down }\n  - after: 2s\n    for: 0s\n    inject: { kind: hang }\n",
            "f.yaml",
        )
        .unwrap();
    }

    #[test]
    fn unknown_names_suggest_a_shipped_one() {
        let e = load("503-brust").unwrap_err().to_string();
        assert!(e.contains("did you mean `503-burst`"), "{e}");
        let e = load("does/not/exist.yaml").unwrap_err().to_string();
        assert!(e.contains("no such file"), "{e}");
    }
}
