//! [`ResultSink`]: what receives a result, part by part, in the order of
//! its JSON; [`Parts`]: which parts a sink records, so that engines skip
//! the rest (no message is rendered for a part nobody reads);
//! [`Collect`]: the sink that builds an [`Evaluation`].

use ir::Verdict;

use super::{EffectResult, ErrorEntry, Evaluation, FindingResult, Reason};
use crate::value::Owned;

/// A set of a result's optional parts (the decision is always given).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Parts(u8);

impl Parts {
    pub const REASONS: Parts = Parts(1);
    pub const FINDINGS: Parts = Parts(2);
    pub const EFFECTS: Parts = Parts(4);
    pub const ERRORS: Parts = Parts(8);
    pub const NONE: Parts = Parts(0);
    /// Every part of a result.
    pub const ALL: Parts = Parts(15);
    /// Not a part of the result: which rules fired, for coverage
    /// ([`ResultSink::fired`]).
    pub const FIRED: Parts = Parts(16);

    /// The part called `name` (`reasons`, `findings`, `effects`,
    /// `errors`); `decision` is [`Parts::NONE`], as it is always there.
    pub fn named(name: &str) -> Option<Parts> {
        Some(match name {
            "decision" => Parts::NONE,
            "reasons" => Parts::REASONS,
            "findings" => Parts::FINDINGS,
            "effects" => Parts::EFFECTS,
            "errors" => Parts::ERRORS,
            _ => return None,
        })
    }

    pub fn has(self, part: Parts) -> bool {
        self.0 & part.0 == part.0
    }

    pub fn with(self, part: Parts) -> Parts {
        Parts(self.0 | part.0)
    }
}

/// Receives one result: [`ResultSink::decision`] first, then the parts
/// the sink asked for, each in result order (reasons and findings in rule
/// order, effects in declaration order), then [`ResultSink::end`]. Names
/// borrow from the contract for `'p`; messages only for the call.
pub trait ResultSink<'p> {
    /// The parts this sink records; the others are not given.
    fn parts(&self) -> Parts;
    fn decision(&mut self, contract: &'p str, version: &'p str, decision: Verdict);
    fn reason(&mut self, rule: &'p str, outcome: Verdict, message: &str);
    fn finding(&mut self, rule: &'p str, code: &'p str, severity: &'p str, message: &str);
    fn effect(&mut self, name: &'p str, value: &Owned);
    fn error(&mut self, rule: &'p str, message: &str);
    fn end(&mut self);
    /// A rule (by index) fired; given by native code, before `end`, to a
    /// sink that asks for [`Parts::FIRED`].
    fn fired(&mut self, _rule: usize) {}
}

/// Receives the results of many records in order (batch evaluation):
/// for each record, a result as [`ResultSink`] gives it, or why there is
/// none.
pub trait RowSink<'p>: ResultSink<'p> {
    /// The record was not evaluated: its input is invalid.
    fn invalid(&mut self, problem: &crate::InvalidInput);
    /// The record's evaluation stopped (it ran out of time).
    fn failed(&mut self, error: &crate::EvaluateError);
}

/// Builds an [`Evaluation`] from the parts given to it.
#[derive(Debug, Default)]
pub struct Collect<'p> {
    evaluation: Option<Evaluation<'p>>,
}

impl<'p> Collect<'p> {
    /// The evaluation collected (`None` before a decision was given).
    pub fn into_evaluation(self) -> Option<Evaluation<'p>> {
        self.evaluation
    }

    fn current(&mut self) -> &mut Evaluation<'p> {
        self.evaluation.get_or_insert_with(|| Evaluation {
            contract: "",
            version: "",
            decision: Verdict::Allow,
            reasons: Vec::new(),
            findings: Vec::new(),
            effects: Vec::new(),
            errors: Vec::new(),
        })
    }
}

impl<'p> ResultSink<'p> for Collect<'p> {
    fn parts(&self) -> Parts {
        Parts::ALL
    }

    fn decision(&mut self, contract: &'p str, version: &'p str, decision: Verdict) {
        let e = self.current();
        (e.contract, e.version, e.decision) = (contract, version, decision);
    }

    fn reason(&mut self, rule: &'p str, outcome: Verdict, message: &str) {
        self.current().reasons.push(Reason { rule, outcome, message: message.to_string() });
    }

    fn finding(&mut self, rule: &'p str, code: &'p str, severity: &'p str, message: &str) {
        self.current().findings.push(FindingResult { rule, code, severity, message: message.to_string() });
    }

    fn effect(&mut self, name: &'p str, value: &Owned) {
        self.current().effects.push(EffectResult { name, value: value.clone() });
    }

    fn error(&mut self, rule: &'p str, message: &str) {
        self.current().errors.push(ErrorEntry { rule, message: message.to_string() });
    }

    fn end(&mut self) {}
}
