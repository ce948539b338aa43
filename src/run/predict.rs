//! The static prediction a run is compared with: DESIGN's worst-case
//! amplification per service. Kept tiny on purpose, so it can be swapped for
//! the linter's analysis of the same definition.

use crate::topology::Topology;
use crate::topology::graph::topo_order;

/// Attempts that reach each service (indexed like `t.services`) for one user
/// request when every call fails retryably: the sum over call paths from the
/// entry of the product of `max_attempts` of every layer on the path, client
/// layer included. Dynamic programming in topological order, saturating u128.
pub fn predicted_amplification(t: &Topology) -> Vec<f64> {
    let mut reach = vec![0u128; t.services.len()];
    if let Some(r) = reach.get_mut(t.entry) {
        *r = t
            .client
            .as_ref()
            .map_or(1, |c| u128::from(c.policy.max_attempts));
    }
    for s in topo_order(t) {
        let here = reach[s];
        if here == 0 {
            continue;
        }
        for call in &t.services[s].calls {
            let per_call = call.layers.iter().fold(1u128, |acc, l| {
                acc.saturating_mul(u128::from(l.policy.max_attempts))
            });
            reach[call.to] = reach[call.to].saturating_add(here.saturating_mul(per_call));
        }
    }
    reach.into_iter().map(|n| n as f64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(text: &str) -> Topology {
        crate::topology::load_str(text, "t.yaml", "t", &Default::default()).unwrap()
    }

    #[test]
    fn chain_multiplies_layers() {
        let t = topo(
            "version: 1\nentry: e\nclient: { retry: { max_attempts: 2 } }\nservices:\n  e: { calls: [ { to: a, retry: { max_attempts: 4 } } ] }\n  a: { calls: [ { to: b, retry: { max_attempts: 4 }, via: [ { name: mesh, retry: { max_attempts: 3 } } ] } ] }\n  b: {}\n",
        );
        assert_eq!(predicted_amplification(&t), [2.0, 8.0, 96.0]);
    }

    #[test]
    fn diamonds_sum_paths_and_saturate() {
        let mut text = String::from("version: 1\nentry: s0\nservices:\n");
        for i in 0..64 {
            text += &format!(
                "  s{i}: {{ calls: [ {{ to: l{i}, retry: {{ max_attempts: 100 }} }}, {{ to: r{i}, retry: {{ max_attempts: 100 }} }} ] }}\n  l{i}: {{ calls: [ {{ to: s{n}, retry: {{ max_attempts: 100 }} }} ] }}\n  r{i}: {{ calls: [ {{ to: s{n}, retry: {{ max_attempts: 100 }} }} ] }}\n",
                n = i + 1
            );
        }
        text += "  s64: {}\n";
        let t = topo(&text);
        let a = predicted_amplification(&t);
        let s1 = t.id_of("s1").unwrap();
        assert_eq!(a[s1], 20_000.0);
        let last = t.id_of("s64").unwrap();
        assert_eq!(a[last], u128::MAX as f64);
    }
}
