//! A request line's bytes to its result line's bytes: the envelope parsed,
//! the contract routed, the input validated, the request evaluated, the
//! result (or the error) written. The one path of `rulec eval`, the
//! server's JSON and NDJSON requests, and `Contract::evaluate_json` (a
//! contract alone, without routing).

use std::fmt;
use std::sync::Arc;

use ir::Verdict;

use super::{ContractSet, RouteError};
use crate::engine::{Contract, EvaluateError, Request};
use crate::input::request::{Envelope, InvalidInput};
use crate::semantics::budget::Limit;
use crate::signals::Entered;

/// What became of one request line; its result line is in the caller's
/// buffer.
#[derive(Clone, Debug)]
pub struct Line<'s> {
    /// The contract the request reached, when it reached one.
    pub contract: Option<&'s Arc<Contract>>,
    pub outcome: LineOutcome,
    /// Where the record entered the contract's windows: `Contract::withdraw`
    /// takes it out again if the result line never reaches whoever asked.
    pub entered: Entered,
}

impl Line<'_> {
    /// Whether the request was evaluated (its line is a result).
    pub fn evaluated(&self) -> bool {
        matches!(self.outcome, LineOutcome::Evaluated(_))
    }
}

/// How a request line ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LineOutcome {
    /// Evaluated, to this decision.
    Evaluated(Verdict),
    /// Refused before evaluation: not a request, invalid input, or no
    /// contract named when several are loaded.
    Invalid,
    /// It names a contract the set does not hold.
    UnknownContract,
    /// Stopped at its time limit.
    OutOfTime,
}

/// Why a request was not evaluated.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Refused {
    Route(RouteError),
    Invalid(InvalidInput),
}

impl Refused {
    /// The error's result line.
    pub fn to_json(&self) -> Vec<u8> {
        match self {
            Refused::Route(e) => e.to_json(),
            Refused::Invalid(e) => e.to_json(),
        }
    }

    fn outcome(&self) -> LineOutcome {
        match self {
            Refused::Route(RouteError::Unknown { .. }) => LineOutcome::UnknownContract,
            Refused::Route(RouteError::Missing { .. }) | Refused::Invalid(_) => LineOutcome::Invalid,
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Route(e) => e.fmt(f),
            Refused::Invalid(e) => e.fmt(f),
        }
    }
}

impl From<InvalidInput> for Refused {
    fn from(invalid: InvalidInput) -> Refused {
        Refused::Invalid(invalid)
    }
}

impl ContractSet {
    /// A request line's contract and its validated request, the first
    /// steps of [`ContractSet::evaluate_line`] (for `rulec eval
    /// --explain`, which explains instead of evaluating).
    pub fn request<'s, 'r>(&'s self, line: &'r [u8]) -> Result<(&'s Arc<Contract>, Request<'r>), Refused> {
        let envelope = envelope(line)?;
        let contract = self.route(envelope.contract.as_deref()).map_err(Refused::Route)?;
        Ok((contract, contract.request_from(&envelope)?))
    }

    /// Evaluates one request line, appending its result line (without a
    /// newline) to `out`. `limit`, when given, replaces the engine's time
    /// limit (the server's deadline).
    pub fn evaluate_line(&self, line: &[u8], limit: Option<Limit>, out: &mut Vec<u8>) -> Line<'_> {
        let envelope = match envelope(line) {
            Ok(envelope) => envelope,
            Err(invalid) => return refused(&Refused::Invalid(invalid), None, out),
        };
        let contract = match self.route(envelope.contract.as_deref()) {
            Ok(contract) => contract,
            Err(e) => return refused(&Refused::Route(e), None, out),
        };
        let mut entered = Entered::default();
        let outcome = evaluate(contract, &envelope, limit, out, &mut entered);
        Line { contract: Some(contract), outcome, entered }
    }
}

impl Contract {
    /// JSON request bytes to JSON result bytes (or the error line): the
    /// contract set's line path, without routing (a request naming
    /// another contract is invalid input). Written here, beside the line
    /// path, so that `engine` does not import the contract set.
    pub fn evaluate_json(&self, text: &str, out: &mut Vec<u8>) {
        match envelope(text.as_bytes()) {
            Ok(envelope) => {
                evaluate(self, &envelope, None, out, &mut Entered::default());
            }
            Err(invalid) => out.extend_from_slice(&invalid.to_json()),
        }
    }
}

/// The envelope of a line, which must be UTF-8 JSON.
fn envelope(line: &[u8]) -> Result<Envelope<'_>, InvalidInput> {
    let text = std::str::from_utf8(line).map_err(|e| {
        InvalidInput::one(
            "",
            format!("not a valid request: not UTF-8 (invalid byte at offset {})", e.valid_up_to()),
        )
    })?;
    Envelope::parse(text)
}

fn refused<'s>(why: &Refused, contract: Option<&'s Arc<Contract>>, out: &mut Vec<u8>) -> Line<'s> {
    out.extend_from_slice(&why.to_json());
    Line { contract, outcome: why.outcome(), entered: Entered::default() }
}

/// Validates, evaluates and writes a routed request.
fn evaluate(
    contract: &Contract,
    envelope: &Envelope<'_>,
    limit: Option<Limit>,
    out: &mut Vec<u8>,
    entered: &mut Entered,
) -> LineOutcome {
    let mut request = match contract.request_from(envelope) {
        Ok(request) => request,
        Err(invalid) => {
            out.extend_from_slice(&invalid.to_json());
            return LineOutcome::Invalid;
        }
    };
    if limit.is_some() {
        request.context.limit = limit;
    }
    match contract.evaluate_entered(&request, entered) {
        Ok(result) => {
            result.write_json(out);
            LineOutcome::Evaluated(result.decision)
        }
        Err(e) => {
            out.extend_from_slice(&e.to_json());
            match e {
                EvaluateError::OutOfTime { .. } => LineOutcome::OutOfTime,
                EvaluateError::WrongContract { .. } => LineOutcome::Invalid,
            }
        }
    }
}
