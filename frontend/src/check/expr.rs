//! Expressions: name resolution, typing, implicit conversions and the
//! lowering of each operator to its typed IR form.

use ir::{BinaryOp, CmpOp, Const, ExprId, ExprKind as Ir, TypeId, TypeKind, TypeTable as T, UnaryOp};

use super::Checker;
use crate::ast::{self, BinaryOp as Op, Expr, ExprKind};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::Span;

impl Checker<'_> {
    /// Checks an expression whose value must be present (not optional).
    pub(super) fn value(&mut self, e: &Expr) -> Option<ExprId> {
        let id = self.expr(e)?;
        if let Some(inner) = self.types.optional_inner(self.ty(id)) {
            let text = self.snippet(e.span);
            self.error(
                Diagnostic::error(
                    codes::OPTIONAL_UNCHECKED,
                    e.span,
                    format!("`{text}` is optional and is used without `??` or `has`"),
                )
                .label(format!("this is {}?, which may be absent", self.show(inner)))
                .with_help(format!("give a default: `{text} ?? ...`, or test it with `has({text})`")),
            );
            return None;
        }
        Some(id)
    }

    /// Checks an expression; an optional value is allowed.
    pub(super) fn expr(&mut self, e: &Expr) -> Option<ExprId> {
        ir::stack::guard(|| self.expr_unguarded(e))
    }

    fn expr_unguarded(&mut self, e: &Expr) -> Option<ExprId> {
        match &e.kind {
            ExprKind::Int(i) => Some(self.push(T::INT, Ir::Const(Const::Int(*i)))),
            ExprKind::Decimal(d) => Some(self.push(T::DECIMAL, Ir::Const(Const::Decimal(*d)))),
            ExprKind::Float(f) => Some(self.push(T::FLOAT, Ir::Const(Const::Float(*f)))),
            ExprKind::Str(s) => Some(self.push(T::STRING, Ir::Const(Const::String(s.clone())))),
            ExprKind::Bool(b) => Some(self.push(T::BOOL, Ir::Const(Const::Bool(*b)))),
            ExprKind::Name(name) => self.name(name, e.span),
            ExprKind::Field { base, name } => self.field(base, name),
            ExprKind::Index { base, index } => self.index(base, index, e.span),
            ExprKind::Call { callee, args } => self.call(callee, args, e.span),
            ExprKind::Lambda { .. } => {
                self.error(
                    Diagnostic::error(
                        codes::LAMBDA_MISUSE,
                        e.span,
                        "a lambda can only be the last argument of `any`, `all`, `count` or `sum`",
                    )
                    .label("lambda here"),
                );
                None
            }
            ExprKind::Unary { op, operand } => self.unary(*op, operand, e.span),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, e.span),
            ExprKind::Cond { cond, then, otherwise } => self.cond(cond, then, otherwise),
            ExprKind::List(items) => self.list(items, e.span),
        }
    }

    /// Whether `name` is a lambda parameter in scope.
    fn param(&self, name: &str) -> Option<&super::Scope> {
        self.scopes.iter().rev().find(|s| s.name == name)
    }

    /// The table a bare name denotes, if no parameter, let or field hides it.
    pub(super) fn table_named(&self, e: &Expr) -> Option<ir::TableId> {
        let ExprKind::Name(name) = &e.kind else { return None };
        if self.param(name).is_some()
            || self.let_names.contains_key(name)
            || self.input_fields().iter().any(|f| &f.name == name)
        {
            return None;
        }
        self.table_names.get(name).copied()
    }

    fn name(&mut self, name: &str, span: Span) -> Option<ExprId> {
        if let Some(scope) = self.param(name) {
            let local = scope.local;
            return Some(self.push(self.locals[local.index()], Ir::Local(local)));
        }
        if let Some(&id) = self.let_names.get(name) {
            self.used_lets.insert(id);
            let value = self.lets[id.index()].value?;
            let ty = self.ty(value);
            return Some(self.push(ty, Ir::Let(id)));
        }
        if let Some(index) = self.input_fields().iter().position(|f| f.name == name) {
            let ty = self.input_fields()[index].ty;
            let input = self.push(self.input, Ir::Input);
            return Some(self.push(ty, Ir::Field { base: input, index: index as u32 }));
        }
        if self.poisoned.contains(name) {
            return None;
        }
        if let Some(&table) = self.table_names.get(name) {
            self.used_tables.insert(table);
            self.error(
                Diagnostic::error(codes::TABLE_AS_VALUE, span, format!("the table `{name}` is not a value"))
                    .label("a table")
                    .with_help(format!("look a key up with `{name}[key]` or test it with `key in {name}`")),
            );
            return None;
        }
        if name == "windows" {
            return self.window_misuse(span);
        }
        if name == "rules" {
            self.error(
                Diagnostic::error(codes::UNKNOWN_RULE, span, "`rules` refers to a rule as `rules.<id>`")
                    .label("which rule?"),
            );
            return None;
        }
        let candidates: Vec<String> = self
            .scopes
            .iter()
            .map(|s| s.name.clone())
            .chain(self.lets.iter().map(|l| l.name.clone()))
            .chain(self.input_fields().iter().map(|f| f.name.clone()))
            .chain(self.table_names.keys().cloned())
            .collect();
        self.error(
            Diagnostic::error(codes::UNKNOWN_NAME, span, format!("unknown name `{name}`"))
                .label("not a parameter, let, input field or table")
                .suggest(name, candidates.iter().map(String::as_str)),
        );
        None
    }

    fn field(&mut self, base: &Expr, name: &ast::Ident) -> Option<ExprId> {
        if let ExprKind::Name(rules) = &base.kind
            && rules == "rules"
            && self.param("rules").is_none()
        {
            return self.rule_ref(name);
        }
        if let ExprKind::Field { base: inner, name: window } = &base.kind
            && matches!(&inner.kind, ExprKind::Name(w) if w == "windows")
            && self.param("windows").is_none()
        {
            return self.window_ref(window, name);
        }
        if matches!(&base.kind, ExprKind::Name(w) if w == "windows") && self.param("windows").is_none() {
            return self.window_misuse(base.span.to(name.span));
        }
        let base_id = self.value(base)?;
        let base_ty = self.ty(base_id);
        let Some(fields) = self.types.record_fields(base_ty) else {
            self.error(
                Diagnostic::error(
                    codes::BAD_OPERANDS,
                    name.span,
                    format!("`{}` has no fields: it is {}", self.snippet(base.span), self.show(base_ty)),
                )
                .label("no field here"),
            );
            return None;
        };
        let Some(index) = fields.iter().position(|f| f.name == name.value) else {
            let known: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
            self.error(
                Diagnostic::error(
                    codes::UNKNOWN_FIELD,
                    name.span,
                    format!("no field `{}` in `{}`", name.value, self.snippet(base.span)),
                )
                .label(format!("the fields are: {}", known.join(", ")))
                .suggest(&name.value, known.iter().map(String::as_str)),
            );
            return None;
        };
        let ty = fields[index].ty;
        Some(self.push(ty, Ir::Field { base: base_id, index: index as u32 }))
    }

    fn rule_ref(&mut self, name: &ast::Ident) -> Option<ExprId> {
        match self.rule_names.get(&name.value) {
            Some(&id) => Some(self.push(T::BOOL, Ir::RuleFired(id))),
            None => {
                let known: Vec<&str> = self.ast.rules.iter().map(|r| r.id.value.as_str()).collect();
                self.error(
                    Diagnostic::error(codes::UNKNOWN_RULE, name.span, format!("no rule `{}`", name.value))
                        .label("not a rule id")
                        .suggest(&name.value, known),
                );
                None
            }
        }
    }

    fn index(&mut self, base: &Expr, index: &Expr, span: Span) -> Option<ExprId> {
        if let Some(table) = self.table_named(base) {
            self.used_tables.insert(table);
            let (key_ty, value_ty) = match &self.tables[table.index()].kind {
                ir::TableKind::Map { key, value, .. } => (*key, *value),
                ir::TableKind::Set { .. } => {
                    let name = self.tables[table.index()].name.clone();
                    self.error(
                        Diagnostic::error(
                            codes::BAD_OPERANDS,
                            span,
                            format!("`{name}` is a set and has no values to look up"),
                        )
                        .label("a set")
                        .with_help(format!("test membership with `x in {name}`")),
                    );
                    return None;
                }
            };
            let key = self.value(index)?;
            let key = self.fit_key(key, key_ty, index.span, &self.tables[table.index()].name.clone())?;
            return Some(self.push(value_ty, Ir::TableGet { table, key }));
        }
        let list = self.value(base)?;
        let position = self.value(index)?;
        let Some(element) = self.types.list_element(self.ty(list)) else {
            self.error(
                Diagnostic::error(
                    codes::BAD_OPERANDS,
                    base.span,
                    format!(
                        "`{}` is {}, which cannot be indexed",
                        self.snippet(base.span),
                        self.show(self.ty(list))
                    ),
                )
                .label("not a list or a table"),
            );
            return None;
        };
        if self.ty(position) != T::INT {
            self.mismatch(index.span, T::INT, self.ty(position), "a list index");
            return None;
        }
        Some(self.push(element, Ir::Index { list, index: position }))
    }

    /// Makes a key fit a table's key type, checking enum literals.
    pub(super) fn fit_key(&mut self, key: ExprId, key_ty: TypeId, span: Span, table: &str) -> Option<ExprId> {
        let ty = self.ty(key);
        let fits = ty == key_ty || (self.types.is_stringy(ty) && self.types.is_stringy(key_ty));
        if !fits {
            self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!("the keys of `{table}` are {}, not {}", self.show(key_ty), self.show(ty)),
                )
                .label(format!("this is {}", self.show(ty))),
            );
            return None;
        }
        self.enum_literal(key_ty, key, span)?;
        Some(key)
    }

    /// Reports a string literal compared with or given to an enum that
    /// does not list it.
    pub(super) fn enum_literal(&mut self, ty: TypeId, value: ExprId, span: Span) -> Option<()> {
        let (TypeKind::Enum(values), Ir::Const(Const::String(text))) =
            (self.types.kind(ty), self.kind(value))
        else {
            return Some(());
        };
        if values.contains(text) {
            return Some(());
        }
        let (values, text) = (values.clone(), text.clone());
        self.error(
            Diagnostic::error(
                codes::ENUM_VALUE,
                span,
                format!("`{text}` is not a value of {}", self.show(ty)),
            )
            .label("never equal to any value of the enum")
            .suggest(&text, values.iter().map(String::as_str))
            .with_help(format!("the values are: {}", values.join(", "))),
        );
        None
    }

    pub(super) fn mismatch(&mut self, span: Span, expected: TypeId, found: TypeId, what: &str) {
        let mut d = Diagnostic::error(
            codes::TYPE_MISMATCH,
            span,
            format!("{what} must be {}, found {}", self.show(expected), self.show(found)),
        )
        .label(format!("this is {}", self.show(found)));
        if let Some(help) = self.conversion_help(found, expected) {
            d = d.with_help(help);
        }
        self.error(d);
    }

    fn conversion_help(&self, from: TypeId, to: TypeId) -> Option<String> {
        match (from, to) {
            (T::FLOAT, T::DECIMAL) => Some("convert explicitly with `decimal(x)`".into()),
            (T::DECIMAL | T::INT, T::FLOAT) => Some("convert explicitly with `float(x)`".into()),
            (T::DECIMAL | T::FLOAT, T::INT) => {
                Some("convert explicitly with `int(x)` (truncates toward zero)".into())
            }
            (_, T::STRING)
                if self.types.get(from).is_some_and(|_| ir::expr::is_renderable(&self.types, from)) =>
            {
                Some("convert explicitly with `string(x)`".into())
            }
            _ => None,
        }
    }

    /// Whether [`Checker::coerce`] can convert `id` to `to`.
    pub(super) fn can_coerce(&self, id: ExprId, to: TypeId) -> bool {
        let from = self.ty(id);
        if from == to
            || (to == T::STRING && self.types.is_stringy(from))
            || (from == T::INT && to == T::DECIMAL)
        {
            return true;
        }
        match (self.kind(id), self.types.kind(to)) {
            (Ir::Const(Const::Int(_) | Const::Decimal(_)), TypeKind::Float) => true,
            (Ir::Const(Const::String(s)), TypeKind::Enum(values)) => values.contains(s),
            (Ir::List(items), TypeKind::List(element)) => {
                items.iter().all(|&item| self.can_coerce(item, *element))
            }
            (Ir::Cond { then, otherwise, .. }, _) => {
                self.can_coerce(*then, to) && self.can_coerce(*otherwise, to)
            }
            _ => false,
        }
    }

    /// Converts `id` to `to` where the language allows it implicitly: an
    /// int to a decimal, a numeric literal to a float, an enum to a string,
    /// a string literal to an enum that lists it, and list literals and
    /// conditionals whose parts convert. Returns `None` (without
    /// reporting) when it cannot.
    pub(super) fn coerce(&mut self, id: ExprId, to: TypeId) -> Option<ExprId> {
        let from = self.ty(id);
        if from == to || (to == T::STRING && self.types.is_stringy(from)) {
            return Some(id);
        }
        if !self.can_coerce(id, to) {
            return None;
        }
        match (from, self.kind(id).clone()) {
            (T::INT, Ir::Const(Const::Int(i))) if to == T::DECIMAL => {
                Some(self.push(T::DECIMAL, Ir::Const(Const::Decimal(i.into()))))
            }
            (T::INT, _) if to == T::DECIMAL => {
                Some(self.push(T::DECIMAL, Ir::Unary { op: UnaryOp::IntToDecimal, arg: id }))
            }
            (_, Ir::Const(Const::Int(i))) => Some(self.push(T::FLOAT, Ir::Const(Const::Float(i as f64)))),
            (_, Ir::Const(Const::Decimal(d))) => {
                let f: f64 = d.to_string().parse().ok()?;
                Some(self.push(T::FLOAT, Ir::Const(Const::Float(f))))
            }
            (_, Ir::Const(Const::String(s))) => Some(self.push(to, Ir::Const(Const::String(s)))),
            (_, Ir::List(items)) => {
                let element = self.types.list_element(to)?;
                let items: Option<Vec<ExprId>> =
                    items.iter().map(|&item| self.coerce(item, element)).collect();
                Some(self.push(to, Ir::List(items?)))
            }
            (_, Ir::Cond { cond, then, otherwise }) => {
                let (then, otherwise) = (self.coerce(then, to)?, self.coerce(otherwise, to)?);
                Some(self.push(to, Ir::Cond { cond, then, otherwise }))
            }
            _ => None,
        }
    }

    /// The type values of `ids` can all convert to, if any: the first
    /// operand type every other operand converts to, or `string` for mixed
    /// strings and enums.
    pub(super) fn common_type(&self, ids: &[ExprId]) -> Result<TypeId, Mix> {
        let first = self.ty(ids[0]);
        if ids.iter().all(|&id| self.ty(id) == first) {
            return Ok(first);
        }
        if ids.iter().all(|&id| self.types.is_stringy(self.ty(id))) {
            return Ok(T::STRING);
        }
        for candidate in ids.iter().map(|&id| self.ty(id)) {
            if ids.iter().all(|&id| self.can_coerce(id, candidate)) {
                return Ok(candidate);
            }
        }
        let mentions = |prim: TypeId| ids.iter().any(|&id| self.mentions(self.ty(id), prim));
        Err(if mentions(T::DECIMAL) && mentions(T::FLOAT) { Mix::DecimalFloat } else { Mix::Other })
    }

    /// Whether `ty` is `prim` or a list of (lists of) it.
    fn mentions(&self, ty: TypeId, prim: TypeId) -> bool {
        ty == prim || self.types.list_element(ty).is_some_and(|element| self.mentions(element, prim))
    }

    /// Converts every id to their common type, or reports why not.
    pub(super) fn unify(
        &mut self,
        ids: &[ExprId],
        spans: &[Span],
        what: &str,
    ) -> Option<(TypeId, Vec<ExprId>)> {
        match self.common_type(ids) {
            Ok(ty) => {
                let converted: Option<Vec<ExprId>> = ids.iter().map(|&id| self.coerce(id, ty)).collect();
                converted.map(|c| (ty, c))
            }
            Err(mix) => {
                // The last operand is where the types part ways; the others
                // are context.
                let last = ids.len() - 1;
                let shown: Vec<String> = ids.iter().map(|&id| self.show(self.ty(id))).collect();
                let mut d = match mix {
                    Mix::DecimalFloat => {
                        Diagnostic::error(codes::DECIMAL_FLOAT_MIX, spans[last], format!("{what} mixes decimal and float"))
                            .with_help("money never silently becomes binary floating point: convert with `float(x)` or `decimal(x)`")
                    }
                    Mix::Other => Diagnostic::error(
                        codes::BAD_OPERANDS,
                        spans[last],
                        format!("{what} has values of different types: {}", shown.join(" and ")),
                    ),
                };
                d = d.label(format!("this is {}", shown[last]));
                for (i, &span) in spans.iter().enumerate().take(last) {
                    d = d.with_label(span, format!("this is {}", shown[i]));
                }
                self.error(d);
                None
            }
        }
    }

    fn unary(&mut self, op: ast::UnaryOp, operand: &Expr, span: Span) -> Option<ExprId> {
        let arg = self.value(operand)?;
        let ty = self.ty(arg);
        let ir_op = match (op, ty) {
            (ast::UnaryOp::Not, T::BOOL) => UnaryOp::Not,
            (ast::UnaryOp::Neg, T::INT) => UnaryOp::NegInt,
            (ast::UnaryOp::Neg, T::DECIMAL) => UnaryOp::NegDecimal,
            (ast::UnaryOp::Neg, T::FLOAT) => UnaryOp::NegFloat,
            (ast::UnaryOp::Neg, T::DURATION) => UnaryOp::NegDuration,
            (ast::UnaryOp::Not, _) => {
                self.mismatch(operand.span, T::BOOL, ty, "the operand of `!`");
                return None;
            }
            (ast::UnaryOp::Neg, _) => {
                self.error(
                    Diagnostic::error(codes::BAD_OPERANDS, span, format!("cannot negate {}", self.show(ty)))
                        .label("`-` needs an int, decimal, float or duration"),
                );
                return None;
            }
        };
        if let Some(folded) = fold_unary(ir_op, self.kind(arg)) {
            return Some(self.push(ty, Ir::Const(folded)));
        }
        Some(self.push(ty, Ir::Unary { op: ir_op, arg }))
    }

    fn binary(&mut self, op: Op, lhs: &Expr, rhs: &Expr, span: Span) -> Option<ExprId> {
        match op {
            Op::And | Op::Or => {
                let (l, r) = (self.value(lhs), self.value(rhs));
                let (l, r) = (l?, r?);
                for (id, side) in [(l, lhs), (r, rhs)] {
                    if self.ty(id) != T::BOOL {
                        self.mismatch(
                            side.span,
                            T::BOOL,
                            self.ty(id),
                            &format!("an operand of `{}`", op.symbol()),
                        );
                        return None;
                    }
                }
                let kind = if op == Op::And { Ir::And { lhs: l, rhs: r } } else { Ir::Or { lhs: l, rhs: r } };
                Some(self.push(T::BOOL, kind))
            }
            Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => self.compare(op, lhs, rhs),
            Op::In | Op::NotIn => {
                let test = self.membership(lhs, rhs, span)?;
                Some(if op == Op::NotIn {
                    self.push(T::BOOL, Ir::Unary { op: UnaryOp::Not, arg: test })
                } else {
                    test
                })
            }
            Op::Coalesce => self.coalesce(lhs, rhs),
            Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem => self.arithmetic(op, lhs, rhs, span),
        }
    }

    fn compare(&mut self, op: Op, lhs: &Expr, rhs: &Expr) -> Option<ExprId> {
        let (l, r) = (self.value(lhs), self.value(rhs));
        let (l, r) = (l?, r?);
        let (lt, rt) = (self.ty(l), self.ty(r));
        self.enum_literal(lt, r, rhs.span)?;
        self.enum_literal(rt, l, lhs.span)?;
        let what = format!("`{}`", op.symbol());
        let (ty, pair) = self.unify(&[l, r], &[lhs.span, rhs.span], &format!("the comparison {what}"))?;
        let cmp = match op {
            Op::Eq => CmpOp::Eq,
            Op::Ne => CmpOp::Ne,
            Op::Lt => CmpOp::Lt,
            Op::Le => CmpOp::Le,
            Op::Gt => CmpOp::Gt,
            _ => CmpOp::Ge,
        };
        if cmp.is_ordering() && !self.types.is_ordered(ty) {
            self.error(
                Diagnostic::error(
                    codes::BAD_OPERANDS,
                    lhs.span.to(rhs.span),
                    format!("{} values have no order", self.show(ty)),
                )
                .label(format!("{what} needs numbers, strings, timestamps or durations")),
            );
            return None;
        }
        Some(self.push(T::BOOL, Ir::Compare { op: cmp, lhs: pair[0], rhs: pair[1] }))
    }

    fn membership(&mut self, lhs: &Expr, rhs: &Expr, span: Span) -> Option<ExprId> {
        if let Some(table) = self.table_named(rhs) {
            self.used_tables.insert(table);
            let item = self.value(lhs)?;
            let key_ty = self.tables[table.index()].kind.key_type();
            let name = self.tables[table.index()].name.clone();
            let key = self.fit_key(item, key_ty, lhs.span, &name)?;
            return Some(self.push(T::BOOL, Ir::TableHas { table, key }));
        }
        let (item, list) = (self.value(lhs), self.value(rhs));
        let (item, list) = (item?, list?);
        let Some(element) = self.types.list_element(self.ty(list)) else {
            let mut d = Diagnostic::error(
                codes::BAD_OPERANDS,
                rhs.span,
                format!("`in` needs a list or a table on its right, found {}", self.show(self.ty(list))),
            )
            .label("not a list or table");
            if self.types.is_stringy(self.ty(list)) {
                d = d.with_help("for a substring, write `contains(text, part)`");
            }
            self.error(d);
            return None;
        };
        if let Ir::List(items) = self.kind(list).clone() {
            for (i, value) in items.iter().enumerate() {
                let span = match &rhs.kind {
                    ExprKind::List(written) => written.get(i).map_or(rhs.span, |e| e.span),
                    _ => rhs.span,
                };
                self.enum_literal(self.ty(item), *value, span)?;
            }
        }
        self.enum_literal(element, item, lhs.span)?;
        let item_ty = self.ty(item);
        let stringy = self.types.is_stringy(item_ty) && self.types.is_stringy(element);
        let list_of_item = self.types.list_of(item_ty);
        let (item, list) = if item_ty == element || stringy {
            (item, list)
        } else if self.can_coerce(item, element) {
            (self.coerce(item, element)?, list)
        } else if self.can_coerce(list, list_of_item) {
            (item, self.coerce(list, list_of_item)?)
        } else {
            self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!("cannot look for {} in a list of {}", self.show(item_ty), self.show(element)),
                )
                .label("the types differ"),
            );
            return None;
        };
        Some(self.push(T::BOOL, Ir::InList { item, list }))
    }

    /// `value ?? default`: `value` is optional, or looks something up
    /// (`t[k]`, `xs[i]`) whose absence the default stands in for.
    fn coalesce(&mut self, lhs: &Expr, rhs: &Expr) -> Option<ExprId> {
        let value = self.expr(lhs)?;
        let default = self.value(rhs)?;
        let value_ty = self.ty(value);
        let target = match self.types.optional_inner(value_ty) {
            Some(inner) => inner,
            None if self.may_be_missing(value) => value_ty,
            None => {
                self.error(
                    Diagnostic::error(codes::NOT_OPTIONAL, lhs.span, format!("`{}` is never absent", self.snippet(lhs.span)))
                        .label(format!("this is {}, not optional, and looks nothing up", self.show(value_ty)))
                        .with_help("`??` takes an optional value, or an expression with a table lookup `t[k]` or a list index `xs[i]`"),
                );
                return None;
            }
        };
        self.enum_literal(target, default, rhs.span)?;
        let Some(default) = self.coerce(default, target) else {
            self.mismatch(rhs.span, target, self.ty(default), "the default of `??`");
            return None;
        };
        Some(self.push(target, Ir::Coalesce { value, default }))
    }

    /// Whether evaluating `id` may look up a missing key or index that no
    /// `??` inside it already catches.
    fn may_be_missing(&self, id: ExprId) -> bool {
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            match self.kind(id) {
                Ir::TableGet { .. } | Ir::Index { .. } => return true,
                Ir::Coalesce { default, .. } => stack.push(*default),
                kind => kind.for_each_child(|child| stack.push(child)),
            }
        }
        false
    }

    fn arithmetic(&mut self, op: Op, lhs: &Expr, rhs: &Expr, span: Span) -> Option<ExprId> {
        let (l, r) = (self.value(lhs), self.value(rhs));
        let (l, r) = (l?, r?);
        let (lt, rt) = (self.ty(l), self.ty(r));
        let special = match (op, lt, rt) {
            (Op::Add, _, _) if self.types.is_stringy(lt) && self.types.is_stringy(rt) => {
                Some((BinaryOp::Concat, l, r))
            }
            (Op::Add, T::TIMESTAMP, T::DURATION) => Some((BinaryOp::AddTimestamp, l, r)),
            (Op::Add, T::DURATION, T::TIMESTAMP) => Some((BinaryOp::AddTimestamp, r, l)),
            (Op::Sub, T::TIMESTAMP, T::DURATION) => Some((BinaryOp::SubTimestamp, l, r)),
            (Op::Sub, T::TIMESTAMP, T::TIMESTAMP) => Some((BinaryOp::DiffTimestamps, l, r)),
            (Op::Add, T::DURATION, T::DURATION) => Some((BinaryOp::AddDuration, l, r)),
            (Op::Sub, T::DURATION, T::DURATION) => Some((BinaryOp::SubDuration, l, r)),
            _ => None,
        };
        if let Some((ir_op, a, b)) = special {
            return Some(self.push(ir_op.signature().2, Ir::Binary { op: ir_op, lhs: a, rhs: b }));
        }
        let numeric = |ty| matches!(ty, T::INT | T::DECIMAL | T::FLOAT);
        if !numeric(lt) || !numeric(rt) {
            self.error(
                Diagnostic::error(
                    codes::BAD_OPERANDS,
                    span,
                    format!("`{}` is not defined for {} and {}", op.symbol(), self.show(lt), self.show(rt)),
                )
                .label("unsupported operands")
                .with_label(lhs.span, format!("this is {}", self.show(lt)))
                .with_label(rhs.span, format!("this is {}", self.show(rt))),
            );
            return None;
        }
        let (ty, pair) = self.unify(&[l, r], &[lhs.span, rhs.span], &format!("`{}`", op.symbol()))?;
        let ir_op = match (op, ty) {
            (Op::Add, T::INT) => BinaryOp::AddInt,
            (Op::Sub, T::INT) => BinaryOp::SubInt,
            (Op::Mul, T::INT) => BinaryOp::MulInt,
            (Op::Div, T::INT) => BinaryOp::DivInt,
            (Op::Rem, T::INT) => BinaryOp::RemInt,
            (Op::Add, T::DECIMAL) => BinaryOp::AddDecimal,
            (Op::Sub, T::DECIMAL) => BinaryOp::SubDecimal,
            (Op::Mul, T::DECIMAL) => BinaryOp::MulDecimal,
            (Op::Div, T::DECIMAL) => BinaryOp::DivDecimal,
            (Op::Rem, T::DECIMAL) => BinaryOp::RemDecimal,
            (Op::Add, _) => BinaryOp::AddFloat,
            (Op::Sub, _) => BinaryOp::SubFloat,
            (Op::Mul, _) => BinaryOp::MulFloat,
            (Op::Div, _) => BinaryOp::DivFloat,
            (_, _) => BinaryOp::RemFloat,
        };
        Some(self.push(ty, Ir::Binary { op: ir_op, lhs: pair[0], rhs: pair[1] }))
    }

    fn cond(&mut self, cond: &Expr, then: &Expr, otherwise: &Expr) -> Option<ExprId> {
        let c = self.value(cond);
        let (t, o) = (self.value(then), self.value(otherwise));
        let (c, t, o) = (c?, t?, o?);
        if self.ty(c) != T::BOOL {
            self.mismatch(cond.span, T::BOOL, self.ty(c), "the condition of `?:`");
            return None;
        }
        let (tt, ot) = (self.ty(t), self.ty(o));
        self.enum_literal(tt, o, otherwise.span)?;
        self.enum_literal(ot, t, then.span)?;
        let (ty, pair) = self.unify(&[t, o], &[then.span, otherwise.span], "the branches of `?:`")?;
        Some(self.push(ty, Ir::Cond { cond: c, then: pair[0], otherwise: pair[1] }))
    }

    fn list(&mut self, items: &[Expr], span: Span) -> Option<ExprId> {
        if items.is_empty() {
            self.error(
                Diagnostic::error(codes::TYPE_MISMATCH, span, "the type of an empty list cannot be known")
                    .label("empty list")
                    .with_help("to test for an empty list, write `len(xs) == 0`"),
            );
            return None;
        }
        let ids: Vec<Option<ExprId>> = items.iter().map(|item| self.value(item)).collect();
        let ids: Vec<ExprId> = ids.into_iter().collect::<Option<_>>()?;
        let spans: Vec<Span> = items.iter().map(|i| i.span).collect();
        let (element, converted) = self.unify(&ids, &spans, "the list")?;
        let ty = self.types.list_of(element);
        Some(self.push(ty, Ir::List(converted)))
    }
}

/// Why values have no common type.
pub(super) enum Mix {
    DecimalFloat,
    Other,
}

/// Folds a unary operator on a constant where that is obviously safe.
fn fold_unary(op: UnaryOp, arg: &Ir) -> Option<Const> {
    let Ir::Const(value) = arg else { return None };
    match (op, value) {
        (UnaryOp::Not, Const::Bool(b)) => Some(Const::Bool(!b)),
        (UnaryOp::NegInt, Const::Int(i)) => i.checked_neg().map(Const::Int),
        (UnaryOp::NegDecimal, Const::Decimal(d)) => Some(Const::Decimal(-*d)),
        (UnaryOp::NegFloat, Const::Float(f)) => Some(Const::Float(-f)),
        (UnaryOp::NegDuration, Const::Duration(d)) => d.checked_neg().map(Const::Duration),
        _ => None,
    }
}
