//! The integration tests, one binary: each file of `tests/` is a module
//! here, so the crate is linked once for all of them (`cargo test --test
//! main AREA::` runs one area). The helpers they share are `common`.
//! The few that measure real time are `real_time.rs`, a binary of their own.

mod common;

mod admin_port;
mod amplification;
mod attempt_counts;
mod bad_input;
mod breaker_hedging_figures;
mod chaos_amplification;
mod chaos_bounds;
mod chaos_breakers;
mod chaos_cleanup;
mod chaos_deadline;
mod chaos_faults;
mod chaos_overload;
mod chaos_queueing;
mod chaos_reproducible;
mod cli;
mod conventions;
mod deadline_hang;
mod entries;
mod export;
mod fix;
mod fix_judged;
mod fuzz_corpus;
mod hostile;
mod large;
mod layering;
mod observed_everywhere;
mod observed_metrics;
mod observed_vs_declared;
mod presets;
mod probe_cli;
mod probe_formats;
mod probe_recorded;
mod report;
mod report_browser;
mod report_formats;
mod rules;
mod rules_page;
mod sarif_memory;
mod serve_drive;
mod sim_amplification;
mod sim_breakers;
mod sim_budget;
mod sim_determinism;
mod sim_faults;
mod sim_overload;
mod sim_queueing;
mod sim_sweep;
mod sim_vs_chaos;
mod sim_work_budget;
mod sources;
mod sources_upstream_envoy;
mod sources_upstream_grpc;
mod sources_upstream_mesh;
mod sources_upstream_traces;
mod suite_layout;
