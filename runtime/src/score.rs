//! Scoring a row with a contract's model, the one meaning of `score(model,
//! features)` that the signals component (a chunk's rows, ahead of the
//! rules) and the interpreter (a score in a lambda, in place) share: the
//! features as a row of exactly the declared length, one model run, and
//! a finite score.

use ir::TypeTable;

use crate::program::Program;
use crate::semantics::error::EvalError;
use crate::value::Value;

/// A `score`'s features as one row of the model's input: a `list<float>`
/// exactly the declared `features` long.
pub fn feature_row(program: &Program, model: u32, features: &Value<'_>) -> Result<Vec<f64>, EvalError> {
    let declared = &program.contract.models[model as usize];
    let len = features.list_len();
    if len != declared.features as usize {
        return Err(EvalError::Argument(format!(
            "model `{}` takes {} features, the list has {len}",
            declared.name, declared.features
        )));
    }
    (0..len)
        .map(|i| match features.list_get(&program.layouts, TypeTable::FLOAT, i) {
            Value::Float(f) => Ok(f),
            _ => Err(EvalError::Argument(format!("model `{}`: a feature is not a float", declared.name))),
        })
        .collect()
}

/// Runs model `model` of `program` over `rows` rows given row-major in
/// `features`: one score per row, or the model's error.
pub fn run_model(
    program: &Program,
    model: u32,
    features: &[f64],
    rows: usize,
) -> Result<Vec<f64>, EvalError> {
    let name = &program.contract.models[model as usize].name;
    let Some(loaded) = program.models.get(model as usize) else {
        return Err(EvalError::Argument(format!("model `{name}` is not loaded by this engine")));
    };
    if rows == 0 {
        return Ok(Vec::new());
    }
    match loaded.score(features, rows) {
        Ok(scores) if scores.len() == rows => Ok(scores),
        Ok(scores) => {
            Err(EvalError::Argument(format!("model `{name}` gave {} scores for {rows} rows", scores.len())))
        }
        Err(message) => Err(EvalError::Argument(format!("model `{name}`: {message}"))),
    }
}

/// A row's score as `score(...)` reads it: a finite float.
pub fn score_value(program: &Program, model: u32, score: Option<f64>) -> Result<f64, EvalError> {
    let name = &program.contract.models[model as usize].name;
    match score {
        Some(f) if f.is_finite() => Ok(f),
        Some(_) => {
            Err(EvalError::Argument(format!("model `{name}` gave a score that is not a finite number")))
        }
        None => Err(EvalError::Argument(format!("model `{name}` gave no score for a row"))),
    }
}
