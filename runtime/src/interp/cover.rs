//! `rulec test --coverage`: the evaluation, then what it covered: each
//! rule's outcome, the value each operand of a condition's `&&`/`||` tree
//! had when the short-circuit evaluation reached it, the lets computed
//! (by the rules, or by the windows for every record), and the table rows
//! lookups found.

use ir::{ExprId, ExprKind, RuleId};

use super::explain::is_junction;
use super::{Frame, Interpreter, Memo};
use crate::program::context::Context;
use crate::record_signals::Signals;
use crate::result::{Coverage, Evaluation};
use crate::semantics::budget::{Budget, OutOfTime};
use crate::value::Value;
use crate::value::data::RecordRef;

impl<'p> Interpreter<'p> {
    /// Evaluates and records what the evaluation covered.
    pub fn cover(
        self,
        context: &Context,
        input: RecordRef<'_>,
        signals: Signals<'_>,
        budget: &Budget,
    ) -> Result<(Evaluation<'p>, Coverage), OutOfTime> {
        let mut frame = Frame::new(self, context, input, signals, true, budget);
        let evaluation = frame.run(context)?;
        let coverage = frame.coverage(context);
        Ok((evaluation, coverage))
    }
}

impl<'p: 'a, 'a> Frame<'p, 'a> {
    fn coverage(&mut self, context: &Context) -> Coverage {
        let c = &self.p.contract;
        let mut coverage = Coverage::default();
        let mut reached: Vec<ExprId> = Vec::new();
        for i in 0..c.rules.len() {
            let id = RuleId::from_index(i);
            let outcome = match &self.scratch.rules[self.memo(id)] {
                Memo::Done(done) if self.p.rules[i].applies(context) => Some(done.fired),
                _ => None,
            };
            let mut parts = Vec::new();
            if outcome.is_some() {
                parts = self.operands(c.rules[i].when);
                reached.extend(parts.iter().filter(|(_, v)| v.is_some()).map(|(e, _)| *e));
            }
            if outcome == Some(true) {
                let rule = &c.rules[i];
                let templates =
                    rule.verdict.iter().map(|v| &v.message).chain(rule.finding.iter().map(|f| &f.message));
                reached.extend(templates.flat_map(|t| t.exprs()));
                reached.extend(rule.effects.iter().map(|e| e.value));
            }
            coverage.rules.push(outcome);
            coverage.conditions.push(parts);
        }
        coverage.lets =
            self.scratch.lets.iter().map(|m| matches!(m, Memo::Done(_) | Memo::Failed(_))).collect();
        // Windows read their expressions (and the lets in them) for every
        // record, in the signals pass before the rules.
        let windows = c
            .windows
            .iter()
            .flat_map(|w| [w.key, w.time].into_iter().chain(w.aggregates.iter().filter_map(|a| a.arg)));
        let mut stack: Vec<ExprId> = windows.collect();
        reached.extend(stack.iter().copied());
        while let Some(id) = stack.pop() {
            if let ExprKind::Let(l) = c.expr(id).kind
                && !std::mem::replace(&mut coverage.lets[l.index()], true)
            {
                stack.push(c.lets[l.index()].value);
            }
            stack.extend(c.expr(id).kind.children());
        }
        for (l, computed) in coverage.lets.iter().enumerate() {
            if *computed {
                reached.push(c.lets[l].value);
            }
        }
        coverage.rows = self.rows_found(&reached);
        coverage
    }

    /// The operands of the `&&`/`||` tree at `root` that are not
    /// themselves `&&`/`||`, each with its value when evaluation reached it.
    fn operands(&mut self, root: ExprId) -> Vec<(ExprId, Option<bool>)> {
        let tree = self.short_circuit(root);
        let leaves = tree.into_iter().filter(|(id, _)| !is_junction(&self.p.contract.expr(*id).kind));
        leaves
            .map(|(id, value)| {
                (
                    id,
                    match value {
                        Some(Ok(Value::Bool(b))) => Some(b),
                        _ => None,
                    },
                )
            })
            .collect()
    }

    /// The rows the lookups under `roots` found; a lookup inside a lambda
    /// (`any(tags, t => t in bad)`) for each element of the lambda's list.
    fn rows_found(&mut self, roots: &[ExprId]) -> Vec<(u32, u32)> {
        let mut found = Vec::new();
        let mut stack: Vec<ExprId> = roots.to_vec();
        let mut seen = vec![false; self.p.contract.exprs.len()];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id.index()], true) {
                continue;
            }
            let kind = &self.p.contract.expr(id).kind;
            if let ExprKind::Lambda { list, param, body, .. } = *kind {
                stack.push(list);
                found.extend(self.rows_found_per_element(list, param, body));
                continue;
            }
            if let ExprKind::TableGet { table, key } | ExprKind::TableHas { table, key } = *kind
                && let Ok(value) = self.eval(key.0)
                && let Some(row) = self.p.tables[table.index()].row(&value)
            {
                found.push((table.0, row));
            }
            stack.extend(kind.children());
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The rows the lookups in a lambda's `body` found, with its `param`
    /// bound to each element of `list` in turn (each element, whether or
    /// not `any`/`all` stopped before it: rows are matched by the data,
    /// as lookups outside lambdas are counted in both branches of `?:`).
    fn rows_found_per_element(&mut self, list: ExprId, param: ir::LocalId, body: ExprId) -> Vec<(u32, u32)> {
        let Ok(items) = self.eval(list.0) else { return Vec::new() };
        let element = self.p.contract.locals[param.index()];
        let mut found = Vec::new();
        for i in 0..items.list_len() {
            self.scratch.locals[param.index()] = items.list_get(&self.p.layouts, element, i);
            found.extend(self.rows_found(&[body]));
        }
        found
    }
}
