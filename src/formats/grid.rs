//! A table drawn as comfy-table draws it with `UTF8_FULL_CONDENSED` and no
//! content arrangement. When every cell is one line of characters one column
//! wide, it is written directly: byte for byte what comfy-table draws
//! (`plain_matches_comfy_table` holds the two together), several times faster,
//! which the amplification table of a topology with thousands of services
//! needs. Anything else is left to comfy-table. Measured on `check` of the
//! 10,000-service bench file: with comfy-table it takes 1.10–1.11× the wall
//! time, though only 4.4 % more instructions (3.29 G against 3.15 G,
//! callgrind; `src/large.rs`, benches/RESULTS.md, #30 item 4).

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

/// `rows` under `header`; a column is aligned right where `right` says so.
pub(crate) fn draw(header: &[&str], rows: &[Vec<String>], right: impl Fn(usize) -> bool) -> String {
    draw_plain(header, rows, &right).unwrap_or_else(|| draw_comfy(header, rows, &right))
}

/// Characters drawn one column wide, as comfy-table measures them.
fn narrow(c: char) -> bool {
    matches!(c, ' '..='~' | '×' | '≈' | '…' | '→')
}

fn draw_plain(
    header: &[&str],
    rows: &[Vec<String>],
    right: &dyn Fn(usize) -> bool,
) -> Option<String> {
    let columns = header.len();
    // An empty column is still one character wide.
    let mut widths: Vec<usize> = vec![1; columns];
    let cells = std::iter::once(header.to_vec())
        .chain(rows.iter().map(|r| r.iter().map(String::as_str).collect()));
    for row in cells {
        if row.len() != columns {
            return None;
        }
        for (w, cell) in widths.iter_mut().zip(row) {
            if !cell.chars().all(narrow) {
                return None;
            }
            *w = (*w).max(cell.chars().count());
        }
    }
    let line_len: usize = widths.iter().map(|w| w + 3).sum::<usize>() + 1;
    // Box-drawing characters are three bytes each.
    let mut out = String::with_capacity((rows.len() + 4) * line_len * 3);
    let rule = |out: &mut String, left: char, fill: char, cross: char, end: char| {
        out.push(left);
        for (i, w) in widths.iter().enumerate() {
            if i > 0 {
                out.push(cross);
            }
            out.extend(std::iter::repeat_n(fill, w + 2));
        }
        out.push(end);
        out.push('\n');
    };
    let row = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        out.push('│');
        for (i, (cell, w)) in cells.zip(&widths).enumerate() {
            if i > 0 {
                out.push('┆');
            }
            let pad = w - cell.chars().count();
            out.push(' ');
            if right(i) {
                out.extend(std::iter::repeat_n(' ', pad));
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.extend(std::iter::repeat_n(' ', pad));
            }
            out.push(' ');
        }
        out.push_str("│\n");
    };
    rule(&mut out, '┌', '─', '┬', '┐');
    row(&mut out, &mut header.iter().copied());
    rule(&mut out, '╞', '═', '╪', '╡');
    for cells in rows {
        row(&mut out, &mut cells.iter().map(String::as_str));
    }
    rule(&mut out, '└', '─', '┴', '┘');
    out.pop();
    Some(out)
}

fn draw_comfy(header: &[&str], rows: &[Vec<String>], right: &dyn Fn(usize) -> bool) -> String {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .force_no_tty()
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.to_vec());
    for cells in rows {
        t.add_row(cells.clone());
    }
    for i in (0..header.len()).filter(|&i| right(i)) {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cell() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec!['a', 'Z', '0', ' ', '-', '×', '≈', '…', '→', '`', '~']),
            0..12,
        )
        .prop_map(|c| c.into_iter().collect())
    }

    #[test]
    fn plain_matches_comfy_table_on_the_amplification_table() {
        let header = [
            "service",
            "worst case",
            "with budgets",
            "worst response",
            "note",
        ];
        let rows = vec![
            vec!["s0", "1×", "1×", "770ms", ""],
            vec![
                "s9995",
                "≈1.8e308×",
                "1.8e308×",
                "1.07s",
                "over the 10× limit",
            ],
            vec!["db", "-", "-", "-", "unreachable from `web`"],
        ];
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|r| r.into_iter().map(str::to_owned).collect())
            .collect();
        let right = |i: usize| (1..=3).contains(&i);
        let plain = draw_plain(&header, &rows, &right).expect("plain cells");
        assert_eq!(plain, draw_comfy(&header, &rows, &right));
        assert!(plain.starts_with("┌─────────┬"), "{plain}");
    }

    #[test]
    fn cells_it_cannot_measure_are_left_to_comfy_table() {
        let header = ["service", "note"];
        for odd in ["東京", "two\nlines", "tab\there", "é"] {
            let rows = vec![vec!["s0".to_owned(), odd.to_owned()]];
            assert_eq!(draw_plain(&header, &rows, &|_| false), None, "{odd:?}");
            assert_eq!(
                draw(&header, &rows, |_| false),
                draw_comfy(&header, &rows, &|_| false)
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            rng_seed: prop::test_runner::RngSeed::Fixed(0x0bde_0002),
            ..ProptestConfig::default()
        })]

        /// Any narrow cells, any widths, any alignment: the same bytes as
        /// comfy-table.
        #[test]
        fn plain_matches_comfy_table(
            (header, rows) in (1usize..5).prop_flat_map(|n| (
                prop::collection::vec(cell(), n),
                prop::collection::vec(prop::collection::vec(cell(), n), 0..6),
            )),
            right in prop::collection::vec(any::<bool>(), 5),
        ) {
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            let right = |i: usize| right[i];
            let plain = draw_plain(&header, &rows, &right).expect("narrow cells");
            prop_assert_eq!(plain, draw_comfy(&header, &rows, &right));
        }
    }
}
