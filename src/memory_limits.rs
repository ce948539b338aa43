//! The memory limits this process runs under, read at start-up so that an
//! allocation failure can name them: the binary's allocator
//! (crates/retrylint-alloc) writes this text when the allocator returns
//! nothing, just before Rust's own "memory allocation of N bytes failed".
//!
//! Only the rlimits make an allocation fail. A cgroup's `memory.max` (what a
//! container's memory limit is) does not: over it the kernel ends the process
//! with SIGKILL, and no process can report that itself.

use std::fmt::Write as _;

/// The text for an allocation failure: which limit this process runs under,
/// and what to do.
pub fn out_of_memory_message() -> String {
    let limits = limits();
    let mut text = String::from("error: retrylint ran out of memory");
    if limits.is_empty() {
        text.push_str(
            ": no address-space or data limit is set (`ulimit -v` and `ulimit -d` are unlimited), \
             so the machine itself had no more to give",
        );
    } else {
        let named: Vec<String> = limits.iter().map(Limit::describe).collect();
        let _ = write!(text, " under {}", named.join(" and "));
    }
    text.push_str(
        ".\n  help: raise the limit, or make the run smaller (a smaller topology or input, \
         fewer --trials, a shorter --duration, a lower --rate)\n",
    );
    text
}

/// One limit that is set, as `getrlimit` reports its soft value.
struct Limit {
    what: &'static str,
    bytes: u64,
}

impl Limit {
    fn describe(&self) -> String {
        format!("{} of {}", self.what, mebibytes(self.bytes))
    }
}

fn mebibytes(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(unix)]
fn limits() -> Vec<Limit> {
    use rustix::process::{Resource, getrlimit};
    [
        (
            Resource::As,
            "the address-space limit (RLIMIT_AS, `ulimit -v`)",
        ),
        (
            Resource::Data,
            "the data-segment limit (RLIMIT_DATA, `ulimit -d`)",
        ),
    ]
    .into_iter()
    .filter_map(|(resource, what)| {
        Some(Limit {
            what,
            bytes: getrlimit(resource).current?,
        })
    })
    .collect()
}

#[cfg(not(unix))]
fn limits() -> Vec<Limit> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_named_in_mebibytes_with_its_ulimit_flag() {
        let limit = Limit {
            what: "the address-space limit (RLIMIT_AS, `ulimit -v`)",
            bytes: 512 * 1024 * 1024,
        };
        assert_eq!(
            limit.describe(),
            "the address-space limit (RLIMIT_AS, `ulimit -v`) of 512 MiB"
        );
        assert_eq!(mebibytes(1000), "1000 bytes");
    }

    #[test]
    fn the_message_says_what_to_do() {
        let text = out_of_memory_message();
        assert!(
            text.starts_with("error: retrylint ran out of memory"),
            "{text}"
        );
        assert!(
            text.contains("help: raise the limit, or make the run smaller"),
            "{text}"
        );
        assert!(text.ends_with('\n'));
    }
}
