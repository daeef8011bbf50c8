//! Evaluating one request: its signals first (the record entered into
//! the contract's windows, its scores), then its rules, on native code
//! when it is ready, else (and when it falls back) on the interpreter;
//! many requests in one call (`evaluate_batch`); and the interpreter-only
//! entries (`interpret`, `explain`; `evaluate_in`, with a window state of
//! its own, is in `windows.rs`).

use std::sync::atomic::Ordering;

use crate::native::NativeRun;
use crate::program::context::Context;
use crate::result::{Collect, Coverage, Evaluation, Parts, ResultSink, RuleTrace};
use crate::semantics::budget::{Budget, OutOfTime};
use crate::signals::{Entered, NO_SIGNALS, RecordSignals, Signals, WindowState};
use crate::value::data::{RecordRef, Slot};

use super::{Contract, EvaluateError, Jit, Request};

impl Contract {
    /// Evaluates a validated request, natively when native code is ready.
    pub fn evaluate(&self, request: &Request<'_>) -> Result<Evaluation<'_>, EvaluateError> {
        self.evaluate_entered(request, &mut Entered::default())
    }

    /// [`Contract::evaluate`], saying in `entered` where the record entered
    /// the contract's windows, for [`Contract::withdraw`] should the result
    /// never reach whoever asked (the server's timeout).
    pub fn evaluate_entered(
        &self,
        request: &Request<'_>,
        entered: &mut Entered,
    ) -> Result<Evaluation<'_>, EvaluateError> {
        let mut collect = Collect::default();
        self.check_request(request)?;
        match self.evaluate_slots(&request.context, request.input.record(), &mut collect, entered)? {
            Some(evaluation) => Ok(evaluation),
            // Native code gives every result to the sink it finishes.
            None => collect.into_evaluation().map_or_else(|| self.interpret(request), Ok),
        }
    }

    /// Evaluates many requests in one call (INTERFACES.md's
    /// `evaluate_batch`), appending their results to `results` in order;
    /// stops at the first that cannot be evaluated. A batch is hot from
    /// its first request: under `Jit::Auto` the contract is compiled first
    /// ([`Contract::compile_for_batch`]). Records laid out in columns go
    /// through [`Contract::evaluate_records`] instead.
    pub fn evaluate_batch<'c>(
        &'c self,
        requests: &[Request<'_>],
        results: &mut Vec<Evaluation<'c>>,
    ) -> Result<(), EvaluateError> {
        self.compile_for_batch();
        results.reserve(requests.len());
        for request in requests {
            results.push(self.evaluate(request)?);
        }
        Ok(())
    }

    /// Withdraws a record from the windows it entered (`entered`, from
    /// [`Contract::evaluate_entered`]): its request was not answered with
    /// its result, and leaves no trace in window state (SIGNALS.md).
    pub fn withdraw(&self, entered: &Entered) {
        if let Some(state) = self.window_state() {
            state.withdraw(entered);
        }
    }

    /// Evaluates a validated request and gives the result to `sink`,
    /// straight from native code's state when native code finishes it
    /// (only the parts the sink asks for are built).
    pub fn evaluate_into<'c>(
        &'c self,
        request: &Request<'_>,
        sink: &mut dyn ResultSink<'c>,
    ) -> Result<(), EvaluateError> {
        if let Some(evaluation) = self.evaluate_to(request, sink)? {
            evaluation.replay(sink);
        }
        Ok(())
    }

    /// Runs native code into `sink` when it is ready, or else (and when it
    /// falls back) the interpreter, whose evaluation is returned.
    fn evaluate_to<'c>(
        &'c self,
        request: &Request<'_>,
        sink: &mut dyn ResultSink<'c>,
    ) -> Result<Option<Evaluation<'c>>, EvaluateError> {
        self.check_request(request)?;
        self.evaluate_slots(&request.context, request.input.record(), sink, &mut Entered::default())
    }

    /// Evaluates `input`: its signals (the record entered into the
    /// contract's windows, said in `entered`), then its rules.
    pub(super) fn evaluate_slots<'c>(
        &'c self,
        context: &Context,
        input: RecordRef<'_>,
        sink: &mut dyn ResultSink<'c>,
        entered: &mut Entered,
    ) -> Result<Option<Evaluation<'c>>, EvaluateError> {
        let budget = Budget::new(context.limit);
        if self.has_signals() {
            let mut signals = self.signals(context, input, &budget, None)?;
            let evaluated = self.evaluate_with(context, input, signals.view(), None, &budget, sink);
            if let Err(EvaluateError::OutOfTime { .. }) = evaluated {
                // Not answered with its result: no trace in the windows.
                self.withdraw(&signals.entered);
            } else {
                *entered = std::mem::take(&mut signals.entered);
            }
            return evaluated;
        }
        self.evaluate_with(context, input, NO_SIGNALS, Some(&[]), &budget, sink)
    }

    /// Runs native code on `input`, whose signals are `signals` (`slots`:
    /// as native code reads them, when laid out already), into `sink`
    /// when it is ready, or else (and when it falls back) the
    /// interpreter, whose evaluation is returned.
    pub(super) fn evaluate_with<'c>(
        &'c self,
        context: &Context,
        input: RecordRef<'_>,
        signals: Signals<'_>,
        slots: Option<&[Slot]>,
        budget: &Budget,
        sink: &mut dyn ResultSink<'c>,
    ) -> Result<Option<Evaluation<'c>>, EvaluateError> {
        if let Some(native) = self.native.get() {
            let laid_out;
            let slots = match slots {
                Some(slots) => slots,
                None => {
                    laid_out = signals.slots();
                    &laid_out
                }
            };
            match self.runner(native).run(context, input, slots, budget, sink) {
                NativeRun::Done => {
                    self.native_runs.fetch_add(1, Ordering::Relaxed);
                    return Ok(None);
                }
                NativeRun::OutOfTime(out) => return Err(out.into()),
                NativeRun::Fallback => {
                    self.fallbacks.fetch_add(1, Ordering::Relaxed);
                }
            }
        } else if self.jit == Jit::Auto && self.compiler.is_some() {
            let count = self.evaluations.fetch_add(1, Ordering::Relaxed) + 1;
            if count == self.hot_after {
                self.compile_in_background();
            }
        }
        Ok(Some(self.interpreter().evaluate(context, input, signals, budget)?))
    }

    /// The record's signals: its window values, the record entered into
    /// `state` (or the contract's own window state), then its scores.
    fn signals(
        &self,
        context: &Context,
        input: RecordRef<'_>,
        budget: &Budget,
        state: Option<&WindowState>,
    ) -> Result<RecordSignals, OutOfTime> {
        let state = state.or(self.window_state().map(|s| &**s));
        crate::signals::of_record(self.interpreter(), context, input, budget, state)
    }

    /// Checks `request` and runs `run` on the interpreter with the
    /// request's budget and its record's window values, the record
    /// entered into `state` (or the contract's own window state).
    fn interpreted<T>(
        &self,
        request: &Request<'_>,
        state: Option<&WindowState>,
        run: impl FnOnce(Signals<'_>, &Budget) -> Result<T, OutOfTime>,
    ) -> Result<T, EvaluateError> {
        self.check_request(request)?;
        let budget = Budget::new(request.context.limit);
        let signals = self.signals(&request.context, request.input.record(), &budget, state)?;
        run(signals.view(), &budget).map_err(|out| {
            // Not answered with its result: no trace in the windows.
            if let Some(state) = state.or(self.window_state().map(|s| &**s)) {
                state.withdraw(&signals.entered);
            }
            out.into()
        })
    }

    /// Evaluates with the interpreter only, whatever the engine; the
    /// record enters the contract's windows.
    pub fn interpret(&self, request: &Request<'_>) -> Result<Evaluation<'_>, EvaluateError> {
        self.interpret_in(request, None)
    }

    /// The interpreter's evaluation of `request`, its record entered into
    /// `state` (or the contract's own window state).
    pub(super) fn interpret_in(
        &self,
        request: &Request<'_>,
        state: Option<&WindowState>,
    ) -> Result<Evaluation<'_>, EvaluateError> {
        self.interpreted(request, state, |signals, budget| {
            self.interpreter().evaluate(&request.context, request.input.record(), signals, budget)
        })
    }

    /// Evaluates with the interpreter and records what the evaluation
    /// covered (`rulec test --coverage`), the record entered into `state`
    /// (or the contract's own window state).
    pub fn cover_in(
        &self,
        request: &Request<'_>,
        state: Option<&WindowState>,
    ) -> Result<(Evaluation<'_>, Coverage), EvaluateError> {
        self.interpreted(request, state, |signals, budget| {
            self.interpreter().cover(&request.context, request.input.record(), signals, budget)
        })
    }

    /// The rules native code fires for `request`, by index: `None` when
    /// the contract runs no native code (not compiled, or windows, which
    /// tests evaluate in state of their own) or native code fell back.
    pub fn fired_natively(&self, request: &Request<'_>) -> Result<Option<Vec<usize>>, EvaluateError> {
        if self.native.get().is_none() || self.window_state().is_some() {
            return Ok(None);
        }
        let mut sink = FiredRules(Vec::new());
        let fell_back = self.evaluate_to(request, &mut sink)?.is_some();
        Ok((!fell_back).then_some(sink.0))
    }

    /// Evaluates and traces every rule, for `rulec eval --explain`.
    pub fn explain(&self, request: &Request<'_>) -> Result<(Evaluation<'_>, Vec<RuleTrace>), EvaluateError> {
        self.interpreted(request, None, |signals, budget| {
            self.interpreter().explain(&request.context, request.input.record(), signals, budget)
        })
    }
}

/// Collects the rules native code fired, and nothing else.
struct FiredRules(Vec<usize>);

impl<'p> ResultSink<'p> for FiredRules {
    fn parts(&self) -> Parts {
        Parts::FIRED
    }
    fn decision(&mut self, _: &'p str, _: &'p str, _: ir::Verdict) {}
    fn reason(&mut self, _: &'p str, _: ir::Verdict, _: &str) {}
    fn finding(&mut self, _: &'p str, _: &'p str, _: &'p str, _: &str) {}
    fn effect(&mut self, _: &'p str, _: &crate::value::Owned) {}
    fn error(&mut self, _: &'p str, _: &str) {}
    fn end(&mut self) {}
    fn fired(&mut self, rule: usize) {
        self.0.push(rule);
    }
}
