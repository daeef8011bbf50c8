//! rulec's intermediate representation: the typed IR of a contract, its
//! verifier, its text printer and the bundle format.
//!
//! The IR is what every engine reads: the interpreter and the JIT both
//! start from a verified [`Contract`]. This crate knows nothing about YAML,
//! diagnostics or execution: the `frontend` builds contracts, `runtime`
//! and `backend` run them. It holds the few value-level helpers every stage
//! must agree on (decimal and int literal syntax, timestamp and duration
//! text forms, the spelling of names).
//!
//! ```text
//! frontend ──► Contract ──verify──► Bundle ──to_json──► file
//!                                      ▲                 │
//!                                      └─── from_json ◄──┘  (verify + hash)
//! ```

#![forbid(unsafe_code)]

pub mod bundle;
pub mod contract;
pub mod digest;
pub mod expr;
pub mod graph;
pub mod ids;
pub mod limits;
pub mod names;
pub mod pattern;
pub mod print;
pub mod quote;
pub mod signals;
pub mod stack;
pub mod time;
pub mod types;
pub mod value;
pub mod verify;

pub use bundle::{Bundle, BundleError};
pub use contract::*;
pub use expr::{BinaryOp, Builtin, CmpOp, Expr, ExprKind, LambdaKind, UnaryOp};
pub use ids::*;
pub use signals::{Aggregate, AggregateKind, Model, ModelOutput, Window};
pub use types::{FieldDef, TypeKind, TypeTable};
pub use value::{Const, TableKey};
