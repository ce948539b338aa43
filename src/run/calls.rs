//! How a service's calls are grouped: in order, one after another, except
//! that a run of consecutive `parallel: true` calls goes out together and
//! the service waits for all of them before the next call. Both engines
//! group through [`group`].

use std::ops::Range;

/// The calls that start together with call `first` of `len` calls, as a
/// range of indexes; `parallel(i)` says whether call `i` is parallel.
pub fn group(first: usize, len: usize, parallel: impl Fn(usize) -> bool) -> Range<usize> {
    let end = if first < len && parallel(first) {
        (first..len).find(|&i| !parallel(i)).unwrap_or(len)
    } else {
        (first + 1).min(len)
    };
    first..end
}

/// Every group of `len` calls, in order.
pub(crate) fn groups(
    len: usize,
    parallel: impl Fn(usize) -> bool,
) -> impl Iterator<Item = Range<usize>> {
    let mut next = 0;
    std::iter::from_fn(move || {
        (next < len).then(|| {
            let g = group(next, len, &parallel);
            next = g.end;
            g
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_parallel_calls_form_one_group() {
        let p = [false, true, true, false, true];
        let gs: Vec<_> = groups(p.len(), |i| p[i]).collect();
        assert_eq!(gs, [0..1, 1..3, 3..4, 4..5]);
        assert_eq!(groups(0, |_| true).count(), 0);
        assert_eq!(group(1, 5, |i| p[i]), 1..3);
    }
}
