//! Strongly connected components (Tarjan) and one cycle through a component.

use std::collections::VecDeque;

/// The components of more than one node of the graph `adj` (node `i` has edges to `adj[i]`), each
/// sorted, in order of their smallest node.
pub fn loops(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut t = Tarjan {
        adj,
        index: vec![usize::MAX; adj.len()],
        low: vec![0; adj.len()],
        on_stack: vec![false; adj.len()],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..adj.len() {
        if t.index[v] == usize::MAX {
            t.visit(v);
        }
    }
    let mut out: Vec<Vec<usize>> = t.out.into_iter().filter(|c| c.len() > 1).collect();
    for c in &mut out {
        c.sort_unstable();
    }
    out.sort();
    out
}

struct Tarjan<'a> {
    adj: &'a [Vec<usize>],
    index: Vec<usize>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    out: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    /// Recursive; the graphs are a crate's files, a few hundred nodes at most.
    fn visit(&mut self, v: usize) {
        self.index[v] = self.next;
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.adj[v] {
            if self.index[w] == usize::MAX {
                self.visit(w);
                self.low[v] = self.low[v].min(self.low[w]);
            } else if self.on_stack[w] {
                self.low[v] = self.low[v].min(self.index[w]);
            }
        }
        if self.low[v] == self.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            self.out.push(comp);
        }
    }
}

/// A shortest cycle from the first node of `comp` back to itself inside the component, as the list
/// of nodes visited (first node not repeated at the end).
pub fn cycle(adj: &[Vec<usize>], comp: &[usize]) -> Vec<usize> {
    let start = comp[0];
    let mut from = vec![usize::MAX; adj.len()];
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &adj[v] {
            if !comp.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![v];
                let mut at = v;
                while at != start {
                    at = from[at];
                    path.push(at);
                }
                path.reverse();
                return path;
            }
            if from[w] == usize::MAX {
                from[w] = v;
                queue.push_back(w);
            }
        }
    }
    comp.to_vec()
}
