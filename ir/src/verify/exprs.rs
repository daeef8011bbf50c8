//! The verifier's checks of expressions: every node well formed and typed
//! as its kind requires, and what each node reads (free locals,
//! dependencies), so that every root is closed.

use crate::contract::{TableKind, Template};
use crate::expr::ExprKind;
use crate::ids::{ExprId, LocalId, TypeId};
use crate::limits::MAX_EXPR_HEIGHT;
use crate::types::TypeTable;

use super::{Dep, NodeFacts, Verifier};

impl<'a> Verifier<'a> {
    /// Checks ids, types and scoping of every node; returns whether the
    /// arena is sound enough for the checks that walk it.
    pub(super) fn exprs_well_formed(&mut self) -> bool {
        let before = self.errors.len();
        let mut facts: Vec<NodeFacts> = Vec::with_capacity(self.c.exprs.len());
        let mut binder: Vec<Option<ExprId>> = vec![None; self.c.locals.len()];
        // Nodes already reported: their parents are not checked against
        // them (their types may not even exist).
        let mut broken = vec![false; self.c.exprs.len()];
        for (i, expr) in self.c.exprs.iter().enumerate() {
            let id = ExprId::from_index(i);
            let path = format!("exprs[{i}] {}", crate::print::op_name(&expr.kind));
            let (mut children_ok, mut children_sound) = (true, true);
            expr.kind.for_each_child(|child| {
                children_ok &= child.0 < id.0;
                children_sound &= children_ok && !broken[child.index()];
            });
            if !children_ok || !children_sound || !self.type_ok(expr.ty) {
                if !children_ok {
                    self.error(path, "refers to an expression that does not come before it");
                } else if children_sound {
                    self.error(path, format!("type #{} does not exist", expr.ty.0));
                }
                broken[i] = true;
                facts.push(NodeFacts::default());
                continue;
            }
            if let Err(message) = self.node_type(&expr.kind, expr.ty) {
                self.error(&path, message);
            }
            if let ExprKind::Lambda { param, .. } = &expr.kind
                && let Some(slot) = binder.get_mut(param.index())
            {
                if slot.is_some() {
                    self.error(&path, format!("local #{} is bound by two lambdas", param.0));
                }
                *slot = Some(id);
            }
            let node_facts = self.node_facts(&expr.kind, &facts);
            if let ExprKind::Coalesce { value, .. } = &expr.kind {
                let optional = self.c.types.optional_inner(self.c.exprs[value.index()].ty).is_some();
                if !optional && !facts[value.index()].fallible {
                    self.error(&path, "`??` on a value that is never absent");
                }
            }
            if node_facts.height > MAX_EXPR_HEIGHT {
                self.error(&path, format!("the expression is taller than {MAX_EXPR_HEIGHT}"));
                return false;
            }
            facts.push(node_facts);
        }
        for (local, bound) in binder.iter().enumerate() {
            if bound.is_none() {
                self.error(format!("locals[{local}]"), "is bound by no lambda");
            }
        }
        if self.errors.len() > before {
            return false;
        }
        self.roots_closed(&facts);
        self.facts = facts;
        self.errors.len() == before
    }

    /// The type rule of one node: `Ok` when `ty` follows from the operands.
    pub(super) fn node_type(&self, kind: &ExprKind, ty: TypeId) -> Result<(), String> {
        let c = self.c;
        let types = &c.types;
        let ty_of = |e: &ExprId| c.exprs[e.index()].ty;
        let expect = |want: TypeId| {
            if ty == want {
                Ok(())
            } else {
                Err(format!("has type {}, expected {}", types.display(ty), types.display(want)))
            }
        };
        let operand = |e: &ExprId, want: TypeId, what: &str| {
            if self.assignable(ty_of(e), want) {
                Ok(())
            } else {
                Err(format!("{what} has type {}, expected {}", types.display(ty_of(e)), types.display(want)))
            }
        };
        match kind {
            ExprKind::Const(value) => {
                if value.has_type(types, ty) {
                    Ok(())
                } else {
                    Err(format!("constant {value} is not a {}", types.display(ty)))
                }
            }
            ExprKind::Input => expect(c.input),
            ExprKind::Field { base, index } => match types.record_fields(ty_of(base)) {
                Some(fields) => match fields.get(*index as usize) {
                    Some(field) => expect(field.ty),
                    None => Err(format!("field #{index} does not exist")),
                },
                None => Err("reads a field of a value that is not a record".into()),
            },
            ExprKind::Let(id) => match c.lets.get(id.index()) {
                Some(l) => expect(l.ty),
                None => Err(format!("let #{} does not exist", id.0)),
            },
            ExprKind::RuleFired(id) => {
                if id.index() < c.rules.len() {
                    expect(TypeTable::BOOL)
                } else {
                    Err(format!("rule #{} does not exist", id.0))
                }
            }
            ExprKind::Local(id) => match c.locals.get(id.index()) {
                Some(local_ty) => expect(*local_ty),
                None => Err(format!("local #{} does not exist", id.0)),
            },
            ExprKind::List(items) => match types.list_element(ty) {
                Some(element) => items.iter().try_for_each(|item| operand(item, element, "an item")),
                None => Err("a list literal must have a list type".into()),
            },
            ExprKind::Unary { op, arg } => {
                let (input, output) = op.signature();
                operand(arg, input, "the operand")?;
                expect(output)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (left, right, output) = op.signature();
                operand(lhs, left, "the left operand")?;
                operand(rhs, right, "the right operand")?;
                expect(output)
            }
            ExprKind::Compare { op, lhs, rhs } => {
                let (l, r) = (ty_of(lhs), ty_of(rhs));
                if !self.comparable(l, r) {
                    return Err(format!("compares {} with {}", types.display(l), types.display(r)));
                }
                if op.is_ordering() && !types.is_ordered(l) {
                    return Err(format!("orders values of unordered type {}", types.display(l)));
                }
                expect(TypeTable::BOOL)
            }
            ExprKind::And { lhs, rhs } | ExprKind::Or { lhs, rhs } => {
                operand(lhs, TypeTable::BOOL, "the left operand")?;
                operand(rhs, TypeTable::BOOL, "the right operand")?;
                expect(TypeTable::BOOL)
            }
            ExprKind::Cond { cond, then, otherwise } => {
                operand(cond, TypeTable::BOOL, "the condition")?;
                operand(then, ty, "the first branch")?;
                operand(otherwise, ty, "the second branch")
            }
            ExprKind::Coalesce { value, default } => {
                let inner = types.optional_inner(ty_of(value)).unwrap_or(ty_of(value));
                if !self.assignable(inner, ty) {
                    return Err("`??` needs a value of the node's type".into());
                }
                operand(default, ty, "the default")
            }
            ExprKind::Present(value) => {
                if types.optional_inner(ty_of(value)).is_none() {
                    return Err("`has` needs an optional value".into());
                }
                expect(TypeTable::BOOL)
            }
            ExprKind::TableGet { table, key } => {
                let Some(table) = c.tables.get(table.index()) else {
                    return Err(format!("table #{} does not exist", table.0));
                };
                let TableKind::Map { key: key_ty, value, .. } = &table.kind else {
                    return Err(format!("`{}` is a set and has no values", table.name));
                };
                if !self.comparable(ty_of(key), *key_ty) {
                    return Err(format!(
                        "the key has type {}, expected {}",
                        types.display(ty_of(key)),
                        types.display(*key_ty)
                    ));
                }
                expect(*value)
            }
            ExprKind::TableHas { table, key } => {
                let Some(table) = c.tables.get(table.index()) else {
                    return Err(format!("table #{} does not exist", table.0));
                };
                if !self.comparable(ty_of(key), table.kind.key_type()) {
                    return Err(format!("the key has type {}", types.display(ty_of(key))));
                }
                expect(TypeTable::BOOL)
            }
            ExprKind::Index { list, index } => {
                let Some(element) = types.list_element(ty_of(list)) else {
                    return Err("indexes a value that is not a list".into());
                };
                operand(index, TypeTable::INT, "the index")?;
                expect(element)
            }
            ExprKind::InList { item, list } => match types.list_element(ty_of(list)) {
                Some(element) if self.comparable(ty_of(item), element) => expect(TypeTable::BOOL),
                _ => Err("`in` needs a list of the item's type".into()),
            },
            ExprKind::Call { func, args } => {
                let arg_types: Vec<TypeId> = args.iter().map(ty_of).collect();
                expect(func.result_type(types, &arg_types)?)
            }
            ExprKind::Matches { subject, regex } => {
                if regex.index() >= c.regexes.len() {
                    return Err(format!("regex #{} does not exist", regex.0));
                }
                if !types.is_stringy(ty_of(subject)) {
                    return Err("`matches` needs a string".into());
                }
                expect(TypeTable::BOOL)
            }
            ExprKind::Lambda { kind, list, param, body } => {
                let Some(element) = types.list_element(ty_of(list)) else {
                    return Err(format!("`{}` needs a list", kind.name()));
                };
                if c.locals.get(param.index()) != Some(&element) {
                    return Err("the parameter does not have the list's element type".into());
                }
                expect(kind.result_type(ty_of(body))?)
            }
            ExprKind::Extern { func, args } => {
                let Some(ext) = c.externs.get(func.index()) else {
                    return Err(format!("extern #{} does not exist", func.0));
                };
                if ext.params.len() != args.len() {
                    return Err(format!(
                        "`{}` takes {} arguments, got {}",
                        ext.name,
                        ext.params.len(),
                        args.len()
                    ));
                }
                for (arg, param) in args.iter().zip(&ext.params) {
                    operand(arg, *param, "an argument")?;
                }
                expect(ext.ret)
            }
            ExprKind::Window { window, aggregate } => {
                let Some(w) = c.windows.get(window.index()) else {
                    return Err(format!("window #{} does not exist", window.0));
                };
                match w.aggregates.get(*aggregate as usize) {
                    Some(a) => expect(a.ty),
                    None => Err(format!("window `{}` has no aggregate #{aggregate}", w.name)),
                }
            }
            ExprKind::Score { model, features } => {
                if model.index() >= c.models.len() {
                    return Err(format!("model #{} does not exist", model.0));
                }
                if types.list_element(ty_of(features)) != Some(TypeTable::FLOAT) {
                    return Err("`score` needs a list<float>".into());
                }
                expect(TypeTable::FLOAT)
            }
        }
    }

    pub(super) fn node_facts(&self, kind: &ExprKind, facts: &[NodeFacts]) -> NodeFacts {
        let mut out = NodeFacts::default();
        kind.for_each_child(|child| {
            let child = &facts[child.index()];
            out.fallible |= child.fallible;
            out.height = out.height.max(child.height);
            merge_sorted(&mut out.free, &child.free);
            merge_sorted(&mut out.deps, &child.deps);
        });
        out.height += 1;
        match kind {
            ExprKind::Local(id) => out.free = vec![*id],
            ExprKind::TableGet { .. } | ExprKind::Index { .. } => out.fallible = true,
            ExprKind::Coalesce { default, .. } => out.fallible = facts[default.index()].fallible,
            ExprKind::Let(id) => merge_sorted(&mut out.deps, &[Dep::Let(*id)]),
            ExprKind::RuleFired(id) => merge_sorted(&mut out.deps, &[Dep::Rule(*id)]),
            ExprKind::Window { window, .. } => merge_sorted(&mut out.deps, &[Dep::Window(*window)]),
            ExprKind::Lambda { param, list, body, .. } => {
                // The parameter is bound in the body only.
                let mut free = facts[list.index()].free.clone();
                let body_free: Vec<LocalId> =
                    facts[body.index()].free.iter().copied().filter(|l| l != param).collect();
                merge_sorted(&mut free, &body_free);
                out.free = free;
            }
            _ => {}
        }
        out
    }

    /// Every root expression with its path.
    pub(super) fn roots(&self) -> Vec<(String, ExprId)> {
        let c = self.c;
        let mut roots = Vec::new();
        for (i, w) in c.windows.iter().enumerate() {
            let path = format!("windows[{i}] {}", w.name);
            for id in w.roots() {
                roots.push((path.clone(), id));
            }
        }
        for (i, l) in c.lets.iter().enumerate() {
            roots.push((format!("lets[{i}] {}", l.name), l.value));
        }
        for (i, rule) in c.rules.iter().enumerate() {
            let path = format!("rules[{i}] {}", rule.name);
            roots.push((path.clone(), rule.when));
            let templates =
                rule.verdict.iter().map(|v| &v.message).chain(rule.finding.iter().map(|f| &f.message));
            for id in templates.flat_map(Template::exprs) {
                roots.push((path.clone(), id));
            }
            for assign in &rule.effects {
                roots.push((path.clone(), assign.value));
            }
        }
        roots
    }

    pub(super) fn roots_closed(&mut self, facts: &[NodeFacts]) {
        for (path, id) in self.roots() {
            match facts.get(id.index()) {
                None => self.error(path, format!("expression #{} does not exist", id.0)),
                Some(f) if !f.free.is_empty() => {
                    self.error(path, format!("uses local #{} outside its lambda", f.free[0].0));
                }
                Some(_) => {}
            }
        }
    }
}

/// Merges sorted `extra` into sorted `into`, without duplicates.
fn merge_sorted<T: Ord + Copy>(into: &mut Vec<T>, extra: &[T]) {
    if extra.is_empty() {
        return;
    }
    into.extend_from_slice(extra);
    into.sort_unstable();
    into.dedup();
}
