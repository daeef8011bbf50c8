//! rulec's runtime: evaluates verified bundles, in stages.
//!
//! - Inputs: [`data`] and [`layout`] (inputs and constants as flat slot
//!   arrays), [`request`] (requests validated against the schema while
//!   parsed), [`records`] (many input records laid out for batch
//!   evaluation), [`value`] (values and their rendering);
//! - prepare: [`program`] (a contract prepared once: slots resolved,
//!   tables indexed, regexes compiled, the plans of its signals);
//! - semantics: [`semantics`] (every operator and built-in, shared by both
//!   engines so they cannot drift), over the leaves [`decimal`] and
//!   [`score`] (scoring a row with a model); [`budget`], the time budget
//!   both engines honour;
//! - the engines: [`interp`] (the interpreter, the reference) and
//!   [`native`] (native code's side of the JIT's ABI);
//! - signals: [`signals`] (what an evaluation reads beyond its record,
//!   computed once for every engine) over [`window`] (the window state)
//!   and [`model`] (model scoring as the runtime sees it; the `models`
//!   crate runs ONNX behind it); [`record_signals`], the values the
//!   engines read;
//! - results: [`result`] (the result and its JSON form);
//! - the API: [`engine`] (`Engine`, `Contract`) and [`contract_set`] (the
//!   set of contracts every front end serves: routing by name, the
//!   request line to result line path, the folder walker and loader);
//!   [`contained`], a panic in a file reader or a model turned into an
//!   error.
//!
//! This crate depends on `ir` only: never on the compiler front end or on
//! Cranelift.

pub mod budget;
pub mod contained;
pub mod context;
pub mod contract_set;
pub mod contract_tests;
pub mod data;
pub mod decimal;
pub mod engine;
pub mod error;
pub mod host;
pub mod interp;
pub mod layout;
pub mod matcher;
pub mod model;
pub mod native;
pub mod program;
pub mod record_signals;
pub mod records;
pub mod request;
pub mod result;
pub mod score;
pub mod semantics;
pub mod signals;
pub use signals::ChunkSignals;
pub mod value;
pub mod window;

pub use context::Context;
pub use contract_set::ContractSet;
pub use engine::{Contract, Engine, EngineBuilder, EvaluateError, Jit, LoadError, Request};
pub use error::EvalError;
pub use host::{HostFn, HostType, HostValue, Signature};
pub use ir::{Bundle, BundleError};
pub use request::{Envelope, InvalidInput};
pub use result::Evaluation;
