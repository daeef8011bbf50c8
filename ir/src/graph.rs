//! Graphs of a contract's declarations (lets, rules, windows read by each
//! other): finding a cycle, which the checker reports and the verifier
//! refuses.

/// A cycle in the graph, as the nodes along it with the first repeated at
/// the end, found by an iterative depth-first search.
pub fn find_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnStack,
        Done,
    }
    let mut mark = vec![Mark::New; edges.len()];
    for start in 0..edges.len() {
        if mark[start] != Mark::New {
            continue;
        }
        // Each frame: a node and the index of its next edge to follow.
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        mark[start] = Mark::OnStack;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&target) = edges[node].get(*next) {
                *next += 1;
                match mark[target] {
                    Mark::New => {
                        mark[target] = Mark::OnStack;
                        stack.push((target, 0));
                    }
                    Mark::OnStack => {
                        let from = stack.iter().position(|(n, _)| *n == target).unwrap_or(0);
                        let mut cycle: Vec<usize> = stack[from..].iter().map(|(n, _)| *n).collect();
                        cycle.push(target);
                        return Some(cycle);
                    }
                    Mark::Done => {}
                }
            } else {
                mark[node] = Mark::Done;
                stack.pop();
            }
        }
    }
    None
}
