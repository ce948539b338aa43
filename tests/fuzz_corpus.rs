//! Replays every committed fuzz input — the minimised corpora under
//! `fuzz/corpus/<target>/`, the seeds under `fuzz/seeds/<target>/` and the
//! inputs that once crashed, under `fuzz/regressions/<target>/` — through the same harness the cargo-fuzz
//! targets call (`fuzz/src/lib.rs`), so the stable test suite keeps what an
//! hour of fuzzing per target found, without cargo-fuzz or nightly.

#[path = "../fuzz/src/lib.rs"]
mod harness;

use std::fs;
use std::path::{Path, PathBuf};

/// The committed inputs of `target`, in a fixed order: its corpus, its
/// seeds (some, like a response head over 64 KiB, are longer than the
/// fuzzer's `-max_len`), then its regressions.
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for dir in ["corpus", "seeds", "regressions"] {
        let Ok(entries) = fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        let mut here: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        here.sort();
        files.extend(here);
    }
    files
}

/// Feeds every input of `target` to `check`, naming the file that failed.
fn replay(target: &str, at_least: usize, check: fn(&[u8])) {
    let files = inputs(target);
    assert!(
        files.len() >= at_least,
        "{target}: {} committed inputs, expected at least {at_least}",
        files.len()
    );
    for file in &files {
        let data = fs::read(file).expect("read a corpus file");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{target}: {} failed", file.display());
    }
}

#[test]
fn topology_corpus_loads_or_names_a_place() {
    replay("topology", 1, harness::topology);
}

#[test]
fn fault_corpus_loads_or_names_a_place() {
    replay("faults", 1, harness::faults);
}

#[test]
fn expect_corpus_parses_or_says_why() {
    replay("expect", 1, harness::expect);
}

#[test]
fn http1_corpus_gives_a_status_or_a_broken_exchange() {
    replay("http1_response", 1, harness::http1_response);
}
