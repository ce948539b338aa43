//! What `check` of a large topology runs on several cores with: every device
//! that serves thousands of services is here or named here, with what it
//! buys. Each was measured on `check` of the 10,000-service bench file
//! (`benches/check.rs` writes it), wall time, the device switched off against
//! on in alternating runs on the 2-core VM (benches/RESULTS.md, #30 item 4):
//!
//! | device | where | `check` with it off |
//! |---|---|---|
//! | the rules share up to four threads | [`each_shared`], from `lint` | 1.21× the time (table), 1.22× (JSON) |
//! | a large file's `services:` parsed in two halves | `retrylint-yaml`'s `split` | 1.14–1.18× |
//! | its services read into the topology in two halves | [`side_by_side`], from `topology::schema` | 1.10–1.15× |
//! | the hand-written YAML fast path | `retrylint-yaml`'s `fast` | 1.73× the instructions (callgrind) |
//! | the amplification grid drawn directly | `formats::grid` | 1.10–1.11× (4.4 % of the instructions) |
//!
//! Devices that bought less than a tenth were removed (#30 item 4): the
//! analysis passes side by side (1.04–1.05×), the YAML scanner a thread
//! ahead of the builder (1.05× with the halves off; never used with them
//! on), findings rendered on several threads (1.00×), the table's tail laid
//! out beside the findings (1.04–1.05×) and the located tree freed on a
//! thread of its own (0.99–1.09×; it is still freed before the rules, for
//! memory), and the topology and findings leaked at exit rather than freed
//! (0.98×).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Calls from which the rules share the cores.
const RULES_SHARED_FROM_CALLS: usize = 2_000;

/// Services from which they are read into the topology in two halves.
pub(crate) const SERVICES_HALVED_FROM: usize = 2_000;

/// The threads the rules share on a topology of `calls` calls: one below
/// [`RULES_SHARED_FROM_CALLS`], else up to four.
pub(crate) fn rule_threads(calls: usize) -> usize {
    if calls >= RULES_SHARED_FROM_CALLS {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    } else {
        1
    }
}

/// Runs `beside` on a scoped thread while `here` runs on this one; returns
/// both results, `beside`'s first. A panic on the other thread carries on
/// here.
pub(crate) fn side_by_side<A: Send, B>(
    beside: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> B,
) -> (A, B) {
    std::thread::scope(|scope| {
        let beside = scope.spawn(beside);
        let here = here();
        let beside = beside
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (beside, here)
    })
}

/// `work` on every item, on `threads` threads (one: on this one), each
/// taking the next item not yet taken, since an item's cost is not known
/// ahead (a rule finds thousands of findings, or none); meanwhile `here`
/// runs on this thread. Results in `items`' order, so the outcome is the
/// same as one item after the other. Each thread keeps one `S` as scratch.
pub(crate) fn each_shared<T: Sync, R: Send + Default, S: Default, H>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T, &mut S) -> R + Sync,
    here: impl FnOnce() -> H,
) -> (Vec<R>, H) {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        let mut scratch = S::default();
        let done = items.iter().map(|i| work(i, &mut scratch)).collect();
        return (done, here());
    }
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (work, next) = (&work, &next);
                scope.spawn(move || {
                    let mut done = Vec::new();
                    let mut scratch = S::default();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return done;
                        };
                        done.push((i, work(item, &mut scratch)));
                    }
                })
            })
            .collect();
        let here = here();
        let mut results: Vec<R> = Vec::new();
        results.resize_with(items.len(), R::default);
        for w in workers {
            let done = w
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (i, r) in done {
                results[i] = r;
            }
        }
        (results, here)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_work_comes_back_in_order_beside_this_threads() {
        let items: Vec<u32> = (0..1_000).collect();
        for threads in [1, 2, 4] {
            let (done, here) = each_shared(
                &items,
                threads,
                |&i, seen: &mut u32| {
                    *seen += 1;
                    u64::from(i) * 3
                },
                || "here",
            );
            assert_eq!(here, "here");
            let want: Vec<u64> = (0..1_000).map(|i| i * 3).collect();
            assert_eq!(done, want, "{threads} threads");
        }
        let (none, _) = each_shared(&[] as &[u8], 4, |_, _: &mut ()| 1u8, || ());
        assert!(none.is_empty());
    }

    #[test]
    fn the_rules_share_the_cores_only_on_a_large_topology() {
        assert_eq!(rule_threads(RULES_SHARED_FROM_CALLS - 1), 1);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(rule_threads(RULES_SHARED_FROM_CALLS), cores.min(4));
    }
}
