//! Durations as the schema writes them: `250us`, `100ms`, `2s`, `1.5s`, `1m`,
//! and sums such as `1m30s`.

use std::time::Duration;

/// Why a duration could not be read; the text is the fix to suggest.
pub fn parse(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s.starts_with('-') {
        return Err(format!(
            "`{text}` is negative; durations are zero or more, e.g. `100ms`"
        ));
    }
    if s.is_empty() {
        return Err("empty duration; write e.g. `100ms` or `2s`".into());
    }
    let total = match whole_ms_or_s(s) {
        Some(total) => total,
        None => sum_of_parts(text, s)?,
    };
    // A century is far beyond any timeout; bigger values are typos.
    if !total.is_finite() || total > 100.0 * 365.0 * 86_400.0 {
        return Err(format!(
            "`{text}` is absurdly long; durations here are ms to minutes"
        ));
    }
    Ok(Duration::from_secs_f64(total))
}

/// Seconds in `250ms` or `2s`, the durations nearly every file writes,
/// computed as [`sum_of_parts`] computes them (the digits, exact in an `f64`,
/// times the unit's scale) without its general scan.
fn whole_ms_or_s(s: &str) -> Option<f64> {
    let (digits, scale) = match s.strip_suffix("ms") {
        Some(digits) => (digits, 1e-3),
        None => (s.strip_suffix('s')?, 1.0),
    };
    if digits.is_empty() || digits.len() > 15 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value = digits
        .bytes()
        .fold(0u64, |v, b| v * 10 + u64::from(b - b'0'));
    Some(value as f64 * scale)
}

/// Seconds in `s`, a sum of numbers with units (`1m30s`); `text` as written,
/// for the error.
fn sum_of_parts(text: &str, s: &str) -> Result<f64, String> {
    // `5 ms` reads as 5 ms to a person and as two words to every other
    // parser of durations (Go's, humantime, Envoy's): refused, not guessed.
    if s.contains(char::is_whitespace) {
        let together: String = s.split_whitespace().collect();
        // What is wrong besides the space (`5 parsecs`) is said first.
        sum_of_parts(text, &together)?;
        return Err(format!(
            "`{text}` has a space in it; write the number and its unit together, e.g. `{together}`"
        ));
    }
    let mut total = 0f64;
    let mut rest = s;
    let mut previous: Option<(f64, &str)> = None;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(num_len);
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let value: f64 = num.parse().map_err(|_| {
            format!("`{text}` is not a duration; write e.g. `250us`, `100ms`, `1.5s` or `1m`")
        })?;
        let scale = match unit.trim() {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "" => {
                return Err(format!(
                    "`{text}` has no unit; write `{text}ms` or `{text}s`"
                ));
            }
            other => {
                return Err(format!(
                    "unknown unit `{other}` in `{text}`; use us, ms, s, m or h"
                ));
            }
        };
        // `5ms5ms` or `30s1m` is a typo, not a sum: each unit once, largest first.
        if let Some((larger, name)) = previous
            && scale >= larger
        {
            return Err(format!(
                "`{text}` has `{}` after `{name}`; write each unit once, largest first, e.g. `1m30s`",
                unit.trim()
            ));
        }
        previous = Some((scale, unit));
        total += value * scale;
        rest = next;
    }
    Ok(total)
}

/// `1.5s`, `250ms`, `40us`: the shortest exact form for reports and messages.
pub fn format(d: Duration) -> String {
    let ns = d.as_nanos();
    // Whole milliseconds (nearly every duration a report shows) are written
    // with integers alone: thousands of findings format thousands of them.
    if let Ok(ms) = u64::try_from(ns / 1_000_000)
        && ns.is_multiple_of(1_000_000)
    {
        let mut digits = itoa::Buffer::new();
        let mut out = String::with_capacity(12);
        if ms == 0 {
            out.push_str("0s");
        } else if ms.is_multiple_of(60_000) {
            out.push_str(digits.format(ms / 60_000));
            out.push('m');
        } else if ms.is_multiple_of(1000) {
            out.push_str(digits.format(ms / 1000));
            out.push('s');
        } else if ms >= 1000 {
            out.push_str(digits.format(ms / 1000));
            out.push('.');
            let frac = ms % 1000;
            let frac = [frac / 100, frac / 10 % 10, frac % 10];
            let kept = if frac[2] != 0 {
                3
            } else if frac[1] != 0 {
                2
            } else {
                1
            };
            out.extend(frac[..kept].iter().map(|&d| char::from(b'0' + d as u8)));
            out.push('s');
        } else {
            out.push_str(digits.format(ms));
            out.push_str("ms");
        }
        return out;
    }
    if ns >= 1_000_000 {
        format!("{}ms", trim(ns as f64 / 1e6))
    } else if ns.is_multiple_of(1000) {
        format!("{}us", ns / 1000)
    } else {
        format!("{ns}ns")
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_ms_and_s_read_as_the_general_scan_reads_them() {
        let mut forms: Vec<String> = (0..3000u64)
            .flat_map(|n| [format!("{n}ms"), format!("{n}s"), format!("00{n}ms")])
            .collect();
        forms.extend(["999999999999999ms", "999999999999999s", "4294967296s"].map(String::from));
        for form in &forms {
            let fast = whole_ms_or_s(form).unwrap_or_else(|| panic!("{form} takes the fast path"));
            let general = sum_of_parts(form, form).expect("a duration");
            assert_eq!(fast.to_bits(), general.to_bits(), "{form}");
        }
        for other in [
            "1.5s",
            "250 ms",
            "ms",
            "s",
            "1m30s",
            "1µs",
            "1000000000000000ms",
            "-1s",
            "+1s",
        ] {
            assert_eq!(whole_ms_or_s(other), None, "{other}");
        }
    }

    #[test]
    fn reads_every_form() {
        let ms = Duration::from_millis;
        assert_eq!(parse("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse("100ms"), Ok(ms(100)));
        assert_eq!(parse("2s"), Ok(ms(2000)));
        assert_eq!(parse("1.5s"), Ok(ms(1500)));
        assert_eq!(parse("1m"), Ok(ms(60_000)));
        assert_eq!(parse("1m30s"), Ok(ms(90_000)));
        assert_eq!(parse("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn rejects_with_the_fix() {
        assert!(parse("-5ms").unwrap_err().contains("negative"));
        assert!(parse("100").unwrap_err().contains("`100ms`"));
        assert!(parse("5parsecs").unwrap_err().contains("unknown unit"));
        assert!(parse("5 parsecs").unwrap_err().contains("unknown unit"));
        assert!(
            parse("5 ms")
                .unwrap_err()
                .contains("has a space in it; write the number and its unit together, e.g. `5ms`")
        );
        assert!(
            parse("5ms5ms")
                .unwrap_err()
                .contains("has `ms` after `ms`; write each unit once")
        );
        assert!(parse("30s1m").unwrap_err().contains("has `m` after `s`"));
        assert_eq!(parse("1h2m3s4ms"), Ok(Duration::from_millis(3_723_004)));
        assert!(parse("fast").is_err());
        assert!(parse("1.2.3s").is_err());
        assert!(parse("99999999999h").unwrap_err().contains("absurdly"));
    }

    #[test]
    fn formats_shortest() {
        let ms = Duration::from_millis;
        assert_eq!(format(ms(1500)), "1.5s");
        assert_eq!(format(ms(250)), "250ms");
        assert_eq!(format(ms(120_000)), "2m");
        assert_eq!(format(Duration::from_micros(40)), "40us");
        assert_eq!(format(Duration::from_micros(1500)), "1.5ms");
        assert_eq!(format(ms(1560)), "1.56s");
        assert_eq!(format(ms(1005)), "1.005s");
        assert_eq!(format(ms(60_500)), "60.5s");
        assert_eq!(format(ms(0)), "0s");
        assert_eq!(format(Duration::from_nanos(1_234_567)), "1.235ms");
        assert_eq!(format(Duration::from_nanos(7)), "7ns");
        // The same as the float form it replaces, for every millisecond count
        // up to an hour.
        for n in (0..3_600_000u64).step_by(7) {
            let d = ms(n);
            let float = if n >= 1000 && n % 1000 != 0 {
                format!("{}s", trim(d.as_secs_f64()))
            } else {
                format(d)
            };
            assert_eq!(format(d), float, "{n} ms");
        }
    }
}
