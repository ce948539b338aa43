//! Running the built binary, bounded in time.

use std::time::Duration;

/// Runs `retrylint ARGS` within a minute: (exit code, stdout, stderr).
pub fn retrylint(args: &[&str]) -> (i32, String, String) {
    let out = assert_cmd::Command::cargo_bin("retrylint")
        .unwrap()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
