//! Running native code: the per-thread scratch (state area, arena,
//! statuses), the context of a call, and a [`Runner`] (what every run is
//! given: the program, its native code, the host functions) with one
//! request ([`Runner::run`]) and the batch entry over many records
//! ([`Runner::run_records`]).

use crate::program::Program;
use crate::program::context::Context;
use crate::result::ResultSink;
use crate::semantics::budget::{Budget, FUEL_STEP};
use crate::semantics::host::HostFn;
use crate::semantics::ops;
use crate::value::data::{RecordRef, Slot};

use super::arena::Arena;
use super::finish::finish;
use super::helpers::HELPERS;
use super::{NativeCtx, NativeProgram, NativeRun, OK, POW10, SKIP};

/// The time native code reads: the request's, else the clock's when the
/// code reads it at all.
fn now(native: &NativeProgram, context: &Context) -> i64 {
    match context.now {
        Some(now) => now,
        None if native.uses_now => ops::clock_now(),
        None => 0,
    }
}

impl NativeCtx {
    /// The context of one call of `native`'s code over `program` at time
    /// `now` ([`now`]), its input and state not pointed at yet (the
    /// caller sets them).
    fn new(
        program: &Program,
        native: &NativeProgram,
        hosts: &[HostFn],
        context: &Context,
        now: i64,
        arena: &mut Arena,
        budget: &Budget,
    ) -> NativeCtx {
        NativeCtx {
            input: std::ptr::null(),
            state: std::ptr::null_mut(),
            helpers: &HELPERS,
            program,
            channel_bit: context.channel_bit(),
            component: context.component.map_or(0, |c| u64::from(c.0) + 1),
            now,
            arena,
            addresses: native.addresses.as_ptr(),
            pow10: POW10.as_ptr(),
            hosts: hosts.as_ptr(),
            hosts_len: hosts.len() as u64,
            stack_floor: if native.checks_stack { ir::stack::floor() as u64 } else { 0 },
            fuel: FUEL_STEP,
            budget,
            signals: std::ptr::null(),
        }
    }
}

/// What every run of a contract's native code is given: the prepared
/// program, its native code and the host functions (the peer of the
/// interpreter's `Interpreter`).
#[derive(Clone, Copy, Debug)]
pub struct Runner<'p> {
    pub program: &'p Program,
    pub native: &'p NativeProgram,
    pub hosts: &'p [HostFn],
}

impl<'p> Runner<'p> {
    /// Runs native code on a request whose signals are `signals` (empty
    /// for a contract without them); when it finishes, its result goes to
    /// `sink` (which is untouched otherwise).
    pub fn run(
        &self,
        context: &Context,
        input: RecordRef<'_>,
        signals: &[Slot],
        budget: &Budget,
        sink: &mut dyn ResultSink<'p>,
    ) -> NativeRun {
        let Runner { program, native, hosts } = *self;
        if signals.len() != program.signal_slots() {
            // Native code reads every slot it was compiled for.
            return NativeRun::Fallback;
        }
        SCRATCH.with(|cell| {
            let Ok(mut scratch) = cell.try_borrow_mut() else { return NativeRun::Fallback };
            let Scratch { state, arena, .. } = &mut *scratch;
            let words = native.state_words.max(1);
            if state.len() < words {
                state.resize(words, 0);
            }
            state[..native.layout.zeroed.min(words)].fill(0);
            arena.clear();
            let mut ctx =
                NativeCtx::new(program, native, hosts, context, now(native, context), arena, budget);
            ctx.input = input.slots().as_ptr();
            ctx.state = state.as_mut_ptr();
            if !signals.is_empty() {
                ctx.signals = signals.as_ptr();
            }
            // SAFETY: the entry point was compiled for this program's layout;
            // the context points at live data for the whole call.
            let status = unsafe { (native.entry)(&mut ctx) };
            if budget.is_exhausted() {
                return NativeRun::OutOfTime(budget.out_of_time());
            }
            if status != OK {
                return NativeRun::Fallback;
            }
            finish(program, native, state, sink);
            NativeRun::Done
        })
    }
}

/// How native code ended on one record of a batch.
#[derive(Debug)]
pub enum RecordRun<'s> {
    /// Finished: the record's state area, for [`finish`].
    Done(&'s [u64]),
    /// Gave up: the interpreter must evaluate the record.
    Fallback,
    /// Not run: the record is invalid.
    Skipped,
}

/// The most state area one call of the batch entry fills: its records'
/// areas stay in the core's cache (a contract of 504 rules has about
/// 30 KB of state per record).
const BATCH_STATE_BYTES: usize = 256 << 10;

impl Runner<'_> {
    /// Runs the batch entry over the records `rows` of `records`, whose
    /// signals are `signals` (every record's, laid out one after the
    /// other; empty for a contract without them), without a time limit
    /// (batch entries do not count fuel per record), a call per run of
    /// records whose state areas fit `BATCH_STATE_BYTES`, and gives each
    /// record's outcome to `each`, in order. `false` when native code
    /// cannot run batches (no batch entry, signals not laid out for every
    /// record, or the thread's scratch is in use).
    pub fn run_records(
        &self,
        context: &Context,
        records: &crate::input::records::Records<'_>,
        rows: std::ops::Range<usize>,
        signals: &[Slot],
        mut each: impl FnMut(usize, RecordRun<'_>),
    ) -> bool {
        let Runner { program, native, hosts } = *self;
        let Some(batch) = native.batch else { return false };
        let per_record = program.signal_slots();
        if signals.len() != records.len() * per_record || rows.end > records.len() {
            return false;
        }
        SCRATCH.with(|cell| {
            let Ok(mut scratch) = cell.try_borrow_mut() else { return false };
            let Scratch { state, arena, statuses } = &mut *scratch;
            let (words, width) = (native.state_words.max(1), program.input_width());
            let per_call = (BATCH_STATE_BYTES / (words * 8)).clamp(1, rows.len().max(1));
            if state.len() < per_call * words {
                state.resize(per_call * words, 0);
            }
            let zeroed = native.layout.zeroed.min(words);
            let budget = Budget::new(None);
            let now = now(native, context);
            for first in rows.clone().step_by(per_call) {
                let count = per_call.min(rows.end - first);
                for record in state.chunks_mut(words).take(count) {
                    record[..zeroed].fill(0);
                }
                statuses.clear();
                statuses.extend(
                    (first..first + count).map(|row| if records.problem(row).is_some() { SKIP } else { OK }),
                );
                arena.clear();
                let mut ctx = NativeCtx::new(program, native, hosts, context, now, &mut *arena, &budget);
                if per_record > 0 {
                    ctx.signals = signals[first * per_record..].as_ptr();
                }
                let rows = records.slots()[first * width..].as_ptr();
                // SAFETY: the batch entry was compiled for this program's
                // layout; `rows` holds `count` records of its input width,
                // `ctx.signals` their signals, the state area `count` areas
                // with their flags zeroed and the statuses `count` words, all
                // live for the whole call.
                unsafe { batch(&mut ctx, rows, count as u64, state.as_mut_ptr(), statuses.as_mut_ptr()) };
                for (k, status) in statuses.iter().enumerate() {
                    let outcome = match *status {
                        OK => RecordRun::Done(&state[k * words..(k + 1) * words]),
                        SKIP => RecordRun::Skipped,
                        _ => RecordRun::Fallback,
                    };
                    each(first + k, outcome);
                }
            }
            true
        })
    }
}

/// Per-thread memory reused by every evaluation: the state area and the
/// arena.
#[derive(Default)]
struct Scratch {
    state: Vec<u64>,
    arena: Arena,
    /// The statuses of a batch's records.
    statuses: Vec<u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}
