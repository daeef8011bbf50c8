//! Running a contract's own `tests:` (kept in its bundle): each test's
//! request is evaluated and every expectation it states is compared. A
//! contract with windows gives each test its own empty window state, in
//! which the test's `history:` inputs are evaluated first (their results
//! are not checked).

use crate::engine::{Contract, Request};
use crate::input::request::Input;
use crate::result::{Coverage, Evaluation};
use crate::signals::WindowState;

/// One test's outcome: what differed (nothing when it passed), and the
/// result's JSON (to compare engines).
#[derive(Clone, PartialEq, Debug)]
pub struct TestOutcome {
    pub name: String,
    pub failures: Vec<String>,
    pub result: Vec<u8>,
}

impl TestOutcome {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Runs every test of `contract` with the contract's engine.
pub fn run(contract: &Contract) -> Vec<TestOutcome> {
    contract.ir().tests.iter().map(|test| run_one(contract, test)).collect()
}

fn run_one(contract: &Contract, test: &ir::TestCase) -> TestOutcome {
    let mut failures = Vec::new();
    let mut json = Vec::new();
    let state = contract.new_window_state();
    for (i, earlier) in test.history.iter().enumerate() {
        if let Err(problem) = evaluate(contract, test, earlier, state.as_ref()) {
            failures.push(format!("history[{i}]: {problem}"));
        }
    }
    match evaluate(contract, test, &test.input, state.as_ref()) {
        Ok(result) => {
            compare(&test.expect, &result, &mut failures);
            json = result.to_json();
        }
        Err(problem) => failures.push(problem),
    }
    TestOutcome { name: test.name.clone(), failures, result: json }
}

/// What one test covered: by the interpreter, and the rules native code
/// fired (`None` when the contract runs no native code).
#[derive(Clone, Debug)]
pub struct TestCoverage {
    pub name: String,
    /// `None` when the test's request is invalid or its evaluation failed.
    pub coverage: Option<Coverage>,
    pub native_fired: Option<Vec<usize>>,
}

/// Runs the contract's tests and records what each covered.
pub fn cover(contract: &Contract) -> Vec<TestCoverage> {
    contract.ir().tests.iter().map(|test| cover_one(contract, test)).collect()
}

fn cover_one(contract: &Contract, test: &ir::TestCase) -> TestCoverage {
    let state = contract.new_window_state();
    for earlier in &test.history {
        let _ = evaluate(contract, test, earlier, state.as_ref());
    }
    let text = test.input.to_string();
    let request = request(contract, test, &text).ok();
    let coverage = request.as_ref().and_then(|r| contract.cover_in(r, state.as_ref()).ok()).map(|(_, c)| c);
    let native_fired = request.as_ref().and_then(|r| contract.fired_natively(r).ok().flatten());
    TestCoverage { name: test.name.clone(), coverage, native_fired }
}

/// The request of `input_text` (a test's input as JSON) in the test's
/// context.
fn request<'c>(
    contract: &'c Contract,
    test: &ir::TestCase,
    input_text: &'c str,
) -> Result<Request<'c>, String> {
    let now = test.now.map(ir::time::format_timestamp);
    let (context, input) = contract
        .context(test.channel.as_deref(), test.component.as_deref(), now.as_deref())
        .and_then(|context| Ok((context, Input::parse(contract.program(), input_text)?)))
        .map_err(|invalid| format!("the test's request is invalid: {invalid}"))?;
    Ok(Request::new(contract, context, input))
}

/// Evaluates `input` in the test's context, entering it into `state`'s
/// windows when the contract has them.
fn evaluate<'c>(
    contract: &'c Contract,
    test: &ir::TestCase,
    input: &serde_json::Value,
    state: Option<&WindowState>,
) -> Result<Evaluation<'c>, String> {
    let text = input.to_string();
    let request = request(contract, test, &text)?;
    let evaluated = match state {
        Some(state) => contract.evaluate_in(&request, state),
        None => contract.evaluate(&request),
    };
    evaluated.map_err(|e| e.to_string())
}

/// Appends a line per expectation the result does not meet.
pub fn compare(expect: &ir::TestExpect, result: &Evaluation<'_>, failures: &mut Vec<String>) {
    if let Some(decision) = expect.decision
        && decision != result.decision
    {
        failures.push(format!("decision: expected {}, got {}", decision.name(), result.summary()));
    }
    let list = |name: &str, expected: &Option<Vec<String>>, got: Vec<&str>, failures: &mut Vec<String>| {
        if let Some(expected) = expected
            && *expected != got
        {
            failures.push(format!("{name}: expected [{}], got [{}]", expected.join(", "), got.join(", ")));
        }
    };
    list("reasons", &expect.reasons, result.reasons.iter().map(|r| r.rule).collect(), failures);
    list("findings", &expect.findings, result.findings.iter().map(|f| f.code).collect(), failures);
    list("errors", &expect.errors, result.errors.iter().map(|e| e.rule).collect(), failures);
    if let Some(expected) = &expect.effects {
        let got = serde_json::from_slice::<serde_json::Value>(&result.to_json())
            .ok()
            .and_then(|v| v.get("effects").cloned())
            .unwrap_or_default();
        if *expected != got {
            failures.push(format!("effects: expected {expected}, got {got}"));
        }
    }
    if !result.errors.is_empty() && expect.errors.is_none() {
        let messages: Vec<String> =
            result.errors.iter().map(|e| format!("{}: {}", e.rule, e.message)).collect();
        if !failures.is_empty() {
            failures.push(format!("(evaluation errors: {})", messages.join("; ")));
        }
    }
}
