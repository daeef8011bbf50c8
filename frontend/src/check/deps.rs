//! Dependencies among lets and rules: cycles are reported, and lets are
//! ordered so each is checked after the lets it reads.
//!
//! Edges come from the syntax: a name that resolves to a let (not hidden
//! by a lambda parameter) and `rules.<id>` in a rule's `when` or a let.

use std::collections::HashMap;

use ir::LetId;

use super::Checker;
use crate::ast::{Expr, ExprKind};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::Span;

/// At most this many cycles are reported.
const MAX_CYCLES: usize = 20;

impl Checker<'_> {
    /// Reports cycles and returns the lets to check, dependencies first.
    pub(super) fn dependencies(&mut self) -> Vec<LetId> {
        let lets = self.ast.lets.len();
        let nodes = lets + self.ast.rules.len();
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); nodes];
        let mut spans: HashMap<(usize, usize), Span> = HashMap::new();
        let roots = self
            .ast
            .lets
            .iter()
            .map(|l| l.value.as_ref())
            .chain(self.ast.rules.iter().map(|r| r.when.as_ref()));
        for (node, root) in roots.enumerate() {
            let mut found = Vec::new();
            if let Some(root) = root {
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
        for _ in 0..MAX_CYCLES {
            let Some(cycle) = ir::verify::find_cycle(&edges) else { break };
            self.report_cycle(&cycle, &spans);
            for &node in &cycle {
                poisoned[node] = true;
                edges[node].clear();
            }
        }
        let let_edges: Vec<Vec<usize>> = edges
            .iter()
            .take(lets)
            .map(|targets| targets.iter().copied().filter(|&t| t < lets).collect())
            .collect();
        postorder(&let_edges).into_iter().filter(|&n| !poisoned[n]).map(LetId::from_index).collect()
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
        let lets = self.ast.lets.len();
        let name = |node: usize| {
            if node < lets {
                format!("let `{}`", self.ast.lets[node].name.value)
            } else {
                format!("rule `{}`", self.ast.rules[node - lets].id.value)
            }
        };
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
