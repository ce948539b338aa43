//! Fuzz target: see `retrylint_fuzz::expect` for what it feeds and checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrylint_fuzz::expect(data));
