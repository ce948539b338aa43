//! Two pieces of work at once, one on a thread of its own and one on the
//! caller's: a large file's two halves, its services' two halves, a report's
//! findings beside its table.

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
