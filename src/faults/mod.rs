//! Fault scenarios: what goes wrong, where and when (docs/chaos.md, "A fault scenario").
//!
//! A scenario is plain data shared by the simulator and the chaos harness. Each
//! fault kind lives in its own file behind [`FaultKind`] and only says what to
//! do to one affected request ([`Effect`]); the simulator applies the effect in
//! virtual time, the chaos servers to real requests. Whether a request is
//! affected at all — the phase in time, the target, the `ratio` dice — is
//! decided in [`FaultPlan::effect`], and nowhere else.
//!
//! The kinds are declared in one list, below: adding a kind is its file plus
//! one line there.

pub mod delay;
pub mod down;
pub mod hang;
pub mod load;
pub mod overload;
pub mod reset;
pub mod status;
pub mod surge;

pub mod effect;
pub mod plan;
pub mod scenario;
pub mod target;

use crate::input::fields::Fields;
use crate::input::yaml::Node;
use crate::policy::Rng;
use crate::topology::LoadError;

pub(crate) use delay::Delay;
pub(crate) use down::Down;
pub(crate) use hang::Hang;
pub use load::{load, load_str};
pub(crate) use overload::Overload;
pub use reset::Reset;
pub use status::Status;
pub use surge::Surge;

pub(crate) use effect::{Effect, FaultKind};
pub(crate) use plan::FaultPlan;
pub(crate) use scenario::Phase;
pub use scenario::Scenario;
pub use target::Target;
pub(crate) use target::{TargetAt, UnknownTarget};

/// Declares the fault kinds: the [`Inject`] enum with one variant per kind,
/// [`KINDS`], and the dispatch from a `kind:` name to its reader.
macro_rules! fault_kinds {
    ($($kind:ident),* $(,)?) => {
        /// The fault of one phase: one of the kinds.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Inject {
            $($kind($kind),)*
        }

        /// Every kind's `kind:` name, in declaration order.
        pub(crate) const KINDS: &[&str] = &[$(<$kind as FaultKind>::NAME),*];

        impl Inject {
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Inject::$kind(_) => <$kind as FaultKind>::NAME,)*
                }
            }

            pub(crate) fn effect(&self, rng: &mut Rng) -> Effect {
                match self {
                    $(Inject::$kind(k) => k.effect(rng),)*
                }
            }

            pub fn describe(&self) -> String {
                match self {
                    $(Inject::$kind(k) => k.describe(),)*
                }
            }

            /// Reads the `inject:` map `node` of kind `kind`, with its ratio;
            /// `None` when no kind has that name.
            pub(crate) fn read(
                kind: &str,
                f: Fields,
                node: &Node,
            ) -> Option<Result<(Inject, f64), LoadError>> {
                $(
                    if kind == <$kind as FaultKind>::NAME {
                        return Some(load::read_kind::<$kind>(f, node, Inject::$kind));
                    }
                )*
                None
            }
        }
    };
}

fault_kinds! {
    Status,
    Delay,
    Hang,
    Reset,
    Down,
    Overload,
    Surge,
}
