//! Running the built binary, bounded in time, and stopping it by a signal.

use std::process::{Child, Output};
use std::time::Duration;

/// Runs `retrylint ARGS` within a minute: (exit code, stdout, stderr).
pub fn retrylint(args: &[&str]) -> (i32, String, String) {
    let mut cmd = assert_cmd::Command::cargo_bin("retrylint").unwrap();
    cmd.args(args);
    output(cmd)
}

/// Runs `cmd` (its arguments, environment and input set) within a minute:
/// (exit code, stdout, stderr).
pub fn output(mut cmd: assert_cmd::Command) -> (i32, String, String) {
    let out = cmd.timeout(Duration::from_secs(60)).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Sends `signal` (`INT`, `TERM`, `HUP`) to `child` and waits for its end.
pub fn stop_with(child: Child, signal: &str) -> Output {
    let killed = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success(), "kill -{signal}");
    child.wait_with_output().unwrap()
}
