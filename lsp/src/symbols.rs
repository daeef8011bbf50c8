//! What a place in a contract names, read from its syntax tree: a name
//! path in an expression (`source.country`, `windows.by_account.total`,
//! `rules.single_limit`), a call, or the name of a declaration; and where
//! each name is declared. Names resolve as the checker resolves them: a
//! let before an input field before a table.

use frontend::Span;
use frontend::ast::{
    Contract, Expr, ExprKind, FieldDecl, TableDeclKind, Template, TemplatePart, TypeExpr, TypeExprKind,
};
use frontend::tree::NodeKind;

/// A name as the contract uses it. `path` is the names written (`["source",
/// "country"]`); `["windows", w, a]`, `["rules", id]`, `["effects", e]`
/// and `["tables", t, c]` name a window's aggregate, a rule, an effect and
/// a column of a table's rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub path: Vec<String>,
    pub span: Span,
    /// Whether it is the name of a function being called.
    pub call: bool,
}

fn covers(span: Span, offset: usize) -> bool {
    (span.start as usize) <= offset && offset <= span.end as usize
}

/// The reference or declared name at `offset`.
pub fn at(ast: &Contract, offset: usize) -> Option<Reference> {
    declaration_at(ast, offset).or_else(|| expressions(ast).into_iter().find_map(|e| in_expr(e, offset)))
}

/// Every expression of the contract, roots only.
pub fn expressions(ast: &Contract) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = ast.lets.iter().filter_map(|l| l.value.as_ref()).collect();
    for window in &ast.windows {
        out.extend(window.key.iter().chain(&window.time));
        out.extend(window.aggregates.iter().filter_map(|(_, e)| e.as_ref()));
    }
    for rule in &ast.rules {
        out.extend(rule.when.iter());
        out.extend(rule.effects.iter().filter_map(|(_, e)| e.as_ref()));
        let message = rule.finding.as_ref().and_then(|f| f.message.as_ref());
        for template in rule.deny.iter().chain(&rule.allow).chain(message) {
            out.extend(template_exprs(template));
        }
    }
    out
}

fn template_exprs(template: &Template) -> Vec<&Expr> {
    template.parts.iter().filter_map(|p| if let TemplatePart::Expr(e) = p { Some(e) } else { None }).collect()
}

/// The innermost name, field or callee under `offset` in `e`.
fn in_expr(e: &Expr, offset: usize) -> Option<Reference> {
    if !covers(e.span, offset) {
        return None;
    }
    match &e.kind {
        ExprKind::Name(name) => Some(Reference { path: vec![name.clone()], span: e.span, call: false }),
        ExprKind::Field { base, name } if covers(name.span, offset) => {
            if let ExprKind::Index { base: table, .. } = &base.kind
                && let ExprKind::Name(table) = &table.kind
            {
                // A column of a table's row: `limits[level].single`.
                let path = vec!["tables".to_string(), table.clone(), name.value.clone()];
                return Some(Reference { path, span: name.span, call: false });
            }
            let mut path = path_of(base)?;
            path.push(name.value.clone());
            Some(Reference { path, span: name.span, call: false })
        }
        ExprKind::Field { base, .. } => in_expr(base, offset),
        ExprKind::Call { callee, .. } if covers(callee.span, offset) => {
            Some(Reference { path: vec![callee.value.clone()], span: callee.span, call: true })
        }
        ExprKind::Call { args, .. } | ExprKind::List(args) => args.iter().find_map(|a| in_expr(a, offset)),
        ExprKind::Index { base, index } => in_expr(base, offset).or_else(|| in_expr(index, offset)),
        ExprKind::Lambda { body, .. } => in_expr(body, offset),
        ExprKind::Unary { operand, .. } => in_expr(operand, offset),
        ExprKind::Binary { lhs, rhs, .. } => in_expr(lhs, offset).or_else(|| in_expr(rhs, offset)),
        ExprKind::Cond { cond, then, otherwise } => {
            in_expr(cond, offset).or_else(|| in_expr(then, offset)).or_else(|| in_expr(otherwise, offset))
        }
        ExprKind::Int(_)
        | ExprKind::Decimal(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_) => None,
    }
}

/// Every name written in the contract: in expressions (each prefix of a
/// path: `source`, then `source.country`), the effects rules set and the
/// rules tests expect. A lambda's parameter is not a reference.
pub fn all(ast: &Contract) -> Vec<Reference> {
    let mut out = in_expressions(ast);
    let named = |path: Vec<String>, span: Span| Reference { path, span, call: false };
    for rule in &ast.rules {
        out.extend(rule.effects.iter().map(|(e, _)| named(vec!["effects".into(), e.value.clone()], e.span)));
    }
    out.extend(in_tests(ast));
    out
}

/// The names tests' `expect` writes: rules in `reasons`; rules, or lets
/// when no rule has the name, in `errors` (an evaluation error names the
/// rule or let that hit it); effects as the keys of `effects`.
pub fn in_tests(ast: &Contract) -> Vec<Reference> {
    let named = |path: Vec<String>, span: Span| Reference { path, span, call: false };
    let is_rule = |name: &str| ast.rules.iter().any(|r| r.id.value == name);
    let mut out = Vec::new();
    for expect in ast.tests.iter().map(|t| &t.expect) {
        for id in expect.reasons.iter().flatten() {
            out.push(named(vec!["rules".into(), id.value.clone()], id.span));
        }
        for id in expect.errors.iter().flatten() {
            let path = match is_rule(&id.value) {
                true => vec!["rules".into(), id.value.clone()],
                false => vec![id.value.clone()],
            };
            out.push(named(path, id.span));
        }
        if let Some(NodeKind::Map(entries)) = expect.effects.as_ref().map(|n| &n.kind) {
            for (key, _) in entries {
                if let NodeKind::Scalar(name) = &key.kind {
                    out.push(named(vec!["effects".into(), name.value.clone()], key.span));
                }
            }
        }
    }
    out
}

/// The names written in the contract's expressions (each prefix of a
/// path), lambdas' parameters left out.
pub fn in_expressions(ast: &Contract) -> Vec<Reference> {
    let mut out = Vec::new();
    for e in expressions(ast) {
        all_in(e, &mut Vec::new(), &mut out);
    }
    out
}

fn all_in<'e>(e: &'e Expr, bound: &mut Vec<&'e str>, out: &mut Vec<Reference>) {
    let mut push = |path: Vec<String>, span: Span, call: bool| {
        if !bound.contains(&path[0].as_str()) {
            out.push(Reference { path, span, call });
        }
    };
    match &e.kind {
        ExprKind::Name(name) => push(vec![name.clone()], e.span, false),
        ExprKind::Field { base, name } => {
            let path = match &base.kind {
                ExprKind::Index { base: table, .. } => match &table.kind {
                    ExprKind::Name(table) => Some(vec!["tables".into(), table.clone(), name.value.clone()]),
                    _ => None,
                },
                _ => path_of(base).map(|mut path| {
                    path.push(name.value.clone());
                    path
                }),
            };
            if let Some(path) = path {
                push(path, name.span, false);
            }
            all_in(base, bound, out);
        }
        ExprKind::Call { callee, args } => {
            push(vec![callee.value.clone()], callee.span, true);
            args.iter().for_each(|a| all_in(a, bound, out));
        }
        ExprKind::List(items) => items.iter().for_each(|a| all_in(a, bound, out)),
        ExprKind::Index { base, index } => {
            all_in(base, bound, out);
            all_in(index, bound, out);
        }
        ExprKind::Lambda { param, body } => {
            bound.push(&param.value);
            all_in(body, bound, out);
            bound.pop();
        }
        ExprKind::Unary { operand, .. } => all_in(operand, bound, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            all_in(lhs, bound, out);
            all_in(rhs, bound, out);
        }
        ExprKind::Cond { cond, then, otherwise } => {
            for part in [cond, then, otherwise] {
                all_in(part, bound, out);
            }
        }
        ExprKind::Int(_)
        | ExprKind::Decimal(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_) => {}
    }
}

/// `a.b.c` as `["a", "b", "c"]`; `None` for anything but names and fields.
fn path_of(e: &Expr) -> Option<Vec<String>> {
    match &e.kind {
        ExprKind::Name(name) => Some(vec![name.clone()]),
        ExprKind::Field { base, name } => {
            let mut path = path_of(base)?;
            path.push(name.value.clone());
            Some(path)
        }
        _ => None,
    }
}

/// The declaration whose name is under `offset`, as a reference to it.
fn declaration_at(ast: &Contract, offset: usize) -> Option<Reference> {
    let named =
        |path: Vec<String>, span: Span| covers(span, offset).then_some(Reference { path, span, call: false });
    let one = |name: &String| vec![name.clone()];
    ast.lets
        .iter()
        .find_map(|l| named(one(&l.name.value), l.name.span))
        .or_else(|| field_at(&ast.input, &[], offset))
        .or_else(|| ast.tables.iter().find_map(|t| named(one(&t.name.value), t.name.span)))
        .or_else(|| ast.models.iter().find_map(|m| named(one(&m.name.value), m.name.span)))
        .or_else(|| ast.externs.iter().find_map(|x| named(one(&x.name.value), x.name.span)))
        .or_else(|| {
            ast.effects.iter().find_map(|x| named(vec!["effects".into(), x.name.value.clone()], x.name.span))
        })
        .or_else(|| {
            ast.windows.iter().find_map(|w| {
                let window = vec!["windows".to_string(), w.name.value.clone()];
                named(window.clone(), w.name.span).or_else(|| {
                    w.aggregates
                        .iter()
                        .find_map(|(a, _)| named([window.clone(), vec![a.value.clone()]].concat(), a.span))
                })
            })
        })
        .or_else(|| {
            ast.rules.iter().find_map(|r| {
                named(vec!["rules".into(), r.id.value.clone()], r.id.span).or_else(|| {
                    r.effects.iter().find_map(|(e, _)| named(vec!["effects".into(), e.value.clone()], e.span))
                })
            })
        })
        .or_else(|| in_tests(ast).into_iter().find(|r| covers(r.span, offset)))
}

/// An input field (or a field of a record inside one) named at `offset`.
fn field_at(fields: &[FieldDecl], prefix: &[String], offset: usize) -> Option<Reference> {
    fields.iter().find_map(|f| {
        let path = [prefix, std::slice::from_ref(&f.name.value)].concat();
        if covers(f.name.span, offset) {
            return Some(Reference { path, span: f.name.span, call: false });
        }
        record_fields(&f.ty).and_then(|inner| field_at(inner, &path, offset))
    })
}

/// The fields of a record type, through lists and optionals.
pub fn record_fields(ty: &TypeExpr) -> Option<&[FieldDecl]> {
    match &ty.kind {
        TypeExprKind::Record(fields) => Some(fields),
        TypeExprKind::List(inner) | TypeExprKind::Optional(inner) => record_fields(inner),
        _ => None,
    }
}

/// What a path's first name is, as the checker resolves it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Let,
    Input,
    Table,
    Model,
    Extern,
    Window,
    Aggregate,
    Rule,
    Effect,
    /// A field of a table's value record.
    Column,
}

/// What `path` names and where, and whether its last name is that
/// declaration's own: `source.country` names the field `country`;
/// `limit.single`, a field of a let's record value, resolves to the let
/// `limit` but is not its name.
pub fn resolve_own(ast: &Contract, path: &[String]) -> Option<((Kind, Span), bool)> {
    let found = resolve(ast, path)?;
    let (_, shorter) = path.split_last()?;
    Some((found, shorter.is_empty() || resolve(ast, shorter) != Some(found)))
}

/// What `path` names and where that is declared.
pub fn resolve(ast: &Contract, path: &[String]) -> Option<(Kind, Span)> {
    let first = path.first()?;
    let second = path.get(1);
    match (first.as_str(), second) {
        ("windows", Some(w)) => {
            let window = ast.windows.iter().find(|x| &x.name.value == w)?;
            match path.get(2) {
                Some(a) => {
                    let (name, _) = window.aggregates.iter().find(|(n, _)| &n.value == a)?;
                    Some((Kind::Aggregate, name.span))
                }
                None => Some((Kind::Window, window.name.span)),
            }
        }
        ("tables", Some(t)) => {
            let table = ast.tables.iter().find(|x| &x.name.value == t)?;
            let TableDeclKind::Map { value, .. } = &table.kind else { return None };
            let column = record_fields(value)?.iter().find(|f| Some(&f.name.value) == path.get(2))?;
            Some((Kind::Column, column.name.span))
        }
        ("rules", Some(id)) => ast.rules.iter().find(|r| &r.id.value == id).map(|r| (Kind::Rule, r.id.span)),
        ("effects", Some(e)) => {
            ast.effects.iter().find(|x| &x.name.value == e).map(|x| (Kind::Effect, x.name.span))
        }
        _ => {
            if let Some(l) = ast.lets.iter().find(|l| &l.name.value == first) {
                return Some((Kind::Let, l.name.span));
            }
            if let Some(span) = input_field(&ast.input, path) {
                return Some((Kind::Input, span));
            }
            let table =
                ast.tables.iter().find(|t| &t.name.value == first).map(|t| (Kind::Table, t.name.span));
            let model =
                || ast.models.iter().find(|m| &m.name.value == first).map(|m| (Kind::Model, m.name.span));
            let ext =
                || ast.externs.iter().find(|x| &x.name.value == first).map(|x| (Kind::Extern, x.name.span));
            table.or_else(model).or_else(ext)
        }
    }
}

/// The declaration of the deepest field of `path` that the input has.
fn input_field(fields: &[FieldDecl], path: &[String]) -> Option<Span> {
    let field = fields.iter().find(|f| Some(&f.name.value) == path.first())?;
    let deeper = record_fields(&field.ty).and_then(|inner| input_field(inner, &path[1..]));
    Some(deeper.unwrap_or(field.name.span))
}
