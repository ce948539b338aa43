//! Cycles in a traced call graph. Real systems call back (a login service
//! redirecting to the app that called it); the analysis needs a DAG, so
//! the calls that close a cycle are found here, to be left out by name
//! rather than the whole export refused.

/// The back edges of a depth-first walk over `n` nodes and the directed
/// `edges` (indices into it), each with its cycle: the nodes from the
/// edge's target round to its target again. The walk starts at the nodes
/// nobody calls, in index order, then at `roots` (where the traces
/// start), then at any left (a cycle with no way in), and follows each
/// node's edges in their order: the same input gives the same cuts.
pub(crate) fn back_edges(
    n: usize,
    edges: &[(usize, usize)],
    roots: &[usize],
) -> Vec<(usize, Vec<usize>)> {
    let mut out_edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut called = vec![false; n];
    for (i, &(from, to)) in edges.iter().enumerate() {
        out_edges[from].push(i);
        called[to] = true;
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark = vec![Mark::New; n];
    // Where each node on the current path sits in `path`.
    let mut depth = vec![0usize; n];
    let mut cut = Vec::new();
    let starts = (0..n)
        .filter(|&v| !called[v])
        .chain(roots.iter().copied())
        .chain(0..n);
    for start in starts {
        if mark[start] != Mark::New {
            continue;
        }
        // (node, next of its edges to follow)
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        let mut path: Vec<usize> = vec![start];
        mark[start] = Mark::OnPath;
        depth[start] = 0;
        while let Some(top) = stack.last_mut() {
            let v = top.0;
            let Some(&e) = out_edges[v].get(top.1) else {
                mark[v] = Mark::Done;
                stack.pop();
                path.pop();
                continue;
            };
            top.1 += 1;
            let to = edges[e].1;
            match mark[to] {
                Mark::New => {
                    mark[to] = Mark::OnPath;
                    depth[to] = path.len();
                    path.push(to);
                    stack.push((to, 0));
                }
                Mark::OnPath => {
                    let mut cycle = path[depth[to]..].to_vec();
                    cycle.push(to);
                    cut.push((e, cycle));
                }
                Mark::Done => {}
            }
        }
    }
    cut
}

/// A cycle as `a → b → a`; a long one by its ends and a count.
pub fn text(names: &[&str]) -> String {
    if names.len() <= 8 {
        return names.join(" → ");
    }
    format!(
        "{} → … ({} more) → {}",
        names[..3].join(" → "),
        names.len() - 6,
        names[names.len() - 3..].join(" → ")
    )
}

#[cfg(test)]
mod tests {
    use super::{back_edges, text};

    #[test]
    fn a_call_back_to_the_caller_is_the_back_edge() {
        // 0 → 1 → 2 → 1, 0 → 2
        let cut = back_edges(3, &[(0, 1), (1, 2), (2, 1), (0, 2)], &[]);
        assert_eq!(cut, [(2, vec![1, 2, 1])]);
    }

    #[test]
    fn a_cycle_nobody_enters_is_cut_once() {
        let cut = back_edges(2, &[(0, 1), (1, 0)], &[]);
        assert_eq!(cut, [(1, vec![0, 1, 0])]);
        // Entered where the trace starts.
        let cut = back_edges(2, &[(0, 1), (1, 0)], &[1]);
        assert_eq!(cut, [(0, vec![1, 0, 1])]);
    }

    #[test]
    fn a_dag_has_none() {
        assert!(back_edges(4, &[(0, 1), (0, 2), (1, 3), (2, 3)], &[]).is_empty());
    }

    #[test]
    fn a_long_cycle_is_shortened() {
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "a"];
        assert_eq!(text(&names), "a → b → c → … (4 more) → h → i → a");
        assert_eq!(text(&["a", "b", "a"]), "a → b → a");
    }
}
