//! The presets say what their sources say, in `max_attempts` (which always counts
//! the first attempt): Istio's `attempts: 2` is 3 attempts, Polly's
//! `MaxRetryAttempts: 3` is 4, gRPC's and Resilience4j's counts are attempts.

mod common;

use std::time::Duration;

use retrylint::policy::{BackoffKind, BudgetSpec, Jitter, RetryPolicy};

fn preset(name: &str) -> RetryPolicy {
    let y = format!(
        "version: 1\nservices:\n  a: {{ calls: [ {{ to: b, timeout: 1s, retry: {name} }} ] }}\n  b: {{}}\n"
    );
    let t = common::load(&y).unwrap_or_else(|e| panic!("{name}: {e}"));
    t.services[0].calls[0].layers[0].policy.clone()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn attempts_count_the_first_one() {
    let want = [
        ("istio-default", 3),
        ("envoy-default", 2),
        ("grpc-a6-example", 4),
        ("aws-sdk-standard", 3),
        ("polly-v8-default", 4),
        ("resilience4j-default", 3),
        ("sre-book", 3),
        ("recommended", 3),
    ];
    for (name, attempts) in want {
        assert_eq!(preset(name).max_attempts, attempts, "{name}");
    }
}

#[test]
fn istio_default_is_envoys_backoff_without_a_budget() {
    let p = preset("istio-default");
    assert_eq!(p.backoff.kind, BackoffKind::Exponential);
    assert_eq!((p.backoff.base, p.backoff.cap), (ms(25), Some(ms(250))));
    assert_eq!(p.backoff.jitter, Jitter::Full);
    assert!(p.budget.is_none());
}

#[test]
fn budgets_of_the_budget_presets() {
    assert_eq!(
        preset("linkerd-budget").budget,
        Some(BudgetSpec::Ratio {
            ratio: 0.2,
            min_per_second: 10.0,
            window: Duration::from_secs(10)
        })
    );
    assert_eq!(
        preset("finagle-budget").budget,
        Some(BudgetSpec::Ratio {
            ratio: 0.2,
            min_per_second: 10.0,
            window: Duration::from_secs(10)
        })
    );
    assert!(
        matches!(preset("sre-book").budget, Some(BudgetSpec::Ratio { ratio, .. }) if ratio == 0.1)
    );
    assert_eq!(
        preset("aws-sdk-standard").budget,
        Some(BudgetSpec::TokenBucket {
            capacity: 500,
            retry_cost: 5,
            timeout_cost: 10,
            success_refund: 1
        })
    );
    assert_eq!(
        preset("grpc-a6-example").budget,
        Some(BudgetSpec::GrpcThrottling {
            max_tokens: 10.0,
            token_ratio: 0.1
        })
    );
}

#[test]
fn grpc_a6_jitters_proportionally_and_polly_waits_constantly() {
    let g = preset("grpc-a6-example");
    assert_eq!(g.backoff.jitter, Jitter::Proportional { ratio: 0.2 });
    assert_eq!((g.backoff.base, g.backoff.cap), (ms(100), Some(ms(1000))));
    let p = preset("polly-v8-default");
    assert_eq!(
        (p.backoff.kind, p.backoff.base, p.backoff.jitter),
        (BackoffKind::Constant, ms(2000), Jitter::None)
    );
    let r = preset("resilience4j-default");
    assert_eq!(
        (r.backoff.kind, r.backoff.base),
        (BackoffKind::Constant, ms(500))
    );
}

#[test]
fn overrides_change_only_what_they_name() {
    let y = "version: 1\nservices:\n  a: { calls: [ { to: b, timeout: 1s, retry: { preset: aws-sdk-standard, max_attempts: 2, backoff: { jitter: equal }, budget: { capacity: 100 } } } ] }\n  b: {}\n";
    let t = common::load(y).unwrap();
    let p = &t.services[0].calls[0].layers[0].policy;
    let base = preset("aws-sdk-standard");
    assert_eq!(p.max_attempts, 2);
    assert_eq!(p.backoff.jitter, Jitter::Equal);
    assert_eq!(
        (p.backoff.base, p.backoff.cap),
        (base.backoff.base, base.backoff.cap)
    );
    assert_eq!(
        p.budget,
        Some(BudgetSpec::TokenBucket {
            capacity: 100,
            retry_cost: 5,
            timeout_cost: 10,
            success_refund: 1
        })
    );
    assert_eq!(p.retry_on, base.retry_on);
}

#[test]
fn a_user_preset_directory_adds_and_replaces() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("presets");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("team-default.yaml"),
        "max_attempts: 2\nbackoff: { kind: constant, base: 50ms, jitter: full }\n",
    )
    .unwrap();
    let mut presets = retrylint::topology::Presets::embedded();
    presets.add_dir(&dir).unwrap();
    let y = "version: 1\nservices:\n  a: { calls: [ { to: b, timeout: 1s, retry: team-default } ] }\n  b: {}\n";
    let t = retrylint::topology::load_str(y, "t.yaml", "t", &presets).unwrap();
    assert_eq!(t.services[0].calls[0].layers[0].policy.max_attempts, 2);
    // A broken user preset is reported in its own file.
    std::fs::write(dir.join("broken.yaml"), "max_attempts: 0\n").unwrap();
    let mut presets = retrylint::topology::Presets::embedded();
    presets.add_dir(&dir).unwrap();
    let y = "version: 1\nservices:\n  a: { calls: [ { to: b, timeout: 1s, retry: broken } ] }\n  b: {}\n";
    let e = retrylint::topology::load_str(y, "t.yaml", "t", &presets).unwrap_err();
    assert!(e.file.ends_with("broken.yaml"), "{e}");
    assert_eq!(e.pos.map(|p| p.line), Some(1));
}
