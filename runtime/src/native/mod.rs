//! The contract between the runtime and native code (the JIT in the
//! `backend` crate), which lives here so that the runtime never depends
//! on Cranelift:
//!
//! - [`NativeCtx`]: what generated code receives: the input slots, a state
//!   area, the helper table, the request's channel, component and time, an
//!   [`Arena`] for computed strings and lists, constant tables, the
//!   contract's host functions and the record's signals (window values
//!   and scores, computed ahead by `crate::signals`);
//! - [`Helpers`] (`helpers.rs`): the Rust functions generated code calls,
//!   reached through a table (no relocations), each named by a [`Helper`];
//!   thin wrappers over [`crate::semantics`] and the program's tables, and
//!   none lets a panic unwind into generated code;
//! - [`NativeProgram`]: what a [`NativeCompiler`] returns: the entry point,
//!   where it leaves its results in the state area, and the owner of the
//!   code;
//! - `run.rs`: running the entry point on a request ([`run`]) and the
//!   batch entry on many records ([`run_records`]), with the per-thread
//!   scratch;
//! - `finish.rs`: [`finish`] gives the result in the state area to a
//!   [`crate::result::ResultSink`], with the same rules and renderers as
//!   the interpreter;
//! - `words.rs`: the word codec (a value as two words and back);
//!   `arena.rs`: the [`Arena`] of computed strings and lists it writes to.
//!
//! Generated code handles the error-free path only: on any evaluation
//! error (and on anything it was not built to handle) it returns
//! [`FALLBACK`], and the interpreter evaluates the request instead. So both
//! engines agree by construction wherever native code gives up, and by
//! differential testing everywhere else.

mod arena;
mod finish;
mod helpers;
mod run;
mod words;

use std::any::Any;
use std::mem::offset_of;

use crate::program::Program;
use crate::semantics::budget::{Budget, OutOfTime};
use crate::semantics::host::HostFn;
use crate::value::data::Slot;

pub use arena::Arena;
pub use finish::finish;
pub use helpers::{EQ_FAILED, HELPERS, Helper, Helpers, StrOp};
pub use run::{RecordRun, Runner};
pub use words::{decimal_words, is_record, scalar_tag};

/// Native code finished; the results are in the state area.
pub const OK: u32 = 0;
/// Native code gave up; the interpreter must evaluate the request.
pub const FALLBACK: u32 = 1;

/// What generated code receives. `repr(C)`: the JIT reads its fields at
/// the offsets below (`NativeCtx::INPUT` and the rest).
#[repr(C)]
#[derive(Debug)]
pub struct NativeCtx {
    /// The input record's slots.
    pub input: *const Slot,
    /// The state area: `NativeProgram::state_words` zeroed words.
    pub state: *mut u64,
    pub helpers: *const Helpers,
    pub program: *const Program,
    /// `1 << channel`, or 0 when the request has no channel
    /// ([`crate::Context::channel_bit`]).
    pub channel_bit: u64,
    /// The request's component plus one, or 0 when it names none.
    pub component: u64,
    /// What `now()` returns (0 when the contract never asks).
    pub now: i64,
    /// Where helpers keep the strings and lists they compute.
    pub arena: *mut Arena,
    /// The data generated code reads by address
    /// ([`NativeProgram::addresses`]).
    pub addresses: *const u64,
    /// `10^0 ..= 10^18`, for decimal fast paths.
    pub pow10: *const i64,
    /// The contract's host functions, in `extern:` order, and how many.
    pub hosts: *const HostFn,
    pub hosts_len: u64,
    /// The stack address below which a let's or a rule's function falls
    /// back instead of going deeper (`ir::stack::floor`): a long chain of
    /// lets nests one native call per let, and the interpreter, which
    /// grows its stack, takes over. 0 never falls back.
    pub stack_floor: u64,
    /// Work left before the budget is asked for more: loops spend one
    /// unit per element, string work inside a loop one per
    /// `1 << budget::STRING_SHIFT` bytes, and loops call the `refuel`
    /// helper when it drops below zero. Work outside loops is not
    /// counted: it is linear in the contract and the input.
    pub fuel: i64,
    /// The evaluation's budget, which `refuel` asks.
    pub budget: *const Budget,
    /// The record's signals ([`crate::signals::Signals::slots`]): every
    /// window aggregate, then every score computed ahead, one slot each,
    /// absent when reading it is an error (native code then falls back).
    /// Null for a contract without signals.
    pub signals: *const Slot,
}

// Byte offsets of the fields, for generated code (the aarch64 cross-check
// passes them to its C driver, which asserts its own).
impl NativeCtx {
    pub const INPUT: i32 = offset_of!(NativeCtx, input) as i32;
    pub const STATE: i32 = offset_of!(NativeCtx, state) as i32;
    pub const HELPERS: i32 = offset_of!(NativeCtx, helpers) as i32;
    pub const PROGRAM: i32 = offset_of!(NativeCtx, program) as i32;
    pub const CHANNEL_BIT: i32 = offset_of!(NativeCtx, channel_bit) as i32;
    pub const COMPONENT: i32 = offset_of!(NativeCtx, component) as i32;
    pub const NOW: i32 = offset_of!(NativeCtx, now) as i32;
    pub const ARENA: i32 = offset_of!(NativeCtx, arena) as i32;
    pub const ADDRESSES: i32 = offset_of!(NativeCtx, addresses) as i32;
    pub const POW10: i32 = offset_of!(NativeCtx, pow10) as i32;
    pub const HOSTS: i32 = offset_of!(NativeCtx, hosts) as i32;
    pub const HOSTS_LEN: i32 = offset_of!(NativeCtx, hosts_len) as i32;
    pub const STACK_FLOOR: i32 = offset_of!(NativeCtx, stack_floor) as i32;
    pub const FUEL: i32 = offset_of!(NativeCtx, fuel) as i32;
    pub const SIGNALS: i32 = offset_of!(NativeCtx, signals) as i32;
}

/// Powers of ten that fit an `i64`, for [`NativeCtx::pow10`].
pub static POW10: [i64; 19] = {
    let mut table = [1i64; 19];
    let mut i = 1;
    while i < 19 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// A compiled entry point: evaluates every applying rule.
pub type NativeFn = unsafe extern "C" fn(*mut NativeCtx) -> u32;

/// A compiled batch entry: runs the entry point on `n` records laid out
/// one after the other at `rows` (the input's width apart), record `i`
/// with the state area `states + i * state_words` (zeroed by the caller),
/// and the signals `NativeCtx::signals + i * signal_slots` (the caller
/// points the context at the first record's), and leaves its status in
/// `statuses[i]`; a record whose status is not `OK` on entry ([`SKIP`]) is
/// not run. One call per window of records.
pub type NativeBatchFn = unsafe extern "C" fn(*mut NativeCtx, *const Slot, u64, *mut u64, *mut u32) -> u32;

/// A record the batch entry must not run (its input is invalid).
pub const SKIP: u32 = 2;

/// Where native code leaves its results, in words of the state area.
#[derive(Clone, Debug, Default)]
pub struct NativeLayout {
    /// One bit per rule: the rule fired and its outcomes were committed.
    pub fired: usize,
    /// The index of the rule that decided under first-match, plus one.
    pub decided: usize,
    /// Per effect: a presence word, then the value's two words.
    pub effects: Vec<usize>,
    /// Per rule: the offsets of its message expressions' values (the
    /// verdict message's expressions, then the finding's), two words each.
    pub parts: Vec<Vec<usize>>,
    /// The words to zero before an evaluation (the flags, which come
    /// first); the rest are written before they are read.
    pub zeroed: usize,
}

/// Code compiled for one contract, kept alive with the contract.
pub struct NativeProgram {
    pub entry: NativeFn,
    /// The batch entry, when the compiler made one.
    pub batch: Option<NativeBatchFn>,
    pub state_words: usize,
    pub layout: NativeLayout,
    /// Addresses in the program (which the code is compiled for and which
    /// outlives it) that generated code reads by index rather than embeds,
    /// so the code holds no pointers: each table's first value slot, then
    /// the string and list constants.
    pub addresses: Vec<u64>,
    /// Whether the code reads `now()` (else the clock is not read).
    pub uses_now: bool,
    /// Whether the code compares the stack with
    /// [`NativeCtx::stack_floor`] (else the floor is not computed).
    pub checks_stack: bool,
    /// Owns the machine code (the JIT module); dropping it frees the code.
    pub owner: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for NativeProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NativeProgram({} state words)", self.state_words)
    }
}

/// Turns prepared programs into native code; implemented by the JIT.
pub trait NativeCompiler: Send + Sync + std::fmt::Debug {
    fn compile(&self, program: &Program) -> Result<NativeProgram, String>;
}

/// How a run of native code ended.
#[derive(Debug, PartialEq, Eq)]
pub enum NativeRun {
    /// The result went to the sink.
    Done,
    /// Native code gave up: the interpreter must evaluate the request.
    Fallback,
    /// The budget ran out: the evaluation stops on either engine.
    OutOfTime(OutOfTime),
}
