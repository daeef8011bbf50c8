//! The signals of a chunk of records ([`ChunkSignals`]), computed in three
//! steps so that only one of them must follow the chunks before:
//!
//! 1. [`WindowInputs::compute`], in any order: each valid record's window
//!    inputs (the values of each window's roots) with the interpreter,
//!    and its key's hash in each window's store;
//! 2. [`WindowInputs::enter`], in input order: the records entered into
//!    the windows one after the other, each one's aggregates read;
//! 3. [`ChunkSignals::score`], in any order: every score site run once
//!    over the chunk, and the signals laid out as native code reads them.
//!
//! A record's signals are the ones [`super::observe`] and [`super::score`]
//! give the same record as a request: the steps share [`super::enter`].

use crate::input::records::Records;
use crate::interp::Interpreter;
use crate::program::Program;
use crate::program::context::Context;
use crate::semantics::budget::{Budget, OutOfTime};
use crate::semantics::error::EvalError;
use crate::value::Value;
use crate::value::data::Slot;
use crate::window::{Ahead, Entering};

use super::windows::{Scratch, enter, window_key};
use super::{Aggregate, NO_SIGNALS, Signals, WindowState};

/// What became of a row while its signals were computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Row {
    /// Its window values (and, once scored, its scores) are computed.
    Computed,
    /// Not computed: the record is invalid, or the records are not laid
    /// out for the contract. Such a row is not evaluated.
    Skipped,
    /// Its budget ran out while they were computed.
    OutOfTime(OutOfTime),
}

/// The signals of a chunk of records: per row, its window values and
/// scores, or the time limit it ran out of while they were computed.
#[derive(Debug, Default)]
pub struct ChunkSignals {
    rows: Vec<Row>,
    /// Each row's aggregates, `aggregates` per row.
    values: Vec<Result<Aggregate, EvalError>>,
    aggregates: usize,
    /// Each row's scores, `sites` per row, once scored (else empty).
    scores: Vec<Result<f64, EvalError>>,
    sites: usize,
    /// Each row's signals as native code reads them, once scored (else
    /// empty): `aggregates + sites` per row.
    slots: Vec<Slot>,
    /// Each row's time budget, shared by its windows and its scores.
    budgets: Vec<Budget>,
}

/// The window inputs of a chunk's records (step 1), borrowing the records
/// and the rows' budgets.
#[derive(Debug)]
pub(crate) struct WindowInputs<'a> {
    /// Per row, the values of every window's roots, window after window
    /// (`roots` per row).
    values: Vec<Result<Value<'a>, EvalError>>,
    roots: usize,
    /// Per row, per window: its key's hash in the window's store (0 when
    /// the inputs give no key).
    hashes: Vec<u64>,
    rows: Vec<Row>,
}

impl<'a> WindowInputs<'a> {
    /// Step 1 for `records` (laid out for `program`'s contract), each row
    /// within its budget of `budgets`; `state` holds the windows (`None`
    /// for a contract without them).
    pub(crate) fn compute(
        interpreter: Interpreter<'a>,
        context: &Context,
        records: &'a Records<'_>,
        budgets: &'a [Budget],
        state: Option<&WindowState>,
    ) -> WindowInputs<'a> {
        let windows = &interpreter.program.windows;
        let roots = windows.iter().map(|w| w.roots.len()).sum();
        let mut inputs = WindowInputs {
            values: Vec::with_capacity(records.len() * roots),
            roots,
            hashes: Vec::with_capacity(records.len() * windows.len()),
            rows: Vec::with_capacity(records.len()),
        };
        for (row, budget) in budgets.iter().enumerate().take(records.len()) {
            let computed = match records.problem(row) {
                Some(_) => Err(Row::Skipped),
                None => windows.iter().try_for_each(|plan| {
                    let input = records.record(row);
                    let values = &mut inputs.values;
                    interpreter
                        .evaluate_nodes_into(context, input, NO_SIGNALS, budget, &plan.roots, values)
                        .map_err(Row::OutOfTime)
                }),
            };
            let start = row * roots;
            match (computed, state) {
                (Ok(()), Some(state)) => {
                    let mut at = start;
                    for (plan, store) in windows.iter().zip(&state.stores) {
                        let of_window = &inputs.values[at..at + plan.roots.len()];
                        inputs.hashes.push(window_key(plan, of_window).map_or(0, |key| store.hash(key)));
                        at += plan.roots.len();
                    }
                    inputs.rows.push(Row::Computed);
                }
                (Ok(()), None) => inputs.rows.push(Row::Computed),
                (Err(row), _) => {
                    inputs.rows.push(row);
                    inputs.values.truncate(start);
                    inputs.values.extend((0..roots).map(|_| Err(EvalError::OutOfTime)));
                    inputs.hashes.extend(windows.iter().map(|_| 0));
                }
            }
        }
        inputs
    }

    /// Step 2: the computed rows entered into the windows of `state`, in
    /// order; their aggregates, and the budgets, as the chunk's signals.
    pub(crate) fn enter(&self, program: &Program, state: Option<&WindowState>) -> ChunkSignals {
        let aggregates = program.signal_slots() - program.scores.len();
        let mut signals = ChunkSignals {
            rows: self.rows.clone(),
            values: Vec::with_capacity(self.rows.len() * aggregates),
            aggregates,
            ..ChunkSignals::default()
        };
        let Some(state) = state else {
            signals.values.extend((0..self.rows.len() * aggregates).map(|_| Err(EvalError::OutOfTime)));
            return signals;
        };
        let mut scratch = Scratch::default();
        let mut stores: Vec<Entering<'_>> = state.stores.iter().map(|store| store.entering()).collect();
        for (row, kind) in self.rows.iter().enumerate() {
            self.prefetch(row, &stores);
            if *kind != Row::Computed {
                signals.values.extend((0..aggregates).map(|_| Err(EvalError::OutOfTime)));
                continue;
            }
            let mut at = row * self.roots;
            for ((plan, store), hash) in program.windows.iter().zip(&mut stores).zip(self.hashes_of(row)) {
                let inputs = &self.values[at..at + plan.roots.len()];
                enter(plan, store, inputs, Some(*hash), &mut scratch, &mut signals.values);
                at += plan.roots.len();
            }
        }
        signals
    }
}

impl WindowInputs<'_> {
    /// Row `row`'s key hashes, one per window.
    fn hashes_of(&self, row: usize) -> &[u64] {
        let windows = self.hashes.len() / self.rows.len().max(1);
        self.hashes.get(row * windows..(row + 1) * windows).unwrap_or(&[])
    }

    /// Fetches into the cache, before row `row` enters, what the rows
    /// after it will read: each stage [`PREFETCH`] rows ahead of its use.
    fn prefetch(&self, row: usize, stores: &[Entering<'_>]) {
        for (ahead, distance) in PREFETCH {
            let Some(Row::Computed) = self.rows.get(row + distance) else { continue };
            for (store, hash) in stores.iter().zip(self.hashes_of(row + distance)) {
                store.prefetch(*hash, ahead);
            }
        }
    }
}

/// How many rows ahead each stage of a key's data is fetched: its index
/// entry first, then its slot, then its records, each far enough behind
/// the one before for that one's fetch to have landed.
const PREFETCH: [(Ahead, usize); 3] = [(Ahead::Index, 12), (Ahead::Slot, 6), (Ahead::Records, 2)];

impl ChunkSignals {
    /// The signals of `rows` rows not laid out for the contract: none is
    /// computed.
    pub(crate) fn skipped(rows: usize) -> ChunkSignals {
        ChunkSignals { rows: vec![Row::Skipped; rows], ..ChunkSignals::default() }
    }

    /// Step 3: every score site of the program run once over the computed
    /// valid rows of `records`, each within its budget of `budgets` (the
    /// ones its window inputs were computed in), then every row's signals
    /// laid out as native code reads them.
    pub(crate) fn score(
        &mut self,
        interpreter: Interpreter<'_>,
        context: &Context,
        records: &Records<'_>,
        budgets: Vec<Budget>,
    ) {
        self.budgets = budgets;
        self.sites = interpreter.program.scores.len();
        if self.sites > 0 {
            let scored: Vec<usize> = (0..self.rows.len())
                .filter(|&row| self.rows[row] == Row::Computed && records.problem(row).is_none())
                .collect();
            let rows: Vec<_> = scored
                .iter()
                .map(|&row| (records.record(row), &self.budgets[row], self.windows_of(row)))
                .collect();
            let scores = super::score(interpreter, context, &rows);
            self.scores = vec![Err(EvalError::OutOfTime); self.rows.len() * self.sites];
            for (at, row) in scored.into_iter().enumerate() {
                let (from, to) = (at * self.sites, row * self.sites);
                self.scores[to..to + self.sites].clone_from_slice(&scores[from..from + self.sites]);
            }
        }
        let mut slots = Vec::with_capacity(self.rows.len() * (self.aggregates + self.sites));
        for row in 0..self.rows.len() {
            self.signals_of(row).slots_into(&mut slots);
        }
        self.slots = slots;
    }

    /// Row `row`'s signals, or the time limit it ran out of; a row past
    /// the chunk, or not computed, reads every window and score as not
    /// computed.
    pub fn row(&self, row: usize) -> Result<Signals<'_>, OutOfTime> {
        match self.rows.get(row) {
            Some(Row::Computed) => Ok(self.signals_of(row)),
            Some(Row::OutOfTime(out)) => Err(*out),
            Some(Row::Skipped) | None => Ok(NO_SIGNALS),
        }
    }

    /// Row `row`'s signals as native code reads them, once scored.
    pub fn slots(&self, row: usize) -> Option<&[Slot]> {
        let width = self.aggregates + self.sites;
        self.slots.get(row * width..(row + 1) * width)
    }

    /// Every row's signals as native code reads them, row after row, once
    /// scored (else empty).
    pub fn all_slots(&self) -> &[Slot] {
        &self.slots
    }

    /// Row `row`'s budget.
    pub fn budget(&self, row: usize) -> Option<&Budget> {
        self.budgets.get(row)
    }

    fn windows_of(&self, row: usize) -> Signals<'_> {
        let values = &self.values[row * self.aggregates..(row + 1) * self.aggregates];
        Signals { values, scores: &[] }
    }

    fn signals_of(&self, row: usize) -> Signals<'_> {
        let scores = self.scores.get(row * self.sites..(row + 1) * self.sites).unwrap_or(&[]);
        Signals { scores, ..self.windows_of(row) }
    }
}
