//! Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::FOREVER;

/// A wait as HTTP sends it in Retry-After: whole seconds, rounded up, so a
/// client never waits less than was asked. The simulator rounds the same way
/// as the chaos servers' header does.
pub(crate) fn whole_seconds(d: Duration) -> Duration {
    Duration::from_secs(d.as_secs() + u64::from(d.subsec_nanos() > 0))
}

/// The Retry-After header value (delay-seconds) for a wait of `d`.
pub(crate) fn header_value(d: Duration) -> String {
    whole_seconds(d).as_secs().to_string()
}

/// The wait a Retry-After value asks for, relative to `now`; a date in the past
/// asks for no wait. `None` when the value is neither form.
pub fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return Some(match v.parse::<u64>() {
            Ok(secs) => Duration::from_secs(secs).min(FOREVER),
            Err(_) => FOREVER,
        });
    }
    let at = parse_http_date(v)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
#[cfg(test)]
const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];

/// Parses the three HTTP-date forms: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
/// GMT`), obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`).
pub(crate) fn parse_http_date(s: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let (day, month, year, time) = match parts.as_slice() {
        [_, d, m, y, t, "GMT"] => (d.parse().ok()?, month(m)?, y.parse().ok()?, *t),
        [_, dmy, t, "GMT"] => {
            let mut it = dmy.split('-');
            let d = it.next()?.parse().ok()?;
            let m = month(it.next()?)?;
            let yy: i64 = it.next()?.parse().ok()?;
            // RFC 9110: a two-digit year more than 50 years ahead is in the past century.
            let y = if yy < 70 { 2000 + yy } else { 1900 + yy };
            (d, m, y, *t)
        }
        [_, m, d, t, y] => (d.parse().ok()?, month(m)?, y.parse().ok()?, *t),
        _ => return None,
    };
    // Digits only (RFC 9110 writes two): a sign or a long number is no
    // time of day, and `-6666666666665029` hours overflowed the sum below.
    let mut hms = time.split(':').map(|p| {
        let digits = (1..=2).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit());
        if digits { p.parse::<i64>().ok() } else { None }
    });
    let (h, mi, se) = (hms.next()??, hms.next()??, hms.next()??);
    if !(1..=31).contains(&day) || h > 23 || mi > 59 || se > 60 || !(1..=9999).contains(&year) {
        return None;
    }
    let secs = days_from_civil(year, month, day) * 86_400 + h * 3600 + mi * 60 + se;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).ok()?))
}

/// Formats `t` as an IMF-fixdate, for the tests' round trips.
#[cfg(test)]
fn format_http_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        d,
        MONTHS[(m - 1) as usize],
        y,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn month(name: &str) -> Option<i64> {
    let n = name.get(..3)?;
    MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(n))
        .map(|i| i as i64 + 1)
}

// Howard Hinnant's days_from_civil / civil_from_days.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_go_out_in_whole_seconds_rounded_up() {
        assert_eq!(
            whole_seconds(Duration::from_millis(1)),
            Duration::from_secs(1)
        );
        assert_eq!(
            whole_seconds(Duration::from_secs(2)),
            Duration::from_secs(2)
        );
        assert_eq!(whole_seconds(Duration::ZERO), Duration::ZERO);
        assert_eq!(header_value(Duration::from_millis(1500)), "2");
    }

    fn epoch(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn seconds() {
        assert_eq!(parse("120", epoch(0)), Some(Duration::from_secs(120)));
        assert_eq!(parse(" 0 ", epoch(0)), Some(Duration::ZERO));
        assert_eq!(parse("99999999999999999999999", epoch(0)), Some(FOREVER));
        assert_eq!(parse("-5", epoch(0)), None);
        assert_eq!(parse("1.5", epoch(0)), None);
        assert_eq!(parse("", epoch(0)), None);
    }

    #[test]
    fn the_three_date_forms_of_rfc_9110() {
        // 784111777 = Sun, 06 Nov 1994 08:49:37 GMT
        let now = epoch(784_111_777 - 30);
        for v in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse(v, now), Some(Duration::from_secs(30)), "{v}");
        }
    }

    #[test]
    fn a_date_in_the_past_means_no_wait() {
        assert_eq!(
            parse("Sun, 06 Nov 1994 08:49:37 GMT", epoch(2_000_000_000)),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn garbage_is_not_a_date() {
        for v in [
            "soon",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 -1:49:37 GMT",
            "Sun, 06 Nov 1994 +8:49:37 GMT",
            "Sun, 06 Nov 1994 008:49:37 GMT",
            // found by fuzzing: overflowed `h * 3600`
            "S Nov 2 -6666666666665029:9:7 2",
        ] {
            assert_eq!(parse(v, epoch(0)), None, "{v}");
        }
    }

    #[test]
    fn formatting_round_trips() {
        for secs in [0, 784_111_777, 1_700_000_000, 4_102_444_800] {
            let t = epoch(secs);
            assert_eq!(parse_http_date(&format_http_date(t)), Some(t));
        }
        assert_eq!(
            format_http_date(epoch(784_111_777)),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
    }
}
