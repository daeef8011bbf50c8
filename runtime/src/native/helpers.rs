//! The helpers generated code calls through the [`Helpers`] table (no
//! relocations): thin wrappers over [`crate::semantics`] and the program's
//! tables and regexes. None lets a panic unwind into generated code: each
//! runs under [`guarded`], and any failure returns [`FALLBACK`] so the
//! interpreter evaluates the request instead.

use std::mem::offset_of;
use std::panic::{AssertUnwindSafe, catch_unwind};

use ir::{Builtin, ExprId, ExprKind, TypeId};
use rust_decimal::Decimal;

use crate::program::Program;
use crate::semantics::call_host;
use crate::semantics::host::HostFn;
use crate::semantics::{self, ops};
use crate::value::Owned;
use crate::value::Value;
use crate::value::data::{Slot, pack_decimal, unpack_decimal};
use crate::value::decimal::Midpoint;

use super::words::{text, value_words, word_value};
use super::{FALLBACK, NativeCtx, OK};

/// The functions generated code calls. `repr(C)`: the JIT reads each at
/// its field's offset ([`Helper::offset`]).
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
    pub structural_eq: unsafe extern "C" fn(*const Program, u64, u64, u64, u64, u64) -> u64,
}

/// A helper, by the field of [`Helpers`] that holds it: generated code
/// calls `Helpers` at [`Helper::offset`], so a helper that does not exist
/// cannot be named.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Helper {
    DecAdd,
    DecSub,
    DecMul,
    DecDiv,
    DecRem,
    DecCmp,
    DecRound,
    DecFromInt,
    TableRowStr,
    TableRowInt,
    RegexMatch,
    StrOp,
    Apply,
    AllocSlots,
    Host,
    Refuel,
    StructuralEq,
}

impl Helper {
    /// The byte offset of the helper's entry in [`Helpers`].
    pub fn offset(self) -> i32 {
        let offset = match self {
            Helper::DecAdd => offset_of!(Helpers, dec_add),
            Helper::DecSub => offset_of!(Helpers, dec_sub),
            Helper::DecMul => offset_of!(Helpers, dec_mul),
            Helper::DecDiv => offset_of!(Helpers, dec_div),
            Helper::DecRem => offset_of!(Helpers, dec_rem),
            Helper::DecCmp => offset_of!(Helpers, dec_cmp),
            Helper::DecRound => offset_of!(Helpers, dec_round),
            Helper::DecFromInt => offset_of!(Helpers, dec_from_int),
            Helper::TableRowStr => offset_of!(Helpers, table_row_str),
            Helper::TableRowInt => offset_of!(Helpers, table_row_int),
            Helper::RegexMatch => offset_of!(Helpers, regex_match),
            Helper::StrOp => offset_of!(Helpers, str_op),
            Helper::Apply => offset_of!(Helpers, apply),
            Helper::AllocSlots => offset_of!(Helpers, alloc_slots),
            Helper::Host => offset_of!(Helpers, host),
            Helper::Refuel => offset_of!(Helpers, refuel),
            Helper::StructuralEq => offset_of!(Helpers, structural_eq),
        };
        offset as i32
    }
}

/// What `str_op` computes on its two strings (`repr(u64)`: generated code
/// passes the discriminant).
#[repr(u64)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StrOp {
    /// 1 when equal, else 0.
    Eq = 0,
    /// The ordering as -1, 0 or 1.
    Cmp = 1,
    StartsWith = 2,
    EndsWith = 3,
    Contains = 4,
    /// The first string's length in characters.
    LenChars = 5,
}

impl StrOp {
    const ALL: [StrOp; 6] =
        [StrOp::Eq, StrOp::Cmp, StrOp::StartsWith, StrOp::EndsWith, StrOp::Contains, StrOp::LenChars];

    fn from_word(word: u64) -> Option<StrOp> {
        StrOp::ALL.into_iter().find(|op| *op as u64 == word)
    }
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
    structural_eq: h_structural_eq,
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
    guarded(0, || crate::value::decimal::cmp(unpack_decimal(a0, a1), unpack_decimal(b0, b1)) as i64)
}

unsafe extern "C" fn h_dec_round(a0: u64, a1: u64, places: i64, midpoint: u64, out: *mut u64) -> u32 {
    guarded(FALLBACK, || {
        let Some(midpoint) = Midpoint::from_word(midpoint) else { return FALLBACK };
        let result = ops::dec_round(unpack_decimal(a0, a1), places, midpoint);
        // SAFETY: generated code passes two writable words.
        unsafe { put_decimal(out, result) }
    })
}

unsafe extern "C" fn h_dec_from_int(i: i64, out: *mut u64) -> u32 {
    // SAFETY: generated code passes two writable words.
    guarded(FALLBACK, || unsafe { put_decimal(out, Ok(ops::decimal_from_int(i))) })
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
        match StrOp::from_word(op) {
            Some(StrOp::Eq) => (a == b) as i64,
            Some(StrOp::Cmp) => ops::compare_str(a, b) as i64,
            Some(StrOp::StartsWith) => a.starts_with(b) as i64,
            Some(StrOp::EndsWith) => a.ends_with(b) as i64,
            Some(StrOp::Contains) => a.contains(b) as i64,
            Some(StrOp::LenChars) => ops::str_len(a),
            None => 0,
        }
    })
}

/// What [`Helpers::structural_eq`] answers when it cannot decide.
pub const EQ_FAILED: u64 = 2;

/// Whether two values of type `ty` (lists or records, each in its two
/// words) are equal, as [`semantics::structural_eq`] decides: 1 or 0, or
/// [`EQ_FAILED`] (the code falls back).
unsafe extern "C" fn h_structural_eq(
    program: *const Program,
    ty: u64,
    a0: u64,
    a1: u64,
    b0: u64,
    b1: u64,
) -> u64 {
    guarded(EQ_FAILED, || {
        // SAFETY: generated code passes the context's program.
        let program = unsafe { &*program };
        let ty = TypeId(ty as u32);
        if program.contract.types.get(ty).is_none() {
            return EQ_FAILED;
        }
        let (l, r) = (word_value(program, ty, a0, a1), word_value(program, ty, b0, b1));
        u64::from(semantics::structural_eq(&program.schema(), ty, &l, &r))
    })
}

/// Computes expression `expr` (a built-in call or a binary operator) from
/// its operands' words with the functions of `crate::semantics`, and stores
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
    match kind {
        ExprKind::Binary { op, lhs, rhs } => semantics::binary(*op, operand(0, *lhs), operand(1, *rhs)),
        ExprKind::Call { func, args } if args.len() <= 2 && !matches!(func, Builtin::Now) => {
            let a = args.first().map_or(Value::Absent, |id| operand(0, *id));
            let b = args.get(1).map_or(Value::Absent, |id| operand(1, *id));
            match func {
                Builtin::Min | Builtin::Max => Ok(semantics::extremum(*func, a, [b])),
                _ => semantics::call(&program.schema(), *func, c.expr(args[0]).ty, a, b),
            }
        }
        _ => Err(crate::EvalError::Argument("internal: not a helper operation".into())),
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
        let values: Vec<Owned> = arg_ids
            .iter()
            .enumerate()
            .map(|(k, id)| {
                let ty = program.contract.expr(*id).ty;
                // SAFETY: generated code stores two words per argument.
                let (a, b) = unsafe { (*args.add(2 * k), *args.add(2 * k + 1)) };
                semantics::owned(&schema, ty, &word_value(program, ty, a, b))
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
