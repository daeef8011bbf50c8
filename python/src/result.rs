//! `rulec.Result`: one evaluation's outcome, owned (it outlives the
//! call), with its parts as Python objects on demand and its JSON line
//! written by the runtime's one writer (`Evaluation::write_json`), so
//! `to_json()` is the line `rulec eval` prints for the same request.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use runtime::Owned;
use runtime::result::{EffectResult, ErrorEntry, Evaluation, FindingResult, Parts, Reason};

use crate::output;

/// The result of evaluating one input: the decision, the reasons, the
/// findings, the effects and the rules' errors.
#[pyclass(frozen, module = "rulec", name = "Result")]
#[derive(Debug)]
pub struct EvalResult {
    contract: String,
    version: String,
    decision: ir::Verdict,
    /// Rule, outcome, message.
    reasons: Vec<(String, ir::Verdict, String)>,
    /// Rule, code, severity, message.
    findings: Vec<(String, String, String, String)>,
    effects: Vec<(String, Owned)>,
    /// Rule, message.
    errors: Vec<(String, String)>,
}

impl EvalResult {
    /// The owned copy of `evaluation`.
    pub fn new(evaluation: &Evaluation<'_>) -> EvalResult {
        EvalResult {
            contract: evaluation.contract.to_string(),
            version: evaluation.version.to_string(),
            decision: evaluation.decision,
            reasons: evaluation
                .reasons
                .iter()
                .map(|r| (r.rule.into(), r.outcome, r.message.clone()))
                .collect(),
            findings: evaluation
                .findings
                .iter()
                .map(|f| (f.rule.into(), f.code.into(), f.severity.into(), f.message.clone()))
                .collect(),
            effects: evaluation.effects.iter().map(|e| (e.name.into(), e.value.clone())).collect(),
            errors: evaluation.errors.iter().map(|e| (e.rule.into(), e.message.clone())).collect(),
        }
    }

    /// The result as a dict with the `parts` kept (the contract, the
    /// version and the decision are always there, as in `rulec eval
    /// --fields`), keys in the order of the JSON line.
    pub fn dict<'py>(&self, py: Python<'py>, parts: Parts) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("contract", &self.contract)?;
        dict.set_item("version", &self.version)?;
        dict.set_item("decision", self.decision.name())?;
        if parts.has(Parts::REASONS) {
            dict.set_item("reasons", self.reasons(py)?)?;
        }
        if parts.has(Parts::FINDINGS) {
            dict.set_item("findings", self.findings(py)?)?;
        }
        if parts.has(Parts::EFFECTS) {
            dict.set_item("effects", self.effects(py)?)?;
        }
        if parts.has(Parts::ERRORS) {
            dict.set_item("errors", self.errors(py)?)?;
        }
        Ok(dict)
    }

    /// The evaluation again, borrowing from this copy, for the runtime's
    /// writer and summary.
    fn view(&self) -> Evaluation<'_> {
        Evaluation {
            contract: &self.contract,
            version: &self.version,
            decision: self.decision,
            reasons: self
                .reasons
                .iter()
                .map(|(rule, outcome, message)| Reason { rule, outcome: *outcome, message: message.clone() })
                .collect(),
            findings: self
                .findings
                .iter()
                .map(|(rule, code, severity, message)| FindingResult {
                    rule,
                    code,
                    severity,
                    message: message.clone(),
                })
                .collect(),
            effects: self
                .effects
                .iter()
                .map(|(name, value)| EffectResult { name, value: value.clone() })
                .collect(),
            errors: self
                .errors
                .iter()
                .map(|(rule, message)| ErrorEntry { rule, message: message.clone() })
                .collect(),
        }
    }
}

#[pymethods]
impl EvalResult {
    /// The contract's name.
    #[getter]
    fn contract(&self) -> &str {
        &self.contract
    }

    /// The contract's version.
    #[getter]
    fn version(&self) -> &str {
        &self.version
    }

    /// `"allow"` or `"deny"`.
    #[getter]
    fn decision(&self) -> &'static str {
        self.decision.name()
    }

    /// The rules that decided: dicts of `rule`, `outcome` and `message`.
    #[getter]
    fn reasons<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (rule, outcome, message) in &self.reasons {
            let entry = PyDict::new(py);
            entry.set_item("rule", rule)?;
            entry.set_item("outcome", outcome.name())?;
            entry.set_item("message", message)?;
            list.append(entry)?;
        }
        Ok(list)
    }

    /// The findings: dicts of `rule`, `code`, `severity` and `message`.
    #[getter]
    fn findings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (rule, code, severity, message) in &self.findings {
            let entry = PyDict::new(py);
            entry.set_item("rule", rule)?;
            entry.set_item("code", code)?;
            entry.set_item("severity", severity)?;
            entry.set_item("message", message)?;
            list.append(entry)?;
        }
        Ok(list)
    }

    /// The effects set, by name in declaration order; decimals as
    /// `decimal.Decimal`.
    #[getter]
    fn effects<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in &self.effects {
            dict.set_item(name, output::owned(py, value)?)?;
        }
        Ok(dict)
    }

    /// The rules' evaluation errors: dicts of `rule` and `message`.
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (rule, message) in &self.errors {
            let entry = PyDict::new(py);
            entry.set_item("rule", rule)?;
            entry.set_item("message", message)?;
            list.append(entry)?;
        }
        Ok(list)
    }

    /// The result as a dict, keys in the order of the JSON line.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.dict(py, Parts::ALL)
    }

    /// The result line `rulec eval` prints for the same request (without
    /// the newline).
    fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(256);
        self.view().write_json(&mut out);
        crate::text::written(out)
    }

    fn __repr__(&self) -> String {
        format!("<rulec.Result {}>", self.view().summary())
    }
}
