//! The scores of a chunk's records: every `score` site's features computed
//! by the interpreter, each model run once over the rows of all of them.

use crate::interp::Interpreter;
use crate::program::NodeId;
use crate::program::context::Context;
use crate::semantics::budget::Budget;
use crate::semantics::error::EvalError;
use crate::value::data::RecordRef;

use super::{Signals, feature_row, run_model, score_value};

/// Computes every score site of `program` for `rows` (each a record, its
/// budget and its window values), and runs each model once over the rows
/// of all of them: per row, per site, its score (row after row).
pub fn score(
    interpreter: Interpreter<'_>,
    context: &Context,
    rows: &[(RecordRef<'_>, &Budget, Signals<'_>)],
) -> Vec<Result<f64, EvalError>> {
    let program = interpreter.program;
    let sites = program.scores.len();
    if sites == 0 {
        return Vec::new();
    }
    let roots: Vec<NodeId> = program.scores.iter().map(|site| site.features).collect();
    // Per row, per site: its features or why there are none.
    let mut features: Vec<Result<Vec<f64>, EvalError>> = Vec::with_capacity(rows.len() * sites);
    for (input, budget, signals) in rows {
        match interpreter.evaluate_nodes(context, *input, *signals, budget, &roots) {
            Ok(values) => features.extend(
                program
                    .scores
                    .iter()
                    .zip(values)
                    .map(|(site, value)| value.and_then(|v| feature_row(program, site.model, &v))),
            ),
            Err(_) => features.extend(program.scores.iter().map(|_| Err(EvalError::OutOfTime))),
        }
    }
    let mut scores = vec![Err(EvalError::OutOfTime); features.len()];
    for (at, site) in program.scores.iter().enumerate() {
        let of_site = || features.iter().skip(at).step_by(sites);
        let given: Vec<f64> = of_site().filter_map(|f| f.as_ref().ok()).flatten().copied().collect();
        let count = of_site().filter(|f| f.is_ok()).count();
        let mut scored = run_model(program, site.model, &given, count).map(Vec::into_iter);
        for (row, features) in of_site().enumerate() {
            scores[row * sites + at] = match (features, &mut scored) {
                (Err(error), _) => Err(error.clone()),
                (Ok(_), Ok(scored)) => score_value(program, site.model, scored.next()),
                (Ok(_), Err(error)) => Err(error.clone()),
            };
        }
    }
    scores
}
