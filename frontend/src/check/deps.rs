//! Dependencies among lets, rules and windows: cycles are reported, a
//! window that reads a window or a rule is reported, and lets and windows
//! are ordered so each is checked after what it reads.
//!
//! Edges come from the syntax: a name that resolves to a let (not hidden
//! by a lambda parameter), `rules.<id>` and `windows.<w>.<a>`, in a let's
//! value, a rule's `when`, or a window's key, time and aggregates.

use std::collections::HashMap;

use ir::{LetId, WindowId};

use super::Checker;
use crate::ast::{Expr, ExprKind};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::Span;

/// At most this many cycles are reported.
const MAX_CYCLES: usize = 20;

/// What the checker checks in dependency order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Item {
    Let(LetId),
    Window(WindowId),
}

impl Checker<'_> {
    /// Reports cycles and windows that read signals; returns the lets and
    /// windows to check, dependencies first. Graph nodes: lets, then
    /// rules, then windows.
    pub(super) fn dependencies(&mut self) -> Vec<Item> {
        let lets = self.ast.lets.len();
        let windows_from = lets + self.ast.rules.len();
        let nodes = windows_from + self.window_names.len();
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); nodes];
        let mut spans: HashMap<(usize, usize), Span> = HashMap::new();
        let roots = self
            .ast
            .lets
            .iter()
            .map(|l| vec![l.value.as_ref()])
            .chain(self.ast.rules.iter().map(|r| vec![r.when.as_ref()]))
            .chain(declared_windows(self.ast).map(|w| {
                [w.key.as_ref(), w.time.as_ref()]
                    .into_iter()
                    .chain(w.aggregates.iter().map(|(_, e)| e.as_ref()))
                    .collect()
            }));
        for (node, root) in roots.enumerate() {
            let mut found = Vec::new();
            for root in root.into_iter().flatten() {
                self.collect(root, &mut Vec::new(), &mut found);
            }
            for (target, span) in found {
                spans.entry((node, target)).or_insert(span);
                if !edges[node].contains(&target) {
                    edges[node].push(target);
                }
            }
        }
        let mut poisoned = vec![false; nodes];
        for window in windows_from..nodes {
            if let Some(path) = signal_path(&edges, window, lets) {
                self.report_signal_read(&path, &spans);
                poisoned[window] = true;
                edges[window].clear();
            }
        }
        for _ in 0..MAX_CYCLES {
            let Some(cycle) = ir::graph::find_cycle(&edges) else { break };
            self.report_cycle(&cycle, &spans);
            for &node in &cycle {
                poisoned[node] = true;
                edges[node].clear();
            }
        }
        // Lets and windows, renumbered without the rules between them.
        let checked = |node: usize| node < lets || node >= windows_from;
        let compact = |node: usize| if node < lets { node } else { node - windows_from + lets };
        let item_edges: Vec<Vec<usize>> = (0..nodes)
            .filter(|&n| checked(n))
            .map(|n| edges[n].iter().copied().filter(|&t| checked(t)).map(compact).collect())
            .collect();
        postorder(&item_edges)
            .into_iter()
            .map(|n| if n < lets { n } else { n - lets + windows_from })
            .filter(|&n| !poisoned[n])
            .map(|n| {
                if n < lets {
                    Item::Let(LetId::from_index(n))
                } else {
                    Item::Window(WindowId::from_index(n - windows_from))
                }
            })
            .collect()
    }

    /// The graph node a name denotes: a let, a rule or a window.
    fn node_name(&self, node: usize) -> String {
        let lets = self.ast.lets.len();
        let windows_from = lets + self.ast.rules.len();
        if node < lets {
            format!("let `{}`", self.ast.lets[node].name.value)
        } else if node < windows_from {
            format!("rule `{}`", self.ast.rules[node - lets].id.value)
        } else {
            let name = declared_windows(self.ast).nth(node - windows_from).map(|w| w.name.value.as_str());
            format!("window `{}`", name.unwrap_or("?"))
        }
    }

    fn report_signal_read(&mut self, path: &[usize], spans: &HashMap<(usize, usize), Span>) {
        // The lets on the path are used (by the window), whatever it reads.
        let lets = self.ast.lets.len();
        self.used_lets.extend(path.iter().filter(|&&n| n < lets).map(|&n| LetId::from_index(n)));
        let names: Vec<String> = path.iter().map(|&n| self.node_name(n)).collect();
        let Some(first) = spans.get(&(path[0], path[1])).copied() else { return };
        let read = names.last().cloned().unwrap_or_default();
        let mut d =
            Diagnostic::error(codes::WINDOW_READS_SIGNAL, first, format!("{} reads {read}", names[0]))
                .label(format!("{} uses {}", names[0], names[1]));
        for pair in path.windows(2).skip(1) {
            if let Some(span) = spans.get(&(pair[0], pair[1])) {
                d = d.with_label(
                    *span,
                    format!("{} uses {}", self.node_name(pair[0]), self.node_name(pair[1])),
                );
            }
        }
        self.error(d.with_help("a window is computed before the rules, from input fields and lets that read no window and no rule"));
    }

    /// The lets and rules an expression reads, with where.
    fn collect(&self, e: &Expr, scope: &mut Vec<String>, out: &mut Vec<(usize, Span)>) {
        ir::stack::guard(|| self.collect_unguarded(e, scope, out));
    }

    fn collect_unguarded(&self, e: &Expr, scope: &mut Vec<String>, out: &mut Vec<(usize, Span)>) {
        let lets = self.ast.lets.len();
        match &e.kind {
            ExprKind::Name(name) if !scope.contains(name) => {
                if let Some(id) = self.let_names.get(name) {
                    out.push((id.index(), e.span));
                }
            }
            ExprKind::Field { base, name } => match &base.kind {
                ExprKind::Name(rules) if rules == "rules" && !scope.iter().any(|s| s == "rules") => {
                    if let Some(id) = self.rule_names.get(&name.value) {
                        out.push((lets + id.index(), e.span));
                    }
                }
                ExprKind::Field { base: inner, name: window }
                    if matches!(&inner.kind, ExprKind::Name(w) if w == "windows")
                        && !scope.iter().any(|s| s == "windows") =>
                {
                    if let Some(id) = self.window_names.get(&window.value) {
                        out.push((lets + self.ast.rules.len() + id.index(), e.span));
                    }
                }
                _ => self.collect(base, scope, out),
            },
            ExprKind::Lambda { param, body } => {
                scope.push(param.value.clone());
                self.collect(body, scope, out);
                scope.pop();
            }
            ExprKind::Index { base, index } => {
                self.collect(base, scope, out);
                self.collect(index, scope, out);
            }
            // `score`'s first argument names a model, whatever else
            // (a let) has its name.
            ExprKind::Call { callee, args } if callee.value == "score" => {
                args.iter().skip(1).for_each(|a| self.collect(a, scope, out));
            }
            ExprKind::Call { args, .. } | ExprKind::List(args) => {
                args.iter().for_each(|a| self.collect(a, scope, out));
            }
            ExprKind::Unary { operand, .. } => self.collect(operand, scope, out),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.collect(lhs, scope, out);
                self.collect(rhs, scope, out);
            }
            ExprKind::Cond { cond, then, otherwise } => {
                self.collect(cond, scope, out);
                self.collect(then, scope, out);
                self.collect(otherwise, scope, out);
            }
            _ => {}
        }
    }

    fn report_cycle(&mut self, cycle: &[usize], spans: &HashMap<(usize, usize), Span>) {
        let name = |node: usize| self.node_name(node);
        let path: Vec<String> = cycle.iter().map(|&n| name(n)).collect();
        let mut labels: Vec<(Span, String)> = Vec::new();
        for pair in cycle.windows(2) {
            if let Some(span) = spans.get(&(pair[0], pair[1])) {
                labels.push((*span, format!("{} uses {}", name(pair[0]), name(pair[1]))));
            }
        }
        let Some((primary, first_label)) = labels.first().cloned() else { return };
        let mut d = Diagnostic::error(codes::CYCLE, primary, format!("cycle: {}", path.join(" -> ")))
            .label(first_label);
        for (span, label) in labels.into_iter().skip(1) {
            d = d.with_label(span, label);
        }
        self.error(d.with_help("break the cycle: one of these must not depend on the others"));
    }
}

/// The declared windows that got an id (duplicates did not), in id order.
pub(super) fn declared_windows(ast: &crate::ast::Contract) -> impl Iterator<Item = &crate::ast::WindowDecl> {
    let mut seen = std::collections::HashSet::new();
    ast.windows.iter().filter(move |w| seen.insert(w.name.value.as_str()))
}

/// A path from `window` through lets to a window or a rule (nodes at or
/// past `lets`), if there is one: what a window may not read.
fn signal_path(edges: &[Vec<usize>], window: usize, lets: usize) -> Option<Vec<usize>> {
    let mut parent: HashMap<usize, usize> = HashMap::new();
    let mut stack = vec![window];
    while let Some(node) = stack.pop() {
        for &target in &edges[node] {
            if target >= lets {
                let mut path = vec![target, node];
                let mut at = node;
                while at != window {
                    at = parent[&at];
                    path.push(at);
                }
                path.reverse();
                return Some(path);
            }
            if target != window && !parent.contains_key(&target) {
                parent.insert(target, node);
                stack.push(target);
            }
        }
    }
    None
}

/// Nodes in depth-first postorder (dependencies before dependents),
/// iteratively. Nodes on a cycle come in some order; callers drop them.
fn postorder(edges: &[Vec<usize>]) -> Vec<usize> {
    let mut visited = vec![false; edges.len()];
    let mut order = Vec::with_capacity(edges.len());
    for start in 0..edges.len() {
        if visited[start] {
            continue;
        }
        visited[start] = true;
        let mut stack = vec![(start, 0usize)];
        while let Some((node, next)) = stack.last_mut() {
            if let Some(&target) = edges[*node].get(*next) {
                *next += 1;
                if !visited[target] {
                    visited[target] = true;
                    stack.push((target, 0));
                }
            } else {
                order.push(*node);
                stack.pop();
            }
        }
    }
    order
}
