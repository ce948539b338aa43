//! Generated topologies for tests and benches: a random DAG of `n` services with
//! about `calls` calls each (always to later services, so it is acyclic), every
//! service merging one `defaults` anchor, every call with a timeout and a retry
//! policy. Seeded: the same arguments give the same text.
//!
//! The generator is `retrylint::policy::seeded_rng`'s (ChaCha8 from a `u64`),
//! named through `rand` so that the YAML reader's crate, which cannot depend on
//! retrylint, includes this file in its tests too.

use std::fmt::Write as _;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

pub fn random_dag(n: usize, calls: usize, seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut y = String::with_capacity(n * 640);
    y.push_str("version: 1\nname: generated\nentry: s0\n");
    y.push_str("x-defaults: &defaults\n  latency: { p50: 2ms, p99: 20ms }\n  capacity: 64\n");
    y.push_str("services:\n");
    for i in 0..n {
        writeln!(y, "  s{i}:\n    <<: *defaults\n    calls:").unwrap();
        // The chain s0 → s1 → … keeps every service reachable.
        let mut targets = Vec::new();
        if i + 1 < n {
            targets.push(i + 1);
        }
        // Later services within a window of 50; near the end there are fewer.
        let hi = n.min(i + 50);
        let wanted = calls.min(hi.saturating_sub(i + 1));
        while targets.len() < wanted {
            let t = rng.random_range(i + 1..hi);
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
        for t in targets {
            let attempts = rng.random_range(1..=3u32);
            writeln!(
                y,
                "      - to: s{t}\n        method: GET\n        timeout: 250ms\n        retry:\n          max_attempts: {attempts}\n          backoff: {{ kind: exponential, base: 10ms, cap: 200ms, jitter: full }}\n          budget: {{ kind: ratio, ratio: 0.1, min_per_second: 10 }}"
            )
            .unwrap();
        }
    }
    y
}
