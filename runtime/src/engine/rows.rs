//! Evaluating many records laid out for the contract ([`Records`]): the
//! signals of a chunk computed once, then the rules of its rows, through
//! native code's batch entry when it can run them, else row by row.

use std::sync::atomic::Ordering;

use crate::input::records::Records;
use crate::native::RecordRun;
use crate::program::context::Context;
use crate::result::{ResultSink, RowSink};
use crate::semantics::budget::Budget;
use crate::signals::{ChunkSignals, Entered, NO_SIGNALS, WindowInputs};

use super::{Contract, EvaluateError};

impl Contract {
    /// Evaluates row `row` of `records` (which must be valid, and laid out
    /// for this contract) in `context`, giving the result to `sink`.
    pub fn evaluate_record<'c>(
        &'c self,
        records: &Records<'_>,
        row: usize,
        context: &Context,
        sink: &mut dyn ResultSink<'c>,
    ) -> Result<(), EvaluateError> {
        if !records.is_for(&self.program) {
            return Err(EvaluateError::WrongContract { expected: self.name().to_string() });
        }
        if let Some(evaluation) =
            self.evaluate_slots(context, records.record(row), sink, &mut Entered::default())?
        {
            evaluation.replay(sink);
        }
        Ok(())
    }

    /// Evaluates every record of `records` in `context`, in order, giving
    /// each result (or its problem) to `sink`; returns how many records
    /// were not evaluated. Native code runs the records in one call of
    /// its batch entry when there is no time limit. A contract with
    /// signals has them computed first, for all the records
    /// ([`Contract::chunk_signals`]).
    pub fn evaluate_records<'c>(
        &'c self,
        records: &Records<'_>,
        context: &Context,
        sink: &mut dyn RowSink<'c>,
    ) -> usize {
        let signals = self.has_signals().then(|| self.chunk_signals(records, context, |enter| enter()));
        self.evaluate_rows(records, 0..records.len(), context, signals.as_ref(), sink)
    }

    /// Whether evaluations read values computed ahead of the rules:
    /// windows, or scores (`crate::signals`).
    pub fn has_signals(&self) -> bool {
        !self.program.windows.is_empty() || !self.program.scores.is_empty()
    }

    /// The signals of `records`' valid records (`crate::signals::chunk`):
    /// each record's window inputs computed, then the records entered into
    /// the contract's windows one after the other inside `ordered` (which
    /// runs what it is given once, when the records before these have
    /// entered: the rest may run in any order, on any thread), then every
    /// score site run once over all of them. Their rules may then run in
    /// any order, on any thread ([`Contract::evaluate_signalled`]).
    pub fn chunk_signals(
        &self,
        records: &Records<'_>,
        context: &Context,
        ordered: impl FnOnce(&mut dyn FnMut()),
    ) -> ChunkSignals {
        if !records.is_for(&self.program) {
            ordered(&mut || {});
            return ChunkSignals::skipped(records.len());
        }
        let budgets: Vec<Budget> = (0..records.len()).map(|_| Budget::new(context.limit)).collect();
        let state = self.window_state().map(|state| &**state);
        let mut entered = None;
        {
            let inputs = WindowInputs::compute(self.interpreter(), context, records, &budgets, state);
            ordered(&mut || entered = Some(inputs.enter(&self.program, state)));
        }
        let mut signals = entered.unwrap_or_else(|| ChunkSignals::skipped(records.len()));
        signals.score(self.interpreter(), context, records, budgets);
        signals
    }

    /// Evaluates the records `rows` of `records`, whose signals are
    /// `signals` ([`Contract::chunk_signals`] of the same records), as
    /// [`Contract::evaluate_records`] does, giving `sink` one result per
    /// row of `rows`, in order.
    pub fn evaluate_signalled<'c>(
        &'c self,
        records: &Records<'_>,
        rows: std::ops::Range<usize>,
        context: &Context,
        signals: &ChunkSignals,
        sink: &mut dyn RowSink<'c>,
    ) -> usize {
        self.evaluate_rows(records, rows, context, Some(signals), sink)
    }

    /// The records `rows` of `records`, whose signals are `signals` (`None`
    /// for a contract without them), into `sink`: with the batch entry
    /// when it can run them, else one at a time. Returns how many were
    /// not evaluated.
    fn evaluate_rows<'c>(
        &'c self,
        records: &Records<'_>,
        rows: std::ops::Range<usize>,
        context: &Context,
        signals: Option<&ChunkSignals>,
        sink: &mut dyn RowSink<'c>,
    ) -> usize {
        let rows = rows.start.min(records.len())..rows.end.min(records.len());
        if !records.is_for(&self.program) {
            let wrong = EvaluateError::WrongContract { expected: self.name().to_string() };
            rows.clone().for_each(|_| sink.failed(&wrong));
            return rows.len();
        }
        if let Some(failed) = self.run_batched(records, rows.clone(), context, signals, sink) {
            return failed;
        }
        let mut failed = 0;
        for row in rows {
            if let Some(problem) = records.problem(row) {
                sink.invalid(problem);
                failed += 1;
            } else if let Err(e) = self.evaluate_row(records, row, context, signals, sink) {
                sink.failed(&e);
                failed += 1;
            }
        }
        failed
    }

    /// [`Contract::evaluate_rows`] in calls of the batch entry, when there
    /// is no time limit and native code has a batch entry; `None` when it
    /// cannot.
    fn run_batched<'c>(
        &'c self,
        records: &Records<'_>,
        rows: std::ops::Range<usize>,
        context: &Context,
        signals: Option<&ChunkSignals>,
        sink: &mut dyn RowSink<'c>,
    ) -> Option<usize> {
        let native = self.native.get().filter(|_| context.limit.is_none())?;
        let (mut ran, mut fell, mut failed) = (0, 0, 0);
        let slots = signals.map_or(&[][..], ChunkSignals::all_slots);
        let batched = self.runner(native).run_records(context, records, rows, slots, |row, run| match run {
            RecordRun::Done(state) => {
                ran += 1;
                crate::native::finish(&self.program, native, state, sink);
            }
            RecordRun::Skipped => {
                failed += 1;
                if let Some(problem) = records.problem(row) {
                    sink.invalid(problem);
                }
            }
            RecordRun::Fallback => {
                fell += 1;
                if let Err(e) = self.interpret_row(records, row, context, signals, sink) {
                    sink.failed(&e);
                    failed += 1;
                }
            }
        });
        if !batched {
            return None;
        }
        self.native_runs.fetch_add(ran, Ordering::Relaxed);
        self.fallbacks.fetch_add(fell, Ordering::Relaxed);
        Some(failed)
    }

    /// Row `row` of `records` (valid), whose chunk's signals are `signals`,
    /// on native code when it is ready, else the interpreter, into `sink`.
    fn evaluate_row<'c>(
        &'c self,
        records: &Records<'_>,
        row: usize,
        context: &Context,
        signals: Option<&ChunkSignals>,
        sink: &mut dyn RowSink<'c>,
    ) -> Result<(), EvaluateError> {
        let (row_signals, slots) = match signals {
            Some(signals) => (signals.row(row)?, signals.slots(row)),
            None => (NO_SIGNALS, Some(&[][..])),
        };
        // A fresh budget: the time a record waited for its chunk's other
        // records does not count against it.
        let budget = Budget::new(context.limit);
        if let Some(evaluation) =
            self.evaluate_with(context, records.record(row), row_signals, slots, &budget, sink)?
        {
            evaluation.replay(sink);
        }
        Ok(())
    }

    /// Row `row` of `records` (valid), whose chunk's signals are `signals`,
    /// on the interpreter, into `sink`.
    fn interpret_row<'c>(
        &'c self,
        records: &Records<'_>,
        row: usize,
        context: &Context,
        signals: Option<&ChunkSignals>,
        sink: &mut dyn RowSink<'c>,
    ) -> Result<(), EvaluateError> {
        let row_signals = signals.map_or(Ok(NO_SIGNALS), |signals| signals.row(row))?;
        let budget = Budget::new(context.limit);
        let input = records.record(row);
        self.interpreter().evaluate(context, input, row_signals, &budget)?.replay(sink);
        Ok(())
    }
}
