//! Replays every committed fuzz input — the minimised corpora under
//! `fuzz/corpus/<target>/`, the seeds under `fuzz/seeds/<target>/` and the
//! inputs that once crashed, under `fuzz/regressions/<target>/` — through
//! the same harness the cargo-fuzz targets call (`fuzz/src/lib.rs`), so the
//! stable test suite keeps what an hour of fuzzing per target found, without
//! cargo-fuzz or nightly.

#[path = "../fuzz/src/lib.rs"]
mod harness;

use std::fs;
use std::path::{Path, PathBuf};

/// The files of `fuzz/<dir>/<target>/`, in a fixed order.
fn files(dir: &str, target: &str) -> Vec<PathBuf> {
    let at = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(dir)
        .join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&at)
        .unwrap_or_else(|e| panic!("{}: {e}", at.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    files
}

/// Feeds every committed input of `target` to `check`: its corpus, its seeds
/// (some, like a response head over 64 KiB, are longer than the fuzzer's
/// `-max_len`), then its regressions. Names every input that failed.
fn replay(target: &str, check: fn(&[u8])) {
    let mut all = Vec::new();
    for dir in ["corpus", "seeds", "regressions"] {
        let here = files(dir, target);
        assert!(!here.is_empty(), "fuzz/{dir}/{target}/ has no input");
        all.extend(here);
    }
    let failed: Vec<String> = all
        .iter()
        .filter(|file| {
            let data = fs::read(file).expect("read a corpus file");
            std::panic::catch_unwind(|| check(&data)).is_err()
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{target}: {} of {} inputs failed (the panics are above): {}",
        failed.len(),
        all.len(),
        failed.join(", ")
    );
}

#[test]
fn topology_inputs_load_or_name_a_place() {
    replay("topology", harness::topology);
}

#[test]
fn fault_inputs_load_or_name_a_place() {
    replay("faults", harness::faults);
}

#[test]
fn expect_inputs_parse_to_finite_gates_or_say_why() {
    replay("expect", harness::expect);
}

#[test]
fn http1_inputs_give_a_final_status_or_a_broken_exchange() {
    replay("http1_response", harness::http1_response);
}
