//! The two files every exported process reads: the topology and the fault
//! scenario, as text to ship in a ConfigMap or beside a Compose file.
//!
//! Inside the cluster they are `/etc/retrylint/topology.yaml` and
//! `/etc/retrylint/fault.yaml`, and both formats default `name:` to the file
//! stem. So a file that leaves its name to its stem gets `name:` appended
//! (appended, so every line number in an error from a pod still matches the
//! user's file), and the result is loaded again to prove it means the same.

use std::path::Path;

use crate::faults::{self, Scenario};
use crate::input::embedded;
use crate::input::read::{FileKind, read_text};
use crate::input::yaml::{self, Value};
use crate::topology::{LoadError, Presets, Topology};

use super::yaml::scalar;

/// A file to ship, and whether its text had to be changed to keep its name.
#[derive(Debug, Clone, PartialEq)]
pub struct Shipped {
    pub text: String,
    /// `name:` was appended to keep the name the file's stem gave it.
    pub named: bool,
    /// Its name could not be kept: inside the cluster it is named after the
    /// file it is shipped as.
    pub renamed: bool,
}

/// The topology's text as shipped: `t.source`, with `name:` appended when
/// the name came from the file stem.
pub fn topology_text(t: &Topology, presets: &Presets) -> Shipped {
    keep_name(&t.source, &t.name, |text| {
        crate::topology::load_str(text, &t.file, "topology", presets)
            .ok()
            .filter(|u| u.services.len() == t.services.len())
            .map(|u| u.name)
    })
}

/// The scenario `--fault NAME|PATH` and its text as shipped: a shipped
/// name's embedded YAML, or the file's. Without `--fault`, the `none`
/// scenario, so that `serve` and `drive` agree that nothing is injected
/// whatever their defaults.
pub fn fault(name_or_path: Option<&str>) -> Result<(Scenario, Shipped), LoadError> {
    let arg = name_or_path.unwrap_or("none");
    let scenario = faults::load(arg)?;
    let text = match embedded::fault(arg) {
        Some(text) => text.to_owned(),
        None => read_text(Path::new(arg), arg, FileKind::FaultScenario)?,
    };
    let shipped = keep_name(&text, &scenario.name, |text| {
        faults::load_str(text, "fault.yaml")
            .ok()
            .filter(|s| s.phases.len() == scenario.phases.len())
            .map(|s| s.name)
    });
    Ok((scenario, shipped))
}

/// `text` with `name: NAME` appended when it has no top-level `name:`, kept
/// only if `reload` reads `name` back from it.
fn keep_name(text: &str, name: &str, reload: impl Fn(&str) -> Option<String>) -> Shipped {
    let has_name = yaml::parse(text).is_ok_and(|root| match root.value {
        Value::Map(entries) => entries
            .iter()
            .any(|(k, _)| k.value == Value::Str("name".into())),
        _ => false,
    });
    if has_name {
        return Shipped {
            text: text.to_owned(),
            named: false,
            renamed: false,
        };
    }
    let sep = if text.ends_with('\n') || text.is_empty() {
        ""
    } else {
        "\n"
    };
    let appended = format!(
        "{text}{sep}# added by `retrylint export`: the file's name, which its stem gave it\nname: {}\n",
        scalar(name)
    );
    if reload(&appended).as_deref() == Some(name) {
        Shipped {
            text: appended,
            named: true,
            renamed: false,
        }
    } else {
        Shipped {
            text: text.to_owned(),
            named: false,
            renamed: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shipped_fault_goes_out_as_its_embedded_text() {
        let (s, shipped) = fault(Some("503-burst")).unwrap();
        assert_eq!(s.name, "503-burst");
        assert!(shipped.text.starts_with("name: 503-burst\n"));
        assert!(!shipped.named && !shipped.renamed);
        let (none, _) = fault(None).unwrap();
        assert_eq!(none.name, "none");
        assert!(none.phases.is_empty());
    }

    #[test]
    fn a_name_left_to_the_stem_is_appended_and_kept() {
        let t = crate::topology::load_str(
            "version: 1\nservices:\n  web: {}\n",
            "shop.yaml",
            "shop",
            &Presets::embedded(),
        )
        .unwrap();
        let shipped = topology_text(&t, &Presets::embedded());
        assert!(shipped.named);
        assert!(
            shipped
                .text
                .starts_with("version: 1\nservices:\n  web: {}\n# added")
        );
        assert!(shipped.text.ends_with("\nname: shop\n"));
        let again = crate::topology::load_str(
            &shipped.text,
            "topology.yaml",
            "topology",
            &Presets::embedded(),
        )
        .unwrap();
        assert_eq!(again.name, "shop");
    }

    #[test]
    fn a_file_that_cannot_take_a_name_is_shipped_as_it_is() {
        // A flow mapping on one line: appending a key would not parse.
        let shipped = keep_name("{ version: 1 }", "shop", |_| None);
        assert_eq!(shipped.text, "{ version: 1 }");
        assert!(shipped.renamed && !shipped.named);
    }
}
