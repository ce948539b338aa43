//! Rates as the flags and fault files write them: `50`, `50/s`, `3000/m` or
//! `3000/min`. A reader like `duration`, so that `faults` (a surge's `rate:`)
//! and `run` (`--rate`) read one syntax without one importing the other.

/// Requests per second in `text`, or `None` when it is not a rate above 0.
pub fn parse(text: &str) -> Option<f64> {
    let t = text.trim();
    let (num, per) = match t.split_once('/') {
        Some((n, unit)) => match unit.trim() {
            "s" | "sec" | "second" => (n, 1.0),
            "m" | "min" | "minute" => (n, 60.0),
            _ => return None,
        },
        None => (t, 1.0),
    };
    let r: f64 = num.trim().parse().ok()?;
    if !(r.is_finite() && r > 0.0) {
        return None;
    }
    Some(r / per)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn reads_per_second_and_per_minute() {
        assert_eq!(parse("50/s"), Some(50.0));
        assert_eq!(parse("120/min"), Some(2.0));
        assert_eq!(parse(" 3000 / m "), Some(50.0));
        assert_eq!(parse("fast"), None);
        assert_eq!(parse("-1"), None);
        assert_eq!(parse("0"), None);
    }
}
