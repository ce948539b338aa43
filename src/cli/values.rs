//! Numbers given to flags, read with their allowed range in every refusal: a
//! negative number is a value here, not a flag, so `--clients -1` says that
//! clients run from 1 up rather than clap's advice to write `-- -1`.

use std::fmt::Display;

/// A whole number in `min..=max`, for clap's `value_parser`.
pub fn whole<T>(min: T, max: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: Copy + Display + TryFrom<i128> + Into<i128> + Send + Sync + 'static,
{
    move |text: &str| {
        let range = format!("write a whole number from {min} to {max}");
        let n: i128 = text
            .trim()
            .parse()
            .map_err(|_| format!("not a whole number; {range}"))?;
        if n < min.into() {
            return Err(format!("{n} is below {min}; {range}"));
        }
        if n > max.into() {
            return Err(format!("{n} is above {max}; {range}"));
        }
        T::try_from(n).map_err(|_| range.clone())
    }
}

/// A number of at least `min`, for clap's `value_parser`.
pub fn at_least(min: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |text: &str| {
        let range = format!("write a number of at least {min}");
        match text.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= min => Ok(x),
            Ok(_) => Err(format!("{} is below {min}; {range}", text.trim())),
            Err(_) => Err(format!("not a number; {range}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_range() {
        let clients = whole(1u32, u32::MAX);
        assert_eq!(clients("4"), Ok(4));
        assert_eq!(
            clients("-1"),
            Err("-1 is below 1; write a whole number from 1 to 4294967295".into())
        );
        assert_eq!(
            clients("4294967296"),
            Err("4294967296 is above 4294967295; write a whole number from 1 to 4294967295".into())
        );
        assert_eq!(
            clients("many"),
            Err("not a whole number; write a whole number from 1 to 4294967295".into())
        );
        let amp = at_least(1.0);
        assert_eq!(amp("2.5"), Ok(2.5));
        assert_eq!(
            amp("-3"),
            Err("-3 is below 1; write a number of at least 1".into())
        );
        assert_eq!(
            amp("NaN"),
            Err("NaN is below 1; write a number of at least 1".into())
        );
    }
}
