//! rulec's runtime: evaluates verified bundles, in stages, each a folder
//! (a stage uses only the stages listed before it, and the shared leaves;
//! `xtask/tests/module_circles.rs` checks that no arrow runs back up):
//!
//! - [`value`]: how values are held: slots ([`value::data`]) laid out by
//!   type ([`value::layout`]), decimals ([`value::decimal`]), and values
//!   with their one renderer;
//! - [`semantics`]: the one meaning of every operator and built-in, which
//!   both engines call, with the evaluation error ([`semantics::error`]),
//!   the time budget both engines honour ([`semantics::budget`]) and host
//!   functions ([`semantics::host`]);
//! - [`window`]: the window state (SIGNALS.md): per key, its records,
//!   bounded;
//! - [`program`] (prepare): a contract prepared once, the one input both
//!   engines read: slots resolved, tables indexed, regexes compiled
//!   ([`program::matcher`]), its rules' plans and the [`Context`] they are
//!   tested against ([`program::context`]), the plans of its signals;
//! - [`input`]: requests validated against the schema while parsed, and
//!   many records laid out for batch evaluation;
//! - [`result`]: the result, the sinks engines give it to, its JSON;
//! - the engines: [`interp`] (the interpreter, the reference) and
//!   [`native`] (native code's side of the JIT's ABI);
//! - [`signals`]: what an evaluation reads beyond its record (window
//!   values, scores), computed once for every engine by running the
//!   interpreter on the window's inputs;
//! - the API: [`engine`] (`Engine`, `Contract`, the contract's own tests)
//!   and [`contract_set`] (the set of contracts every front end serves:
//!   routing by name, the request line to result line path, the folder
//!   walker and loader).
//!
//! Shared leaves, where stages meet below them: [`record_signals`] (a
//! record's signals as the engines read them), [`score`] (scoring a row
//! with a model, shared by the signals component and the interpreter),
//! [`model`] (model scoring as the runtime sees it; the `models` crate
//! runs ONNX behind it) and [`contained`] (a panic in a file reader or a
//! model turned into an error).
//!
//! This crate depends on `ir` only: never on the compiler front end or on
//! Cranelift.

pub mod contained;
pub mod contract_set;
pub mod engine;
pub mod input;
pub mod interp;
pub mod model;
pub mod native;
pub mod program;
pub mod record_signals;
pub mod result;
pub mod score;
pub mod semantics;
pub mod signals;
pub mod value;
pub mod window;

pub use contract_set::ContractSet;
pub use engine::{Contract, Engine, EngineBuilder, EvaluateError, Jit, LoadError, Request};
pub use input::request::{Envelope, InvalidInput};
pub use ir::{Bundle, BundleError};
pub use program::context::Context;
pub use result::Evaluation;
pub use semantics::error::EvalError;
pub use semantics::host::{HostFn, HostType, Signature};
pub use signals::ChunkSignals;
pub use value::Owned;
