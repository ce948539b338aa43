//! Sums and counts over a schedule of waits, in time that does not grow with
//! the number of retries: a policy may allow 2^31 − 1 attempts (Kafka's
//! producer) or be `unlimited` (Temporal's activities), and the analysis must
//! still answer at once.
//!
//! Every schedule the engine has — the shortest, longest and mean draw before
//! retry k — never shrinks as k grows and is constant once it reaches its cap
//! (or the kind is constant). So a walk stops as soon as a wait equals the
//! schedule's last one, `w(u32::MAX)`, and the rest is one multiplication.
//! A schedule still growing after `STEPS` retries (a multiplier barely above 1,
//! linear without a cap) is finished in closed form with a bound on the side
//! the caller asks for, so no answer is ever wrong in the unsafe direction.

use std::time::Duration;

use super::FOREVER;

/// Retries walked one by one before the rest is bounded in closed form.
const STEPS: u32 = 4096;

/// Which side to err on for a schedule that is still growing after `STEPS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tail {
    /// Count every further wait as the schedule's last, longest one.
    Longest,
    /// Count every further wait as the last one walked, the shortest left.
    Shortest,
}

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

fn duration(ns: u128) -> Duration {
    let forever = nanos(FOREVER);
    if ns >= forever {
        FOREVER
    } else {
        // Below FOREVER (u32::MAX seconds), so seconds fit in u64.
        Duration::new((ns / 1_000_000_000) as u64, (ns % 1_000_000_000) as u32)
    }
}

/// Σ w(k) for k in 1..=n, saturating at `FOREVER`.
pub(crate) fn sum(n: u32, tail: Tail, w: impl Fn(u32) -> Duration) -> Duration {
    let last = nanos(w(u32::MAX));
    let forever = nanos(FOREVER);
    let mut total: u128 = 0;
    let mut walked = 0u128;
    for k in 1..=n.min(STEPS) {
        let x = nanos(w(k));
        if x == last {
            // Constant from here: retries k..=n all wait `last`.
            total = total.saturating_add(x.saturating_mul(u128::from(n - k + 1)));
            return duration(total.min(forever));
        }
        total = total.saturating_add(x);
        walked = x;
        if total >= forever {
            return FOREVER;
        }
    }
    if n > STEPS {
        let each = match tail {
            Tail::Longest => last,
            Tail::Shortest => walked,
        };
        total = total.saturating_add(each.saturating_mul(u128::from(n - STEPS)));
    }
    duration(total.min(forever))
}

/// How many of retries 1..=max can start before `within`, when retry k starts
/// once the waits w(1) + … + w(k) have passed (every attempt failing at once)
/// and must start strictly before `within`, as the engine's deadline check
/// demands. Waits that are zero from some retry on fit without limit: `max`.
pub(crate) fn retries_before(within: Duration, max: u32, w: impl Fn(u32) -> Duration) -> u32 {
    let bound = nanos(within);
    if bound == 0 {
        return 0;
    }
    let last = nanos(w(u32::MAX));
    let mut elapsed: u128 = 0;
    // How many more retries fit when each waits at least `x` from here.
    let fitting = |elapsed: u128, x: u128, done: u32| -> u32 {
        if x == 0 {
            return max;
        }
        // m retries fit while elapsed + m·x < bound: m ≤ (bound − elapsed − 1) / x.
        let more = (bound - elapsed - 1) / x;
        u128::from(done).saturating_add(more).min(u128::from(max)) as u32
    };
    let mut walked = 0u128;
    for k in 1..=max.min(STEPS) {
        let x = nanos(w(k));
        if x == last {
            return fitting(elapsed, x, k - 1);
        }
        elapsed += x;
        if elapsed >= bound {
            return k - 1;
        }
        walked = x;
    }
    if max <= STEPS {
        return max;
    }
    // Still growing: later waits are at least the last one walked.
    fitting(elapsed, walked, STEPS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// 100, 200, 400, then 500 ms for ever.
    fn capped(k: u32) -> Duration {
        ms(100u64.saturating_mul(1u64 << (k - 1).min(20)).min(500))
    }

    #[test]
    fn sums_a_capped_schedule_in_closed_form() {
        assert_eq!(sum(3, Tail::Longest, capped), ms(700));
        assert_eq!(sum(5, Tail::Longest, capped), ms(1700));
        // 2^31 − 1 retries: 700 ms + (2^31 − 4) × 500 ms.
        let n = i32::MAX as u32;
        let want = ms(700) + ms(500) * (n - 3);
        assert_eq!(sum(n, Tail::Longest, capped), want);
        assert_eq!(sum(0, Tail::Longest, capped), Duration::ZERO);
    }

    #[test]
    fn sums_saturate_at_forever() {
        assert_eq!(
            sum(u32::MAX, Tail::Longest, |_| Duration::from_secs(10)),
            FOREVER
        );
    }

    #[test]
    fn a_schedule_still_growing_is_bounded_on_the_side_asked_for() {
        // Linear in nanoseconds: w(k) = k ns, never constant before u32::MAX.
        let linear = |k: u32| Duration::from_nanos(u64::from(k));
        let n = 10_000;
        let exact: u128 = (1..=u128::from(n)).sum();
        let longest = nanos(sum(n, Tail::Longest, linear));
        let shortest = nanos(sum(n, Tail::Shortest, linear));
        assert!(
            shortest <= exact && exact <= longest,
            "{shortest} {exact} {longest}"
        );
        let walked: u128 = (1..=u128::from(STEPS)).sum();
        assert_eq!(shortest, walked + u128::from(STEPS) * u128::from(n - STEPS));
    }

    #[test]
    fn counts_retries_that_start_strictly_before_the_bound() {
        // Retries start at 100, 300, 700, 1200, 1700, …
        assert_eq!(retries_before(ms(700), 10, capped), 2);
        assert_eq!(retries_before(ms(701), 10, capped), 3);
        assert_eq!(retries_before(ms(1700), 10, capped), 4);
        assert_eq!(retries_before(ms(1701), 10, capped), 5);
        assert_eq!(retries_before(ms(100), 10, capped), 0);
        assert_eq!(retries_before(ms(701), 2, capped), 2);
        // 120 s of 500 ms waits after the first 700 ms: (120000 − 700 − 1) / 500 = 238.
        assert_eq!(
            retries_before(Duration::from_secs(120), u32::MAX, capped),
            3 + 238
        );
    }

    #[test]
    fn zero_waits_fit_without_limit() {
        assert_eq!(
            retries_before(ms(10), u32::MAX, |_| Duration::ZERO),
            u32::MAX
        );
        assert_eq!(retries_before(ms(10), 7, |_| Duration::ZERO), 7);
    }

    #[test]
    fn a_growing_schedule_is_counted_generously() {
        // w(k) = k ns: exact answer is the largest m with m(m+1)/2 < bound.
        let linear = |k: u32| Duration::from_nanos(u64::from(k));
        let bound = Duration::from_nanos(50_000_000);
        let got = retries_before(bound, u32::MAX, linear);
        let exact = (1u64..)
            .take_while(|m| m * (m + 1) / 2 < 50_000_000)
            .count() as u32;
        assert!(got >= exact, "{got} < {exact}");
        assert!(got < u32::MAX);
    }
}
