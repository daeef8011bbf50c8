//! The contract's syntax tree: what the author wrote, with spans, before
//! any name is resolved or type checked.
//!
//! Expressions are parsed ([`crate::syntax::expr`]); values whose meaning
//! depends on a declared type (table rows, test inputs, expected effects)
//! stay YAML nodes until the checker knows that type.

use rust_decimal::Decimal;

use crate::source::{Span, Spanned};
use crate::tree::Node;

/// A name with its span.
pub type Ident = Spanned<String>;

/// A whole contract file.
#[derive(Clone, Debug, Default)]
pub struct Contract {
    pub span: Span,
    pub name: Option<Spanned<String>>,
    pub version: Option<Spanned<String>>,
    pub description: Option<String>,
    pub channels: Vec<Ident>,
    pub components: Vec<Ident>,
    pub decision: Option<Spanned<String>>,
    pub default: Option<Spanned<String>>,
    pub on_error: Option<Spanned<String>>,
    pub input: Vec<FieldDecl>,
    /// The span of the `input:` mapping, for errors about the schema.
    pub input_span: Span,
    pub tables: Vec<TableDecl>,
    pub effects: Vec<EffectDecl>,
    pub externs: Vec<ExternDecl>,
    pub lets: Vec<LetDecl>,
    pub rules: Vec<RuleDecl>,
    pub tests: Vec<TestDecl>,
    pub windows: Vec<WindowDecl>,
    pub models: Vec<ModelDecl>,
}

/// `windows: <name>: { key, time, span, grace, aggregates }`.
#[derive(Clone, Debug)]
pub struct WindowDecl {
    pub name: Ident,
    pub span: Span,
    /// `None` when missing or unparsable (already reported).
    pub key: Option<Expr>,
    pub time: Option<Expr>,
    /// The span's duration text (`10m`).
    pub length: Option<Spanned<String>>,
    pub grace: Option<Spanned<String>>,
    /// `name: count()`, in order; `None` for an aggregate that did not
    /// parse.
    pub aggregates: Vec<(Ident, Option<Expr>)>,
}

/// `models: <name>: { onnx, features, output }`.
#[derive(Clone, Debug)]
pub struct ModelDecl {
    pub name: Ident,
    pub span: Span,
    /// The model file's path, relative to the contract file.
    pub onnx: Option<Spanned<String>>,
    pub features: Option<Spanned<String>>,
    pub output: Option<Spanned<String>>,
}

/// `name: type` in `input` or in a record type.
#[derive(Clone, Debug)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: TypeExpr,
}

/// A type as written.
#[derive(Clone, Debug)]
pub struct TypeExpr {
    pub span: Span,
    pub kind: TypeExprKind,
}

#[derive(Clone, Debug)]
pub enum TypeExprKind {
    /// `int`, `decimal`, ...; unknown names are reported by the checker.
    Named(String),
    List(Box<TypeExpr>),
    Optional(Box<TypeExpr>),
    Record(Vec<FieldDecl>),
    Enum(Vec<Spanned<String>>),
    /// A type that could not be read (already reported); it resolves to
    /// nothing, silently.
    Invalid,
}

#[derive(Clone, Debug)]
pub struct TableDecl {
    pub name: Ident,
    pub span: Span,
    pub kind: TableDeclKind,
}

#[derive(Clone, Debug)]
pub enum TableDeclKind {
    /// Rows as `(key, value)` YAML nodes.
    Map { key: TypeExpr, value: TypeExpr, rows: Vec<(Node, Node)> },
    /// Rows as YAML nodes.
    Set { element: TypeExpr, rows: Vec<Node> },
    /// A declaration whose shape was wrong (already reported).
    Invalid,
}

#[derive(Clone, Debug)]
pub struct EffectDecl {
    pub name: Ident,
    pub ty: TypeExpr,
    pub combine: Option<Spanned<String>>,
}

/// `name: "(string, int) -> decimal"`.
#[derive(Clone, Debug)]
pub struct ExternDecl {
    pub name: Ident,
    /// The signature as written.
    pub text: Spanned<String>,
    pub params: Vec<TypeExpr>,
    pub ret: TypeExpr,
}

#[derive(Clone, Debug)]
pub struct LetDecl {
    pub name: Ident,
    /// `None` when the expression did not parse (already reported).
    pub value: Option<Expr>,
}

#[derive(Clone, Debug)]
pub struct RuleDecl {
    pub id: Ident,
    pub span: Span,
    pub component: Option<Ident>,
    pub channels: Option<Vec<Ident>>,
    pub when: Option<Expr>,
    pub deny: Option<Template>,
    pub allow: Option<Template>,
    pub finding: Option<FindingDecl>,
    pub effects: Vec<(Ident, Option<Expr>)>,
    /// Whether the rule names an outcome (`deny`, `allow`, `finding`,
    /// `effects`) or an unknown key that may be a misspelled one; false
    /// means the rule can never matter.
    pub has_outcome: bool,
}

#[derive(Clone, Debug)]
pub struct FindingDecl {
    pub span: Span,
    pub code: Option<Spanned<String>>,
    pub severity: Option<Spanned<String>>,
    pub message: Option<Template>,
}

/// A message template: text and interpolated expressions.
#[derive(Clone, Debug)]
pub struct Template {
    pub span: Span,
    pub parts: Vec<TemplatePart>,
}

#[derive(Clone, Debug)]
pub enum TemplatePart {
    Text(String),
    Expr(Expr),
}

#[derive(Clone, Debug)]
pub struct TestDecl {
    pub name: Spanned<String>,
    pub span: Span,
    pub channel: Option<Ident>,
    pub component: Option<Ident>,
    pub now: Option<Spanned<String>>,
    /// Earlier inputs, evaluated first.
    pub history: Vec<Node>,
    pub input: Option<Node>,
    pub expect: ExpectDecl,
}

/// A test's `expect:`; keys left out are not checked.
#[derive(Clone, Debug, Default)]
pub struct ExpectDecl {
    pub decision: Option<Spanned<String>>,
    pub reasons: Option<Vec<Ident>>,
    pub findings: Option<Vec<Spanned<String>>>,
    pub effects: Option<Node>,
    pub errors: Option<Vec<Ident>>,
}

/// An expression.
#[derive(Clone, Debug)]
pub struct Expr {
    pub span: Span,
    pub kind: ExprKind,
    /// The height of the tree rooted here (a leaf is 1): bounded by the
    /// parser so later passes may recurse.
    pub height: u32,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(i64),
    /// A decimal literal, its scale kept (`12.50`).
    Decimal(Decimal),
    Float(f64),
    Str(String),
    Bool(bool),
    Name(String),
    Field {
        base: Box<Expr>,
        name: Ident,
    },
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    Call {
        callee: Ident,
        args: Vec<Expr>,
    },
    Lambda {
        param: Ident,
        body: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Cond {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    List(Vec<Expr>),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnaryOp {
    Not,
    Neg,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Coalesce,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "||",
            BinaryOp::And => "&&",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::In => "in",
            BinaryOp::NotIn => "not in",
            BinaryOp::Coalesce => "??",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }
}

impl Expr {
    /// The expressions directly inside this one, in source order.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Int(_)
            | ExprKind::Decimal(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::Name(_) => Vec::new(),
            ExprKind::Field { base, .. } => vec![base],
            ExprKind::Index { base, index } => vec![base, index],
            ExprKind::Call { args, .. } | ExprKind::List(args) => args.iter().collect(),
            ExprKind::Lambda { body, .. } => vec![body],
            ExprKind::Unary { operand, .. } => vec![operand],
            ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
            ExprKind::Cond { cond, then, otherwise } => vec![cond, then, otherwise],
        }
    }

    /// The expression as source-like text, fully parenthesised; used by
    /// `rulec inspect --emit ast`.
    pub fn to_sexp(&self) -> String {
        let mut out = String::new();
        self.write_sexp(&mut out);
        out
    }

    fn write_sexp(&self, out: &mut String) {
        ir::stack::guard(|| self.write_sexp_unguarded(out));
    }

    fn write_sexp_unguarded(&self, out: &mut String) {
        use std::fmt::Write;
        match &self.kind {
            ExprKind::Int(i) => {
                let _ = write!(out, "{i}");
            }
            ExprKind::Decimal(d) => {
                let _ = write!(out, "{d}");
            }
            ExprKind::Float(f) => {
                let _ = write!(out, "{f:?}");
            }
            ExprKind::Str(s) => {
                let _ = write!(out, "{s:?}");
            }
            ExprKind::Bool(b) => {
                let _ = write!(out, "{b}");
            }
            ExprKind::Name(n) => out.push_str(n),
            ExprKind::Field { base, name } => {
                base.write_sexp(out);
                let _ = write!(out, ".{}", name.value);
            }
            ExprKind::Index { base, index } => {
                base.write_sexp(out);
                out.push('[');
                index.write_sexp(out);
                out.push(']');
            }
            ExprKind::Call { callee, args } => {
                let _ = write!(out, "{}(", callee.value);
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    arg.write_sexp(out);
                }
                out.push(')');
            }
            ExprKind::Lambda { param, body } => {
                let _ = write!(out, "{} => ", param.value);
                body.write_sexp(out);
            }
            ExprKind::Unary { op, operand } => {
                out.push_str(if *op == UnaryOp::Not { "(!" } else { "(-" });
                operand.write_sexp(out);
                out.push(')');
            }
            ExprKind::Binary { op, lhs, rhs } => {
                out.push('(');
                lhs.write_sexp(out);
                let _ = write!(out, " {} ", op.symbol());
                rhs.write_sexp(out);
                out.push(')');
            }
            ExprKind::Cond { cond, then, otherwise } => {
                out.push('(');
                cond.write_sexp(out);
                out.push_str(" ? ");
                then.write_sexp(out);
                out.push_str(" : ");
                otherwise.write_sexp(out);
                out.push(')');
            }
            ExprKind::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_sexp(out);
                }
                out.push(']');
            }
        }
    }
}
