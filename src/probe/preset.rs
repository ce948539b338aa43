//! The shipped preset nearest to the measured policy, and how it differs:
//! "this SDK behaves like envoy-default, except it retries 500".

use serde::Serialize;

use super::compare::{self, Depth, Difference};
use super::infer::InferredPolicy;
use super::render;
use crate::topology::Presets;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PresetMatch {
    pub name: String,
    pub differences: Vec<Difference>,
}

/// The preset with the fewest differences (ties: the first by name).
pub(crate) fn nearest(inferred: &InferredPolicy, presets: &Presets) -> Option<PresetMatch> {
    presets
        .names()
        .filter_map(|name| {
            let policy = render::load_policy(name, None, presets).ok()?;
            let c = compare::compare(inferred, &policy, None, Depth::Detailed);
            Some((compare::distance(&c), name.to_owned(), c.differences))
        })
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)))
        .map(|(_, name, differences)| PresetMatch { name, differences })
}
