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

mod decls;
mod exprs;
mod signals;

use std::fmt;

use crate::contract::Contract;
use crate::ids::{LetId, LocalId, RuleId, TypeId, WindowId};
use crate::types::{TypeKind, TypeTable};

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
}
