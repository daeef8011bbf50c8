//! [`TractModel`]: a loaded model scoring rows, all of them in one run of
//! its plan.
//!
//! Rows arrive as `f64`s, row after row; they are converted to the
//! input's float type (to the nearest f32 for an f32 model), and each
//! row's score is its output's f32 (or f64) widened to f64.
//!
//! **A row scores the same bits alone and inside any batch** (the batch
//! engine scores chunks, the server one record at a time, and their
//! results must be byte-identical). tract's kernels compute each row of a
//! product by the same instructions wherever the row sits in its tile, so
//! batch size changes nothing, with one exception: a matrix product
//! whose batch is the symbolic `n` side of the product gets two kernels,
//! a matrix-vector one for a batch of one row and a matrix one for more
//! (`ModePicker::VecVsMat`), and the two need not round alike. A model
//! whose plan holds such a product scores a lone row as a batch of two
//! (the row twice), so every batch runs the matrix kernel.

use std::sync::Arc;

use runtime::model::LoadedModel;
use tract_onnx::prelude::*;
use tract_onnx::tract_core::ops::matmul::ModePicker;
use tract_onnx::tract_core::ops::matmul::optimized::OptMatMul;

use crate::shape::{Float, Reading};
use runtime::contained::contained;

/// A model loaded by [`crate::Tract`]: its plan, optimised for a
/// symbolic batch, and how its input is made and its output read.
pub struct TractModel {
    plan: Arc<TypedRunnableModel>,
    input: Float,
    features: usize,
    reading: Reading,
    /// The fewest rows a run is given (module doc): 2 when tract would
    /// pick another kernel for one row, else 1.
    smallest_batch: usize,
}

impl TractModel {
    pub(crate) fn new(
        plan: Arc<TypedRunnableModel>,
        input: Float,
        features: usize,
        reading: Reading,
    ) -> Self {
        let smallest_batch = if picks_kernel_by_batch(&plan) { 2 } else { 1 };
        TractModel { plan, input, features, reading, smallest_batch }
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
        if rows < self.smallest_batch {
            let padded: Vec<f64> =
                features.iter().copied().cycle().take(self.smallest_batch * self.features).collect();
            let mut scores = self.run(&padded, self.smallest_batch)?;
            scores.truncate(rows);
            return Ok(scores);
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

/// Whether a matrix product of `plan` picks its kernel by the size of the
/// batch (module doc).
fn picks_kernel_by_batch(plan: &TypedRunnableModel) -> bool {
    plan.model()
        .nodes()
        .iter()
        .filter_map(|node| node.op_as::<OptMatMul>())
        .any(|product| product.mode_picker == ModePicker::VecVsMat)
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
            .field("smallest_batch", &self.smallest_batch)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use ir::ModelOutput;

    use crate::Tract;
    use crate::testing::{self, Mlp};

    fn smallest_batch(bytes: Vec<u8>, features: u32) -> usize {
        let declared = testing::declaration("m", bytes, features, ModelOutput::Probability);
        Tract::new().load_model(&declared).unwrap().smallest_batch
    }

    /// An MLP's hidden layer puts the batch on the side of the product
    /// tract picks a kernel by; a logistic regression's product has the
    /// batch on the other side, one kernel for every batch. (Kernel
    /// choices are tract's per architecture: checked where CI runs.)
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_lone_row_is_scored_as_two_only_where_the_kernel_depends_on_the_batch() {
        let mlp = Mlp {
            hidden: vec![vec![0.5; 8]; 3],
            hidden_bias: vec![0.0; 8],
            output: vec![0.25; 8],
            output_bias: 0.0,
        };
        assert_eq!(smallest_batch(mlp.bytes(), 3), 2);
        assert_eq!(smallest_batch(testing::logistic(&[1.0, 2.0, 3.0], 0.0), 3), 1);
    }
}
