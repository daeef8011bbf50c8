//! A record's signals as the engines read them: per aggregate of every
//! window its value or the error reading it gives, per score site its
//! score ([`Signals`], [`RecordSignals`]), and where the record entered
//! its windows ([`Entered`]). Kept apart from the component that computes
//! them (`crate::signals`), which runs the interpreter, so that the
//! interpreter can read signals without importing what computes them.

use crate::semantics::error::EvalError;
use crate::value::Value;
use crate::value::data::Slot;
use crate::window::Ticket;

/// Where a request's record entered its windows, so that it can be
/// withdrawn if the request is not answered with its result.
#[derive(Clone, Debug, Default)]
pub struct Entered {
    /// Per window the record entered: the window's place and the record's
    /// ticket.
    pub(crate) tickets: Vec<(usize, Ticket)>,
}

impl Entered {
    /// Whether the record entered no window.
    pub fn is_empty(&self) -> bool {
        self.tickets.is_empty()
    }
}

/// One record's signals as the rules read them ([`RecordSignals`] of one
/// request, a row of [`ChunkSignals`](crate::signals::ChunkSignals)): per aggregate of every window, in
/// declaration order, its value or the error reading it gives; per score
/// site, once computed ahead, its score.
#[derive(Clone, Copy, Debug)]
pub struct Signals<'s> {
    pub(crate) values: &'s [Result<Aggregate, EvalError>],
    /// Per score site ([`Program::scores`]); empty when none was computed
    /// ahead.
    pub(crate) scores: &'s [Result<f64, EvalError>],
}

/// The signals of one request, owned, and where its record entered.
#[derive(Clone, Debug, Default)]
pub struct RecordSignals {
    pub(crate) values: Vec<Result<Aggregate, EvalError>>,
    pub(crate) scores: Vec<Result<f64, EvalError>>,
    pub entered: Entered,
}

/// An aggregate's value, by its type.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Aggregate {
    Int(i64),
    Timestamp(i64),
    Duration(i64),
    Decimal(rust_decimal::Decimal),
    Float(f64),
}

/// The signals of a contract without windows or scores: reading any is
/// an error.
pub const NO_SIGNALS: Signals<'static> = Signals { values: &[], scores: &[] };

impl RecordSignals {
    pub fn view(&self) -> Signals<'_> {
        Signals { values: &self.values, scores: &self.scores }
    }
}

impl Signals<'_> {
    /// Aggregate `index` (a window's `first` plus the aggregate's position).
    pub fn aggregate(&self, index: usize) -> Result<Value<'static>, EvalError> {
        match self.values.get(index) {
            Some(Ok(aggregate)) => Ok(match *aggregate {
                Aggregate::Int(i) => Value::Int(i),
                Aggregate::Timestamp(t) => Value::Timestamp(t),
                Aggregate::Duration(d) => Value::Duration(d),
                Aggregate::Decimal(d) => Value::Decimal(d),
                Aggregate::Float(f) => Value::Float(f),
            }),
            Some(Err(error)) => Err(error.clone()),
            None => Err(EvalError::Argument("a window was not computed for this record".into())),
        }
    }

    /// The signals as native code reads them ([`crate::native::NativeCtx`]),
    /// appended to `out`: every aggregate, then every score, one slot
    /// each; absent where reading it is an error, which native code
    /// leaves to the interpreter.
    pub fn slots_into(&self, out: &mut Vec<Slot>) {
        out.extend(self.values.iter().map(|value| match value {
            Ok(Aggregate::Int(i)) => Slot::int(*i),
            Ok(Aggregate::Timestamp(t)) => Slot::timestamp(*t),
            Ok(Aggregate::Duration(d)) => Slot::duration(*d),
            Ok(Aggregate::Decimal(d)) => Slot::decimal(*d),
            Ok(Aggregate::Float(f)) => Slot::float(*f),
            Err(_) => Slot::ABSENT,
        }));
        out.extend(self.scores.iter().map(|score| score.as_ref().map_or(Slot::ABSENT, |f| Slot::float(*f))));
    }

    /// [`Signals::slots_into`] a new vector.
    pub fn slots(&self) -> Vec<Slot> {
        let mut slots = Vec::with_capacity(self.values.len() + self.scores.len());
        self.slots_into(&mut slots);
        slots
    }

    /// Score site `site`'s score, or `None` when it was not computed
    /// ahead (the interpreter then scores it in place).
    pub fn score(&self, site: usize) -> Option<Result<f64, EvalError>> {
        self.scores.get(site).cloned()
    }
}
