//! [`TractModel`]: a loaded model scoring rows, all of them in one run of
//! its plan.
//!
//! Rows arrive as `f64`s, row after row; they are converted to the
//! input's float type (to the nearest f32 for an f32 model), and each
//! row's score is its output's f32 (or f64) widened to f64.
//!
//! **A row scores the same bits alone and inside any batch, on any
//! CPU**: the plan is the model's decluttered graph with its
//! kernel-dependent operations replaced by fixed-order ones
//! ([`crate::fixed`]), which compute each output value from its own row
//! in one order whatever the batch and the machine.

use std::sync::Arc;

use runtime::model::LoadedModel;
use tract_onnx::prelude::*;

use crate::shape::{Float, Reading};
use runtime::contained::contained;

/// A model loaded by [`crate::Tract`]: its plan, for a symbolic batch,
/// and how its input is made and its output read.
pub struct TractModel {
    plan: Arc<TypedRunnableModel>,
    input: Float,
    features: usize,
    reading: Reading,
}

impl TractModel {
    pub(crate) fn new(
        plan: Arc<TypedRunnableModel>,
        input: Float,
        features: usize,
        reading: Reading,
    ) -> Self {
        TractModel { plan, input, features, reading }
    }

    /// The scores of `rows` rows given row after row in `features`.
    fn score_rows(&self, features: &[f64], rows: usize) -> Result<Vec<f64>, String> {
        if Some(features.len()) != rows.checked_mul(self.features) {
            let rows = if rows == 1 { "1 row".to_string() } else { format!("{rows} rows") };
            return Err(format!(
                "{} values were given for {rows} of {} features",
                features.len(),
                self.features
            ));
        }
        if rows == 0 {
            return Ok(Vec::new());
        }
        self.run(features, rows)
    }

    /// One run of the plan on `rows` rows.
    fn run(&self, features: &[f64], rows: usize) -> Result<Vec<f64>, String> {
        let input = self.input_tensor(features, rows)?;
        let outputs = self.plan.run(tvec![input.into()]).map_err(|e| format!("tract failed: {e:#}"))?;
        let output = outputs.first().ok_or("the model gave no output")?;
        self.scores(output, rows)
    }

    /// The `[rows, features]` input tensor.
    fn input_tensor(&self, features: &[f64], rows: usize) -> Result<Tensor, String> {
        let shape = [rows, self.features];
        let tensor = match self.input {
            Float::F32 => {
                let narrowed: Vec<f32> = features.iter().map(|&x| x as f32).collect();
                Tensor::from_shape(&shape, &narrowed)
            }
            Float::F64 => Tensor::from_shape(&shape, features),
        };
        tensor.map_err(|e| e.to_string())
    }

    /// Each row's score: its `column` of the output's rows of `width`.
    fn scores(&self, output: &Tensor, rows: usize) -> Result<Vec<f64>, String> {
        let Reading { column, width, float, .. } = self.reading;
        if output.shape().first() != Some(&rows) || output.len() != rows * width {
            return Err(format!("the model's output has shape {:?} for {rows} rows", output.shape()));
        }
        let plain = output.try_as_plain_ram().map_err(|e| e.to_string())?;
        let scores = match float {
            Float::F32 => plain.as_slice::<f32>().map(|s| read(s, column, width, f64::from)),
            Float::F64 => plain.as_slice::<f64>().map(|s| read(s, column, width, |x| x)),
        };
        scores.map_err(|e| e.to_string())
    }
}

/// `column` of every row of `width` in `values`, widened.
fn read<T: Copy>(values: &[T], column: usize, width: usize, widen: impl Fn(T) -> f64) -> Vec<f64> {
    values.iter().skip(column).step_by(width).map(|&v| widen(v)).collect()
}

impl LoadedModel for TractModel {
    fn score(&self, features: &[f64], rows: usize) -> Result<Vec<f64>, String> {
        contained("tract failed while scoring", || self.score_rows(features, rows))
    }
}

impl std::fmt::Debug for TractModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TractModel")
            .field("input", &self.input)
            .field("features", &self.features)
            .field("reading", &self.reading)
            .finish_non_exhaustive()
    }
}
