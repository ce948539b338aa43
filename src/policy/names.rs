//! The schema's words for the engine's enums, once: an enum lists its values,
//! names each with `as_str` and reads it back with `FromStr`, so the schema
//! reader, the writers, the probe and the reports cannot spell one
//! differently.

/// A word that names none of an enum's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownName;

/// How a help text lists the names: `a, b or c`.
pub(crate) fn one_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// `ALL`, `NAMES`, `as_str`, `Display` and `FromStr` for an enum without
/// fields.
macro_rules! named {
    ($t:ty { $($v:ident => $s:literal),+ $(,)? }) => {
        impl $t {
            /// Every value, in the order the schema lists them (the tests
            /// walk them all).
            #[cfg(test)]
            pub const ALL: &'static [$t] = &[$(Self::$v),+];
            /// Their names, in the same order.
            pub const NAMES: &'static [&'static str] = &[$($s),+];

            /// The name the schema gives it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$v => $s),+
                }
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $t {
            type Err = $crate::policy::names::UnknownName;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($s => Ok(Self::$v),)+
                    _ => Err($crate::policy::names::UnknownName),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::one_of;
    use crate::policy::{BackoffKind, BreakerCounts, BreakerPosition, BudgetKind, Jitter};

    #[test]
    fn every_name_reads_back_as_its_value() {
        for &k in BackoffKind::ALL {
            assert_eq!(k.as_str().parse(), Ok(k));
        }
        for &k in BreakerCounts::ALL {
            assert_eq!(k.as_str().parse(), Ok(k));
        }
        for &k in BreakerPosition::ALL {
            assert_eq!(k.as_str().parse(), Ok(k));
        }
        for &k in BudgetKind::ALL {
            assert_eq!(k.as_str().parse(), Ok(k));
        }
        for &n in Jitter::NAMES {
            assert_eq!(n.parse::<Jitter>().map(Jitter::as_str), Ok(n));
        }
        assert!(
            "fixed".parse::<BackoffKind>().is_err(),
            "an alias is the schema's"
        );
        assert_eq!(BudgetKind::NAMES[1], "token_bucket");
    }

    #[test]
    fn help_lists_names_with_a_last_or() {
        assert_eq!(one_of(["a"]), "a");
        assert_eq!(one_of(["a", "b"]), "a or b");
        assert_eq!(
            one_of(BudgetKind::NAMES.iter().copied()),
            "ratio, token_bucket, grpc_throttling or concurrency"
        );
    }
}
