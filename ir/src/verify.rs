//! The IR verifier: a [`Contract`] that passes it is safe to evaluate.
//!
//! The compiler runs it after lowering and the bundle loader runs it on
//! every bundle, so a loaded bundle is as trustworthy as a freshly compiled
//! contract. A failure on compiler output is a compiler bug; on a bundle it
//! means the file was damaged or edited.
//!
//! Invariants checked:
//!
//! 1. **Header**: the name is dotted lower-case identifiers; the version is
//!    semver; channels and components are unique identifiers; at most
//!    [`MAX_CHANNELS`] channels.
//! 2. **Types**: a type refers only to types with smaller ids (no cycles);
//!    nesting is at most [`MAX_TYPE_DEPTH`]; the primitives sit at their
//!    fixed ids; records have unique, well-formed field names;
//!    enums have at least one value and no duplicates; no optional of an
//!    optional, nor an optional record (records are inline: an absent one
//!    has no slot of its own); `input` is a record.
//! 3. **Tables**: unique identifiers, not shadowing an input field; keys
//!    and set elements are `string`, `int` or an enum; values are not
//!    optional; every row has the declared types; keys are unique.
//! 4. **Effects**: unique identifiers; the combine policy fits the type.
//! 5. **Externs**: unique identifiers; parameter and result types exist.
//! 6. **Regexes**: every pattern parses and stays within the length and
//!    nesting bounds of [`crate::pattern`].
//! 7. **Expressions**: every child id is smaller than its parent's id;
//!    every id (type, table, let, rule, local, regex, extern) is in range;
//!    every node's type follows from its operands (the same rules as the
//!    type checker: [`crate::expr`]); the height of any expression is at
//!    most [`MAX_EXPR_HEIGHT`].
//!    A `Coalesce` value is optional or may look up a missing key or
//!    index.
//! 8. **Lambdas**: each local is bound by exactly one lambda; it has the
//!    list's element type; it is used only inside that lambda's body.
//! 9. **Roots** (let values, rule conditions, effect values, message
//!    parts) have no free locals; conditions are `bool`; let and effect
//!    values have the declared type; message parts are renderable.
//! 10. **Lets and rules**: unique identifiers; lets do not shadow input
//!     fields or tables; a rule has a verdict, a finding or effects; its
//!     component and channels exist; it sets each effect at most once;
//!     finding codes are well formed.
//! 11. **Dependencies**: lets and `rules.<id>` references form no cycle.
//! 12. **Tests**: channels and components exist (a channel is required
//!     exactly when channels are declared); the input and every history
//!     input are valid request inputs; expected rules, finding codes and
//!     effects exist and effect values have their types.
//! 13. **Windows**: unique identifiers; the key is a `string`, `int` or
//!     enum and the time a `timestamp`; the span is positive and the grace
//!     not negative; at least one aggregate, with unique identifiers, each
//!     of a kind that fits its argument's type and with the type that
//!     kind gives; a window's key, time and arguments read no window and
//!     no rule, directly or through lets.
//! 14. **Models**: unique identifiers; between 1 and [`MAX_FEATURES`]
//!     features; the recorded sha256 is that of the bytes; `score` takes a
//!     `list<float>`.

use std::collections::HashSet;
use std::fmt;

use crate::contract::{Contract, TableKind, Template, TemplatePart, TestCase};
use crate::expr::{ExprKind, is_renderable};
use crate::ids::{ExprId, LetId, LocalId, RuleId, TypeId, WindowId};
use crate::names;
use crate::signals::AggregateKind;
use crate::types::{TypeKind, TypeTable};
use crate::value::Const;

/// At most this many channels: engines keep them in a 64-bit mask.
pub const MAX_CHANNELS: usize = 64;
/// The deepest nesting of types (records in lists in records ...).
pub const MAX_TYPE_DEPTH: usize = 64;
/// The tallest expression tree; engines may recurse this deep.
pub const MAX_EXPR_HEIGHT: u32 = 512;
/// The widest model input `score` takes.
pub const MAX_FEATURES: u32 = 1 << 16;
/// At most this many errors are collected before the verifier stops.
const MAX_ERRORS: usize = 32;

/// One broken invariant: where (`exprs[12]`, `rules[3] single_limit`) and what.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VerifyError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Checks every invariant of the module doc; returns the broken ones.
pub fn verify(contract: &Contract) -> Result<(), Vec<VerifyError>> {
    let mut v = Verifier { c: contract, errors: Vec::new(), facts: Vec::new() };
    v.header();
    if v.types() {
        v.tables();
        v.effects();
        v.externs();
        v.regexes();
        if v.exprs_well_formed() {
            v.lets();
            v.rules();
            v.dependencies();
            v.windows();
            v.tests();
        }
        v.models();
    }
    if v.errors.is_empty() { Ok(()) } else { Err(v.errors) }
}

/// Facts computed bottom-up for every expression node.
#[derive(Clone, Default)]
struct NodeFacts {
    height: u32,
    /// Locals used and not bound below this node, sorted.
    free: Vec<LocalId>,
    /// Lets and rules this node reads, sorted.
    deps: Vec<Dep>,
    /// Whether evaluating the node may look up a missing key or index
    /// that no `Coalesce` below it catches.
    fallible: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
enum Dep {
    Let(LetId),
    Rule(RuleId),
    Window(WindowId),
}

struct Verifier<'a> {
    c: &'a Contract,
    errors: Vec<VerifyError>,
    /// Per expression node, once the arena is known to be well formed.
    facts: Vec<NodeFacts>,
}

impl<'a> Verifier<'a> {
    fn error(&mut self, path: impl Into<String>, message: impl Into<String>) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(VerifyError { path: path.into(), message: message.into() });
        }
    }

    fn types_table(&self) -> &'a TypeTable {
        &self.c.types
    }

    fn type_ok(&self, ty: TypeId) -> bool {
        ty.index() < self.c.types.len()
    }

    /// `from` can be used where `to` is expected: equal, or an enum where a
    /// string is expected.
    fn assignable(&self, from: TypeId, to: TypeId) -> bool {
        from == to || (to == TypeTable::STRING && matches!(self.c.types.kind(from), TypeKind::Enum(_)))
    }

    /// Values of `a` and `b` can be compared for equality.
    fn comparable(&self, a: TypeId, b: TypeId) -> bool {
        a == b || (self.c.types.is_stringy(a) && self.c.types.is_stringy(b))
    }

    fn header(&mut self) {
        let c = self.c;
        if !names::is_contract_name(&c.name) {
            self.error("contract.name", format!("`{}` is not a dotted lower-case name", c.name));
        }
        if !names::is_semver(&c.version) {
            self.error("contract.version", format!("`{}` is not a semantic version", c.version));
        }
        if c.channels.len() > MAX_CHANNELS {
            self.error("channels", format!("{} channels; the limit is {MAX_CHANNELS}", c.channels.len()));
        }
        self.unique_identifiers("channels", c.channels.iter().map(String::as_str));
        self.unique_identifiers("components", c.components.iter().map(String::as_str));
    }

    fn unique_identifiers<'n>(&mut self, what: &str, names_iter: impl Iterator<Item = &'n str>) {
        let mut seen = HashSet::new();
        for (i, name) in names_iter.enumerate() {
            if !names::is_identifier(name) {
                self.error(format!("{what}[{i}]"), format!("`{name}` is not an identifier"));
            }
            if !seen.insert(name) {
                self.error(format!("{what}[{i}]"), format!("`{name}` is declared twice"));
            }
        }
    }

    /// Checks the type table; returns whether later checks can index it.
    fn types(&mut self) -> bool {
        let types = self.types_table();
        let primitives = [
            TypeKind::Bool,
            TypeKind::Int,
            TypeKind::Decimal,
            TypeKind::Float,
            TypeKind::String,
            TypeKind::Timestamp,
            TypeKind::Duration,
        ];
        for (i, kind) in primitives.iter().enumerate() {
            if types.get(TypeId::from_index(i)) != Some(kind) {
                self.error(format!("types[{i}]"), "the primitive types must come first, in order");
                return false;
            }
        }
        let mut depth = vec![0usize; types.len()];
        let before = self.errors.len();
        for (id, kind) in types.iter() {
            let path = format!("types[{}]", id.0);
            let children: Vec<TypeId> = match kind {
                TypeKind::List(t) | TypeKind::Optional(t) => vec![*t],
                TypeKind::Record(fields) => fields.iter().map(|f| f.ty).collect(),
                _ => vec![],
            };
            if let Some(bad) = children.iter().find(|t| t.0 >= id.0) {
                self.error(path, format!("refers to type #{} which does not come before it", bad.0));
                continue;
            }
            depth[id.index()] = 1 + children.iter().map(|t| depth[t.index()]).max().unwrap_or(0);
            if depth[id.index()] > MAX_TYPE_DEPTH {
                self.error(&path, format!("types nest deeper than {MAX_TYPE_DEPTH}"));
            }
            match kind {
                TypeKind::Optional(inner) if matches!(types.kind(*inner), TypeKind::Optional(_)) => {
                    self.error(&path, "an optional of an optional");
                }
                TypeKind::Optional(inner) if matches!(types.kind(*inner), TypeKind::Record(_)) => {
                    self.error(&path, "an optional record");
                }
                TypeKind::Record(fields) => {
                    let mut seen = HashSet::new();
                    for field in fields {
                        if !names::is_field_name(&field.name) || !seen.insert(&field.name) {
                            self.error(&path, format!("bad or repeated field name `{}`", field.name));
                        }
                    }
                }
                TypeKind::Enum(values) => {
                    let unique: HashSet<_> = values.iter().collect();
                    if values.is_empty() || unique.len() != values.len() {
                        self.error(&path, "an enum must list distinct values");
                    }
                }
                _ => {}
            }
        }
        if self.errors.len() > before {
            return false;
        }
        if !self.type_ok(self.c.input) || types.record_fields(self.c.input).is_none() {
            self.error("input", "the input type must be a record");
            return false;
        }
        true
    }

    fn is_key_type(&self, ty: TypeId) -> bool {
        self.type_ok(ty)
            && matches!(self.c.types.kind(ty), TypeKind::String | TypeKind::Int | TypeKind::Enum(_))
    }

    fn input_field_names(&self) -> Vec<&'a str> {
        self.c.types.record_fields(self.c.input).unwrap_or(&[]).iter().map(|f| f.name.as_str()).collect()
    }

    fn tables(&mut self) {
        let c = self.c;
        self.unique_identifiers("tables", c.tables.iter().map(|t| t.name.as_str()));
        let fields = self.input_field_names();
        for (i, table) in c.tables.iter().enumerate() {
            let path = format!("tables[{i}] {}", table.name);
            if fields.contains(&table.name.as_str()) || names::RESERVED.contains(&table.name.as_str()) {
                self.error(&path, "the name is taken by an input field or reserved");
            }
            let key = table.kind.key_type();
            if !self.is_key_type(key) {
                self.error(&path, "keys must be string, int or an enum");
                continue;
            }
            let mut seen_keys = HashSet::new();
            let mut check_key = |v: &mut Self, row: usize, k: &'a Const| {
                if !k.has_type(&c.types, key) {
                    v.error(&path, format!("row {row}: key {k} is not a {}", c.types.display(key)));
                } else if !seen_keys.insert(k.table_key()) {
                    v.error(&path, format!("row {row}: key {k} appears twice"));
                }
            };
            match &table.kind {
                TableKind::Map { value, rows, .. } => {
                    if !self.type_ok(*value) || matches!(c.types.kind(*value), TypeKind::Optional(_)) {
                        self.error(&path, "the value type must exist and not be optional");
                        continue;
                    }
                    for (row, (k, v)) in rows.iter().enumerate() {
                        check_key(self, row, k);
                        if !v.has_type(&c.types, *value) {
                            self.error(
                                &path,
                                format!("row {row}: value {v} is not a {}", c.types.display(*value)),
                            );
                        }
                    }
                }
                TableKind::Set { rows, .. } => {
                    for (row, k) in rows.iter().enumerate() {
                        check_key(self, row, k);
                    }
                }
            }
        }
    }

    fn effects(&mut self) {
        let c = self.c;
        self.unique_identifiers("effects", c.effects.iter().map(|e| e.name.as_str()));
        for (i, effect) in c.effects.iter().enumerate() {
            if !self.type_ok(effect.ty) || !effect.combine.fits(&c.types, effect.ty) {
                self.error(
                    format!("effects[{i}] {}", effect.name),
                    format!("combine `{}` does not fit the effect's type", effect.combine.name()),
                );
            }
        }
    }

    fn externs(&mut self) {
        let c = self.c;
        self.unique_identifiers("externs", c.externs.iter().map(|e| e.name.as_str()));
        for (i, ext) in c.externs.iter().enumerate() {
            if !ext.params.iter().chain([&ext.ret]).all(|t| self.type_ok(*t)) {
                self.error(format!("externs[{i}] {}", ext.name), "refers to a type that does not exist");
            }
        }
    }

    fn regexes(&mut self) {
        for (i, pattern) in self.c.regexes.iter().enumerate() {
            if let Err(message) = crate::pattern::check_syntax(pattern) {
                self.error(format!("regexes[{i}]"), message);
            }
        }
    }

    /// Checks ids, types and scoping of every node; returns whether the
    /// arena is sound enough for the checks that walk it.
    fn exprs_well_formed(&mut self) -> bool {
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
    fn node_type(&self, kind: &ExprKind, ty: TypeId) -> Result<(), String> {
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

    fn node_facts(&self, kind: &ExprKind, facts: &[NodeFacts]) -> NodeFacts {
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
    fn roots(&self) -> Vec<(String, ExprId)> {
        let c = self.c;
        let mut roots = Vec::new();
        for (i, w) in c.windows.iter().enumerate() {
            let path = format!("windows[{i}] {}", w.name);
            for id in window_roots(w) {
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
            for id in templates.flat_map(template_exprs) {
                roots.push((path.clone(), id));
            }
            for assign in &rule.effects {
                roots.push((path.clone(), assign.value));
            }
        }
        roots
    }

    fn roots_closed(&mut self, facts: &[NodeFacts]) {
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

    fn lets(&mut self) {
        let c = self.c;
        self.unique_identifiers("lets", c.lets.iter().map(|l| l.name.as_str()));
        let fields = self.input_field_names();
        for (i, l) in c.lets.iter().enumerate() {
            let path = format!("lets[{i}] {}", l.name);
            let shadows = fields.contains(&l.name.as_str())
                || c.table_by_name(&l.name).is_some()
                || names::RESERVED.contains(&l.name.as_str());
            if shadows {
                self.error(&path, "a let may not shadow an input field or a table");
            }
            if !self.type_ok(l.ty) || !self.assignable(c.expr(l.value).ty, l.ty) {
                self.error(&path, "the value does not have the let's type");
            }
        }
    }

    fn rules(&mut self) {
        let c = self.c;
        self.unique_identifiers("rules", c.rules.iter().map(|r| r.name.as_str()));
        for (i, rule) in c.rules.iter().enumerate() {
            let path = format!("rules[{i}] {}", rule.name);
            if c.expr(rule.when).ty != TypeTable::BOOL {
                self.error(&path, "the condition is not a bool");
            }
            if rule.verdict.is_none() && rule.finding.is_none() && rule.effects.is_empty() {
                self.error(&path, "the rule has no verdict, finding or effect");
            }
            if rule.component.is_some_and(|id| id.index() >= c.components.len()) {
                self.error(&path, "the component does not exist");
            }
            if let Some(channels) = &rule.channels {
                let unique: HashSet<_> = channels.iter().collect();
                if channels.is_empty()
                    || unique.len() != channels.len()
                    || channels.iter().any(|ch| ch.index() >= c.channels.len())
                {
                    self.error(&path, "the channels must be distinct declared channels");
                }
            }
            if let Some(finding) = &rule.finding
                && !names::is_finding_code(&finding.code)
            {
                self.error(&path, format!("`{}` is not a finding code", finding.code));
            }
            let mut set = HashSet::new();
            for assign in &rule.effects {
                match c.effects.get(assign.effect.index()) {
                    None => self.error(&path, format!("effect #{} does not exist", assign.effect.0)),
                    Some(effect) => {
                        if !set.insert(assign.effect) {
                            self.error(&path, format!("sets `{}` twice", effect.name));
                        }
                        if !self.assignable(c.expr(assign.value).ty, effect.ty) {
                            self.error(
                                &path,
                                format!("the value of `{}` does not have its type", effect.name),
                            );
                        }
                    }
                }
            }
            let templates =
                rule.verdict.iter().map(|v| &v.message).chain(rule.finding.iter().map(|f| &f.message));
            for id in templates.flat_map(template_exprs) {
                if !is_renderable(&c.types, c.expr(id).ty) {
                    self.error(&path, "a message shows a value that cannot be rendered");
                }
            }
        }
    }

    fn dependencies(&mut self) {
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
        if let Some(cycle) = find_cycle(&edges) {
            let path: Vec<String> = cycle.iter().map(|n| name_of(*n)).collect();
            self.error("dependencies", format!("cycle: {}", path.join(" -> ")));
        }
    }

    fn windows(&mut self) {
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
            if let Some(read) = window_roots(w).find_map(|root| self.signal_read(root)) {
                self.error(
                    &path,
                    format!("its expressions read {read}; they may read input fields and lets only"),
                );
            }
        }
    }

    fn window(&self, w: &crate::signals::Window) -> Result<(), String> {
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
            if aggregate_type(types, a.kind, arg) != Some(a.ty) {
                return Err(format!("the aggregate `{}` does not fit its argument's type", a.name));
            }
        }
        Ok(())
    }

    /// The first window or rule a root reads, directly or through lets.
    fn signal_read(&self, root: ExprId) -> Option<String> {
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

    fn models(&mut self) {
        let c = self.c;
        self.unique_identifiers("models", c.models.iter().map(|m| m.name.as_str()));
        for (i, m) in c.models.iter().enumerate() {
            let path = format!("models[{i}] {}", m.name);
            if m.features == 0 || m.features > MAX_FEATURES {
                self.error(&path, format!("{} features; a model takes 1 to {MAX_FEATURES}", m.features));
            }
            if crate::bundle::sha256_of(&m.bytes) != m.sha256 {
                self.error(&path, "the model's bytes do not have the recorded sha256");
            }
        }
    }

    fn tests(&mut self) {
        for (i, test) in self.c.tests.iter().enumerate() {
            let path = format!("tests[{i}] {}", test.name);
            if let Err(message) = self.test(test) {
                self.error(path, message);
            }
        }
    }

    fn test(&self, test: &TestCase) -> Result<(), String> {
        let c = self.c;
        match (&test.channel, c.channels.is_empty()) {
            (Some(ch), false) if c.channel_by_name(ch).is_none() => {
                return Err(format!("channel `{ch}` is not declared"));
            }
            (Some(_), true) => return Err("the contract declares no channels".into()),
            (None, false) => return Err("a channel is required".into()),
            _ => {}
        }
        if let Some(component) = &test.component
            && c.component_by_name(component).is_none()
        {
            return Err(format!("component `{component}` is not declared"));
        }
        Const::from_json(&c.types, c.input, &test.input).map_err(|e| format!("input{e}"))?;
        for (i, earlier) in test.history.iter().enumerate() {
            Const::from_json(&c.types, c.input, earlier).map_err(|e| format!("history[{i}]{e}"))?;
        }
        let expect = &test.expect;
        let rules_ok = |ids: &Option<Vec<String>>, lets_too: bool| {
            ids.iter()
                .flatten()
                .all(|id| c.rule_by_name(id).is_some() || (lets_too && c.let_by_name(id).is_some()))
        };
        if !rules_ok(&expect.reasons, false) || !rules_ok(&expect.errors, true) {
            return Err("expects a rule that does not exist".into());
        }
        let code_exists =
            |code: &String| c.rules.iter().any(|r| r.finding.as_ref().is_some_and(|f| &f.code == code));
        if !expect.findings.iter().flatten().all(code_exists) {
            return Err("expects a finding code no rule produces".into());
        }
        if let Some(effects) = &expect.effects {
            let object = effects.as_object().ok_or("expected effects must be an object")?;
            for (name, value) in object {
                let effect =
                    c.effect_by_name(name).ok_or_else(|| format!("effect `{name}` is not declared"))?;
                Const::from_json(&c.types, c.effects[effect.index()].ty, value)
                    .map_err(|e| format!("effect `{name}`: {e}"))?;
            }
        }
        Ok(())
    }
}

/// The root expressions of a window: its key, its time and its
/// aggregates' arguments.
pub fn window_roots(w: &crate::signals::Window) -> impl Iterator<Item = ExprId> + '_ {
    [w.key, w.time].into_iter().chain(w.aggregates.iter().filter_map(|a| a.arg))
}

/// The type of an aggregate of `kind` over an argument of type `arg`
/// (`None` for `count()`), when the kind takes such an argument: the
/// checker and the verifier share this rule.
pub fn aggregate_type(types: &TypeTable, kind: AggregateKind, arg: Option<TypeId>) -> Option<TypeId> {
    let kind_of = |ty: TypeId| types.get(ty);
    match (kind, arg) {
        (AggregateKind::Count, None) => Some(TypeTable::INT),
        (AggregateKind::Sum, Some(ty))
            if matches!(ty, TypeTable::INT | TypeTable::DECIMAL | TypeTable::FLOAT) =>
        {
            Some(ty)
        }
        (AggregateKind::Max | AggregateKind::Min, Some(ty))
            if matches!(
                ty,
                TypeTable::INT
                    | TypeTable::DECIMAL
                    | TypeTable::FLOAT
                    | TypeTable::TIMESTAMP
                    | TypeTable::DURATION
            ) =>
        {
            Some(ty)
        }
        (AggregateKind::Distinct, Some(ty))
            if matches!(
                kind_of(ty),
                Some(TypeKind::String | TypeKind::Int | TypeKind::Bool | TypeKind::Enum(_))
            ) =>
        {
            Some(TypeTable::INT)
        }
        _ => None,
    }
}

/// The expressions a template interpolates.
pub fn template_exprs(template: &Template) -> impl Iterator<Item = ExprId> + '_ {
    template.parts.iter().filter_map(|part| match part {
        TemplatePart::Expr(id) => Some(*id),
        TemplatePart::Text(_) => None,
    })
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
