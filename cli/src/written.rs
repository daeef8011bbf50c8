//! A contract as its author wrote it: the YAML's text and syntax tree,
//! for the reports that speak of the source (`--explain`, `rulec test
//! --coverage`): lines, the text of an expression, and a rule's condition
//! and its operands in the order of the IR's, so that an IR expression
//! can be shown as written.

use std::path::Path;

use frontend::Span;
use frontend::ast::{self, BinaryOp, Expr, ExprKind, UnaryOp};
use runtime::contract_set::walk::FileKind;

pub struct Written {
    pub text: String,
    pub ast: ast::Contract,
}

impl Written {
    /// The contract at `path`, when it is YAML that parses.
    pub fn read(path: &Path) -> Option<Written> {
        if FileKind::of(path) != Some(FileKind::Contract) {
            return None;
        }
        let text = std::fs::read_to_string(path).ok()?;
        let file = frontend::SourceFile::new(path.display().to_string(), text.as_str());
        let ast = frontend::parse(&file, &mut Vec::new())?;
        Some(Written { text, ast })
    }

    /// The 1-based line `span` starts on.
    pub fn line(&self, span: Span) -> usize {
        self.text.get(..span.start as usize).map_or(0, |before| before.matches('\n').count() + 1)
    }

    /// The text of `span`, its line breaks and runs of spaces made one
    /// space.
    pub fn snippet(&self, span: Span) -> String {
        self.text.get(span.range()).unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ")
    }

    pub fn rule(&self, id: &str) -> Option<&ast::RuleDecl> {
        self.ast.rules.iter().find(|r| r.id.value == id)
    }

    /// Whether the contract's let `name` was made by the compiler (work
    /// several rules share, `shared_0`): the source declares no let of
    /// that name. It is not the author's, and not shown by its name.
    pub fn made_by_compiler(&self, name: &str) -> bool {
        !self.ast.lets.iter().any(|l| l.name.value == name)
    }
}

fn is_junction(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Binary { op: BinaryOp::And | BinaryOp::Or, .. })
}

/// A condition and the operands of its `&&`/`||` tree, depth first (the
/// order of the IR's and of evaluation), each with its depth.
pub fn condition_tree(e: &Expr) -> Vec<(&Expr, usize)> {
    let mut out = Vec::new();
    tree(e, 0, &mut out);
    out
}

fn tree<'e>(e: &'e Expr, depth: usize, out: &mut Vec<(&'e Expr, usize)>) {
    out.push((e, depth));
    if let ExprKind::Binary { op: BinaryOp::And | BinaryOp::Or, lhs, rhs } = &e.kind {
        tree(lhs, depth + 1, out);
        tree(rhs, depth + 1, out);
    }
}

/// The operands of a condition's `&&`/`||` tree that are not themselves
/// `&&` or `||`.
pub fn leaves(e: &Expr) -> Vec<&Expr> {
    condition_tree(e).into_iter().map(|(e, _)| e).filter(|e| !is_junction(e)).collect()
}

/// An expression's own operands that are not literals or table names, as
/// the IR lists the non-constant children of the expression it lowers to
/// (`k in table` is a lookup of `k`).
pub fn operands<'e>(e: &'e Expr, contract: &'e ast::Contract) -> Vec<&'e Expr> {
    let table =
        |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if contract.tables.iter().any(|t| &t.name.value == n));
    let all: Vec<&Expr> = match &e.kind {
        ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
        // A membership test, negated or named by a let, shows the test's
        // operands, as the trace does (runtime's `shown_operands`).
        ExprKind::Unary { op: UnaryOp::Not, operand } if membership(operand, contract).is_some() => {
            return membership(operand, contract).map(|test| operands(test, contract)).unwrap_or_default();
        }
        ExprKind::Name(_) if membership(e, contract).is_some() => {
            return membership(e, contract).map(|test| operands(test, contract)).unwrap_or_default();
        }
        ExprKind::Unary { operand, .. } => vec![operand],
        ExprKind::Call { args, .. } => args.iter().collect(),
        ExprKind::Index { base, index } => vec![base, index],
        ExprKind::Cond { cond, then, otherwise } => vec![cond, then, otherwise],
        _ => Vec::new(),
    };
    all.into_iter().filter(|e| !literal(e) && !table(e)).collect()
}

/// The membership test (`x in y`) `e` is, directly or as the value of
/// the let it names.
fn membership<'e>(e: &'e Expr, contract: &'e ast::Contract) -> Option<&'e Expr> {
    match &e.kind {
        ExprKind::Binary { op: BinaryOp::In, .. } => Some(e),
        ExprKind::Name(name) => {
            let value = contract.lets.iter().find(|l| &l.name.value == name)?.value.as_ref()?;
            membership(value, contract)
        }
        _ => None,
    }
}

fn literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::Decimal(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_) => true,
        ExprKind::List(items) => items.iter().all(literal),
        ExprKind::Unary { operand, .. } => literal(operand),
        _ => false,
    }
}
