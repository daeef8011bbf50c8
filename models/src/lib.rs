//! rulec's model runtime: the ONNX models a contract declares
//! (SIGNALS.md, "Models"), loaded, checked against their declaration and
//! scored with tract, in pure Rust.
//!
//! It owns [`Tract`], the [`runtime::model::ModelRuntime`] an engine is
//! given, and [`TractModel`], the [`runtime::model::LoadedModel`] it
//! loads: which models are accepted (one float input `[n, features]`, an
//! output that fits the declared `output`: `shape.rs`, with the rule for
//! models of several outputs), how a model is prepared once for any
//! number of rows (`load.rs`), how its scores are made the same bits on
//! every CPU (`fixed.rs`), and how rows are scored in one run
//! (`score.rs`). `testing` (behind the `testing` feature) builds ONNX
//! models in Rust for tests, examples and benchmarks.
//!
//! It does not own the declaration (`ir::Model`: the features, the
//! output, the file's bytes and hash), nor when scores are computed (the
//! runtime's engines call [`runtime::model::LoadedModel::score`]), nor
//! reading files (a bundle carries the bytes). `runtime` never depends on
//! tract: an engine is given a model runtime, as it is given the JIT.
//! docs/MODELS.md says which models load and how to export them.

#![forbid(unsafe_code)]

mod cost;
mod fixed;
mod load;
mod score;
mod shape;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use cost::MAX_OPERATIONS_PER_ROW;

use std::fmt;
use std::sync::Arc;

use runtime::model::{LoadedModel, ModelRuntime};

pub use score::TractModel;

/// Loads ONNX models with tract.
pub struct Tract {
    onnx: tract_onnx::Onnx,
}

impl Tract {
    pub fn new() -> Tract {
        Tract { onnx: tract_onnx::onnx() }
    }
}

impl Default for Tract {
    fn default() -> Tract {
        Tract::new()
    }
}

impl fmt::Debug for Tract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tract").finish_non_exhaustive()
    }
}

impl ModelRuntime for Tract {
    fn load(&self, model: &ir::Model) -> Result<Arc<dyn LoadedModel>, String> {
        Ok(Arc::new(self.load_model(model)?))
    }
}

impl Tract {
    /// [`ModelRuntime::load`] with the concrete model type.
    pub fn load_model(&self, model: &ir::Model) -> Result<TractModel, String> {
        runtime::contained::contained("tract failed while reading it", || load::load(&self.onnx, model))
    }
}
