//! With `autotests = false`, cargo runs only the files a test binary
//! declares: a test file nobody declared would never run, in silence.

use std::collections::BTreeSet;

/// The `mod NAME;` lines of a binary's root file.
fn declared(root: &str) -> BTreeSet<String> {
    std::fs::read_to_string(root)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_test_file_is_a_module_of_exactly_one_binary() {
    let main = declared("tests/main.rs");
    let real_time = declared("tests/real_time.rs");
    let files: BTreeSet<String> = std::fs::read_dir("tests")
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().ok()?;
            let stem = name.strip_suffix(".rs")?.to_owned();
            (stem != "main" && stem != "real_time").then_some(stem)
        })
        .collect();
    assert!(files.len() > 50, "{files:?}");
    for f in &files {
        assert!(
            main.contains(f) != real_time.contains(f),
            "tests/{f}.rs must be declared (`mod {f};`) in exactly one of tests/main.rs and tests/real_time.rs"
        );
    }
    for m in main.iter().chain(&real_time) {
        assert!(
            m == "common" || files.contains(m),
            "`mod {m};` names no file in tests/"
        );
    }
    assert!(main.contains("common") && real_time.contains("common"));
}
