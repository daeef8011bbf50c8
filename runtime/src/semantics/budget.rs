//! The time budget of one evaluation, honoured by both engines.
//!
//! Most evaluations are linear in the contract's size and end in
//! microseconds; what can take long is a lambda over a long list (nested
//! lambdas multiply) and string or regex work on long strings. So work is
//! counted in *fuel*, without reading the clock: every element a loop
//! visits costs one unit and string work one unit per 64 bytes
//! ([`STRING_SHIFT`], [`REGEX_SHIFT`]). Loops check the fuel at every element; when
//! it is spent, [`Budget::refuel`] reads the clock, and either grants
//! [`FUEL_STEP`] more units or stops the evaluation, which then ends as
//! [`EvaluateError::OutOfTime`](crate::EvaluateError) on either engine.
//!
//! An evaluation that never spends [`FUEL_STEP`] units never reads the
//! clock: the budget costs the common case a few subtractions. The price
//! is that a relative limit ([`Limit::After`]) starts counting at the
//! first refuel, not at the first instruction; an absolute one
//! ([`Limit::At`], the server's deadline, queueing included) is exact to
//! within one step.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Fuel granted at each refuel: a few microseconds of the slowest work
/// between two readings of the clock.
pub const FUEL_STEP: i64 = 1 << 12;

/// String work costs one unit of fuel per `1 << STRING_SHIFT` bytes.
pub const STRING_SHIFT: u32 = 6;
/// Regex matching costs one unit per `1 << REGEX_SHIFT` bytes: it costs
/// more per byte than plain string work.
pub const REGEX_SHIFT: u32 = 3;

/// The fuel of string work on `bytes` bytes.
pub fn string_cost(bytes: usize) -> i64 {
    (bytes >> STRING_SHIFT) as i64
}

/// The fuel of matching a regex against `bytes` bytes.
pub fn regex_cost(bytes: usize) -> i64 {
    (bytes >> REGEX_SHIFT) as i64
}

/// How long an evaluation may run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Limit {
    /// Stop at this instant (the server: the request's deadline).
    At(Instant),
    /// Stop this long after the evaluation starts (`--timeout-ms`).
    After(Duration),
}

impl Limit {
    /// The limit as milliseconds, for messages.
    fn millis(self, started: Option<Instant>) -> u128 {
        match self {
            Limit::After(d) => d.as_millis(),
            Limit::At(at) => started.map_or(0, |s| at.saturating_duration_since(s).as_millis()),
        }
    }
}

/// One evaluation's budget.
#[derive(Debug)]
pub struct Budget {
    limit: Option<Limit>,
    /// The deadline, once known (a relative limit's at the first refuel).
    deadline: Cell<Option<Instant>>,
    /// When the first refuel read the clock.
    started: Cell<Option<Instant>>,
    exhausted: Cell<bool>,
}

/// The budget ran out: the evaluation stops.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct OutOfTime {
    /// The limit in milliseconds, for the message.
    pub millis: u128,
}

impl Budget {
    pub fn new(limit: Option<Limit>) -> Budget {
        let deadline = match limit {
            Some(Limit::At(at)) => Some(at),
            _ => None,
        };
        Budget { limit, deadline: Cell::new(deadline), started: Cell::new(None), exhausted: Cell::new(false) }
    }

    /// Called when the fuel is spent: the next grant, or [`OutOfTime`]
    /// when the deadline has passed (and for good after that).
    #[cold]
    #[inline(never)]
    pub fn refuel(&self) -> Result<i64, OutOfTime> {
        if self.exhausted.get() {
            return Err(self.out_of_time());
        }
        let Some(limit) = self.limit else { return Ok(FUEL_STEP) };
        let now = Instant::now();
        if self.started.get().is_none() {
            self.started.set(Some(now));
        }
        let deadline = match self.deadline.get() {
            Some(deadline) => deadline,
            None => {
                let Limit::After(span) = limit else { return Ok(FUEL_STEP) };
                let deadline = now + span;
                self.deadline.set(Some(deadline));
                deadline
            }
        };
        if now >= deadline {
            self.exhausted.set(true);
            return Err(self.out_of_time());
        }
        Ok(FUEL_STEP)
    }

    /// Reads the clock around work that spends no fuel (a model's run,
    /// which cannot stop halfway): before it, to start a relative limit's
    /// count; after it, to stop the evaluation if the deadline passed.
    pub fn check(&self) -> Result<(), OutOfTime> {
        self.refuel().map(drop)
    }

    /// Whether the budget ran out during the evaluation.
    pub fn is_exhausted(&self) -> bool {
        self.exhausted.get()
    }

    /// The error of a spent budget.
    pub fn out_of_time(&self) -> OutOfTime {
        OutOfTime { millis: self.limit.map_or(0, |l| l.millis(self.started.get())) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_limit_always_refuels() {
        let budget = Budget::new(None);
        for _ in 0..3 {
            assert_eq!(budget.refuel(), Ok(FUEL_STEP));
        }
        assert!(!budget.is_exhausted());
    }

    #[test]
    fn a_passed_deadline_stops_for_good() {
        let budget = Budget::new(Some(Limit::At(Instant::now())));
        assert!(budget.refuel().is_err());
        assert!(budget.is_exhausted());
        assert!(budget.refuel().is_err());
    }

    #[test]
    fn a_relative_limit_starts_at_the_first_refuel() {
        let budget = Budget::new(Some(Limit::After(Duration::from_millis(20))));
        assert_eq!(budget.refuel(), Ok(FUEL_STEP));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(budget.refuel(), Err(OutOfTime { millis: 20 }));
    }
}
