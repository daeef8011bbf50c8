//! Evaluation errors: what went wrong in a rule or let, never a panic.
//!
//! A *missing* key or index ([`EvalError::Missing`] in a [`Fault`]) is
//! what `??` catches; any other [`EvalError`] becomes an entry of the
//! result's `errors`.

use std::fmt;

/// Why evaluating an expression stopped: one thin box, so a `Result` of a
/// `bool` or an `i64` and a fault travels in two registers on the hot
/// path. A *missing* key or index ([`EvalError::Missing`]) is what `??`
/// catches.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault(Box<EvalError>);

impl From<EvalError> for Fault {
    fn from(error: EvalError) -> Fault {
        Fault(Box::new(error))
    }
}

impl Fault {
    /// A fault for a missing key or index, described by `what`.
    #[cold]
    pub fn missing(what: String) -> Fault {
        Fault(Box::new(EvalError::Missing(what)))
    }

    /// Whether `??` catches this fault: a key or index that is not there.
    pub fn is_missing(&self) -> bool {
        matches!(*self.0, EvalError::Missing(_))
    }

    /// The error inside.
    pub fn error(&self) -> &EvalError {
        &self.0
    }

    /// The error an uncaught fault becomes.
    pub fn into_error(self) -> EvalError {
        *self.0
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
    /// The evaluation's time budget ran out (`crate::semantics::budget`): the whole
    /// evaluation stops, so this never reaches a result's `errors`.
    OutOfTime,
    /// An error inside let `id`; the let is where it is listed.
    Let {
        id: u32,
        error: Box<EvalError>,
    },
    /// A window read for a record that is late for that window
    /// (SIGNALS.md): `t < latest(key) - grace`.
    Late(String),
    /// A window read for a record that its key's bound turned away, or
    /// whose window reaches one that was (SIGNALS.md): the window and the
    /// bound.
    WindowFull {
        window: String,
        bound: String,
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
            EvalError::OutOfTime => f.write_str("the evaluation ran out of time"),
            EvalError::Let { error, .. } => write!(f, "{error}"),
            EvalError::Late(window) => write!(f, "record is late for window {window}"),
            EvalError::WindowFull { window, bound } => {
                write!(f, "window {window} is full for this key: {bound}")
            }
        }
    }
}

pub type EvalResult<T> = Result<T, EvalError>;
