use crate::declare_rule;
use crate::lint::rule::{Context, Diagnostic, edge};
use crate::prediction::attempts_allowed;
use crate::topology::{Call, Counted, CounterKind, Layer, LayerKind, Observed};

declare_rule! {
    /// ## What it finds
    /// A call on which traces show more attempts per logical call than the
    /// product of its declared layers' attempts allows: a layer retries that
    /// nobody declared. The message gives the figure seen (the most attempts
    /// on one call, the mean, over how many calls) and the likely layer:
    /// *a sidecar/proxy* when several server spans sit under one client span
    /// (or Envoy's `x-envoy-attempt-count` says so), *the SDK/HTTP client*
    /// when `http.request.resend_count` goes past the application's declared
    /// attempts, *the caller itself* when it sent more client spans than it
    /// declares attempts. Redirects, authentication resends and gRPC transparent
    /// retries are not counted (see docs/sources.md).
    ///
    /// From metrics (the caller's Envoy counters, `upstream_rq_total` and
    /// `upstream_rq_retry`), the figure is the proxy's attempts per request
    /// on average, and it is held to the layers below the caller (its `via`
    /// layers): a mean above their product means some request became more
    /// attempts than they allow. Linkerd's route metrics (route requests
    /// and retry requests) are held to them the same way; Istio's
    /// `istio_requests_total` proves only a least (requests plus those
    /// flagged `URX`), said "at least"; gRPC's A96 client metrics (retries
    /// and hedges over A66's calls) are held to the client's own retries:
    /// the call's `retry:` and its service config's `grpc` layer, not a
    /// sidecar below, whose retries the client does not see.
    ///
    /// ## Why it matters
    /// Every figure the linter gives (amplification, worst-case time, the
    /// simulation) multiplies the declared layers. A layer that retries
    /// unseen (a mesh default, an SDK's built-in retries) multiplies the load
    /// on a failing service while the topology says it is fine.
    ///
    /// ## Example
    /// ```yaml
    /// calls:
    ///   - to: api
    ///     retry: { max_attempts: 3 }   # traces show up to 9 attempts per call:
    ///                                  # 3 server spans under each client span
    /// ```
    ///
    /// ## Fix
    /// Declare the layer where it retries, with the attempts it makes: a
    /// sidecar or proxy as a `via:` layer (`via: [{ name: istio-sidecar,
    /// retry: istio-default }]`), an SDK's retries as a `via:` layer named
    /// after the SDK; or turn that layer's retries off.
    pub static RULE = {
        code: "RL021",
        name: "undeclared-retry-layer",
        default: Error,
        summary: "traces or a proxy's counters show more attempts on a call than its declared layers allow",
        check: check,
    };
}

/// The attempts a call's declared layers allow together; `None` when one
/// of them is unlimited.
pub(super) fn declared(call: &Call) -> Option<u64> {
    attempts_allowed(call, |_| true)
}

/// The call `o` is about, with its index in the caller's calls.
pub(super) fn call_of<'t>(cx: &'t Context, o: &Observed) -> Option<(usize, &'t Call)> {
    cx.topology
        .services
        .get(o.from)?
        .calls
        .iter()
        .enumerate()
        .find(|(_, c)| c.to == o.to)
}

/// The attempts a call's layers below the caller (its `via` layers) allow
/// together, which is what a proxy's counters are held to: the proxy sees
/// each of the caller's own attempts as a request of its own. `None` when
/// one of them is unlimited.
fn declared_below(call: &Call) -> Option<u64> {
    attempts_allowed(call, |l| l.kind == LayerKind::Via)
}

/// RL021 from a proxy's counters: the mean against the layers below the
/// caller.
fn check_counted(cx: &Context, o: &Observed, c: &Counted, out: &mut Vec<Diagnostic>) {
    let Some((i, call)) = call_of(cx, o) else {
        return;
    };
    // A proxy sees each of the caller's attempts as a request of its own;
    // a gRPC client's counters see its own retries only (a sidecar's are
    // below it), which its service config and the call's `retry:` bound.
    let (allowed, which) = match c.kind {
        CounterKind::Grpc => (
            attempts_allowed(call, Layer::seen_by_grpc_client),
            "its declared gRPC client retries",
        ),
        _ => (declared_below(call), "its declared layers below the caller"),
    };
    let Some(allowed) = allowed else {
        return;
    };
    if o.figures.attempts_mean <= allowed as f64 {
        return;
    }
    out.push(
        Diagnostic::new(
            call.pos,
            o.from,
            format!(
                "{}'s counters show {}{:.2} attempts per request on {} ({}, {}), more than {which} allow ({allowed}): a retry layer nobody declared, {}",
                c.by(),
                c.least(),
                o.figures.attempts_mean,
                edge(cx.topology, call),
                c.counts_text(o.figures.calls),
                c.window,
                likely_counted(c.kind),
            ),
        )
        .on_call(i)
        .help(help_counted(c.kind))
        .label(format!(
            "{}{:.2} attempts per request counted, {allowed} declared{}",
            c.least(),
            o.figures.attempts_mean,
            match c.kind {
                CounterKind::Grpc => "",
                _ => " below the caller",
            }
        )),
    );
}

/// Which layer retried, by who counted.
fn likely_counted(kind: CounterKind) -> &'static str {
    match kind {
        CounterKind::Envoy | CounterKind::Istio => {
            "the caller's sidecar/proxy (it counts its own retries)"
        }
        CounterKind::Linkerd => "the caller's Linkerd proxy (it counts its own retries)",
        CounterKind::Grpc => "the caller's gRPC client (its retry policy, from the service config)",
    }
}

fn help_counted(kind: CounterKind) -> &'static str {
    match kind {
        CounterKind::Grpc => {
            "declare the gRPC client's retry policy on the call (`retry: { max_attempts: N }`, as its service config says), or turn its retries off"
        }
        _ => {
            "declare the sidecar or proxy as a `via:` layer with its retry policy (`via: [{ name: envoy-sidecar, retry: { max_attempts: N } }]`), or turn its retries off"
        }
    }
}

/// `up to 9 attempts per call (3.00 on average, over 20 calls)`.
pub(super) fn seen_text(o: &Observed) -> String {
    let calls = if o.figures.calls == 1 {
        "call"
    } else {
        "calls"
    };
    let attempts = if o.figures.attempts_max == 1 {
        "attempt"
    } else {
        "attempts"
    };
    format!(
        "up to {} {attempts} per call ({:.2} on average, over {} {calls})",
        o.figures.attempts_max, o.figures.attempts_mean, o.figures.calls
    )
}

fn check(cx: &Context, out: &mut Vec<Diagnostic>) {
    for o in &cx.topology.observed {
        if let Some(c) = &o.counted {
            check_counted(cx, o, c, out);
            continue;
        }
        let Some((i, call)) = call_of(cx, o) else {
            continue;
        };
        let Some(allowed) = declared(call) else {
            continue;
        };
        if u64::from(o.figures.attempts_max) <= allowed {
            continue;
        }
        let app = call
            .layers
            .first()
            .map_or(1, |l| l.policy.max_attempts.max(1));
        let likely = if o.figures.proxy_max > 1 {
            "likely a sidecar/proxy: several server spans sit under one client span"
        } else if o.figures.resend_max > app {
            "likely the SDK/HTTP client: its resend count goes past the application's declared attempts"
        } else if o.figures.client_max > app {
            "likely the caller itself: more client spans under one parent span than its declared attempts"
        } else {
            "the traces do not say which"
        };
        let help = if o.figures.proxy_max > 1 {
            "declare the sidecar or proxy as a `via:` layer with its retry policy (`via: [{ name: istio-sidecar, retry: istio-default }]`), or turn its retries off"
        } else {
            "declare the layer that retries as a `via:` layer with its attempts (an SDK's built-in retries: `via: [{ name: sdk, retry: { max_attempts: N } }]`), or turn its retries off"
        };
        out.push(
            Diagnostic::new(
                call.pos,
                o.from,
                format!(
                    "traces show {} on {}, more than its declared layers allow ({allowed}): a retry layer nobody declared, {likely}",
                    seen_text(o),
                    edge(cx.topology, call),
                ),
            )
            .on_call(i)
            .help(help)
            .label(format!("{} attempts seen, {allowed} declared", o.figures.attempts_max)),
        );
    }
}
