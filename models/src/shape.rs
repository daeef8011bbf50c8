//! What a model must look like to load, and which of its outputs is read.
//!
//! The input: exactly one, a float tensor (float or double) of rank 2 whose
//! second dimension is the declared number of features; its first (the
//! batch) may be symbolic, 1 or any number, since the model is prepared
//! for a symbolic batch `n` anyway (`load.rs`).
//!
//! The output, on the model typed for `[n, features]` rows: a float
//! tensor with a row per input row. `probability` reads class 1 of a
//! `[n, 2]` output, or the value of a `[n, 1]` or `[n]` output that is
//! already a probability; `value` reads a `[n, 1]` or `[n]` output. **A
//! model of several outputs is read from the first, in the order the file
//! declares them, that fits**; the others are dropped before the model is
//! optimised. So a scikit-learn classifier (`label`, an int64 `[n]`, then
//! `probabilities`, a float `[n, 2]`) is read from its probabilities.
//!
//! Every refusal says what does not fit in the declaration's terms; the
//! caller names the model.

use ir::ModelOutput;
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::Factoid;

/// The float type of a tensor: the model's input (rows are converted to
/// it) or the output read (widened to f64).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Float {
    F32,
    F64,
}

impl Float {
    fn of(datum_type: DatumType) -> Option<Float> {
        match datum_type {
            DatumType::F32 => Some(Float::F32),
            DatumType::F64 => Some(Float::F64),
            _ => None,
        }
    }

    pub(crate) fn datum_type(self) -> DatumType {
        match self {
            Float::F32 => DatumType::F32,
            Float::F64 => DatumType::F64,
        }
    }
}

/// How scores are read from the chosen output: its index among the
/// model's outputs, its float type, and the column of each row (of
/// `width`) that holds the score.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Reading {
    pub output: usize,
    pub float: Float,
    pub column: usize,
    pub width: usize,
}

/// The input's float type, if the model's one input is a float tensor
/// `[batch, features]`.
pub(crate) fn check_input(model: &InferenceModel, features: usize) -> Result<Float, String> {
    let wanted = || format!("a model takes one float tensor [n, {features}]");
    let inputs = model.input_outlets().map_err(|e| e.to_string())?;
    match inputs.len() {
        1 => {}
        0 => return Err(format!("it has no input; {}", wanted())),
        count => return Err(format!("it has {count} inputs; {}", wanted())),
    }
    let name = label(model, inputs[0]);
    let fact = model.input_fact(0).map_err(|e| e.to_string())?;
    let float = match fact.datum_type.concretize() {
        None => return Err(format!("its input `{name}` declares no type; {}", wanted())),
        Some(datum_type) => Float::of(datum_type).ok_or_else(|| {
            format!("its input `{name}` is {}; {} (float or double)", type_name(datum_type), wanted())
        })?,
    };
    let dims: Option<Vec<Option<TDim>>> =
        (!fact.shape.is_open()).then(|| fact.shape.dims().map(|d| d.concretize()).collect());
    match dims.as_deref() {
        None => Err(format!("its input `{name}` declares no shape; {}", wanted())),
        Some([_, Some(TDim::Val(width))]) if *width == features as i64 => Ok(float),
        Some([_, Some(TDim::Val(width))]) => {
            Err(format!("its input takes {width} features, the contract declares {features}"))
        }
        Some([_, _]) => Err(format!(
            "its input `{name}` has shape {}: its second dimension must be the number of features, {features}",
            declared_text(dims.iter().flatten())
        )),
        Some(other) => Err(format!("its input `{name}` has shape {}; {}", declared_text(other), wanted())),
    }
}

/// The output `output` reads, on `model` typed for `[batch, features]`
/// rows: the first that fits (module doc).
pub(crate) fn choose_output(
    model: &TypedModel,
    batch: &TDim,
    output: ModelOutput,
) -> Result<Reading, String> {
    let outlets = model.output_outlets().map_err(|e| e.to_string())?;
    let facts: Vec<&TypedFact> = outlets
        .iter()
        .map(|&o| model.outlet_fact(o))
        .collect::<TractResult<_>>()
        .map_err(|e| e.to_string())?;
    if let Some(reading) = facts.iter().enumerate().find_map(|(ix, fact)| fits(ix, fact, batch, output)) {
        return Ok(reading);
    }
    let described: Vec<String> = outlets
        .iter()
        .zip(&facts)
        .map(|(&o, fact)| format!("`{}` is {}", label(model, o), fact_text(fact)))
        .collect();
    Err(match described.as_slice() {
        [] => "it has no output".to_string(),
        [one] => format!("its output {one}; `{}` needs {}", output.name(), needs(output)),
        many => format!(
            "none of its outputs fits `{}`, which needs {}: {}",
            output.name(),
            needs(output),
            many.join(", ")
        ),
    })
}

/// How output `ix` is read as `output`, if it fits.
fn fits(ix: usize, fact: &TypedFact, batch: &TDim, output: ModelOutput) -> Option<Reading> {
    let float = Float::of(fact.datum_type)?;
    let (column, width) = match (output, fact.shape.dims()) {
        (_, [rows]) if rows == batch => (0, 1),
        (_, [rows, TDim::Val(1)]) if rows == batch => (0, 1),
        (ModelOutput::Probability, [rows, TDim::Val(2)]) if rows == batch => (1, 2),
        _ => return None,
    };
    Some(Reading { output: ix, float, column, width })
}

/// What `output` needs, in the words of the messages.
fn needs(output: ModelOutput) -> &'static str {
    match output {
        ModelOutput::Probability => "a float [n, 2] (class 1 is read), [n, 1] or [n]",
        ModelOutput::Value => "a float [n, 1] or [n]",
    }
}

/// An outlet's name in the file.
fn label<F, O>(model: &Graph<F, O>, outlet: OutletId) -> String
where
    F: Fact + Clone + 'static,
    O: std::fmt::Debug + std::fmt::Display + AsRef<dyn Op> + AsMut<dyn Op> + Clone + 'static,
{
    model.outlet_label(outlet).unwrap_or(&model.node(outlet.node).name).to_string()
}

/// `float [n, 3]`.
fn fact_text(fact: &TypedFact) -> String {
    format!("{} {}", type_name(fact.datum_type), shape_text(fact.shape.iter()))
}

/// `[n, 3]`.
fn shape_text(dims: impl IntoIterator<Item = impl std::fmt::Display>) -> String {
    let dims: Vec<String> = dims.into_iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

/// A declared shape, `?` for a dimension it leaves unknown: `[n, ?]`.
fn declared_text<'d>(dims: impl IntoIterator<Item = &'d Option<TDim>>) -> String {
    shape_text(dims.into_iter().map(|d| d.as_ref().map_or("?".to_string(), TDim::to_string)))
}

/// A tensor's element type as ONNX names it (`float`, `double`,
/// `int64`, `string`), not as tract does: tract types int64 tensors that
/// may hold sizes as `TDim`, which the file declares `int64`.
fn type_name(datum_type: DatumType) -> String {
    let onnx = match datum_type {
        DatumType::F16 => "float16",
        DatumType::F32 => "float",
        DatumType::F64 => "double",
        DatumType::I8 => "int8",
        DatumType::I16 => "int16",
        DatumType::I32 => "int32",
        DatumType::I64 | DatumType::TDim => "int64",
        DatumType::U8 => "uint8",
        DatumType::U16 => "uint16",
        DatumType::U32 => "uint32",
        DatumType::U64 => "uint64",
        DatumType::Bool => "bool",
        DatumType::String => "string",
        other => return format!("{other:?}").to_lowercase(),
    };
    onnx.to_string()
}
