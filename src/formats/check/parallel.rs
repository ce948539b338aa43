//! Many items rendered on several threads and written in their order: a large
//! report's findings use every core, and memory holds one batch at a time.

use std::io::{self, Write};

/// Items one thread renders per batch.
const PER_THREAD: usize = 2048;

/// Writes what `render` makes of each item, in order; on up to four threads
/// when there are enough items to share.
pub(crate) fn write_each<T: Sync>(
    items: &[T],
    out: &mut dyn Write,
    render: impl Fn(&T, &mut String) + Sync,
) -> io::Result<()> {
    let threads = if worth_sharing(items.len()) {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    } else {
        1
    };
    let mut parts = vec![String::new(); threads];
    for batch in items.chunks(PER_THREAD * threads) {
        let per_part = batch.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let mut shares = batch.chunks(per_part).zip(parts.iter_mut());
            let mine = shares.next();
            for (share, part) in shares {
                let render = &render;
                scope.spawn(move || render_into(share, part, render));
            }
            if let Some((share, part)) = mine {
                render_into(share, part, &render);
            }
        });
        for part in &parts {
            out.write_all(part.as_bytes())?;
        }
    }
    Ok(())
}

/// Whether `items` things to render are enough to share among threads.
pub(crate) fn worth_sharing(items: usize) -> bool {
    items >= 2 * PER_THREAD
}

fn render_into<T>(items: &[T], part: &mut String, render: &impl Fn(&T, &mut String)) {
    part.clear();
    for item in items {
        render(item, part);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_items_come_out_whole_and_in_order() {
        for n in [0, 1, 2 * PER_THREAD - 1, 2 * PER_THREAD, 9 * PER_THREAD + 7] {
            let items: Vec<usize> = (0..n).collect();
            let mut out = Vec::new();
            write_each(&items, &mut out, |i, s| s.push_str(&format!("{i}\n"))).expect("vec");
            let want: String = items.iter().map(|i| format!("{i}\n")).collect();
            assert_eq!(String::from_utf8(out).expect("utf-8"), want, "{n} items");
        }
    }
}
