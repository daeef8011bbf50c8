//! rulec's runtime: evaluates verified bundles.
//!
//! - [`data`] and [`layout`]: inputs and constants as flat slot arrays;
//! - [`request`]: requests validated against the schema while parsed;
//! - [`records`]: many input records laid out for batch evaluation;
//! - [`program`]: a contract prepared for evaluation (slots resolved,
//!   tables indexed, regexes compiled);
//! - [`interp`]: the interpreter, the reference semantics;
//! - [`budget`]: the time budget both engines honour;
//! - [`contained`]: a panic in a file reader or a model turned into an
//!   error;
//! - [`model`]: model scoring as the runtime sees it (the `models` crate
//!   runs ONNX behind it);
//! - [`window`]: window state (per-key records of a sliding event-time
//!   window and each record's aggregates over it);
//! - [`ops`]: the semantics of every operator and built-in, shared with
//!   the JIT so the two engines cannot drift;
//! - [`result`]: the result and its JSON form;
//! - [`signals`]: what an evaluation reads beyond its record (window
//!   values), computed once for every engine;
//! - [`engine`]: the embedding API (`Engine`, `Contract`);
//! - [`contract_set`]: the set of contracts every front end serves
//!   (routing by name, the request line to result line path, the folder
//!   walker and loader).
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
