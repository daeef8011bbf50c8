//! Why a bundle does not load ([`LoadError`]) and why a request is not
//! evaluated ([`EvaluateError`]).

use std::fmt;

use crate::input::request::InvalidInput;
use crate::semantics::budget::OutOfTime;

/// Why a bundle could not be loaded into an engine.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LoadError {
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LoadError {}

/// Why a request could not be evaluated.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum EvaluateError {
    /// The request was validated for another contract.
    WrongContract { expected: String },
    /// The evaluation ran past its time limit and was stopped.
    OutOfTime { millis: u128 },
}

impl EvaluateError {
    /// The result line of an evaluation that did not finish:
    /// `{"error":{"kind":"timeout","message":...}}` when it ran out of
    /// time, the invalid-input line otherwise.
    pub fn to_json(&self) -> Vec<u8> {
        match self {
            EvaluateError::OutOfTime { .. } => {
                let mut out = b"{\"error\":{\"kind\":\"timeout\",\"message\":".to_vec();
                crate::value::write_json_str(&self.to_string(), &mut out);
                out.extend_from_slice(b"}}");
                out
            }
            EvaluateError::WrongContract { .. } => InvalidInput::one("", self.to_string()).to_json(),
        }
    }
}

impl From<OutOfTime> for EvaluateError {
    fn from(out: OutOfTime) -> EvaluateError {
        EvaluateError::OutOfTime { millis: out.millis }
    }
}

impl fmt::Display for EvaluateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvaluateError::WrongContract { expected } => {
                write!(f, "the request was validated for another contract than `{expected}`")
            }
            EvaluateError::OutOfTime { millis } => {
                write!(f, "the evaluation was stopped: it passed its time limit of {millis} ms")
            }
        }
    }
}

impl std::error::Error for EvaluateError {}
