//! Running the built binary, bounded in time, and stopping it by a signal.

use std::process::{Child, Output};
use std::time::Duration;

/// Runs `retrylint ARGS` within a minute: (exit code, stdout, stderr).
pub fn retrylint(args: &[&str]) -> (i32, String, String) {
    let mut cmd = assert_cmd::Command::cargo_bin("retrylint").unwrap();
    cmd.args(args);
    output(cmd)
}

/// [`retrylint`] with `stdin` as its standard input.
pub fn retrylint_with_stdin(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut cmd = assert_cmd::Command::cargo_bin("retrylint").unwrap();
    cmd.args(args).write_stdin(stdin.as_bytes().to_vec());
    output(cmd)
}

/// [`retrylint`] bounded by `bound` instead of a minute (a chaos run
/// inside a report).
pub fn retrylint_within(args: &[&str], bound: Duration) -> (i32, String, String) {
    let mut cmd = assert_cmd::Command::cargo_bin("retrylint").unwrap();
    cmd.args(args);
    output_within(cmd, bound)
}

/// Runs `cmd` (its arguments, environment and input set) within a minute:
/// (exit code, stdout, stderr).
pub fn output(cmd: assert_cmd::Command) -> (i32, String, String) {
    output_within(cmd, Duration::from_secs(60))
}

/// [`output`] within `bound`.
pub fn output_within(mut cmd: assert_cmd::Command, bound: Duration) -> (i32, String, String) {
    let out = cmd.timeout(bound).output().unwrap();
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
