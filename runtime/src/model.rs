//! Model scoring as the runtime sees it: a [`ModelRuntime`] loads a
//! contract's models at load time and a [`LoadedModel`] scores rows.
//!
//! The runtime knows no model format: the `models` crate implements these
//! traits with tract (ONNX in pure Rust), as `backend` implements
//! [`crate::native::NativeCompiler`] with Cranelift, and the engine builder
//! is given one. A contract that declares models cannot load on an engine
//! without one.

use std::fmt::Debug;
use std::sync::Arc;

/// Loads and checks models.
pub trait ModelRuntime: Send + Sync + Debug {
    /// Parses `model`'s bytes and checks them against its declaration: one
    /// float input of shape `[n, features]` (or `[1, features]`), and an
    /// output that fits `model.output`. The error says what does not fit;
    /// the caller names the model.
    fn load(&self, model: &ir::Model) -> Result<Arc<dyn LoadedModel>, String>;
}

/// A loaded, checked model.
pub trait LoadedModel: Send + Sync + Debug {
    /// Scores `rows` records given row-major in `features` (`rows *
    /// features` values): one score per row, in row order. A score is the
    /// model's `f32` (or `f64`) output widened to `f64`; the same row
    /// scores the same whatever else is in the batch.
    fn score(&self, features: &[f64], rows: usize) -> Result<Vec<f64>, String>;
}
