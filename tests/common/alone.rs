//! A test that measures its own process (its peak memory) cannot share
//! that process with the rest of the suite, now that the suite is one
//! binary: it runs again, by itself, in a child process of the same test
//! binary.

use std::process::Command;
use std::time::Duration;

const ALONE: &str = "RETRYLINT_TEST_ALONE";

/// True in the child, where the test's body runs. In the suite's process,
/// runs the test `path` (`module::name`) alone in a child and fails as it
/// failed; false (the caller returns).
pub fn in_own_process(path: &str) -> bool {
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args([path, "--exact", "--test-threads=1", "--nocapture"])
        .env(ALONE, "1");
    let mut cmd = assert_cmd::Command::from_std(cmd);
    let out = cmd
        .timeout(Duration::from_secs(300))
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{path} alone:\n{stdout}\n{stderr}");
    // A filter that matched nothing passes too: make sure it ran.
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "{path} did not run alone:\n{stdout}"
    );
    false
}
