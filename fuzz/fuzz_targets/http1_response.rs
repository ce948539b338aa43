//! Fuzz target: see `retrylint_fuzz::http1_response` for what it feeds and checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrylint_fuzz::http1_response(data));
