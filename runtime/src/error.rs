//! Evaluation errors: what went wrong in a rule or let, never a panic.
//!
//! A *missing* key or index is kept apart ([`Fault::Missing`]) because
//! `??` catches it; everything else is an [`EvalError`] that becomes an
//! entry of the result's `errors`.

use std::fmt;

/// Why evaluating an expression stopped. Boxed, so results that may
/// carry one stay small on the hot path.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// A table key or list index that is not there; `??` catches it.
    Missing(Box<str>),
    /// Any other evaluation error.
    Error(Box<EvalError>),
}

impl From<EvalError> for Fault {
    fn from(error: EvalError) -> Fault {
        Fault::Error(Box::new(error))
    }
}

impl Fault {
    /// A fault for a missing key or index, described by `what`.
    pub fn missing(what: String) -> Fault {
        Fault::Missing(what.into_boxed_str())
    }

    /// The error an uncaught fault becomes.
    pub fn into_error(self) -> EvalError {
        match self {
            Fault::Missing(what) => EvalError::Missing(what.into()),
            Fault::Error(error) => *error,
        }
    }
}

/// An evaluation error, with what the result's `errors` entry says.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalError {
    /// An int, decimal, timestamp or duration result out of range.
    Overflow(&'static str),
    DivisionByZero,
    /// A float result that is infinite or not a number.
    NotFinite(&'static str),
    /// A conversion (`int("x")`, `timestamp(...)`) that failed.
    Conversion(String),
    /// An argument out of its domain (`round(x, 40)`, vectors of
    /// different lengths).
    Argument(String),
    /// A table key or list index not there, and not caught by `??`.
    Missing(String),
    /// A host function that failed (or panicked).
    Host {
        name: String,
        message: String,
    },
    /// An error inside let `id`; the let is where it is listed.
    Let {
        id: u32,
        error: Box<EvalError>,
    },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Overflow(what) => write!(f, "{what} overflow"),
            EvalError::DivisionByZero => f.write_str("division by zero"),
            EvalError::NotFinite(what) => write!(f, "{what} is not a finite number"),
            EvalError::Conversion(message) | EvalError::Argument(message) | EvalError::Missing(message) => {
                f.write_str(message)
            }
            EvalError::Host { name, message } => write!(f, "host function `{name}` failed: {message}"),
            EvalError::Let { error, .. } => write!(f, "{error}"),
        }
    }
}

pub type EvalResult<T> = Result<T, EvalError>;
