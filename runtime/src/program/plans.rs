//! The plans of a contract's signals, prepared once with its program
//! ([`Program::windows`](super::Program::windows), `::scores`): per window, its
//! roots and where its aggregates sit among a record's signals; per
//! `score` site that can be computed before the rules, its model and
//! features. Both engines and the signals component read them.

use ir::{TypeId, TypeTable};

use super::NodeId;
use crate::window::{ArgKind, WindowShape};

/// How a program computes one window: its roots, and where its aggregates
/// sit among all of the contract's ([`Signals`](crate::record_signals::Signals)).
#[derive(Clone, Debug)]
pub struct WindowPlan {
    pub name: String,
    /// Per aggregate: its argument's kind (`ArgKind::None` for `count()`)
    /// and the aggregate's type.
    pub aggregates: Vec<(ArgKind, TypeId)>,
    /// The index of its first aggregate in a record's [`Signals`](crate::record_signals::Signals).
    pub first: usize,
    pub shape: WindowShape,
    /// The nodes a record's window inputs are computed from, in the order
    /// `window_inputs` reads them: the key, the time, then each argument.
    pub roots: Vec<NodeId>,
}

impl WindowPlan {
    /// The plans of a contract's windows, in declaration order.
    pub fn of(contract: &ir::Contract) -> Vec<WindowPlan> {
        let mut first = 0;
        contract
            .windows
            .iter()
            .map(|w| {
                let aggregates: Vec<(ArgKind, TypeId)> = w
                    .aggregates
                    .iter()
                    .map(|a| {
                        (a.arg.map_or(ArgKind::None, |arg| arg_kind(contract, contract.expr(arg).ty)), a.ty)
                    })
                    .collect();
                let shape = WindowShape {
                    span: w.span,
                    grace: w.grace,
                    aggregates: w
                        .aggregates
                        .iter()
                        .zip(&aggregates)
                        .map(|(a, (kind, _))| (a.kind, *kind))
                        .collect(),
                };
                let roots = w.roots().map(|id| id.0).collect();
                let plan = WindowPlan { name: w.name.clone(), aggregates, first, shape, roots };
                first += w.aggregates.len();
                plan
            })
            .collect()
    }
}

/// The kind of an aggregate argument of type `ty` (the verifier allows
/// only these).
fn arg_kind(contract: &ir::Contract, ty: TypeId) -> ArgKind {
    match ty {
        TypeTable::INT => ArgKind::Int,
        TypeTable::DECIMAL => ArgKind::Decimal,
        TypeTable::FLOAT => ArgKind::Float,
        TypeTable::TIMESTAMP => ArgKind::Timestamp,
        TypeTable::DURATION => ArgKind::Duration,
        TypeTable::BOOL => ArgKind::Bool,
        _ if contract.types.is_stringy(ty) => ArgKind::Str,
        _ => ArgKind::None,
    }
}

/// A `score(model, features)` whose features read no lambda parameter, so
/// they can be computed for a record before its rules run.
#[derive(Clone, Debug)]
pub struct ScorePlan {
    /// The `score` expression.
    pub node: NodeId,
    pub model: u32,
    pub features: NodeId,
}

impl ScorePlan {
    /// The contract's score sites computed ahead, in expression order.
    pub fn of(contract: &ir::Contract) -> Vec<ScorePlan> {
        (0..contract.exprs.len())
            .filter_map(|i| {
                let id = ir::ExprId::from_index(i);
                match contract.expr(id).kind {
                    ir::ExprKind::Score { model, features }
                        if !reads_free_local(contract, features, &mut Vec::new()) =>
                    {
                        Some(ScorePlan { node: id.0, model: model.0, features: features.0 })
                    }
                    _ => None,
                }
            })
            .collect()
    }
}

/// Whether expression `id` reads a lambda parameter that it does not bind
/// itself (`bound`: the parameters of the lambdas around it within the
/// expression). Lets read no parameters, so they are not followed.
fn reads_free_local(contract: &ir::Contract, id: ir::ExprId, bound: &mut Vec<ir::LocalId>) -> bool {
    match &contract.expr(id).kind {
        ir::ExprKind::Local(local) => !bound.contains(local),
        ir::ExprKind::Lambda { list, param, body, .. } => {
            if reads_free_local(contract, *list, bound) {
                return true;
            }
            bound.push(*param);
            let free = reads_free_local(contract, *body, bound);
            bound.pop();
            free
        }
        kind => {
            let mut free = false;
            kind.for_each_child(|child| free = free || reads_free_local(contract, child, bound));
            free
        }
    }
}
