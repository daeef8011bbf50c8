//! `--explain`: the evaluation, then per rule whether it applied and
//! fired, the value of its condition and of each operand of its `&&`/`||`
//! tree that evaluation reached (and of their own operands), of the lets
//! its condition reads, and of the window aggregates and scores it and
//! those lets read.

use ir::{ExprId, ExprKind, RuleId};

use super::{Frame, Interpreter, Memo};
use crate::program::context::Context;
use crate::record_signals::Signals;
use crate::result::{Condition, Evaluation, RuleTrace};
use crate::semantics::budget::{Budget, OutOfTime};
use crate::semantics::error::Fault;
use crate::value::Value;
use crate::value::data::RecordRef;

impl<'p> Interpreter<'p> {
    /// Evaluates and also traces each rule for `--explain`.
    pub fn explain(
        self,
        context: &Context,
        input: RecordRef<'_>,
        signals: Signals<'_>,
        budget: &Budget,
    ) -> Result<(Evaluation<'p>, Vec<RuleTrace>), OutOfTime> {
        let mut frame = Frame::new(self, context, input, signals, true, budget);
        let evaluation = frame.run(context)?;
        let rules = self.program.contract.rules.len();
        let traces = (0..rules).map(|i| frame.trace(context, RuleId::from_index(i))).collect();
        Ok((evaluation, traces))
    }
}

impl<'p: 'a, 'a> Frame<'p, 'a> {
    /// The `--explain` trace of one rule, after the evaluation ran.
    pub(super) fn trace(&mut self, context: &Context, id: RuleId) -> RuleTrace {
        let rule = &self.p.contract.rules[id.index()];
        let applied = self.p.rules[id.index()].applies(context);
        let fired = match &self.scratch.rules[self.memo(id)] {
            Memo::Done(done) => Some(Ok(done.fired)),
            Memo::Failed(fault) => Some(Err(fault.error().to_string())),
            Memo::Todo | Memo::Busy => None,
        };
        let mut conditions = Vec::new();
        if fired.is_some() {
            conditions = self.conditions(rule.when);
        }
        let mut lets = Vec::new();
        let read = if fired.is_some() { lets_read(&self.p.contract, rule.when) } else { Vec::new() };
        for l in read {
            let value = match &self.scratch.lets[l as usize] {
                Memo::Done(v) => self.show(self.p.contract.lets[l as usize].ty, v),
                Memo::Failed(fault) => format!("error: {}", fault.error()),
                Memo::Todo | Memo::Busy => "not computed".to_string(),
            };
            lets.push((self.p.contract.lets[l as usize].name.clone(), value));
        }
        let mut signals = Vec::new();
        if fired.is_some() {
            let roots = std::iter::once(rule.when).chain(
                lets_read(&self.p.contract, rule.when)
                    .into_iter()
                    .map(|l| self.p.contract.lets[l as usize].value),
            );
            for signal in signals_read(self.p, roots) {
                let text = ir::print::expr(&self.p.contract, signal);
                let value = match self.eval(signal.0) {
                    Ok(v) => self.show(self.p.contract.expr(signal).ty, &v),
                    Err(f) => format!("error: {}", f.into_error()),
                };
                signals.push((text, value));
            }
        }
        RuleTrace { rule: id, applied, fired, conditions, lets, signals }
    }
}

/// The operands of `id` whose values explain it: its children, or for a
/// membership test reached through a let or negated (`x not in t`,
/// `!(x in list)`, a let `t_has: x in t`, or the let the compiler makes of
/// a test several rules write) the test's own, whose values say more than
/// the test's (the line above shows it). The CLI matches them with the
/// operands as written (`cli/src/written.rs`, `operands`), which look
/// through the same way.
fn shown_operands(c: &ir::Contract, id: ExprId) -> Vec<ExprId> {
    let test = match &c.expr(id).kind {
        ExprKind::Unary { op: ir::UnaryOp::Not, arg } => membership(c, *arg),
        _ => membership(c, id),
    };
    c.expr(test.unwrap_or(id)).kind.children()
}

/// The membership test `id` is, directly or as a let's value.
fn membership(c: &ir::Contract, id: ExprId) -> Option<ExprId> {
    match &c.expr(id).kind {
        ExprKind::TableHas { .. } | ExprKind::InList { .. } => Some(id),
        ExprKind::Let(l) => membership(c, c.lets[l.index()].value),
        _ => None,
    }
}

impl<'p: 'a, 'a> Frame<'p, 'a> {
    /// The rule condition `root` and the operands of its `&&`/`||` tree,
    /// depth first, with their values.
    fn conditions(&mut self, root: ExprId) -> Vec<Condition> {
        let c = &self.p.contract;
        let mut out = Vec::new();
        for (id, value) in self.short_circuit(root) {
            let kind = &c.expr(id).kind;
            let mut operands = Vec::new();
            if value.is_some() && !is_junction(kind) {
                for child in shown_operands(c, id) {
                    if !matches!(c.expr(child).kind, ExprKind::Const(_)) {
                        operands.push((child, ir::print::expr(c, child), self.shown(child)));
                    }
                }
            }
            let value = value.map(|v| self.rendered(id, v));
            out.push(Condition { expr: id, text: ir::print::expr(c, id), value, operands });
        }
        out
    }

    /// `root` and, when it is `&&` or `||`, its operands, depth first, each
    /// with its value when short-circuit evaluation reaches it (`&&` needs
    /// its right side when the left is true, `||` when it is false): the one
    /// walk `--explain` and `rulec test --coverage` share.
    pub(super) fn short_circuit(&mut self, root: ExprId) -> Vec<(ExprId, Option<Result<Value<'a>, Fault>>)> {
        let mut out = Vec::new();
        self.junctions(root, true, &mut out);
        out
    }

    fn junctions(
        &mut self,
        id: ExprId,
        reached: bool,
        out: &mut Vec<(ExprId, Option<Result<Value<'a>, Fault>>)>,
    ) {
        let kind = self.p.contract.expr(id).kind.clone();
        out.push((id, reached.then(|| self.eval(id.0))));
        if let ExprKind::And { lhs, rhs } | ExprKind::Or { lhs, rhs } = kind {
            let and = matches!(kind, ExprKind::And { .. });
            let left = out.len();
            self.junctions(lhs, reached, out);
            let right = matches!(out[left].1, Some(Ok(Value::Bool(b))) if b == and);
            self.junctions(rhs, right, out);
        }
    }

    /// The value of `id`, as `--explain` shows values.
    fn shown(&mut self, id: ExprId) -> String {
        let value = self.eval(id.0);
        self.rendered(id, value)
    }

    fn rendered(&self, id: ExprId, value: Result<Value<'a>, Fault>) -> String {
        match value {
            Ok(v) => self.show(self.p.contract.expr(id).ty, &v),
            Err(f) => format!("error: {}", f.into_error()),
        }
    }
}

/// Whether `kind` is `&&` or `||`.
pub(super) fn is_junction(kind: &ExprKind) -> bool {
    matches!(kind, ExprKind::And { .. } | ExprKind::Or { .. })
}

/// The window aggregates and scores the expressions `roots` read
/// directly, in first-use order, each once. A score over a lambda's
/// parameter has a value per element, not one to show: only the scores
/// computed ahead of the rules (`Program::scores`) are listed.
fn signals_read(p: &crate::program::Program, roots: impl Iterator<Item = ir::ExprId>) -> Vec<ir::ExprId> {
    let c = &p.contract;
    let shown = |id: ir::ExprId, kind: &ir::ExprKind| match kind {
        ir::ExprKind::Window { .. } => true,
        ir::ExprKind::Score { .. } => p.scores.iter().any(|site| site.node == id.0),
        _ => false,
    };
    let mut out: Vec<ir::ExprId> = Vec::new();
    for root in roots {
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            let kind = &c.expr(id).kind;
            if shown(id, kind) && !out.iter().any(|seen| c.expr(*seen).kind == *kind) {
                out.push(id);
            }
            let mut children = kind.children();
            children.reverse();
            stack.extend(children);
        }
    }
    out
}

/// The lets an expression reads directly, in first-use order.
fn lets_read(c: &ir::Contract, root: ir::ExprId) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        let kind = &c.expr(id).kind;
        if let ir::ExprKind::Let(l) = kind
            && !out.contains(&l.0)
        {
            out.push(l.0);
        }
        let mut children = kind.children();
        children.reverse();
        stack.extend(children);
    }
    out
}
