//! The vocabulary of window state: what a window keeps ([`WindowShape`]),
//! what the caller hands the store for one record ([`Key`], [`Arg`]) and
//! what an aggregate comes to ([`Aggregated`]).

use std::fmt;

use ir::AggregateKind;
use rust_decimal::Decimal;

use crate::semantics::error::EvalError;

/// What one window keeps: its span and grace, in nanoseconds, and each
/// aggregate with the kind of its argument, in the window's order.
#[derive(Clone, PartialEq, Debug)]
pub struct WindowShape {
    /// The trailing span: a record at `t` sees the times in
    /// `(t - span, t]`. Positive.
    pub span: i64,
    /// How far behind its key's latest time a record may be and still
    /// enter. Zero or more.
    pub grace: i64,
    pub aggregates: Vec<(AggregateKind, ArgKind)>,
}

/// The kind of an aggregate's argument. Timestamps and durations travel as
/// [`Arg::Int`]; enum values as [`Arg::Str`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ArgKind {
    /// No argument: `count()`.
    None,
    Int,
    Decimal,
    Float,
    Timestamp,
    Duration,
    Str,
    Bool,
}

/// A record's key: a window's key is a string, an int or an enum (its
/// value as a string). `Int(1)` and `Str("1")` are different keys.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Key<'a> {
    Int(i64),
    Str(&'a str),
}

/// One aggregate's argument for one record: [`Arg::None`] for `count()`,
/// timestamps and durations as `Int` (nanoseconds).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Arg<'a> {
    None,
    Int(i64),
    Decimal(Decimal),
    Float(f64),
    Str(&'a str),
    Bool(bool),
}

/// An aggregate over a record's window: `count` and `distinct` as `Int`;
/// `sum`, `max` and `min` of the argument's kind (timestamps and durations
/// as `Int`); `Failed` when the sum overflowed.
#[derive(Clone, PartialEq, Debug)]
pub enum Aggregated {
    Int(i64),
    Decimal(Decimal),
    Float(f64),
    Failed(EvalError),
}

/// Why a [`WindowShape`] cannot be kept.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ShapeError {
    /// The span is zero or negative.
    Span(i64),
    /// The grace is negative.
    Grace(i64),
    /// Aggregate `index` cannot take an argument of kind `arg`.
    Argument { index: usize, aggregate: AggregateKind, arg: ArgKind },
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Span(span) => write!(f, "a window's span must be positive, not {span}ns"),
            ShapeError::Grace(grace) => write!(f, "a window's grace must be zero or more, not {grace}ns"),
            ShapeError::Argument { index, aggregate, arg } => {
                write!(f, "aggregate {index} ({}) cannot take {}", aggregate.name(), arg.described())
            }
        }
    }
}

impl std::error::Error for ShapeError {}

impl WindowShape {
    /// Whether the store can keep this window: a positive span, a grace of
    /// zero or more, and arguments as SIGNALS.md types them (`count()`
    /// none; `sum` an int, decimal, float or duration; `max` and `min` an
    /// int, decimal, float, timestamp or duration; `distinct` a string, an
    /// int, an enum or a bool).
    pub fn check(&self) -> Result<(), ShapeError> {
        if self.span <= 0 {
            return Err(ShapeError::Span(self.span));
        }
        if self.grace < 0 {
            return Err(ShapeError::Grace(self.grace));
        }
        match self.aggregates.iter().position(|&(aggregate, arg)| !arg.suits(aggregate)) {
            Some(index) => {
                let (aggregate, arg) = self.aggregates[index];
                Err(ShapeError::Argument { index, aggregate, arg })
            }
            None => Ok(()),
        }
    }

    /// Why `args` are not one record's arguments for this shape (one per
    /// aggregate, each of its kind): a caller's bug, reported as an
    /// internal error rather than a panic.
    pub(super) fn misfit(&self, args: &[Arg<'_>]) -> Option<EvalError> {
        if args.len() != self.aggregates.len() {
            return Some(EvalError::Argument(format!(
                "internal: a window of {} aggregates given {} arguments",
                self.aggregates.len(),
                args.len()
            )));
        }
        let (index, (&(aggregate, kind), arg)) =
            self.aggregates.iter().zip(args).enumerate().find(|(_, ((_, kind), arg))| !kind.fits(arg))?;
        Some(EvalError::Argument(format!(
            "internal: window aggregate {index} ({}) takes {}, given {arg:?}",
            aggregate.name(),
            kind.described()
        )))
    }
}

impl ArgKind {
    /// Whether an aggregate of `aggregate`'s kind takes an argument of this
    /// kind.
    pub fn suits(self, aggregate: AggregateKind) -> bool {
        use ArgKind::*;
        match aggregate {
            AggregateKind::Count => self == None,
            AggregateKind::Sum => matches!(self, Int | Decimal | Float | Duration),
            AggregateKind::Max | AggregateKind::Min => {
                matches!(self, Int | Decimal | Float | Timestamp | Duration)
            }
            AggregateKind::Distinct => matches!(self, Int | Str | Bool),
        }
    }

    /// Whether `arg` is a value of this kind.
    pub fn fits(self, arg: &Arg<'_>) -> bool {
        matches!(
            (self, arg),
            (ArgKind::None, Arg::None)
                | (ArgKind::Int | ArgKind::Timestamp | ArgKind::Duration, Arg::Int(_))
                | (ArgKind::Decimal, Arg::Decimal(_))
                | (ArgKind::Float, Arg::Float(_))
                | (ArgKind::Str, Arg::Str(_))
                | (ArgKind::Bool, Arg::Bool(_))
        )
    }

    fn described(self) -> &'static str {
        match self {
            ArgKind::None => "no argument",
            ArgKind::Int => "an int",
            ArgKind::Decimal => "a decimal",
            ArgKind::Float => "a float",
            ArgKind::Timestamp => "a timestamp",
            ArgKind::Duration => "a duration",
            ArgKind::Str => "a string",
            ArgKind::Bool => "a bool",
        }
    }
}

impl<'a> From<&'a str> for Key<'a> {
    fn from(key: &'a str) -> Key<'a> {
        Key::Str(key)
    }
}

impl From<i64> for Key<'_> {
    fn from(key: i64) -> Self {
        Key::Int(key)
    }
}
