//! What an evaluation reads beyond its own record (SIGNALS.md): each
//! window's aggregates over the record's window, and each model score.
//!
//! One component computes them and every engine reads them, so the
//! engines cannot drift: [`observe`] computes a record's window inputs
//! (key, time, aggregate arguments) with the interpreter, the reference
//! semantics, enters the record into its windows in [`WindowState`]
//! (`crate::window` keeps the per-key records) and returns the record's
//! [`Signals`]; [`score`] then computes the features of every `score`
//! site ([`ScorePlan`]) for a chunk of records and runs each model once
//! over the chunk's rows. The rules read `windows.<w>.<a>` and the scores
//! from those.
//!
//! A window whose key, time or an argument fails to compute, or whose
//! record is late, reads as that error, in whatever rule or let reads it;
//! a sum that overflowed reads as the overflow. The record enters every
//! window it is not late for, whatever its decision. A score whose
//! features fail to compute, are not `features` long, or that the model
//! fails on or scores as a non-finite number reads as that error. A
//! `score` whose features read a lambda's parameter cannot be computed
//! ahead: the interpreter scores it where it stands, one row at a time,
//! with the same [`feature_row`] and [`score_value`] (a model scores a
//! row the same whatever else is in its batch: `crate::model`).

mod chunk;

mod scores;
mod windows;

use crate::interp::Interpreter;
use crate::program::context::Context;
use crate::semantics::budget::{Budget, OutOfTime};
use crate::value::data::RecordRef;

pub use crate::program::plans::{ScorePlan, WindowPlan};
use crate::record_signals::Aggregate;
pub use crate::record_signals::{Entered, NO_SIGNALS, RecordSignals, Signals};
pub use crate::score::{feature_row, run_model, score_value};
pub use chunk::ChunkSignals;
pub(crate) use chunk::WindowInputs;
pub use scores::score;
pub use windows::{WindowState, observe, window_signature};

/// A request's signals: its window values, the record entered into
/// `state` ([`observe`]; `None` for a contract without windows), then its
/// scores ([`score`]). When `budget` runs out on the way, the record is
/// withdrawn from the windows it entered.
pub fn of_record(
    interpreter: Interpreter<'_>,
    context: &Context,
    input: RecordRef<'_>,
    budget: &Budget,
    state: Option<&WindowState>,
) -> Result<RecordSignals, OutOfTime> {
    let mut signals = match state {
        Some(state) => observe(interpreter, context, input, budget, state)?,
        None => RecordSignals::default(),
    };
    if interpreter.program.scores.is_empty() {
        return Ok(signals);
    }
    let row = [(input, budget, signals.view())];
    let scored = budget.check().map(|()| score(interpreter, context, &row));
    match scored.and_then(|scores| budget.check().map(|()| scores)) {
        Ok(scores) => {
            signals.scores = scores;
            Ok(signals)
        }
        Err(out) => {
            if let Some(state) = state {
                state.withdraw(&signals.entered);
            }
            Err(out)
        }
    }
}
