//! The call graph: cycle detection that names the whole cycle, the entry when
//! the file leaves it implicit, and a topological order for the analyses.
//!
//! Everything here is iterative: a chain of 10,000 services must not overflow
//! the stack.

use super::model::{ServiceId, Topology};
use crate::input::error::{ErrorKind, LoadError};
use crate::input::yaml::Pos;

/// Fails on the first cycle found, naming it `a → b → c → a` at the call that
/// closes it.
pub(crate) fn check_acyclic(t: &Topology) -> Result<(), LoadError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let n = t.services.len();
    let mut mark = vec![Mark::New; n];
    for root in 0..n {
        if mark[root] != Mark::New {
            continue;
        }
        // Each frame: (service, index of the next call to follow).
        let mut stack: Vec<(ServiceId, usize)> = vec![(root, 0)];
        mark[root] = Mark::OnPath;
        while let Some(top) = stack.last_mut() {
            let (s, next) = *top;
            let calls = &t.services[s].calls;
            if next == calls.len() {
                mark[s] = Mark::Done;
                stack.pop();
                continue;
            }
            top.1 += 1;
            let call = &calls[next];
            match mark[call.to] {
                Mark::New => {
                    mark[call.to] = Mark::OnPath;
                    stack.push((call.to, 0));
                }
                Mark::OnPath => {
                    let start = stack.iter().position(|(id, _)| *id == call.to).unwrap_or(0);
                    let mut names: Vec<&str> = stack[start..]
                        .iter()
                        .map(|(id, _)| t.services[*id].name.as_str())
                        .collect();
                    names.push(&t.services[call.to].name);
                    return Err(LoadError::new(
                        ErrorKind::Graph,
                        &t.file,
                        Some(call.pos),
                        format!("cycle in the call graph: {}", cycle_text(&names)),
                    )
                    .with_help(format!(
                        "calls must form a DAG: remove the call from `{}` to `{}` or break the cycle elsewhere",
                        t.services[s].name, t.services[call.to].name
                    )));
                }
                Mark::Done => {}
            }
        }
    }
    Ok(())
}

/// A cycle as `a → b → c → a`; a long one by its first and last few services
/// and a count of the rest, so that the message stays one readable line.
fn cycle_text(names: &[&str]) -> String {
    const SHOWN: usize = 4;
    if names.len() <= 2 * SHOWN + 1 {
        return names.join(" → ");
    }
    let hidden = names.len() - 2 * SHOWN;
    format!(
        "{} → … {hidden} more … → {} ({} services)",
        names[..SHOWN].join(" → "),
        names[names.len() - SHOWN..].join(" → "),
        names.len() - 1
    )
}

/// The services nobody calls, in file order: each is an entry (several
/// roots are several kinds of user traffic, e.g. a web front and a mobile
/// API). An acyclic graph always has one; none is refused all the same, as
/// the analyses need a place where user requests arrive.
pub(crate) fn infer_entries(t: &Topology, at: Pos) -> Result<Vec<ServiceId>, LoadError> {
    let mut called = vec![false; t.services.len()];
    for c in t.calls() {
        called[c.to] = true;
    }
    let roots: Vec<ServiceId> = (0..t.services.len()).filter(|&i| !called[i]).collect();
    if roots.is_empty() {
        return Err(LoadError::new(
            ErrorKind::Graph,
            &t.file,
            Some(at),
            "cannot tell the entry service: every service is called by another",
        )
        .with_help(format!(
            "add `entry: {}` (the service that receives user traffic)",
            t.services.first().map_or("web", |s| s.name.as_str())
        )));
    }
    Ok(roots)
}

/// Services in an order where every caller comes before its callees.
pub(crate) fn topo_order(t: &Topology) -> Vec<ServiceId> {
    let n = t.services.len();
    let mut indegree = vec![0usize; n];
    for c in t.calls() {
        indegree[c.to] += 1;
    }
    let mut ready: Vec<ServiceId> = (0..n).rev().filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(s) = ready.pop() {
        order.push(s);
        for c in t.services[s].calls.iter().rev() {
            indegree[c.to] -= 1;
            if indegree[c.to] == 0 {
                ready.push(c.to);
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::cycle_text;

    #[test]
    fn a_long_cycle_names_its_ends_and_counts_the_rest() {
        assert_eq!(cycle_text(&["a", "b", "a"]), "a → b → a");
        let names: Vec<String> = (0..10_000)
            .map(|i| format!("s{i}"))
            .chain(["s0".into()])
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(
            cycle_text(&names),
            "s0 → s1 → s2 → s3 → … 9993 more … → s9997 → s9998 → s9999 → s0 (10000 services)"
        );
    }
}
