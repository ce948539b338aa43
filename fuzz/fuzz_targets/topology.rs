//! Fuzz target: see `retrylint_fuzz::topology` for what it feeds and checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrylint_fuzz::topology(data));
