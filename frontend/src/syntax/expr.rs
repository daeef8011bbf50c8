//! The expression parser: precedence climbing over [`lexer`] tokens.
//!
//! Precedence, loosest first: `?:`; `||`; `&&`; comparisons and `in` /
//! `not in` (non-associative); `??` (right); `+ -`; `* / %`; unary `! -`;
//! postfix `.field`, `[index]`, calls. Left-associative levels loop; only
//! nesting recurses. Users see one limit, [`MAX_LEVELS`]: the parser nests
//! at most that deep (the expression itself is one level; each
//! parenthesis, call, list, unary operator, `?:` and `??` inside it adds
//! one), and every tree is at most that tall (a leaf is one level, each
//! operation above it one more), so later passes may recurse safely.
//!
//! [`lexer`]: crate::syntax::lexer

use crate::ast::{BinaryOp, Expr, ExprKind, Ident, UnaryOp};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::Span;
use crate::syntax::lexer::{Tok, Token, lex};
use crate::syntax::scalar::ScalarText;

/// The longest expression, in bytes.
pub const MAX_EXPR_LEN: usize = 64 * 1024;
/// The most levels of an expression: both how deep the parser nests
/// (parentheses, calls, lists, unary operators, `?:`, `??`) and how tall
/// the tree is. The verifier's `ir::limits::MAX_EXPR_HEIGHT` leaves room
/// for the nodes lowering adds (widenings, `not in`, input fields); the
/// tallest shapes are compiled at this limit in `tests/limits.rs`.
pub const MAX_LEVELS: u32 = 200;

/// Parses the whole scalar as one expression.
pub fn parse(text: &ScalarText<'_>) -> Result<Expr, Diagnostic> {
    parse_range(text, 0, text.value.len())
}

/// Parses `text.value[start..end]` as one expression.
pub fn parse_range(text: &ScalarText<'_>, start: usize, end: usize) -> Result<Expr, Diagnostic> {
    if end - start > MAX_EXPR_LEN {
        return Err(Diagnostic::error(
            codes::EXPR_LIMIT,
            text.file_span(start, start),
            format!("the expression is {} bytes long; the limit is {MAX_EXPR_LEN}", end - start),
        )
        .label("this expression")
        .with_help("split it into lets"));
    }
    let tokens = lex(text, start, end)?;
    let mut parser = Parser { text, tokens, pos: 0, depth: 0 };
    if parser.peek() == &Tok::Eof {
        let span = text.file_span(start, end);
        return Err(Diagnostic::error(codes::EXPR_SYNTAX, span, "expected an expression, found nothing")
            .label("empty"));
    }
    let expr = parser.expr()?;
    if parser.peek() != &Tok::Eof {
        return Err(parser.unexpected("the end of the expression"));
    }
    Ok(expr)
}

type PResult<T> = Result<T, Diagnostic>;

/// An expression past [`MAX_LEVELS`], at the level that went too deep.
fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(
        codes::EXPR_LIMIT,
        span,
        format!("the expression is more than {MAX_LEVELS} levels deep"),
    )
    .label("too deep")
    .with_help("split it into lets")
}

struct Parser<'t, 's> {
    text: &'t ScalarText<'s>,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser<'_, '_> {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        let i = (self.pos + ahead).min(self.tokens.len() - 1);
        &self.tokens[i].tok
    }

    fn bump(&mut self) -> Token {
        let token = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        token
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek() == tok {
            self.bump();
            true
        } else {
            false
        }
    }

    fn span_of(&self, token: &Token) -> Span {
        self.text.file_span(token.start, token.end)
    }

    fn token_text(&self, token: &Token) -> &str {
        &self.text.value[token.start..token.end]
    }

    fn unexpected(&self, expected: &str) -> Diagnostic {
        let token = &self.tokens[self.pos];
        let found = if token.tok == Tok::Eof {
            "the end".to_string()
        } else {
            format!("`{}`", self.token_text(token))
        };
        Diagnostic::error(
            codes::EXPR_SYNTAX,
            self.span_of(token),
            format!("expected {expected}, found {found}"),
        )
        .label(format!("expected {expected}"))
    }

    fn expect(&mut self, tok: Tok, what: &str, opened: Option<Span>) -> PResult<Token> {
        if self.peek() == &tok {
            return Ok(self.bump());
        }
        let mut d = self.unexpected(what);
        if let Some(open) = opened {
            d = d.with_label(open, "opened here");
        }
        Err(d)
    }

    /// Enters one level of nesting.
    fn nest(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_LEVELS as usize {
            return Err(too_deep(self.span_of(&self.tokens[self.pos])));
        }
        Ok(())
    }

    fn node(&self, span: Span, kind: ExprKind) -> PResult<Expr> {
        let height = 1 + child_heights(&kind);
        if height > MAX_LEVELS {
            return Err(too_deep(span));
        }
        Ok(Expr { span, kind, height })
    }

    fn binary(&self, op: BinaryOp, lhs: Expr, rhs: Expr) -> PResult<Expr> {
        let span = lhs.span.to(rhs.span);
        self.node(span, ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) })
    }

    /// `cond ? then : otherwise`, the loosest level.
    fn expr(&mut self) -> PResult<Expr> {
        ir::stack::guard(|| self.conditional())
    }

    fn conditional(&mut self) -> PResult<Expr> {
        self.nest()?;
        let cond = self.or()?;
        let result = if self.eat(&Tok::Question) {
            let then = self.expr()?;
            self.expect(Tok::Colon, "`:` of the conditional", Some(cond.span))?;
            let otherwise = self.expr()?;
            let span = cond.span.to(otherwise.span);
            self.node(
                span,
                ExprKind::Cond { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(otherwise) },
            )
        } else {
            Ok(cond)
        };
        self.depth -= 1;
        result
    }

    fn or(&mut self) -> PResult<Expr> {
        let mut lhs = self.and()?;
        while self.eat(&Tok::OrOr) {
            let rhs = self.and()?;
            lhs = self.binary(BinaryOp::Or, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn and(&mut self) -> PResult<Expr> {
        let mut lhs = self.comparison()?;
        while self.eat(&Tok::AndAnd) {
            let rhs = self.comparison()?;
            lhs = self.binary(BinaryOp::And, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn comparison_op(&self) -> Option<(BinaryOp, usize)> {
        let op = match self.peek() {
            Tok::EqEq => BinaryOp::Eq,
            Tok::NotEq => BinaryOp::Ne,
            Tok::Lt => BinaryOp::Lt,
            Tok::Le => BinaryOp::Le,
            Tok::Gt => BinaryOp::Gt,
            Tok::Ge => BinaryOp::Ge,
            Tok::Ident if self.token_text(&self.tokens[self.pos]) == "in" => BinaryOp::In,
            Tok::Ident
                if self.token_text(&self.tokens[self.pos]) == "not"
                    && self.peek_at(1) == &Tok::Ident
                    && self.token_text(&self.tokens[self.pos + 1]) == "in" =>
            {
                return Some((BinaryOp::NotIn, 2));
            }
            _ => return None,
        };
        Some((op, 1))
    }

    /// Comparisons do not chain: `a < b < c` is an error.
    fn comparison(&mut self) -> PResult<Expr> {
        let lhs = self.coalesce()?;
        let Some((op, tokens)) = self.comparison_op() else { return Ok(lhs) };
        for _ in 0..tokens {
            self.bump();
        }
        let rhs = self.coalesce()?;
        if self.comparison_op().is_some() {
            let token = &self.tokens[self.pos];
            return Err(Diagnostic::error(
                codes::EXPR_SYNTAX,
                self.span_of(token),
                "comparisons do not chain",
            )
            .label("a second comparison")
            .with_label(lhs.span.to(rhs.span), "the first comparison")
            .with_help("write `a < b && b < c`"));
        }
        self.binary(op, lhs, rhs)
    }

    /// `??` is right-associative.
    fn coalesce(&mut self) -> PResult<Expr> {
        let lhs = self.additive()?;
        if !self.eat(&Tok::QuestionQuestion) {
            return Ok(lhs);
        }
        self.nest()?;
        let rhs = self.coalesce()?;
        self.depth -= 1;
        self.binary(BinaryOp::Coalesce, lhs, rhs)
    }

    fn additive(&mut self) -> PResult<Expr> {
        let mut lhs = self.multiplicative()?;
        loop {
            let op = match self.peek() {
                Tok::Plus => BinaryOp::Add,
                Tok::Minus => BinaryOp::Sub,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.multiplicative()?;
            lhs = self.binary(op, lhs, rhs)?;
        }
    }

    fn multiplicative(&mut self) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Star => BinaryOp::Mul,
                Tok::Slash => BinaryOp::Div,
                Tok::Percent => BinaryOp::Rem,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.unary()?;
            lhs = self.binary(op, lhs, rhs)?;
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        let op = match self.peek() {
            Tok::Bang => UnaryOp::Not,
            Tok::Minus => UnaryOp::Neg,
            _ => return self.postfix(),
        };
        let op_token = self.bump();
        if op == UnaryOp::Neg && self.peek() == &Tok::Number {
            // A negative literal: read with its sign so that the smallest
            // int is a valid literal.
            let number = self.bump();
            let span = self.span_of(&op_token).to(self.span_of(&number));
            let text = format!("-{}", self.token_text(&number));
            let kind = self.number(&text, span)?;
            return self.postfix_from(self.node(span, kind)?);
        }
        self.nest()?;
        let operand = self.unary()?;
        self.depth -= 1;
        let span = self.span_of(&op_token).to(operand.span);
        self.node(span, ExprKind::Unary { op, operand: Box::new(operand) })
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let primary = self.primary()?;
        self.postfix_from(primary)
    }

    fn postfix_from(&mut self, mut expr: Expr) -> PResult<Expr> {
        loop {
            match self.peek() {
                Tok::Dot => {
                    self.bump();
                    let name = self.ident("a field name after `.`")?;
                    let span = expr.span.to(name.span);
                    expr = self.node(span, ExprKind::Field { base: Box::new(expr), name })?;
                }
                Tok::LBracket => {
                    let open = self.bump();
                    let index = self.expr()?;
                    let close = self.expect(Tok::RBracket, "`]`", Some(self.span_of(&open)))?;
                    let span = expr.span.to(self.span_of(&close));
                    expr =
                        self.node(span, ExprKind::Index { base: Box::new(expr), index: Box::new(index) })?;
                }
                Tok::LParen => {
                    let ExprKind::Name(name) = &expr.kind else {
                        let token = &self.tokens[self.pos];
                        return Err(Diagnostic::error(
                            codes::EXPR_SYNTAX,
                            self.span_of(token),
                            "only functions can be called",
                        )
                        .label("a call")
                        .with_label(expr.span, "this is not a function name")
                        .with_help("functions are called by name, e.g. `lower(name)`, not as methods"));
                    };
                    let callee = Ident { value: name.clone(), span: expr.span };
                    let (args, close) = self.call_args()?;
                    let span = expr.span.to(close);
                    expr = self.node(span, ExprKind::Call { callee, args })?;
                }
                _ => return Ok(expr),
            }
        }
    }

    /// `(args)` after a function name; an argument may be a lambda.
    fn call_args(&mut self) -> PResult<(Vec<Expr>, Span)> {
        let open = self.bump();
        let mut args = Vec::new();
        while self.peek() != &Tok::RParen {
            args.push(self.argument()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let close = self.expect(Tok::RParen, "`,` or `)`", Some(self.span_of(&open)))?;
        Ok((args, self.span_of(&close)))
    }

    fn argument(&mut self) -> PResult<Expr> {
        if self.peek() == &Tok::Ident && self.peek_at(1) == &Tok::Arrow {
            let param = self.ident("a parameter")?;
            self.bump();
            let body = self.expr()?;
            let span = param.span.to(body.span);
            return self.node(span, ExprKind::Lambda { param, body: Box::new(body) });
        }
        self.expr()
    }

    fn ident(&mut self, what: &str) -> PResult<Ident> {
        if self.peek() != &Tok::Ident {
            return Err(self.unexpected(what));
        }
        let token = self.bump();
        Ok(Ident { value: self.token_text(&token).to_string(), span: self.span_of(&token) })
    }

    fn primary(&mut self) -> PResult<Expr> {
        let token = self.tokens[self.pos].clone();
        let span = self.span_of(&token);
        match &token.tok {
            Tok::Number => {
                self.bump();
                let kind = self.number(self.token_text(&token), span)?;
                self.node(span, kind)
            }
            Tok::Str(value) => {
                self.bump();
                self.node(span, ExprKind::Str(value.clone()))
            }
            Tok::Ident => {
                self.bump();
                let kind = match self.token_text(&token) {
                    "true" => ExprKind::Bool(true),
                    "false" => ExprKind::Bool(false),
                    name => ExprKind::Name(name.to_string()),
                };
                if self.peek() == &Tok::Arrow {
                    return Err(Diagnostic::error(
                        codes::LAMBDA_MISUSE,
                        span,
                        "a lambda can only be an argument of `any`, `all`, `count` or `sum`",
                    )
                    .label("lambda here"));
                }
                self.node(span, kind)
            }
            Tok::LParen => {
                self.bump();
                let inner = self.expr()?;
                let close = self.expect(Tok::RParen, "`)`", Some(span))?;
                let span = span.to(self.span_of(&close));
                Ok(Expr { span, ..inner })
            }
            Tok::LBracket => {
                self.bump();
                let mut items = Vec::new();
                while self.peek() != &Tok::RBracket {
                    items.push(self.expr()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                let close = self.expect(Tok::RBracket, "`,` or `]`", Some(span))?;
                self.node(span.to(self.span_of(&close)), ExprKind::List(items))
            }
            _ => Err(self.unexpected("an expression")),
        }
    }

    /// Classifies and reads a number literal.
    fn number(&self, text: &str, span: Span) -> PResult<ExprKind> {
        let bad =
            |message: String| Diagnostic::error(codes::BAD_LITERAL, span, message).label("this literal");
        if text.contains(['e', 'E']) {
            let value: f64 = text.parse().map_err(|_| bad(format!("`{text}` is not a float")))?;
            if !value.is_finite() {
                return Err(bad(format!("`{text}` is too large for a float")));
            }
            Ok(ExprKind::Float(value))
        } else if text.contains('.') {
            ir::value::parse_decimal(text).map(ExprKind::Decimal).map_err(bad)
        } else {
            ir::value::parse_int(text)
                .map(ExprKind::Int)
                .map_err(|m| bad(m).with_help("ints are 64-bit; write a decimal (`1.0`) for larger amounts"))
        }
    }
}

/// The tallest child of a node about to be built.
fn child_heights(kind: &ExprKind) -> u32 {
    let h = |e: &Expr| e.height;
    match kind {
        ExprKind::Int(_)
        | ExprKind::Decimal(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::Name(_) => 0,
        ExprKind::Field { base, .. } => h(base),
        ExprKind::Index { base, index } => h(base).max(h(index)),
        ExprKind::Call { args, .. } | ExprKind::List(args) => args.iter().map(h).max().unwrap_or(0),
        ExprKind::Lambda { body, .. } => h(body),
        ExprKind::Unary { operand, .. } => h(operand),
        ExprKind::Binary { lhs, rhs, .. } => h(lhs).max(h(rhs)),
        ExprKind::Cond { cond, then, otherwise } => h(cond).max(h(then)).max(h(otherwise)),
    }
}

#[cfg(test)]
mod tests;
