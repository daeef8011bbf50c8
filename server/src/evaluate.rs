//! What a worker does with a request body: parse, route, validate,
//! evaluate, serialise. Everything here runs on the evaluation pool, never
//! on the async runtime, and nothing here can fail with a 5xx: a body the
//! client got wrong is a 4xx [`Answer`] saying where.

use std::sync::Arc;

use runtime::{Envelope, InvalidInput};

use crate::rules::{RouteError, RuleSet};

/// The answer to one JSON request.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
    /// The contract that answered, when one did.
    pub contract: Option<String>,
    /// The decision, when there was an evaluation.
    pub decision: Option<&'static str>,
}

impl Answer {
    fn error(status: u16, kind: &str, message: &str) -> Answer {
        Answer { status, body: error_json(kind, message), contract: None, decision: None }
    }
}

/// `{"error":{"kind":...,"message":...}}`.
pub fn error_json(kind: &str, message: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "error": { "kind": kind, "message": message } }))
        .unwrap_or_else(|_| b"{\"error\":{\"kind\":\"internal\"}}".to_vec())
}

/// Evaluates one JSON request against `set`.
pub fn one(set: &RuleSet, body: &[u8]) -> Answer {
    let Ok(text) = std::str::from_utf8(body) else {
        return Answer::error(400, "invalid_json", "the body is not UTF-8");
    };
    let envelope = match Envelope::parse(text) {
        Ok(envelope) => envelope,
        Err(invalid) => return invalid_input(&invalid),
    };
    let contract = match set.route(envelope.contract.as_deref()) {
        Ok(contract) => contract,
        Err(RouteError::Unknown(name)) => {
            return Answer::error(404, "unknown_contract", &format!("no contract `{name}` is served"));
        }
        Err(RouteError::Ambiguous) => {
            let names: Vec<&str> = set.contracts.iter().map(|c| c.name()).collect();
            let message =
                format!("several contracts are served ({}): name one in `contract`", names.join(", "));
            return Answer { contract: None, ..invalid_input(&InvalidInput::one("contract", message)) };
        }
    };
    let request = match contract.request_from(&envelope) {
        Ok(request) => request,
        Err(invalid) => {
            return Answer { contract: Some(contract.name().to_string()), ..invalid_input(&invalid) };
        }
    };
    match contract.evaluate(&request) {
        Ok(result) => Answer {
            status: 200,
            body: result.to_json(),
            contract: Some(contract.name().to_string()),
            decision: Some(result.decision.name()),
        },
        Err(e) => Answer {
            contract: Some(contract.name().to_string()),
            ..invalid_input(&InvalidInput::one("", e.to_string()))
        },
    }
}

fn invalid_input(invalid: &InvalidInput) -> Answer {
    Answer { status: 400, body: invalid.to_json(), contract: None, decision: None }
}

/// The result lines of some NDJSON request lines, each ending in `\n`,
/// and each line's `(contract, decision)` for the metrics.
pub fn lines(set: &Arc<RuleSet>, lines: &[&[u8]]) -> (Vec<u8>, Vec<(String, &'static str)>) {
    let mut out = Vec::with_capacity(lines.len() * 256);
    let mut decisions = Vec::new();
    for line in lines {
        let answer = one(set, line);
        out.extend_from_slice(&answer.body);
        out.push(b'\n');
        if let (Some(contract), Some(decision)) = (answer.contract, answer.decision) {
            decisions.push((contract, decision));
        }
    }
    (out, decisions)
}
