//! Function calls: built-ins, the lambda functions, `matches`, `has`,
//! literal `duration(..)`/`timestamp(..)`, and declared externs.

use ir::{Builtin, Const, ExprId, ExprKind as Ir, LambdaKind, LocalId, RegexId, TypeTable as T};

use super::{Checker, Scope};
use crate::ast::{Expr, ExprKind, Ident};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::Span;

/// Functions handled here besides [`Builtin`]s.
const SPECIAL: [&str; 7] = ["any", "all", "count", "sum", "matches", "has", "score"];

/// Whether `name` is a function of the language.
pub(super) fn is_builtin_name(name: &str) -> bool {
    SPECIAL.contains(&name) || Builtin::from_name(name).is_some()
}

impl Checker<'_> {
    pub(super) fn call(&mut self, callee: &Ident, args: &[Expr], span: Span) -> Option<ExprId> {
        let name = callee.value.as_str();
        let lambda_kind = LambdaKind::ALL.into_iter().find(|k| k.name() == name);
        if let Some(kind) = lambda_kind {
            return self.lambda_call(kind, callee, args, span);
        }
        if !self.no_lambdas(args) {
            return None;
        }
        match name {
            "matches" => return self.matches(callee, args, span),
            "has" => return self.has(args, span),
            "score" => return self.score(args, span),
            _ => {}
        }
        if let Some(func) = Builtin::from_name(name) {
            return self.builtin(func, callee, args, span);
        }
        if let Some(index) = self.externs.iter().position(|e| e.name == name) {
            return self.extern_call(index, args, span);
        }
        if self.poisoned.contains(name) {
            return None;
        }
        let known: Vec<String> = SPECIAL
            .iter()
            .map(|s| s.to_string())
            .chain(Builtin::ALL.iter().map(|b| b.name().to_string()))
            .chain(self.externs.iter().map(|e| e.name.clone()))
            .collect();
        self.error(
            Diagnostic::error(codes::UNKNOWN_FUNCTION, callee.span, format!("unknown function `{name}`"))
                .label("not a built-in or a declared extern")
                .suggest(name, known.iter().map(String::as_str))
                .with_help("host functions are declared under `extern:` with their signature"),
        );
        None
    }

    /// Reports lambdas passed where none is taken.
    fn no_lambdas(&mut self, args: &[Expr]) -> bool {
        let mut ok = true;
        for arg in args {
            if matches!(arg.kind, ExprKind::Lambda { .. }) {
                self.error(
                    Diagnostic::error(codes::LAMBDA_MISUSE, arg.span, "this function does not take a lambda")
                        .label("lambda here")
                        .with_help("lambdas are the last argument of `any`, `all`, `count` and `sum`"),
                );
                ok = false;
            }
        }
        ok
    }

    fn arity(&mut self, name: &str, args: &[Expr], span: Span, min: usize, max: Option<usize>) -> bool {
        if args.len() >= min && max.is_none_or(|max| args.len() <= max) {
            return true;
        }
        let wanted = match max {
            Some(max) if max == min => format!("{min}"),
            Some(max) => format!("{min} to {max}"),
            None => format!("at least {min}"),
        };
        self.error(
            Diagnostic::error(
                codes::ARITY,
                span,
                format!("`{name}` takes {wanted} argument(s), got {}", args.len()),
            )
            .label("wrong number of arguments"),
        );
        false
    }

    fn lambda_call(&mut self, kind: LambdaKind, callee: &Ident, args: &[Expr], span: Span) -> Option<ExprId> {
        let name = kind.name();
        if !self.arity(name, args, span, 2, Some(2)) {
            return None;
        }
        let ExprKind::Lambda { param, body } = &args[1].kind else {
            self.error(
                Diagnostic::error(
                    codes::LAMBDA_MISUSE,
                    args[1].span,
                    format!("the second argument of `{name}` must be a lambda"),
                )
                .label("expected `x => ...`")
                .with_help(format!("write `{name}(items, x => ...)`")),
            );
            return None;
        };
        if !self.no_lambdas(&args[..1]) {
            return None;
        }
        let list = self.value(&args[0])?;
        let Some(element) = self.types.list_element(self.ty(list)) else {
            self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    args[0].span,
                    format!("`{name}` needs a list, found {}", self.show(self.ty(list))),
                )
                .label("not a list")
                .with_label(callee.span, "in this call"),
            );
            return None;
        };
        let local = LocalId::from_index(self.locals.len());
        self.locals.push(element);
        self.scopes.push(Scope { name: param.value.clone(), local });
        let body_id = self.value(body);
        self.scopes.pop();
        let body_id = body_id?;
        let body_ty = self.ty(body_id);
        match kind.result_type(body_ty) {
            Ok(ty) => Some(self.push(ty, Ir::Lambda { kind, list, param: local, body: body_id })),
            Err(message) => {
                self.error(
                    Diagnostic::error(codes::TYPE_MISMATCH, body.span, message)
                        .label(format!("this is {}", self.show(body_ty))),
                );
                None
            }
        }
    }

    fn matches(&mut self, callee: &Ident, args: &[Expr], span: Span) -> Option<ExprId> {
        if !self.arity("matches", args, span, 2, Some(2)) {
            return None;
        }
        let subject = self.value(&args[0]);
        let ExprKind::Str(pattern) = &args[1].kind else {
            self.error(
                Diagnostic::error(
                    codes::BAD_REGEX,
                    args[1].span,
                    "the pattern of `matches` must be a string literal",
                )
                .label("not a literal")
                .with_help("patterns are compiled once, when the contract is compiled"),
            );
            return None;
        };
        if let Err(message) = ir::pattern::compile(pattern) {
            self.error(
                Diagnostic::error(codes::BAD_REGEX, args[1].span, format!("invalid regex: {message}"))
                    .label("this pattern")
                    .with_label(callee.span, "used here"),
            );
            return None;
        }
        let subject = subject?;
        if !self.types.is_stringy(self.ty(subject)) {
            self.mismatch(args[0].span, T::STRING, self.ty(subject), "the subject of `matches`");
            return None;
        }
        let regex = match self.regexes.iter().position(|r| r == pattern) {
            Some(i) => RegexId::from_index(i),
            None => {
                self.regexes.push(pattern.clone());
                RegexId::from_index(self.regexes.len() - 1)
            }
        };
        Some(self.push(T::BOOL, Ir::Matches { subject, regex }))
    }

    fn has(&mut self, args: &[Expr], span: Span) -> Option<ExprId> {
        if !self.arity("has", args, span, 1, Some(1)) {
            return None;
        }
        let value = self.expr(&args[0])?;
        if self.types.optional_inner(self.ty(value)).is_none() {
            self.error(
                Diagnostic::error(
                    codes::NOT_OPTIONAL,
                    args[0].span,
                    format!("`{}` is never absent", self.snippet(args[0].span)),
                )
                .label(format!("this is {}, not optional", self.show(self.ty(value))))
                .with_help("`has` tests optional values (`T?`); for table keys write `key in table`"),
            );
            return None;
        }
        Some(self.push(T::BOOL, Ir::Present(value)))
    }

    fn builtin(&mut self, func: Builtin, callee: &Ident, args: &[Expr], span: Span) -> Option<ExprId> {
        let (min, max) = func.arity();
        if !self.arity(func.name(), args, span, min, max) {
            return None;
        }
        if let Some(folded) = self.literal_call(func, args) {
            return folded;
        }
        let ids: Vec<Option<ExprId>> = args.iter().map(|a| self.value(a)).collect();
        let mut ids: Vec<ExprId> = ids.into_iter().collect::<Option<_>>()?;
        match func {
            Builtin::Min | Builtin::Max => {
                let spans: Vec<Span> = args.iter().map(|a| a.span).collect();
                ids = self.unify(&ids, &spans, &format!("`{}`", func.name()))?.1;
            }
            Builtin::Round | Builtin::RoundHalfEven | Builtin::RoundHalfDown => {
                if self.ty(ids[0]) == T::INT {
                    ids[0] = self.coerce(ids[0], T::DECIMAL)?;
                }
                if let Ir::Const(Const::Int(places)) = self.kind(ids[1])
                    && !(0..=28).contains(places)
                {
                    let places = *places;
                    self.error(
                        Diagnostic::error(
                            codes::BAD_ARGUMENT,
                            args[1].span,
                            format!("`{}` rounds to 0 to 28 places, not {places}", func.name()),
                        )
                        .label("out of range"),
                    );
                    return None;
                }
            }
            Builtin::Dot | Builtin::Cosine | Builtin::L2 => {
                let floats = self.types.list_of(T::FLOAT);
                ids = ids.iter().map(|&id| self.coerce(id, floats).unwrap_or(id)).collect();
            }
            Builtin::ToString if !ir::expr::is_renderable(&self.types, self.ty(ids[0])) => {
                self.error(
                    Diagnostic::error(
                        codes::NOT_RENDERABLE,
                        args[0].span,
                        format!("{} cannot be shown as a string", self.show(self.ty(ids[0]))),
                    )
                    .label("not a scalar or a list of scalars"),
                );
                return None;
            }
            _ => {}
        }
        let types: Vec<_> = ids.iter().map(|&id| self.ty(id)).collect();
        match func.result_type(&self.types, &types) {
            Ok(ty) => Some(self.push(ty, Ir::Call { func, args: ids })),
            Err(message) => {
                let shown: Vec<String> = types.iter().map(|&t| self.show(t)).collect();
                let mut d = Diagnostic::error(
                    codes::BAD_ARGUMENT,
                    callee.span,
                    format!("`{}` cannot take ({})", func.name(), shown.join(", ")),
                )
                .label(message);
                for (arg, &ty) in args.iter().zip(&types) {
                    d = d.with_label(arg.span, format!("this is {}", self.show(ty)));
                }
                self.error(d.with_help(format!("usage: {}", func.usage())));
                None
            }
        }
    }

    /// `duration("24h")` and `timestamp("...")` on a literal become
    /// constants, checked now.
    fn literal_call(&mut self, func: Builtin, args: &[Expr]) -> Option<Option<ExprId>> {
        let [arg] = args else { return None };
        let ExprKind::Str(text) = &arg.kind else { return None };
        let (parsed, ty) = match func {
            Builtin::ToDuration => (ir::time::parse_duration(text).map(Const::Duration), T::DURATION),
            Builtin::ToTimestamp => (ir::time::parse_timestamp(text).map(Const::Timestamp), T::TIMESTAMP),
            _ => return None,
        };
        Some(match parsed {
            Ok(value) => Some(self.push(ty, Ir::Const(value))),
            Err(message) => {
                self.error(Diagnostic::error(codes::BAD_LITERAL, arg.span, message).label("this literal"));
                None
            }
        })
    }

    fn extern_call(&mut self, index: usize, args: &[Expr], span: Span) -> Option<ExprId> {
        let ext = self.externs[index].clone();
        if !self.arity(&ext.name, args, span, ext.params.len(), Some(ext.params.len())) {
            return None;
        }
        let ids: Vec<Option<ExprId>> = args.iter().map(|a| self.value(a)).collect();
        let ids: Vec<ExprId> = ids.into_iter().collect::<Option<_>>()?;
        let mut converted = Vec::new();
        for ((&id, &param), arg) in ids.iter().zip(&ext.params).zip(args) {
            self.enum_literal(param, id, arg.span)?;
            match self.coerce(id, param) {
                Some(c) => converted.push(c),
                None => {
                    self.mismatch(arg.span, param, self.ty(id), &format!("an argument of `{}`", ext.name));
                    return None;
                }
            }
        }
        Some(self.push(ext.ret, Ir::Extern { func: ir::ExternId::from_index(index), args: converted }))
    }
}
