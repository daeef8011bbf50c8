//! Lowering's one optimisation: work that several rules (or lets) repeat
//! is done once per evaluation.
//!
//! Contracts repeat themselves: `destination.country in sanctioned` in
//! three rules, one e-mail pattern in a dozen. First, identical
//! subexpressions become one node (hash-consing: the arena puts children
//! before parents, so one forward sweep canonicalises them). Then each
//! node that two or more owners (lets, rules) use, and that is worth
//! sharing, becomes a let of its own (`shared_0`, ...), which both engines
//! compute at most once per evaluation, on first use, as they do every
//! let.
//!
//! Only what cannot fail is shared, so no error moves: a failing
//! expression is listed under the rule or let that hit it, and a let
//! shared this way never fails by itself (a let it reads reports its own
//! failure, as it does anyway). Host functions are never merged (they may
//! not be pure), nor anything inside a lambda that reads the lambda's
//! parameter from outside the shared part.

use std::collections::HashMap;

use ir::{BinaryOp, Builtin, ExprId, ExprKind, LambdaKind, Owner, UnaryOp};

/// Merges identical subexpressions and makes those that several owners
/// use, and that cost something, lets of their own.
pub fn share(contract: &mut ir::Contract) {
    merge_identical(contract);
    hoist_shared(contract);
}

/// Points every use of a node at the first node identical to it.
fn merge_identical(contract: &mut ir::Contract) {
    let mut canonical: Vec<ExprId> = Vec::with_capacity(contract.exprs.len());
    let mut seen: HashMap<String, ExprId> = HashMap::new();
    for i in 0..contract.exprs.len() {
        let mut kind = contract.exprs[i].kind.clone();
        kind.for_each_child_mut(|child| *child = canonical.get(child.index()).copied().unwrap_or(*child));
        contract.exprs[i].kind = kind;
        let expr = &contract.exprs[i];
        if matches!(expr.kind, ExprKind::Extern { .. }) {
            canonical.push(ExprId::from_index(i));
            continue;
        }
        let key = format!("{}|{:?}", expr.ty.0, expr.kind);
        canonical.push(*seen.entry(key).or_insert(ExprId::from_index(i)));
    }
    contract.for_each_root_mut(|_, id| *id = canonical.get(id.index()).copied().unwrap_or(*id));
}

/// What sharing needs to know of a node.
#[derive(Clone, Copy, Default)]
struct Facts {
    /// It cannot fail, reads no lambda parameter from outside and calls
    /// no host function.
    safe: bool,
    /// It does work worth a let: a regex, a lookup, string work, a loop.
    costly: bool,
    /// How many owners use it (counted up to two), and the last one seen.
    owners: u8,
    last: Option<Owner>,
    /// Some use of it is not inside a node that is shared itself.
    exposed: bool,
}

fn hoist_shared(contract: &mut ir::Contract) {
    let mut facts = node_facts(contract);
    count_owners(contract, &mut facts);
    let shareable = |f: &Facts| f.safe && f.costly && f.owners >= 2;
    // A shareable node used by a node that is not (or by a root) gets a
    // let; one used only inside shared nodes is computed by their lets.
    let mut roots = Vec::new();
    contract.for_each_root_mut(|_, id| roots.push(*id));
    for root in roots {
        facts[root.index()].exposed = true;
    }
    for i in 0..contract.exprs.len() {
        if facts[i].owners == 0 || shareable(&facts[i]) {
            continue;
        }
        contract.exprs[i].kind.for_each_child(|child| facts[child.index()].exposed = true);
    }
    let mut names = TakenNames::new(contract);
    let mut let_of: HashMap<usize, ExprId> = HashMap::new();
    for (i, f) in facts.iter().enumerate() {
        if !(shareable(f) && f.exposed) {
            continue;
        }
        let id = ir::LetId::from_index(contract.lets.len());
        let ty = contract.exprs[i].ty;
        contract.lets.push(ir::Let { name: names.fresh(), ty, value: ExprId::from_index(i) });
        let reference = ExprId::from_index(contract.exprs.len());
        contract.exprs.push(ir::Expr { ty, kind: ExprKind::Let(id) });
        let_of.insert(i, reference);
    }
    if let_of.is_empty() {
        return;
    }
    // Uses of a shared node read its let, except its own let's value.
    let redirect = |id: &mut ExprId| {
        if let Some(reference) = let_of.get(&id.index()) {
            *id = *reference;
        }
    };
    let originals = contract.exprs.len() - let_of.len();
    for expr in &mut contract.exprs[..originals] {
        expr.kind.for_each_child_mut(redirect);
    }
    let shared_lets = contract.lets.len() - let_of.len();
    contract.for_each_root_mut(|owner, id| {
        if !matches!(owner, Owner::Let(l) if l >= shared_lets) {
            redirect(id);
        }
    });
    // The let references come last, after their values: the arena must
    // keep children before parents, so parents that now read a let move
    // after it.
    reorder(contract);
}

/// Safety and cost of every node, children first.
fn node_facts(contract: &ir::Contract) -> Vec<Facts> {
    let mut facts: Vec<Facts> = Vec::with_capacity(contract.exprs.len());
    let mut free_locals: Vec<Vec<u32>> = Vec::with_capacity(contract.exprs.len());
    for expr in &contract.exprs {
        let mut safe = infallible(&expr.kind);
        let mut costly = costly(&expr.kind);
        let mut free = Vec::new();
        expr.kind.for_each_child(|child| {
            let f = facts[child.index()];
            safe &= f.safe;
            costly |= f.costly;
            free.extend_from_slice(&free_locals[child.index()]);
        });
        match &expr.kind {
            ExprKind::Local(local) => free.push(local.0),
            ExprKind::Lambda { param, .. } => free.retain(|l| *l != param.0),
            _ => {}
        }
        free.sort_unstable();
        free.dedup();
        safe &= free.is_empty();
        facts.push(Facts { safe, costly, ..Facts::default() });
        free_locals.push(free);
    }
    facts
}

/// Counts, per node, the owners whose roots reach it (up to two).
fn count_owners(contract: &mut ir::Contract, facts: &mut [Facts]) {
    let mut roots = Vec::new();
    contract.for_each_root_mut(|owner, id| roots.push((owner, *id)));
    let mut stack = Vec::new();
    for (owner, root) in roots {
        stack.push(root);
        while let Some(id) = stack.pop() {
            let Some(f) = facts.get_mut(id.index()) else { continue };
            if f.last == Some(owner) {
                continue;
            }
            f.last = Some(owner);
            f.owners = f.owners.saturating_add(1).min(2);
            contract.exprs[id.index()].kind.for_each_child(|child| stack.push(child));
        }
    }
}

/// Whether a node cannot fail by itself (its children aside).
fn infallible(kind: &ExprKind) -> bool {
    match kind {
        ExprKind::Const(_)
        | ExprKind::Input
        | ExprKind::Field { .. }
        | ExprKind::Let(_)
        | ExprKind::RuleFired(_)
        | ExprKind::Local(_)
        | ExprKind::List(_)
        | ExprKind::Compare { .. }
        | ExprKind::And { .. }
        | ExprKind::Or { .. }
        | ExprKind::Cond { .. }
        | ExprKind::Present(_)
        | ExprKind::TableHas { .. }
        | ExprKind::InList { .. }
        | ExprKind::Matches { .. } => true,
        // A late record's window read fails; a model may refuse its input.
        ExprKind::Window { .. } | ExprKind::Score { .. } => false,
        ExprKind::Unary { op, .. } => {
            matches!(op, UnaryOp::Not | UnaryOp::NegDecimal | UnaryOp::NegFloat | UnaryOp::IntToDecimal)
        }
        ExprKind::Binary { op, .. } => *op == BinaryOp::Concat,
        ExprKind::Call { func, .. } => matches!(
            func,
            Builtin::Lower
                | Builtin::Upper
                | Builtin::Trim
                | Builtin::StartsWith
                | Builtin::EndsWith
                | Builtin::Contains
                | Builtin::Len
                | Builtin::Min
                | Builtin::Max
                | Builtin::ToString
                | Builtin::Days
                | Builtin::Hours
        ),
        ExprKind::Lambda { kind, .. } => *kind != LambdaKind::Sum,
        ExprKind::Coalesce { .. }
        | ExprKind::TableGet { .. }
        | ExprKind::Index { .. }
        | ExprKind::Extern { .. } => false,
    }
}

/// Whether a node does work worth computing once: more than reading and
/// comparing words.
fn costly(kind: &ExprKind) -> bool {
    match kind {
        ExprKind::Matches { .. }
        | ExprKind::TableHas { .. }
        | ExprKind::InList { .. }
        | ExprKind::Lambda { .. } => true,
        ExprKind::Binary { op, .. } => *op == BinaryOp::Concat,
        ExprKind::Call { func, .. } => matches!(
            func,
            Builtin::Lower
                | Builtin::Upper
                | Builtin::Trim
                | Builtin::StartsWith
                | Builtin::EndsWith
                | Builtin::Contains
                | Builtin::ToString
        ),
        _ => false,
    }
}

/// Puts the arena back in order (children before parents) after parents
/// were pointed at let references appended at its end, renumbering ids.
fn reorder(contract: &mut ir::Contract) {
    let n = contract.exprs.len();
    let mut order = Vec::with_capacity(n);
    let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 placed
    for start in 0..n {
        let mut stack = vec![(start, false)];
        while let Some((id, children_done)) = stack.pop() {
            if state[id] == 2 || (state[id] == 1 && !children_done) {
                continue;
            }
            if children_done {
                state[id] = 2;
                order.push(id);
                continue;
            }
            state[id] = 1;
            stack.push((id, true));
            contract.exprs[id].kind.for_each_child(|child| {
                if state[child.index()] == 0 {
                    stack.push((child.index(), false));
                }
            });
        }
    }
    let mut new_id = vec![ExprId(0); n];
    for (k, old) in order.iter().enumerate() {
        new_id[*old] = ExprId::from_index(k);
    }
    let mut exprs: Vec<Option<ir::Expr>> =
        std::mem::take(&mut contract.exprs).into_iter().map(Some).collect();
    contract.exprs = order.iter().filter_map(|old| exprs[*old].take()).collect();
    let map = |id: &mut ExprId| *id = new_id[id.index()];
    for expr in &mut contract.exprs {
        expr.kind.for_each_child_mut(map);
    }
    contract.for_each_root_mut(|_, id| map(id));
}

/// Names a shared let may take: none a let, an input field or a table
/// has.
struct TakenNames {
    taken: std::collections::HashSet<String>,
    next: usize,
}

impl TakenNames {
    fn new(contract: &ir::Contract) -> TakenNames {
        let mut taken: std::collections::HashSet<String> =
            contract.lets.iter().map(|l| l.name.clone()).collect();
        taken.extend(contract.tables.iter().map(|t| t.name.clone()));
        if let Some(fields) = contract.types.record_fields(contract.input) {
            taken.extend(fields.iter().map(|f| f.name.clone()));
        }
        TakenNames { taken, next: 0 }
    }

    fn fresh(&mut self) -> String {
        loop {
            let name = format!("shared_{}", self.next);
            self.next += 1;
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}
