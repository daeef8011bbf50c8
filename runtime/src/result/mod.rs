//! The result of evaluating a request, and its JSON form.
//!
//! Keys come in the order LANGUAGE.md shows: `contract`, `version`,
//! `decision`, `reasons`, `findings`, `effects`, `errors`. Decimals are
//! strings (exact); ints and floats are numbers; effects appear in
//! declaration order and only when a rule set them.
//!
//! Engines give a result to a [`ResultSink`] part by part (native code
//! straight from its state area, the interpreter by replaying an
//! [`Evaluation`]); [`JsonResult`] writes the JSON line, [`Collect`]
//! builds an [`Evaluation`], and the batch writers build Arrow columns.

use std::fmt::Write as _;

use ir::{RuleId, TypeId, Verdict};

use crate::value::Owned;

mod json;
mod sink;

pub use json::{JsonResult, JsonState};
pub use sink::{Collect, Parts, ResultSink, RowSink};

/// One evaluation's outcome. Borrows names from the contract.
#[derive(Clone, PartialEq, Debug)]
pub struct Evaluation<'p> {
    pub contract: &'p str,
    pub version: &'p str,
    pub decision: Verdict,
    pub reasons: Vec<Reason<'p>>,
    pub findings: Vec<FindingResult<'p>>,
    pub effects: Vec<EffectResult<'p>>,
    pub errors: Vec<ErrorEntry<'p>>,
}

/// A deny or allow rule that decided.
#[derive(Clone, PartialEq, Debug)]
pub struct Reason<'p> {
    pub rule: &'p str,
    pub outcome: Verdict,
    pub message: String,
}

#[derive(Clone, PartialEq, Debug)]
pub struct FindingResult<'p> {
    pub rule: &'p str,
    pub code: &'p str,
    pub severity: &'p str,
    pub message: String,
}

/// An effect's combined value.
#[derive(Clone, PartialEq, Debug)]
pub struct EffectResult<'p> {
    pub name: &'p str,
    pub value: Owned,
}

/// What the fired rules produced, in rule order. Both engines fill one and
/// turn it into the result here, so the decision and the reasons cannot
/// drift apart.
#[derive(Default, Debug)]
pub(crate) struct Outcomes<'p> {
    deny: Vec<Reason<'p>>,
    allow: Vec<Reason<'p>>,
    findings: Vec<FindingResult<'p>>,
}

impl<'p> Outcomes<'p> {
    /// Adds a fired rule's rendered messages: its verdict's and its
    /// finding's.
    pub(crate) fn add(&mut self, rule: &'p ir::Rule, message: Option<String>, finding: Option<String>) {
        if let (Some(message), Some(v)) = (message, &rule.verdict) {
            let reasons = if v.verdict == Verdict::Deny { &mut self.deny } else { &mut self.allow };
            reasons.push(Reason { rule: &rule.name, outcome: v.verdict, message });
        }
        if let (Some(message), Some(f)) = (finding, &rule.finding) {
            self.findings.push(FindingResult {
                rule: &rule.name,
                code: &f.code,
                severity: f.severity.name(),
                message,
            });
        }
    }

    /// The result. The decision is the verdict of the rule that decided
    /// under first-match (`decided`), else deny when a denial fired or an
    /// error failed closed, else allow when an allowance fired, else the
    /// default; the reasons are the fired rules of the winning verdict
    /// (none when the default or a failure decided).
    pub(crate) fn evaluation(
        self,
        c: &'p ir::Contract,
        decided: Option<Verdict>,
        failed_closed: bool,
        effects: Vec<EffectResult<'p>>,
        errors: Vec<ErrorEntry<'p>>,
    ) -> Evaluation<'p> {
        let decision = decide(c, decided, failed_closed, !self.deny.is_empty(), !self.allow.is_empty());
        let reasons = match decision {
            Verdict::Deny => self.deny,
            Verdict::Allow => self.allow,
        };
        Evaluation {
            contract: &c.name,
            version: &c.version,
            decision,
            reasons,
            findings: self.findings,
            effects,
            errors,
        }
    }
}

/// The decision of an evaluation: the verdict of the rule that decided
/// under first-match (`decided`), else deny when a denial fired or an
/// error failed closed, else allow when an allowance fired, else the
/// contract's default. Every engine decides here.
pub fn decide(
    c: &ir::Contract,
    decided: Option<Verdict>,
    failed_closed: bool,
    denied: bool,
    allowed: bool,
) -> Verdict {
    match decided {
        Some(verdict) => verdict,
        None if failed_closed || denied => Verdict::Deny,
        None if allowed => Verdict::Allow,
        None => c.default,
    }
}

/// An evaluation error of a rule.
#[derive(Clone, PartialEq, Debug)]
pub struct ErrorEntry<'p> {
    pub rule: &'p str,
    pub message: String,
}

impl<'p> Evaluation<'p> {
    /// The result line `rulec eval` prints (no trailing newline).
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        self.write_json(&mut out);
        out
    }

    /// Appends the result's JSON to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        self.replay(&mut JsonResult::new(out, Parts::ALL));
    }

    /// Gives this result to `sink`, part by part, as the engines do.
    pub fn replay(&self, sink: &mut dyn ResultSink<'p>) {
        let parts = sink.parts();
        sink.decision(self.contract, self.version, self.decision);
        if parts.has(Parts::REASONS) {
            for r in &self.reasons {
                sink.reason(r.rule, r.outcome, &r.message);
            }
        }
        if parts.has(Parts::FINDINGS) {
            for f in &self.findings {
                sink.finding(f.rule, f.code, f.severity, &f.message);
            }
        }
        if parts.has(Parts::EFFECTS) {
            for e in &self.effects {
                sink.effect(e.name, &e.value);
            }
        }
        if parts.has(Parts::ERRORS) {
            for e in &self.errors {
                sink.error(e.rule, &e.message);
            }
        }
        sink.end();
    }

    /// The rule ids of the reasons, for tests.
    pub fn reason_rules(&self) -> Vec<&str> {
        self.reasons.iter().map(|r| r.rule).collect()
    }

    /// A short human summary: `deny (single_limit)`.
    pub fn summary(&self) -> String {
        let mut out = self.decision.name().to_string();
        if !self.reasons.is_empty() {
            let _ = write!(out, " ({})", self.reason_rules().join(", "));
        }
        out
    }
}

/// What one evaluation covered of its contract, for `rulec test
/// --coverage`.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Coverage {
    /// Per rule: what its condition gave, when it applied and was
    /// evaluated without an error.
    pub rules: Vec<Option<bool>>,
    /// Per rule: the operands of its condition's `&&`/`||` tree that are
    /// not themselves `&&`/`||`, with the value each had when evaluation
    /// reached it (`None`: short-circuited, or an error).
    pub conditions: Vec<Vec<(ir::ExprId, Option<bool>)>>,
    /// Per let: whether it was computed (lets are computed when read).
    pub lets: Vec<bool>,
    /// `(table, row)` of each row a lookup (`t[k]`, `k in t`) found.
    pub rows: Vec<(u32, u32)>,
}

/// What `rulec eval --explain` prints for one rule.
#[derive(Clone, PartialEq, Debug)]
pub struct RuleTrace {
    pub rule: RuleId,
    pub applied: bool,
    /// `None` when the rule was not evaluated.
    pub fired: Option<Result<bool, String>>,
    /// The rule's condition, then the operands of its `&&`/`||` tree in
    /// the order evaluation reaches them.
    pub conditions: Vec<Condition>,
    /// The lets the rule reads, with their values.
    pub lets: Vec<(String, String)>,
    /// The window aggregates and scores the rule and those lets read,
    /// with their values.
    pub signals: Vec<(String, String)>,
}

/// A condition or an operand of its `&&`/`||` tree, with its value.
#[derive(Clone, PartialEq, Debug)]
pub struct Condition {
    pub expr: ir::ExprId,
    /// The IR's text of it.
    pub text: String,
    /// Its value; `None` when `&&` or `||` did not need it.
    pub value: Option<String>,
    /// For an operand that is not itself `&&`/`||`: the values of its
    /// own operands that are not constants (`amount` and `limit` of
    /// `amount > limit`), as `(expression, IR text, value)`.
    pub operands: Vec<(ir::ExprId, String, String)>,
}

/// An effect value's type, kept with the effect to convert it.
pub type EffectType = TypeId;
