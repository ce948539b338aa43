//! A test whose real tool (curl, wget, chromium, kubectl, prlimit) is not on
//! the machine does not run, and says so where a person sees it: on the
//! terminal, past the harness's capture of passing tests' output.
//! `RETRYLINT_REQUIRE_TOOLS=1` (set by `.ci/run`) makes that a failure, so CI
//! can never skip them in silence.

use std::io::Write;

/// The variable that turns a missing tool into a failing test.
pub const REQUIRE: &str = "RETRYLINT_REQUIRE_TOOLS";

/// Reports that `test` did not run because `tool` is missing (`install` says
/// how to get it); panics instead when [`REQUIRE`] is `1`.
pub fn tool_missing(test: &str, tool: &str, install: &str) {
    let why = format!("{tool} is not installed ({install})");
    if std::env::var_os(REQUIRE).is_some_and(|v| v == "1") {
        panic!("{test}: {why}, and {REQUIRE}=1 requires it");
    }
    // `eprintln!` would be captured and shown only if the test failed.
    let _ = writeln!(
        std::io::stderr(),
        "NOT RUN {test}: {why}; set {REQUIRE}=1 to make this a failure"
    );
}
