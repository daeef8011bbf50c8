//! Fixed-order evaluation: a model scores the same bits on every CPU.
//!
//! tract picks its kernels by the CPU it runs on (AVX-512, AVX2 and FMA,
//! SSE, NEON): a matrix product sums in an order that follows the SIMD
//! width and fuses multiply-adds where the CPU has them, and sigmoid,
//! tanh and exp are approximations that differ by kernel. So the same
//! model gave another score on another machine, and two replicas could
//! decide differently near a threshold. rulec therefore runs a model's
//! *decluttered* graph (tract's own reading of the ONNX operators), not
//! its optimised plan, with every operation whose result depends on the
//! kernel replaced by one of these, which compute in one order on every
//! CPU:
//!
//! - [`FixedEinSum`] (matrix products, `MatMul`, `Gemm`): each output
//!   value is the sum of its products in index order, in `f64`, rounded
//!   once to the model's float;
//! - [`FixedUnary`] (`Sigmoid`, `Tanh`, `Exp`, `Ln`, `Erf`, the
//!   trigonometric functions, `Recip`, `Rsqrt`, `Silu`): computed in
//!   `f64` by the `libm` crate (plain Rust, the same code on every
//!   target), rounded once;
//! - [`FixedSoftmax`] (over one axis) and [`FixedReduce`] (sums,
//!   products): in index order, in `f64`.
//!
//! Every other operation of a decluttered graph is exact whatever the
//! kernel (additions, products and divisions of two values, comparisons,
//! maxima, casts, reshapes, tree ensembles), so tract's own is kept. The
//! price is speed: docs/PERFORMANCE.md ("Models") measures it. A row's
//! score does not depend on the rows scored with it either.

use tract_onnx::prelude::*;
use tract_onnx::tract_core::axes::AxesMapping;
use tract_onnx::tract_core::internal::*;
use tract_onnx::tract_core::ops::einsum::EinSum;
use tract_onnx::tract_core::ops::element_wise::ElementWiseOp;
use tract_onnx::tract_core::ops::nn::{Reduce, Reducer, Softmax, SoftmaxKind};

/// Replaces the kernel-dependent operations of `model` (decluttered) by
/// their fixed-order twins (module doc).
pub(crate) fn fix(model: &mut TypedModel) {
    for id in 0..model.nodes.len() {
        let node = &model.nodes[id];
        let facts: TVec<TypedFact> = node.outputs.iter().map(|o| o.fact.clone()).collect();
        let Some(float) = facts.first().and_then(|f| Float::of(f.datum_type)) else { continue };
        let fixed: Option<Box<dyn TypedOp>> = if let Some(op) = node.op_as::<EinSum>() {
            (op.q_params.is_none())
                .then(|| Box::new(FixedEinSum { axes: op.axes.clone(), float, facts }) as _)
        } else if let Some(op) = node.op_as::<ElementWiseOp>() {
            let same_type = op.1.is_none_or(|dt| Float::of(dt) == Some(float));
            Unary::named(&op.0.name())
                .filter(|_| same_type)
                .map(|function| Box::new(FixedUnary { function, float, facts }) as _)
        } else if let Some(op) = node.op_as::<Softmax>() {
            match (op.axes.as_slice(), op.quant_output_dt) {
                ([axis], None) => {
                    let log = op.kind == SoftmaxKind::LogSoftmax;
                    Some(Box::new(FixedSoftmax { axis: *axis, log, float, facts }) as _)
                }
                _ => None,
            }
        } else if let Some(op) = node.op_as::<Reduce>() {
            let sum = match op.reducer {
                Reducer::Sum => Some(Sum::Values),
                Reducer::Prod => Some(Sum::Products),
                Reducer::MeanOfSquares => Some(Sum::MeanOfSquares),
                _ => None,
            };
            sum.map(|sum| Box::new(FixedReduce { axes: op.axes.clone(), sum, float, facts }) as _)
        } else {
            None
        };
        if let Some(op) = fixed {
            model.nodes[id].op = op;
        }
    }
}

/// The float type an operation's output has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Float {
    F32,
    F64,
}

impl Float {
    fn of(datum: DatumType) -> Option<Float> {
        match datum {
            DatumType::F32 => Some(Float::F32),
            DatumType::F64 => Some(Float::F64),
            _ => None,
        }
    }

    /// `values` (computed in `f64`) as a tensor of this type, each
    /// rounded once.
    fn tensor(self, shape: &[usize], values: &[f64]) -> TractResult<TValue> {
        let tensor = match self {
            Float::F32 => Tensor::from_shape(shape, &values.iter().map(|&v| v as f32).collect::<Vec<_>>())?,
            Float::F64 => Tensor::from_shape(shape, values)?,
        };
        Ok(tensor.into_tvalue())
    }
}

/// `tensor`'s values in `f64` (exactly: every float and the integers
/// models use widen without rounding), row-major.
fn values(tensor: &Tensor) -> TractResult<Vec<f64>> {
    let wide = tensor.cast_to::<f64>()?;
    Ok(wide.try_as_plain_ram()?.as_slice::<f64>()?.to_vec())
}

/// The row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}

/// The parts every fixed-order op shares: its name, and the output facts
/// of the op it replaced (the model is typed before it is fixed).
macro_rules! fixed_op {
    ($op:ident, |$this:ident| $name:expr) => {
        impl Op for $op {
            fn name(&self) -> StaticName {
                let $this = self;
                $name.into()
            }

            op_as_typed_op!();
        }

        impl TypedOp for $op {
            fn output_facts(&self, _inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
                Ok(self.facts.clone())
            }

            as_op!();
        }
    };
}

fixed_op!(FixedEinSum, |_op| "FixedEinSum");
fixed_op!(FixedUnary, |op| format!("Fixed{:?}", op.function));
fixed_op!(FixedSoftmax, |_op| "FixedSoftmax");
fixed_op!(FixedReduce, |_op| "FixedReduce");

/// An Einstein summation (tract's form of matrix products) in index
/// order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FixedEinSum {
    axes: AxesMapping,
    float: Float,
    facts: TVec<TypedFact>,
}

impl FixedEinSum {
    /// The summation over `inputs`: its output's shape and values.
    fn sum(&self, inputs: &[TValue]) -> TractResult<(Vec<usize>, Vec<f64>)> {
        let values: Vec<Vec<f64>> = inputs.iter().map(|t| values(t)).collect::<TractResult<_>>()?;
        let strides: Vec<Vec<usize>> = inputs.iter().map(|t| strides(t.shape())).collect();
        // Each axis: its size, and the step it makes in each input (0
        // where the input broadcasts it).
        let mut outer = Vec::new();
        let mut summed = Vec::new();
        for axis in self.axes.iter_all_axes() {
            let mut size = 1;
            let mut steps = vec![0; inputs.len()];
            for (input, positions) in axis.inputs.iter().enumerate().take(inputs.len()) {
                for &position in positions {
                    let dim = inputs[input].shape()[position];
                    if dim != 1 {
                        ensure!(size == 1 || size == dim, "einsum: axis {} is {size} and {dim}", axis.repr);
                        size = dim;
                        steps[input] += strides[input][position];
                    }
                }
            }
            match axis.outputs[0].first() {
                Some(&position) => outer.push((position, size, steps)),
                None => summed.push((size, steps)),
            }
        }
        outer.sort_by_key(|(position, ..)| *position);
        let shape: Vec<usize> = outer.iter().map(|(_, size, _)| *size).collect();
        let offsets = |count: usize, axes: &[(usize, &Vec<usize>)], index: usize| {
            let mut rest = index;
            let mut at = vec![0; count];
            for (size, steps) in axes.iter().rev() {
                let coordinate = rest % size;
                rest /= size;
                at.iter_mut().zip(steps.iter()).for_each(|(at, step)| *at += coordinate * step);
            }
            at
        };
        let outer: Vec<(usize, &Vec<usize>)> = outer.iter().map(|(_, size, steps)| (*size, steps)).collect();
        let summed: Vec<(usize, &Vec<usize>)> = summed.iter().map(|(size, steps)| (*size, steps)).collect();
        let terms: usize = summed.iter().map(|(size, _)| size).product();
        let term_offsets: Vec<Vec<usize>> = (0..terms).map(|t| offsets(inputs.len(), &summed, t)).collect();
        let count: usize = shape.iter().product();
        let mut out = Vec::with_capacity(count);
        for index in 0..count {
            let base = offsets(inputs.len(), &outer, index);
            let mut sum = 0.0f64;
            for term in &term_offsets {
                let mut product = 1.0f64;
                for (input, values) in values.iter().enumerate() {
                    product *= values[base[input] + term[input]];
                }
                sum += product;
            }
            out.push(sum);
        }
        Ok((shape, out))
    }
}

impl EvalOp for FixedEinSum {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext<'_>, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (shape, values) = self.sum(&inputs)?;
        Ok(tvec!(self.float.tensor(&shape, &values)?))
    }
}

/// The element-wise functions computed by `libm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Unary {
    Sigmoid,
    Silu,
    Tanh,
    Exp,
    Ln,
    Erf,
    Cos,
    Sin,
    Tan,
    Acos,
    Asin,
    Atan,
    Cosh,
    Sinh,
    Acosh,
    Asinh,
    Atanh,
    Recip,
    Rsqrt,
}

impl Unary {
    /// The function tract's element-wise op `name` computes, if it is one
    /// whose kernels differ.
    fn named(name: &str) -> Option<Unary> {
        use Unary::*;
        Some(match name {
            "Sigmoid" => Sigmoid,
            "Silu" => Silu,
            "Tanh" => Tanh,
            "Exp" => Exp,
            "Ln" => Ln,
            "Erf" => Erf,
            "Cos" => Cos,
            "Sin" => Sin,
            "Tan" => Tan,
            "Acos" => Acos,
            "Asin" => Asin,
            "Atan" => Atan,
            "Cosh" => Cosh,
            "Sinh" => Sinh,
            "Acosh" => Acosh,
            "Asinh" => Asinh,
            "Atanh" => Atanh,
            "Recip" => Recip,
            "Rsqrt" => Rsqrt,
            _ => return None,
        })
    }

    fn apply(self, x: f64) -> f64 {
        use Unary::*;
        match self {
            Sigmoid => 1.0 / (1.0 + libm::exp(-x)),
            Silu => x / (1.0 + libm::exp(-x)),
            Tanh => libm::tanh(x),
            Exp => libm::exp(x),
            Ln => libm::log(x),
            Erf => libm::erf(x),
            Cos => libm::cos(x),
            Sin => libm::sin(x),
            Tan => libm::tan(x),
            Acos => libm::acos(x),
            Asin => libm::asin(x),
            Atan => libm::atan(x),
            Cosh => libm::cosh(x),
            Sinh => libm::sinh(x),
            Acosh => libm::acosh(x),
            Asinh => libm::asinh(x),
            Atanh => libm::atanh(x),
            Recip => 1.0 / x,
            Rsqrt => 1.0 / libm::sqrt(x),
        }
    }
}

/// An element-wise function (module doc).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FixedUnary {
    function: Unary,
    float: Float,
    facts: TVec<TypedFact>,
}

impl EvalOp for FixedUnary {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext<'_>, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let input = inputs.first().context("an element-wise op without input")?;
        let out: Vec<f64> = values(input)?.into_iter().map(|x| self.function.apply(x)).collect();
        Ok(tvec!(self.float.tensor(input.shape(), &out)?))
    }
}

/// The lanes of `shape` along `axis`: each lane's first index and the
/// step between its values, and the lane's length.
fn lanes(shape: &[usize], axis: usize) -> (Vec<usize>, usize, usize) {
    let strides = strides(shape);
    let (length, step) = (shape[axis], strides[axis]);
    let count: usize = shape.iter().product();
    let starts = (0..count).filter(|index| (index / step) % length.max(1) == 0).collect();
    (starts, step, length)
}

/// Softmax (or its logarithm) over one axis.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FixedSoftmax {
    axis: usize,
    log: bool,
    float: Float,
    facts: TVec<TypedFact>,
}

impl EvalOp for FixedSoftmax {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext<'_>, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let input = inputs.first().context("a softmax without input")?;
        ensure!(self.axis < input.rank(), "softmax over axis {} of a rank {} input", self.axis, input.rank());
        let mut out = values(input)?;
        let (starts, step, length) = lanes(input.shape(), self.axis);
        for start in starts {
            let lane = |i: usize| start + i * step;
            let max = (0..length).map(|i| out[lane(i)]).fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = (0..length).map(|i| libm::exp(out[lane(i)] - max)).sum();
            for i in 0..length {
                let x = out[lane(i)] - max;
                out[lane(i)] = if self.log { x - libm::log(sum) } else { libm::exp(x) / sum };
            }
        }
        Ok(tvec!(self.float.tensor(input.shape(), &out)?))
    }
}

/// What a [`FixedReduce`] sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Sum {
    Values,
    Products,
    MeanOfSquares,
}

/// A sum (or product) over axes, kept as axes of size 1, in index order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FixedReduce {
    axes: TVec<usize>,
    sum: Sum,
    float: Float,
    facts: TVec<TypedFact>,
}

impl EvalOp for FixedReduce {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext<'_>, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let input = inputs.first().context("a reduction without input")?;
        let shape = input.shape();
        ensure!(
            self.axes.iter().all(|a| *a < shape.len()),
            "reduction over axes {:?} of {shape:?}",
            self.axes
        );
        let reduced: Vec<usize> =
            shape.iter().enumerate().map(|(a, d)| if self.axes.contains(&a) { 1 } else { *d }).collect();
        let (from, to) = (strides(shape), strides(&reduced));
        let start = if self.sum == Sum::Products { 1.0 } else { 0.0 };
        let mut out = vec![start; reduced.iter().product()];
        let mut counts = vec![0usize; out.len()];
        for (index, x) in values(input)?.into_iter().enumerate() {
            let target: usize = (0..shape.len())
                .map(|a| if self.axes.contains(&a) { 0 } else { (index / from[a]) % shape[a] * to[a] })
                .sum();
            match self.sum {
                Sum::Values => out[target] += x,
                Sum::Products => out[target] *= x,
                Sum::MeanOfSquares => out[target] += x * x,
            }
            counts[target] += 1;
        }
        if self.sum == Sum::MeanOfSquares {
            out.iter_mut().zip(&counts).for_each(|(v, n)| *v /= (*n).max(1) as f64);
        }
        Ok(tvec!(self.float.tensor(&reduced, &out)?))
    }
}
