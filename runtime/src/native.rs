//! The contract between the runtime and native code (the JIT in the
//! `backend` crate), which lives here so that the runtime never depends
//! on Cranelift:
//!
//! - [`NativeCtx`]: what generated code receives: the input slots, a state
//!   area, the helper table, the request's channel, component and time, an
//!   [`Arena`] for computed strings and lists, constant tables and the
//!   contract's host functions;
//! - [`Helpers`]: the Rust functions generated code calls, reached through
//!   a table (no relocations); they are thin wrappers over [`crate::ops`]
//!   and the program's tables, shared with the interpreter, and none lets a
//!   panic unwind into generated code;
//! - [`NativeProgram`]: what a [`NativeCompiler`] returns: the entry point,
//!   where it leaves its results in the state area, and the owner of the
//!   code;
//! - [`finish`]: builds the [`Evaluation`] from the state area, with the
//!   same rules and renderers as the interpreter.
//!
//! Generated code handles the error-free path only: on any evaluation
//! error (and on anything it was not built to handle) it returns
//! [`FALLBACK`], and the interpreter evaluates the request instead. So both
//! engines agree by construction wherever native code gives up, and by
//! differential testing everywhere else.

use std::any::Any;
use std::mem::offset_of;
use std::panic::{AssertUnwindSafe, catch_unwind};

use ir::{Builtin, DecisionMode, ExprId, ExprKind, TypeId, TypeTable, Verdict};
use rust_decimal::Decimal;

use crate::budget::{Budget, FUEL_STEP, OutOfTime};
use crate::data::{RecordRef, Slot, pack_decimal, unpack_decimal};
use crate::host::{HostFn, HostValue, call_host, to_host};
use crate::interp::Context;
use crate::layout::Shape;
use crate::ops;
use crate::program::Program;
use crate::result::{Parts, ResultSink};
use crate::value::{Schema, Value, render, render_template_into};

/// Native code finished; the results are in the state area.
pub const OK: u32 = 0;
/// Native code gave up; the interpreter must evaluate the request.
pub const FALLBACK: u32 = 1;

/// What generated code receives. `repr(C)`: the JIT reads its fields at
/// fixed offsets ([`NativeCtx::OFFSETS`]).
#[repr(C)]
#[derive(Debug)]
pub struct NativeCtx {
    /// The input record's slots.
    pub input: *const Slot,
    /// The state area: `NativeProgram::state_words` zeroed words.
    pub state: *mut u64,
    pub helpers: *const Helpers,
    pub program: *const Program,
    /// `1 << channel`, or 0 when the request has no channel.
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

/// Strings and lists computed during one evaluation (by `lower`, `+`,
/// `string(x)`, list literals), which generated code refers to by address.
/// Each is boxed, so it stays put until the arena is cleared before the
/// next evaluation on the thread.
#[derive(Debug, Default)]
pub struct Arena {
    strings: Vec<Box<str>>,
    lists: Vec<Box<[Slot]>>,
}

impl Arena {
    fn clear(&mut self) {
        self.strings.clear();
        self.lists.clear();
    }

    /// A copy of `text` that lives until the arena is cleared, as words.
    fn string(&mut self, text: &str) -> (u64, u64) {
        let boxed: Box<str> = text.into();
        let words = (boxed.as_ptr() as u64, boxed.len() as u64);
        self.strings.push(boxed);
        words
    }

    /// `n` absent slots that live until the arena is cleared.
    fn slots(&mut self, n: usize) -> *mut Slot {
        let mut boxed = vec![Slot::ABSENT; n.max(1)].into_boxed_slice();
        let at = boxed.as_mut_ptr();
        self.lists.push(boxed);
        at
    }
}

/// A compiled entry point: evaluates every applying rule.
pub type NativeFn = unsafe extern "C" fn(*mut NativeCtx) -> u32;

/// A compiled batch entry: runs the entry point on `n` records laid out
/// one after the other at `rows` (the input's width apart), record `i`
/// with the state area `states + i * state_words` (zeroed by the caller),
/// and leaves its status in `statuses[i]`; a record whose status is not
/// `OK` on entry ([`SKIP`]) is not run. One call per window of records.
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
            channel_bit: context.channel.map_or(0, |c| 1u64 << c.0),
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
        }
    }
}

/// Runs native code on a request; when it finishes, its result goes to
/// `sink` (which is untouched otherwise).
pub fn run<'p>(
    program: &'p Program,
    native: &NativeProgram,
    hosts: &[HostFn],
    context: &Context,
    input: RecordRef<'_>,
    budget: &Budget,
    sink: &mut dyn ResultSink<'p>,
) -> NativeRun {
    SCRATCH.with(|cell| {
        let Ok(mut scratch) = cell.try_borrow_mut() else { return NativeRun::Fallback };
        let Scratch { state, arena, .. } = &mut *scratch;
        let words = native.state_words.max(1);
        if state.len() < words {
            state.resize(words, 0);
        }
        state[..native.layout.zeroed.min(words)].fill(0);
        arena.clear();
        let mut ctx = NativeCtx::new(program, native, hosts, context, now(native, context), arena, budget);
        ctx.input = input.slots().as_ptr();
        ctx.state = state.as_mut_ptr();
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

/// Runs the batch entry over every record of `records` (without a time
/// limit: batch entries do not count fuel per record), a call per window
/// of records whose state areas fit [`BATCH_STATE_BYTES`], and gives each
/// record's outcome to `each`, in order. `false` when native code cannot
/// run batches (no batch entry, or the thread's scratch is in use).
pub fn run_records(
    program: &Program,
    native: &NativeProgram,
    hosts: &[HostFn],
    context: &Context,
    records: &crate::records::Records<'_>,
    mut each: impl FnMut(usize, RecordRun<'_>),
) -> bool {
    let Some(batch) = native.batch else { return false };
    SCRATCH.with(|cell| {
        let Ok(mut scratch) = cell.try_borrow_mut() else { return false };
        let Scratch { state, arena, statuses } = &mut *scratch;
        let (n, words, width) = (records.len(), native.state_words.max(1), program.input_width());
        let per_call = (BATCH_STATE_BYTES / (words * 8)).clamp(1, n.max(1));
        if state.len() < per_call * words {
            state.resize(per_call * words, 0);
        }
        let zeroed = native.layout.zeroed.min(words);
        let budget = Budget::new(None);
        let now = now(native, context);
        for first in (0..n).step_by(per_call) {
            let count = per_call.min(n - first);
            for record in state.chunks_mut(words).take(count) {
                record[..zeroed].fill(0);
            }
            statuses.clear();
            statuses.extend(
                (first..first + count).map(|row| if records.problem(row).is_some() { SKIP } else { OK }),
            );
            arena.clear();
            let mut ctx = NativeCtx::new(program, native, hosts, context, now, &mut *arena, &budget);
            let rows = records.slots()[first * width..].as_ptr();
            // SAFETY: the batch entry was compiled for this program's
            // layout; `rows` holds `count` records of its input width, the
            // state area `count` areas with their flags zeroed and the
            // statuses `count` words, all live for the whole call.
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
    /// The buffer [`finish`] renders messages in, kept between results.
    static MESSAGE: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// Gives the result native code left in the state area to `sink`: the
/// decision (decided as every engine decides, `result::decide`), then
/// the parts the sink asks for. A message is rendered only when it is
/// reported: a fired rule's verdict message when its verdict won, its
/// finding's when findings are asked for.
pub fn finish<'p>(
    program: &'p Program,
    native: &NativeProgram,
    state: &[u64],
    sink: &mut dyn ResultSink<'p>,
) {
    let c: &'p ir::Contract = &program.contract;
    let layout = &native.layout;
    let fired = || fired_rules(&state[layout.fired..], c.rules.len());
    let decided = match state[layout.decided] {
        0 => None,
        n => c.rules.get(n as usize - 1).and_then(|r| r.verdict.as_ref()).map(|v| v.verdict),
    };
    let verdicts = || fired().filter_map(|i| c.rules[i].verdict.as_ref().map(|v| v.verdict));
    let denied = verdicts().any(|v| v == Verdict::Deny);
    let allowed = verdicts().any(|v| v == Verdict::Allow);
    // Native code never fails closed: an error falls back to the
    // interpreter.
    let decided = decided.filter(|_| c.decision == DecisionMode::FirstMatch);
    let decision = crate::result::decide(c, decided, false, denied, allowed);
    sink.decision(&c.name, &c.version, decision);
    let parts = sink.parts();
    let schema = program.schema();
    // One buffer for every message of the thread's results.
    let mut text = MESSAGE.with(|cell| cell.take());
    let render = |template: &ir::Template, at: &[usize], text: &mut String| {
        text.clear();
        let mut at = at.iter();
        let _ = render_template_into(template, text, |id, out| {
            let word = at.next().copied().unwrap_or(0);
            render_words(program, &schema, c.expr(id).ty, (state[word], state[word + 1]), out);
            Ok::<(), std::convert::Infallible>(())
        });
    };
    if parts.has(Parts::REASONS) {
        for i in fired() {
            let rule = &c.rules[i];
            if let Some(v) = rule.verdict.as_ref().filter(|v| v.verdict == decision) {
                render(&v.message, &layout.parts[i], &mut text);
                sink.reason(&rule.name, v.verdict, &text);
            }
        }
    }
    if parts.has(Parts::FINDINGS) {
        for i in fired() {
            let rule = &c.rules[i];
            if let Some(f) = &rule.finding {
                let skipped = rule.verdict.as_ref().map_or(0, |v| v.message.expr_count());
                render(&f.message, &layout.parts[i][skipped..], &mut text);
                sink.finding(&rule.name, &f.code, f.severity.name(), &text);
            }
        }
    }
    if parts.has(Parts::EFFECTS) {
        for (i, effect) in c.effects.iter().enumerate() {
            let at = layout.effects[i];
            if state[at] != 0 {
                let value = word_value(program, effect.ty, state[at + 1], state[at + 2]);
                sink.effect(&effect.name, &crate::interp::owned(&schema, effect.ty, &value));
            }
        }
    }
    MESSAGE.with(|cell| cell.set(text));
    sink.end();
}

/// Appends a message part of type `ty` kept in two words: ints, decimals,
/// bools and strings straight from the words, the rest through a value
/// and the renderer every engine uses.
fn render_words(program: &Program, schema: &Schema<'_>, ty: TypeId, (a, b): (u64, u64), out: &mut String) {
    match ty {
        TypeTable::INT => out.push_str(itoa::Buffer::new().format(a as i64)),
        TypeTable::DECIMAL => crate::decimal::write_words(a, b, out),
        TypeTable::BOOL => out.push_str(if a != 0 { "true" } else { "false" }),
        // SAFETY: a string's words point at text in the input, the
        // program's constants or the arena, all alive while the result is
        // built.
        _ if program.contract.types.is_stringy(ty) => out.push_str(unsafe { text(a as *const u8, b) }),
        _ => render(schema, ty, &word_value(program, ty, a, b), out),
    }
}

/// The rules whose bit is set in `bits` (one bit per rule, 64 per word),
/// in rule order.
fn fired_rules(bits: &[u64], rules: usize) -> impl Iterator<Item = usize> + '_ {
    bits.iter().take(rules.div_ceil(64)).enumerate().flat_map(|(word, &bits)| {
        let mut rest = bits;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                word * 64 + bit
            })
        })
    })
}

/// A value of type `ty` from the two words native code keeps it in.
fn word_value<'a>(program: &'a Program, ty: TypeId, a: u64, b: u64) -> Value<'a> {
    match &program.layouts.of(ty).shape {
        Shape::Record { .. } => {
            let width = program.layouts.width(ty);
            // SAFETY: native code keeps a record as a pointer to its slots,
            // in the input or the program's constants, alive for `'a`.
            let slots = unsafe { std::slice::from_raw_parts(a as *const Slot, width) };
            // SAFETY: as above.
            Value::Record(unsafe { RecordRef::new(slots) })
        }
        shape => {
            let slot = Slot::from_words(shape_tag(shape), a, b);
            // SAFETY: the words come from slots of the input or constants
            // (strings and lists point into them), alive for `'a`.
            unsafe { crate::value::read_detached(&program.layouts, ty, slot) }
        }
    }
}

fn shape_tag(shape: &Shape) -> crate::data::Tag {
    use crate::data::Tag;
    match shape {
        Shape::Bool => Tag::Bool,
        Shape::Int => Tag::Int,
        Shape::Decimal => Tag::Decimal,
        Shape::Float => Tag::Float,
        Shape::Str => Tag::Str,
        Shape::Timestamp => Tag::Timestamp,
        Shape::Duration => Tag::Duration,
        Shape::List { .. } => Tag::List,
        Shape::Optional { .. } | Shape::Record { .. } => Tag::Absent,
    }
}

/// The functions generated code calls. `repr(C)`: the JIT reads entry `i`
/// at byte offset `8 * i` ([`Helpers::index`]).
#[repr(C)]
#[derive(Debug)]
pub struct Helpers {
    pub dec_add: unsafe extern "C" fn(u64, u64, u64, u64, *mut u64) -> u32,
    pub dec_sub: unsafe extern "C" fn(u64, u64, u64, u64, *mut u64) -> u32,
    pub dec_mul: unsafe extern "C" fn(u64, u64, u64, u64, *mut u64) -> u32,
    pub dec_div: unsafe extern "C" fn(u64, u64, u64, u64, *mut u64) -> u32,
    pub dec_rem: unsafe extern "C" fn(u64, u64, u64, u64, *mut u64) -> u32,
    pub dec_cmp: unsafe extern "C" fn(u64, u64, u64, u64) -> i64,
    pub dec_round: unsafe extern "C" fn(u64, u64, i64, u64, *mut u64) -> u32,
    pub dec_from_int: unsafe extern "C" fn(i64, *mut u64) -> u32,
    pub table_row_str: unsafe extern "C" fn(*const Program, u64, *const u8, u64) -> i64,
    pub table_row_int: unsafe extern "C" fn(*const Program, u64, i64) -> i64,
    pub regex_match: unsafe extern "C" fn(*const Program, u64, *const u8, u64) -> u64,
    pub str_op: unsafe extern "C" fn(u64, *const u8, u64, *const u8, u64) -> i64,
    pub apply: unsafe extern "C" fn(*mut NativeCtx, u64, u64, u64, u64, u64, *mut u64) -> u32,
    pub alloc_slots: unsafe extern "C" fn(*mut NativeCtx, u64) -> *mut Slot,
    pub host: unsafe extern "C" fn(*mut NativeCtx, u64, *const u64, *mut u64) -> u32,
    pub refuel: unsafe extern "C" fn(*mut NativeCtx) -> u32,
}

impl Helpers {
    /// The byte offset of each helper in the table, by name.
    pub const INDEX: [&'static str; 16] = [
        "dec_add",
        "dec_sub",
        "dec_mul",
        "dec_div",
        "dec_rem",
        "dec_cmp",
        "dec_round",
        "dec_from_int",
        "table_row_str",
        "table_row_int",
        "regex_match",
        "str_op",
        "apply",
        "alloc_slots",
        "host",
        "refuel",
    ];

    /// The byte offset of the helper called `name`.
    pub fn offset(name: &str) -> i32 {
        Self::INDEX.iter().position(|n| *n == name).map_or(0, |i| i as i32 * 8)
    }
}

/// `str_op` operations.
pub mod str_ops {
    pub const EQ: u64 = 0;
    pub const CMP: u64 = 1;
    pub const STARTS_WITH: u64 = 2;
    pub const ENDS_WITH: u64 = 3;
    pub const CONTAINS: u64 = 4;
    pub const LEN_CHARS: u64 = 5;
}

pub static HELPERS: Helpers = Helpers {
    dec_add: h_dec_add,
    dec_sub: h_dec_sub,
    dec_mul: h_dec_mul,
    dec_div: h_dec_div,
    dec_rem: h_dec_rem,
    dec_cmp: h_dec_cmp,
    dec_round: h_dec_round,
    dec_from_int: h_dec_from_int,
    table_row_str: h_table_row_str,
    table_row_int: h_table_row_int,
    regex_match: h_regex_match,
    str_op: h_str_op,
    apply: h_apply,
    alloc_slots: h_alloc_slots,
    host: h_host,
    refuel: h_refuel,
};

/// Runs `f`, turning a panic into `fallback`: nothing unwinds into
/// generated code.
fn guarded<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// Stores a decimal result in `out` and returns the status.
///
/// # Safety
/// `out` points at two writable words.
unsafe fn put_decimal(out: *mut u64, result: Result<Decimal, crate::EvalError>) -> u32 {
    match result {
        Ok(d) => {
            let (a, b) = pack_decimal(d);
            // SAFETY: the caller gives two writable words.
            unsafe {
                *out = a;
                *out.add(1) = b;
            }
            OK
        }
        Err(_) => FALLBACK,
    }
}

macro_rules! decimal_binop {
    ($name:ident, $op:path) => {
        unsafe extern "C" fn $name(a0: u64, a1: u64, b0: u64, b1: u64, out: *mut u64) -> u32 {
            guarded(FALLBACK, || {
                let result = $op(unpack_decimal(a0, a1), unpack_decimal(b0, b1));
                // SAFETY: generated code passes two writable words.
                unsafe { put_decimal(out, result) }
            })
        }
    };
}

decimal_binop!(h_dec_add, ops::dec_add);
decimal_binop!(h_dec_sub, ops::dec_sub);
decimal_binop!(h_dec_mul, ops::dec_mul);
decimal_binop!(h_dec_div, ops::dec_div);
decimal_binop!(h_dec_rem, ops::dec_rem);

unsafe extern "C" fn h_dec_cmp(a0: u64, a1: u64, b0: u64, b1: u64) -> i64 {
    guarded(0, || crate::decimal::cmp(unpack_decimal(a0, a1), unpack_decimal(b0, b1)) as i64)
}

unsafe extern "C" fn h_dec_round(a0: u64, a1: u64, places: i64, half_even: u64, out: *mut u64) -> u32 {
    guarded(FALLBACK, || {
        let result = ops::dec_round(unpack_decimal(a0, a1), places, half_even != 0);
        // SAFETY: generated code passes two writable words.
        unsafe { put_decimal(out, result) }
    })
}

unsafe extern "C" fn h_dec_from_int(i: i64, out: *mut u64) -> u32 {
    // SAFETY: generated code passes two writable words.
    guarded(FALLBACK, || unsafe { put_decimal(out, Ok(ops::decimal_from_int(i))) })
}

/// # Safety
/// `ptr..ptr+len` is a live UTF-8 string.
unsafe fn text<'a>(ptr: *const u8, len: u64) -> &'a str {
    if len == 0 {
        return "";
    }
    // SAFETY: the caller passes a string slot's pointer and length.
    unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len as usize)) }
}

unsafe extern "C" fn h_table_row_str(program: *const Program, table: u64, ptr: *const u8, len: u64) -> i64 {
    guarded(-1, || {
        // SAFETY: generated code passes the context's program and a string.
        let (program, key) = unsafe { (&*program, text(ptr, len)) };
        program.tables.get(table as usize).and_then(|t| t.row_str(key)).map_or(-1, i64::from)
    })
}

unsafe extern "C" fn h_table_row_int(program: *const Program, table: u64, key: i64) -> i64 {
    guarded(-1, || {
        // SAFETY: generated code passes the context's program.
        let program = unsafe { &*program };
        program.tables.get(table as usize).and_then(|t| t.row_int(key)).map_or(-1, i64::from)
    })
}

unsafe extern "C" fn h_regex_match(program: *const Program, regex: u64, ptr: *const u8, len: u64) -> u64 {
    guarded(0, || {
        // SAFETY: generated code passes the context's program and a string.
        let (program, subject) = unsafe { (&*program, text(ptr, len)) };
        program.regexes.get(regex as usize).is_some_and(|r| r.is_match(subject)) as u64
    })
}

unsafe extern "C" fn h_str_op(op: u64, p1: *const u8, l1: u64, p2: *const u8, l2: u64) -> i64 {
    guarded(0, || {
        // SAFETY: generated code passes two strings.
        let (a, b) = unsafe { (text(p1, l1), text(p2, l2)) };
        match op {
            str_ops::EQ => (a == b) as i64,
            str_ops::CMP => ops::compare_str(a, b) as i64,
            str_ops::STARTS_WITH => a.starts_with(b) as i64,
            str_ops::ENDS_WITH => a.ends_with(b) as i64,
            str_ops::CONTAINS => a.contains(b) as i64,
            str_ops::LEN_CHARS => ops::str_len(a),
            _ => 0,
        }
    })
}

/// Computes expression `expr` (a built-in call or a binary operator) from
/// its operands' words with the interpreter's own functions, and stores
/// the result's words in `out`; computed strings go to the arena.
unsafe extern "C" fn h_apply(
    ctx: *mut NativeCtx,
    expr: u64,
    a0: u64,
    a1: u64,
    b0: u64,
    b1: u64,
    out: *mut u64,
) -> u32 {
    guarded(FALLBACK, || {
        // SAFETY: generated code passes its own context, whose program and
        // arena are live for the whole evaluation.
        let (program, arena) = unsafe { (&*(*ctx).program, &mut *(*ctx).arena) };
        let Some(node) = program.contract.exprs.get(expr as usize) else { return FALLBACK };
        match apply(program, &node.kind, [(a0, a1), (b0, b1)]) {
            Ok(value) => {
                let (a, b) = value_words(program, node.ty, &value, arena);
                // SAFETY: generated code passes two writable words.
                unsafe {
                    *out = a;
                    *out.add(1) = b;
                }
                OK
            }
            Err(_) => FALLBACK,
        }
    })
}

/// The value of a call or operator node whose operands are `words`.
fn apply<'a>(
    program: &'a Program,
    kind: &ExprKind,
    words: [(u64, u64); 2],
) -> Result<Value<'a>, crate::EvalError> {
    let c = &program.contract;
    let operand = |k: usize, id: ExprId| word_value(program, c.expr(id).ty, words[k].0, words[k].1);
    let unsupported = || crate::EvalError::Argument("internal: not a helper operation".into());
    match kind {
        ExprKind::Binary { op, lhs, rhs } => crate::interp::binary(*op, operand(0, *lhs), operand(1, *rhs)),
        ExprKind::Call { func, args } => {
            let a = args.first().map_or(Value::Absent, |id| operand(0, *id));
            let b = args.get(1).map_or(Value::Absent, |id| operand(1, *id));
            match func {
                Builtin::ToString => {
                    let mut text = String::new();
                    render(&program.schema(), c.expr(args[0]).ty, &a, &mut text);
                    Ok(Value::Text(text.into()))
                }
                Builtin::Dot | Builtin::Cosine | Builtin::L2 => {
                    let (x, y) = (floats(program, &a), floats(program, &b));
                    let f = match func {
                        Builtin::Dot => ops::dot(&x, &y),
                        Builtin::Cosine => ops::cosine(&x, &y),
                        _ => ops::l2(&x, &y),
                    };
                    f.map(Value::Float)
                }
                _ => {
                    let ty = c.expr(args[0]).ty;
                    crate::interp::builtin(*func, a, b, ty)
                }
            }
        }
        _ => Err(unsupported()),
    }
}

/// The elements of a `list<float>`.
fn floats(program: &Program, list: &Value<'_>) -> Vec<f64> {
    (0..list.list_len())
        .map(|i| match list.list_get(&program.layouts, TypeTable::FLOAT, i) {
            Value::Float(f) => f,
            _ => 0.0,
        })
        .collect()
}

/// A value as the two words native code keeps it in; computed strings and
/// lists are copied into `arena`.
fn value_words(program: &Program, ty: TypeId, value: &Value<'_>, arena: &mut Arena) -> (u64, u64) {
    match value {
        Value::Absent => (0, 0),
        Value::Bool(b) => (u64::from(*b), 0),
        Value::Int(i) | Value::Timestamp(i) | Value::Duration(i) => (*i as u64, 0),
        Value::Float(f) => (f.to_bits(), 0),
        Value::Decimal(d) => pack_decimal(*d),
        Value::Str(s) => (s.as_ptr() as u64, s.len() as u64),
        Value::Text(t) => arena.string(t),
        Value::Record(record) => (record.slots().as_ptr() as u64, 0),
        Value::List(list) => list.words(),
        Value::Items(items) => {
            let element = program.contract.types.list_element(ty).unwrap_or(ty);
            let tag = shape_tag(&program.layouts.of(element).shape);
            let slots = arena.slots(items.len());
            for (i, item) in items.iter().enumerate() {
                let (a, b) = value_words(program, element, item, arena);
                // SAFETY: `slots` has `items.len()` slots.
                unsafe { *slots.add(i) = Slot::from_words(tag, a, b) };
            }
            (slots as u64, items.len() as u64)
        }
    }
}

/// `n` slots in the arena for a list literal native code fills.
unsafe extern "C" fn h_alloc_slots(ctx: *mut NativeCtx, n: u64) -> *mut Slot {
    guarded(std::ptr::null_mut(), || {
        // SAFETY: generated code passes its own context.
        let arena = unsafe { &mut *(*ctx).arena };
        usize::try_from(n).map_or(std::ptr::null_mut(), |n| arena.slots(n))
    })
}

/// Calls the host function of extern call `expr`, whose arguments' words
/// native code stored at `args` (two words each, in order), and stores
/// the result's words in `out`. A host function that fails falls back:
/// the interpreter calls it again and reports the error.
unsafe extern "C" fn h_host(ctx: *mut NativeCtx, expr: u64, args: *const u64, out: *mut u64) -> u32 {
    guarded(FALLBACK, || {
        // SAFETY: generated code passes its own context, whose program,
        // arena and host functions are live for the whole evaluation.
        let (program, arena, hosts) = unsafe {
            let ctx = &*ctx;
            let hosts: &[HostFn] = if ctx.hosts.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(ctx.hosts, ctx.hosts_len as usize)
            };
            (&*ctx.program, &mut *ctx.arena, hosts)
        };
        let Some(node) = program.contract.exprs.get(expr as usize) else { return FALLBACK };
        let ExprKind::Extern { func, args: arg_ids } = &node.kind else { return FALLBACK };
        let Some(host) = hosts.get(func.index()) else { return FALLBACK };
        let schema = program.schema();
        let values: Vec<HostValue> = arg_ids
            .iter()
            .enumerate()
            .map(|(k, id)| {
                let ty = program.contract.expr(*id).ty;
                // SAFETY: generated code stores two words per argument.
                let (a, b) = unsafe { (*args.add(2 * k), *args.add(2 * k + 1)) };
                to_host(&schema, ty, &word_value(program, ty, a, b))
            })
            .collect();
        match call_host(host, &values) {
            Ok(value) => {
                let (a, b) = value_words(program, node.ty, &value, arena);
                // SAFETY: generated code passes two writable words.
                unsafe {
                    *out = a;
                    *out.add(1) = b;
                }
                OK
            }
            Err(_) => FALLBACK,
        }
    })
}

/// Asks the budget for more fuel when a loop of generated code spent it:
/// `OK` with `ctx.fuel` refilled, or `FALLBACK` when the budget ran out
/// (which [`run`] then reports instead of falling back).
unsafe extern "C" fn h_refuel(ctx: *mut NativeCtx) -> u32 {
    guarded(FALLBACK, || {
        // SAFETY: generated code passes its own context, whose budget is
        // live for the whole evaluation.
        let ctx = unsafe { &mut *ctx };
        // SAFETY: as above.
        match unsafe { &*ctx.budget }.refuel() {
            Ok(fuel) => {
                ctx.fuel = fuel;
                OK
            }
            Err(_) => FALLBACK,
        }
    })
}

/// A decimal's two words, for building constants in generated code.
pub fn decimal_words(d: Decimal) -> (u64, u64) {
    pack_decimal(d)
}

/// The slot tag of a scalar type (not a record, list or optional), for
/// list literals native code builds.
pub fn scalar_tag(program: &Program, ty: TypeId) -> Option<u64> {
    match &program.layouts.of(ty).shape {
        Shape::Record { .. } | Shape::List { .. } | Shape::Optional { .. } => None,
        shape => Some(shape_tag(shape) as u64),
    }
}

/// Whether a value of type `ty` is read as a record view (native code
/// keeps a pointer to its slots).
pub fn is_record(program: &Program, ty: TypeId) -> bool {
    matches!(program.layouts.of(ty).shape, Shape::Record { .. })
}
