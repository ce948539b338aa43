//! The presets say what their sources say, in `max_attempts` (which always counts
//! the first attempt): Istio's `attempts: 2` is 3 attempts, Polly's
//! `MaxRetryAttempts: 3` is 4, gRPC's and Resilience4j's counts are attempts.

use crate::common;

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
        ("istio-default-1.23", 3),
        ("envoy-default", 2),
        ("envoy-gateway-default", 3),
        ("linkerd-budget", 3),
        ("grpc-a6-example", 4),
        ("aws-sdk-standard", 3),
        ("aws-sdk-standard-2026", 3),
        ("aws-sdk-adaptive", 3),
        ("polly-v8-default", 4),
        ("resilience4j-default", 3),
        ("finagle-budget", 3),
        ("sre-book", 3),
        ("recommended", 3),
        ("go-retryablehttp", 5),
        ("urllib3-default", 4),
        ("azure-core-python", 4),
        ("kafka-producer", RetryPolicy::UNLIMITED),
        ("temporal-activity", RetryPolicy::UNLIMITED),
    ];
    for (name, attempts) in want {
        assert_eq!(preset(name).max_attempts, attempts, "{name}");
    }
    // Every shipped preset is in the list above.
    let shipped = retrylint::topology::Presets::embedded();
    let mut names: Vec<&str> = shipped.names().collect();
    let mut listed: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
    names.sort();
    listed.sort();
    assert_eq!(names, listed);
}

fn conditions(p: &RetryPolicy) -> Vec<String> {
    p.retry_on.0.iter().map(|c| c.to_string()).collect()
}

#[test]
fn istio_default_is_envoys_backoff_without_a_budget() {
    for name in [
        "istio-default",
        "istio-default-1.23",
        "envoy-gateway-default",
    ] {
        let p = preset(name);
        assert_eq!(p.backoff.kind, BackoffKind::Exponential, "{name}");
        assert_eq!(
            (p.backoff.base, p.backoff.cap),
            (ms(25), Some(ms(250))),
            "{name}"
        );
        assert_eq!(p.backoff.multiplier, 2.0, "{name}");
        assert_eq!(p.backoff.jitter, Jitter::Full, "{name}");
        assert!(!p.honor_retry_after, "{name}");
        assert!(p.budget.is_none(), "{name}");
    }
}

#[test]
fn istio_stopped_retrying_503_in_1_24_and_envoy_gateway_did_not() {
    // connect-failure and refused-stream are `connect` (never processed);
    // unavailable and cancelled match gRPC statuses only: nothing for HTTP.
    assert_eq!(conditions(&preset("istio-default")), ["connect"]);
    assert_eq!(
        conditions(&preset("istio-default-1.23")),
        ["connect", "503"]
    );
    assert_eq!(
        conditions(&preset("envoy-gateway-default")),
        ["connect", "503"]
    );
}

#[test]
fn the_aws_2026_figures_botocore_confirms() {
    let p = preset("aws-sdk-standard-2026");
    assert_eq!(
        (
            p.backoff.kind,
            p.backoff.base,
            p.backoff.cap,
            p.backoff.jitter
        ),
        (
            BackoffKind::Exponential,
            ms(50),
            Some(ms(20_000)),
            Jitter::Full
        )
    );
    assert_eq!(
        p.budget,
        Some(BudgetSpec::TokenBucket {
            capacity: 500,
            retry_cost: 14,
            timeout_cost: 14,
            success_refund: 1
        })
    );
    assert!(p.honor_retry_after);
    assert_eq!(
        conditions(&p),
        [
            "timeout", "connect", "reset", "429", "500", "502", "503", "504"
        ]
    );
}

#[test]
fn aws_adaptive_mode_retries_as_standard_mode_does() {
    let adaptive = preset("aws-sdk-adaptive");
    let standard = preset("aws-sdk-standard");
    assert_eq!(adaptive, standard);
    assert_eq!(
        (
            standard.backoff.base,
            standard.backoff.cap,
            standard.backoff.jitter
        ),
        (ms(1000), Some(ms(20_000)), Jitter::Full)
    );
    assert!(!standard.honor_retry_after);
}

#[test]
fn client_libraries_at_their_defaults() {
    let g = preset("go-retryablehttp");
    assert_eq!(
        (
            g.backoff.kind,
            g.backoff.base,
            g.backoff.multiplier,
            g.backoff.cap,
            g.backoff.jitter
        ),
        (
            BackoffKind::Exponential,
            ms(1000),
            2.0,
            Some(ms(30_000)),
            Jitter::None
        )
    );
    assert_eq!(
        conditions(&g),
        ["timeout", "connect", "reset", "429", "5xx"]
    );
    assert!(g.honor_retry_after);
    assert!(g.budget.is_none());

    let u = preset("urllib3-default");
    assert_eq!(u.backoff.kind, BackoffKind::None);
    assert!(u.backoff.never_waits());
    assert_eq!(conditions(&u), ["timeout", "connect", "reset"]);
    assert!(u.honor_retry_after);
    assert!(u.budget.is_none());

    let z = preset("azure-core-python");
    assert_eq!(
        (
            z.backoff.kind,
            z.backoff.base,
            z.backoff.multiplier,
            z.backoff.cap,
            z.backoff.jitter
        ),
        (
            BackoffKind::Exponential,
            ms(800),
            2.0,
            Some(ms(120_000)),
            Jitter::None
        )
    );
    assert_eq!(
        conditions(&z),
        [
            "timeout", "connect", "reset", "408", "429", "500", "502", "503", "504"
        ]
    );
    assert!(z.honor_retry_after);
    assert!(z.budget.is_none());
}

#[test]
fn unlimited_presets_and_what_bounds_them() {
    let k = preset("kafka-producer");
    assert!(k.is_unlimited());
    assert_eq!(
        (
            k.backoff.kind,
            k.backoff.base,
            k.backoff.multiplier,
            k.backoff.cap
        ),
        (BackoffKind::Exponential, ms(100), 2.0, Some(ms(1000)))
    );
    assert_eq!(k.backoff.jitter, Jitter::Proportional { ratio: 0.2 });
    assert_eq!(conditions(&k), ["timeout", "connect", "reset", "503"]);
    assert!(!k.honor_retry_after);
    assert!(k.budget.is_none());
    // delivery.timeout.ms 120 s over the producer: 153 attempts can start.
    assert_eq!(k.attempts_startable_within(Duration::from_secs(120)), 153);

    let t = preset("temporal-activity");
    assert!(t.is_unlimited());
    assert_eq!(
        (
            t.backoff.kind,
            t.backoff.base,
            t.backoff.multiplier,
            t.backoff.cap,
            t.backoff.jitter
        ),
        (
            BackoffKind::Exponential,
            ms(1000),
            2.0,
            Some(ms(100_000)),
            Jitter::None
        )
    );
    assert_eq!(
        conditions(&t),
        ["timeout", "connect", "reset", "429", "5xx"]
    );
    assert!(!t.honor_retry_after);
    assert!(t.budget.is_none());
    // Waits 1, 2, 4, …, 64 s, then 100 s: under a 1 h schedule-to-close
    // timeout, 7 retries start by 127 s, then 34 more at 227, …, 3527 s.
    assert_eq!(
        t.attempts_startable_within(Duration::from_secs(3600)),
        1 + 7 + 34
    );
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

#[test]
fn envoy_limits_concurrent_retries_and_istio_lifts_the_limit() {
    use retrylint::policy::BudgetSpec;
    let presets = retrylint::topology::Presets::embedded();
    let budget = |name: &str| {
        let y = format!(
            "version: 1\nservices:\n  a: {{ calls: [ {{ to: b, retry: {name} }} ] }}\n  b: {{}}\n"
        );
        let t = retrylint::topology::load_str(&y, "t.yaml", "t", &presets).unwrap();
        t.services[0].calls[0].layers[0].policy.budget.clone()
    };
    assert_eq!(
        budget("envoy-default"),
        Some(BudgetSpec::Concurrency { max: 3 })
    );
    assert_eq!(budget("istio-default"), None);
    assert_eq!(budget("istio-default-1.23"), None);
}
