//! The files shipped inside the binary, as (stem, text) in the order of
//! their file names:
//! `POLICIES` from `policies/*.yaml` (the presets) and `FAULTS` from
//! `faults/*.yaml` (the fault scenarios). build.rs writes the table; this is
//! its one copy, so the presets, the fault loader and the exporter read the
//! same files.

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// The text of the shipped fault scenario `name`, if there is one.
pub fn fault(name: &str) -> Option<&'static str> {
    find(FAULTS, name)
}

/// The text of the shipped preset `name`, if there is one.
pub fn policy(name: &str) -> Option<&'static str> {
    find(POLICIES, name)
}

fn find(table: &'static [(&str, &str)], name: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tables_are_found_by_stem() {
        assert!(!POLICIES.is_empty() && !FAULTS.is_empty());
        assert!(fault("total-outage").is_some());
        assert_eq!(fault("no-such-scenario"), None);
        assert_eq!(policy(POLICIES[0].0), Some(POLICIES[0].1));
    }
}
