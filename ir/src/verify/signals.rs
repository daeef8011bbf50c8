//! The verifier's checks of signals: the dependency graph of lets, rules
//! and windows has no cycle, windows read no rule or score, models'
//! bytes match their digests.

use std::collections::HashSet;

use crate::ids::ExprId;
use crate::limits::MAX_FEATURES;
use crate::types::TypeTable;

use super::{Dep, NodeFacts, Verifier};

impl<'a> Verifier<'a> {
    pub(super) fn dependencies(&mut self) {
        let c = self.c;
        // Graph nodes: lets first, then rules.
        let node_of = |dep: Dep| match dep {
            Dep::Let(id) => Some(id.index()),
            Dep::Rule(id) => Some(c.lets.len() + id.index()),
            Dep::Window(_) => None,
        };
        let name_of = |node: usize| {
            if node < c.lets.len() {
                format!("let `{}`", c.lets[node].name)
            } else {
                format!("rule `{}`", c.rules[node - c.lets.len()].name)
            }
        };
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); c.lets.len() + c.rules.len()];
        // A window is computed before any let or rule (its own expressions
        // are checked by `windows`), so reading one adds no edge here.
        let mut add = |node: usize, root: ExprId, facts: &[NodeFacts]| {
            edges[node].extend(facts[root.index()].deps.iter().filter_map(|d| node_of(*d)));
        };
        for (i, l) in c.lets.iter().enumerate() {
            add(i, l.value, &self.facts);
        }
        for (i, rule) in c.rules.iter().enumerate() {
            let node = c.lets.len() + i;
            add(node, rule.when, &self.facts);
        }
        if let Some(cycle) = crate::graph::find_cycle(&edges) {
            let path: Vec<String> = cycle.iter().map(|n| name_of(*n)).collect();
            self.error("dependencies", format!("cycle: {}", path.join(" -> ")));
        }
    }

    pub(super) fn windows(&mut self) {
        let c = self.c;
        self.unique_identifiers("windows", c.windows.iter().map(|w| w.name.as_str()));
        for (i, w) in c.windows.iter().enumerate() {
            let path = format!("windows[{i}] {}", w.name);
            if let Err(message) = self.window(w) {
                self.error(&path, message);
            }
            self.unique_identifiers(
                &format!("{path} aggregates"),
                w.aggregates.iter().map(|a| a.name.as_str()),
            );
            if let Some(read) = w.roots().find_map(|root| self.signal_read(root)) {
                self.error(
                    &path,
                    format!("its expressions read {read}; they may read input fields and lets only"),
                );
            }
        }
    }

    pub(super) fn window(&self, w: &crate::signals::Window) -> Result<(), String> {
        let c = self.c;
        let types = &c.types;
        if !self.is_key_type(c.expr(w.key).ty) {
            return Err("the key must be a string, int or enum".into());
        }
        if c.expr(w.time).ty != TypeTable::TIMESTAMP {
            return Err("the time must be a timestamp".into());
        }
        if w.span <= 0 || w.grace < 0 {
            return Err("the span must be positive and the grace not negative".into());
        }
        if w.aggregates.is_empty() {
            return Err("a window has at least one aggregate".into());
        }
        for a in &w.aggregates {
            let arg = a.arg.map(|id| c.expr(id).ty);
            if a.kind.result_type(types, arg) != Some(a.ty) {
                return Err(format!("the aggregate `{}` does not fit its argument's type", a.name));
            }
        }
        Ok(())
    }

    /// The first window or rule a root reads, directly or through lets.
    pub(super) fn signal_read(&self, root: ExprId) -> Option<String> {
        let c = self.c;
        let mut seen = HashSet::new();
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            for dep in &self.facts.get(id.index())?.deps {
                match *dep {
                    Dep::Window(w) => return Some(format!("window #{}", w.0)),
                    Dep::Rule(r) => return Some(format!("rule #{}", r.0)),
                    Dep::Let(l) if seen.insert(l) => stack.extend(c.lets.get(l.index()).map(|l| l.value)),
                    Dep::Let(_) => {}
                }
            }
        }
        None
    }

    pub(super) fn models(&mut self) {
        let c = self.c;
        self.unique_identifiers("models", c.models.iter().map(|m| m.name.as_str()));
        for (i, m) in c.models.iter().enumerate() {
            let path = format!("models[{i}] {}", m.name);
            if m.features == 0 || m.features > MAX_FEATURES {
                self.error(&path, format!("{} features; a model takes 1 to {MAX_FEATURES}", m.features));
            }
            if crate::digest::sha256_of(&m.bytes) != m.sha256 {
                self.error(&path, "the model's bytes do not have the recorded sha256");
            }
        }
    }
}
