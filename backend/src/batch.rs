//! The batch entry (`runtime::native::NativeBatchFn`): one call runs the
//! entry point on every record of a window, so a batch pays for one call
//! into native code, not one per record.
//!
//! For record `i` it points the context at the record's slots, its state
//! area and, for a contract with signals, its signals (the caller points
//! `NativeCtx::signals` at the first record's; the input's width, the
//! state's size and the signals' are constants of the contract), refills
//! the fuel, calls the entry point and stores its status; a record whose
//! status is already non-zero (`SKIP`, an invalid input) is passed over.
//!
//! A contract with rule guards ([`crate::guards`]) first gets a vector
//! pass: two records at a time, each guard's slot words are loaded into
//! the lanes of a 128-bit vector (`i64x2`, `f64x2`: SSE2 on x86-64, NEON
//! on aarch64, the same Cranelift IR), compared with the constant in both
//! lanes at once, and the bits of the guards definitely false are stored
//! in each record's guard word, which the entry point reads (an odd last
//! record fills both lanes).

use cranelift_codegen::Context;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, FuncRef, InstBuilder, MemFlagsData, Signature, Type, UserFuncName, types,
};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module};
use runtime::native::NativeCtx;
use runtime::program::Program;
use runtime::semantics::budget::FUEL_STEP;
use runtime::value::data::Slot;

use crate::guards::{Guard, MAX_GUARD_SCALE, Test};
use crate::plan::Plan;

/// `(ctx, rows, n, states, statuses) -> status`.
pub fn batch_signature(module: &dyn Module) -> Signature {
    let mut sig = Signature::new(module.isa().default_call_conv());
    for _ in 0..5 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// Declares the batch entry in `module`.
pub fn declare(module: &mut dyn Module) -> Result<FuncId, String> {
    let sig = batch_signature(module);
    module.declare_function("batch", Linkage::Export, &sig).map_err(|e| format!("cannot declare batch: {e}"))
}

/// Builds the batch entry `id` of `program`, which calls `entry`, into
/// `context`.
pub fn build_into(
    module: &mut dyn Module,
    context: &mut Context,
    (program, plan): (&Program, &Plan),
    entry: FuncId,
    id: FuncId,
) {
    context.func.signature = batch_signature(module);
    context.func.name = UserFuncName::user(0, id.as_u32());
    let callee = module.declare_func_in_func(entry, &mut context.func);
    let shape = Shape {
        row_bytes: (program.input_width() * Slot::SIZE) as i64,
        state_bytes: (plan.words.max(1) * 8) as i64,
        signal_bytes: (program.signal_slots() * Slot::SIZE) as i64,
    };
    build(context, callee, shape, plan, module.isa().frontend_config());
}

/// Declares and defines the batch entry of `program`, which calls `entry`.
pub fn define(
    module: &mut dyn Module,
    program: &Program,
    plan: &Plan,
    entry: FuncId,
) -> Result<FuncId, String> {
    let id = declare(module)?;
    let mut context = module.make_context();
    build_into(module, &mut context, (program, plan), entry, id);
    module.define_function(id, &mut context).map_err(|e| format!("cannot compile the batch entry: {e:?}"))?;
    module.clear_context(&mut context);
    Ok(id)
}

/// The strides of a window: one record's input, state area and signals,
/// in bytes.
#[derive(Clone, Copy)]
struct Shape {
    row_bytes: i64,
    state_bytes: i64,
    signal_bytes: i64,
}

/// The batch entry's parameters.
#[derive(Clone, Copy)]
struct Params {
    ctx: Value,
    rows: Value,
    n: Value,
    states: Value,
    statuses: Value,
    /// The first record's signals (a contract with signals).
    signals: Option<Value>,
}

fn build(context: &mut Context, entry: FuncRef, shape: Shape, plan: &Plan, config: TargetFrontendConfig) {
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut context.func, &mut fctx);
    let start = b.create_block();
    b.append_block_params_for_function_params(start);
    b.switch_to_block(start);
    let params = b.block_params(start).to_vec();
    let signals = (shape.signal_bytes > 0)
        .then(|| b.ins().load(types::I64, MemFlagsData::trusted(), params[0], NativeCtx::SIGNALS));
    let p = Params {
        ctx: params[0],
        rows: params[1],
        n: params[2],
        states: params[3],
        statuses: params[4],
        signals,
    };
    let records = b.create_block();
    b.append_block_param(records, types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    match plan.guard_word {
        Some(word) => {
            let first = b.create_block();
            b.append_block_param(first, types::I64);
            b.ins().jump(first, &[BlockArg::Value(zero)]);
            vector_pass(&mut b, p, shape, (&plan.guards, word), (first, records));
        }
        None => {
            b.ins().jump(records, &[BlockArg::Value(zero)]);
        }
    }
    record_loop(&mut b, p, shape, entry, records);
    b.seal_all_blocks();
    b.finalize(config);
}

/// From `header(i)`: runs the entry point on records `i..n`, then returns.
fn record_loop(b: &mut FunctionBuilder<'_>, p: Params, shape: Shape, entry: FuncRef, header: Block) {
    let flags = MemFlagsData::trusted();
    let (body, run, next, done) = (b.create_block(), b.create_block(), b.create_block(), b.create_block());
    b.switch_to_block(header);
    let i = b.block_params(header)[0];
    let more = b.ins().icmp(IntCC::UnsignedLessThan, i, p.n);
    b.ins().brif(more, body, &[], done, &[]);

    b.switch_to_block(body);
    let offset = b.ins().imul_imm_s(i, 4);
    let status_at = b.ins().iadd(p.statuses, offset);
    let status = b.ins().load(types::I32, flags, status_at, 0);
    b.ins().brif(status, next, &[], run, &[]);

    b.switch_to_block(run);
    let input_offset = b.ins().imul_imm_s(i, shape.row_bytes);
    let input = b.ins().iadd(p.rows, input_offset);
    b.ins().store(flags, input, p.ctx, NativeCtx::INPUT);
    let state_offset = b.ins().imul_imm_s(i, shape.state_bytes);
    let state = b.ins().iadd(p.states, state_offset);
    b.ins().store(flags, state, p.ctx, NativeCtx::STATE);
    if let Some(first) = p.signals {
        let signals_offset = b.ins().imul_imm_s(i, shape.signal_bytes);
        let signals = b.ins().iadd(first, signals_offset);
        b.ins().store(flags, signals, p.ctx, NativeCtx::SIGNALS);
    }
    let fuel = b.ins().iconst(types::I64, FUEL_STEP);
    b.ins().store(flags, fuel, p.ctx, NativeCtx::FUEL);
    let call = b.ins().call(entry, &[p.ctx]);
    let result = b.inst_results(call)[0];
    b.ins().store(flags, result, status_at, 0);
    b.ins().jump(next, &[]);

    b.switch_to_block(next);
    let i = b.ins().iadd_imm_s(i, 1);
    b.ins().jump(header, &[BlockArg::Value(i)]);

    b.switch_to_block(done);
    let ok = b.ins().iconst(types::I32, 0);
    b.ins().return_(&[ok]);
}

/// From `head(i)`: the guard words of records `i..n`, two at a time, then
/// on to `after(0)`.
fn vector_pass(
    b: &mut FunctionBuilder<'_>,
    p: Params,
    shape: Shape,
    (guards, word): (&[Guard], usize),
    (head, after): (Block, Block),
) {
    let (pair, tail, last, body) = (b.create_block(), b.create_block(), b.create_block(), b.create_block());
    for _ in 0..5 {
        b.append_block_param(body, types::I64);
    }
    b.switch_to_block(head);
    let i = b.block_params(head)[0];
    let two = b.ins().iadd_imm_s(i, 2);
    let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, two, p.n);
    b.ins().brif(fits, pair, &[], tail, &[]);

    b.switch_to_block(pair);
    let (row, state) = record_at(b, p, shape, i);
    let next_row = b.ins().iadd_imm_s(row, shape.row_bytes);
    let next_state = b.ins().iadd_imm_s(state, shape.state_bytes);
    let args = [row, next_row, state, next_state, two].map(BlockArg::Value);
    b.ins().jump(body, &args);

    // An odd last record fills both lanes.
    b.switch_to_block(tail);
    let odd = b.ins().icmp(IntCC::UnsignedLessThan, i, p.n);
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().brif(odd, last, &[], after, &[BlockArg::Value(zero)]);
    b.switch_to_block(last);
    let (row, state) = record_at(b, p, shape, i);
    b.ins().jump(body, &[row, row, state, state, p.n].map(BlockArg::Value));

    b.switch_to_block(body);
    let v = b.block_params(body).to_vec();
    let (rows, states, next) = ([v[0], v[1]], [v[2], v[3]], v[4]);
    let mut skipped = splat(b, 0);
    for (bit, guard) in guards.iter().enumerate() {
        let false_lanes = guard_false(b, rows, guard);
        let mask = splat(b, (1u64 << bit) as i64);
        let bits = b.ins().band(false_lanes, mask);
        skipped = b.ins().bor(skipped, bits);
    }
    let flags = MemFlagsData::trusted();
    for (lane, state) in states.into_iter().enumerate() {
        let bits = b.ins().extractlane(skipped, lane as u8);
        b.ins().store(flags, bits, state, (word * 8) as i32);
    }
    b.ins().jump(head, &[BlockArg::Value(next)]);
}

/// Record `i`'s input and state area.
fn record_at(b: &mut FunctionBuilder<'_>, p: Params, shape: Shape, i: Value) -> (Value, Value) {
    let input_offset = b.ins().imul_imm_s(i, shape.row_bytes);
    let row = b.ins().iadd(p.rows, input_offset);
    let state_offset = b.ins().imul_imm_s(i, shape.state_bytes);
    let state = b.ins().iadd(p.states, state_offset);
    (row, state)
}

fn splat(b: &mut FunctionBuilder<'_>, value: i64) -> Value {
    let scalar = b.ins().iconst(types::I64, value);
    b.ins().splat(types::I64X2, scalar)
}

/// The word at byte `word` of the guard's slot (`Slot::A` or `Slot::B`)
/// in both records, as the lanes of one vector of `lane`s.
fn lanes(b: &mut FunctionBuilder<'_>, rows: [Value; 2], guard: &Guard, word: usize, lane: Type) -> Value {
    let flags = MemFlagsData::trusted();
    let offset = (guard.slot as usize * Slot::SIZE + word) as i32;
    let first = b.ins().load(lane, flags, rows[0], offset);
    let second = b.ins().load(lane, flags, rows[1], offset);
    let vector = b.ins().scalar_to_vector(lane.by(2).expect("a 128-bit vector"), first);
    b.ins().insertlane(vector, second, 1)
}

/// All ones in the lanes whose record's guard is definitely false.
fn guard_false(b: &mut FunctionBuilder<'_>, rows: [Value; 2], guard: &Guard) -> Value {
    match &guard.test {
        Test::Int { cc, value } => {
            let a = lanes(b, rows, guard, Slot::A, types::I64);
            let constant = splat(b, *value);
            let holds = b.ins().icmp(*cc, a, constant);
            b.ins().bnot(holds)
        }
        Test::Float { cc, value } => {
            let a = lanes(b, rows, guard, Slot::A, types::F64);
            let scalar = b.ins().f64const(*value);
            let constant = b.ins().splat(types::F64X2, scalar);
            let holds = b.ins().fcmp(*cc, a, constant);
            b.ins().bnot(holds)
        }
        Test::Decimal { cc, thresholds } => decimal_false(b, rows, guard, *cc, thresholds),
    }
}

/// A decimal slot's words: the mantissa's low 64 bits in `a`; its high 32
/// bits, then the scale (bits 48..56) and the sign (bit 63) in `b`.
fn decimal_false(
    b: &mut FunctionBuilder<'_>,
    rows: [Value; 2],
    guard: &Guard,
    cc: IntCC,
    thresholds: &[Option<i64>],
) -> Value {
    let a = lanes(b, rows, guard, Slot::A, types::I64);
    let flags = lanes(b, rows, guard, Slot::B, types::I64);
    let zero = splat(b, 0);
    // Decided only when the mantissa fits 63 bits.
    let low_mask = splat(b, 0xFFFF_FFFF);
    let high = b.ins().band(flags, low_mask);
    let small_high = b.ins().icmp(IntCC::Equal, high, zero);
    let small_low = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, a, zero);
    let small = b.ins().band(small_high, small_low);
    let negative = b.ins().icmp(IntCC::SignedLessThan, flags, zero);
    let negated = b.ins().ineg(a);
    let mantissa = b.ins().bitselect(negative, negated, a);
    let shift = b.ins().iconst(types::I64, 48);
    let shifted = b.ins().ushr(flags, shift);
    let byte = splat(b, 0xFF);
    let scale = b.ins().band(shifted, byte);
    // The threshold at each lane's scale, and whether there is one.
    let (mut threshold, mut known) = (zero, zero);
    for (s, t) in thresholds.iter().enumerate().take(MAX_GUARD_SCALE as usize + 1) {
        let Some(t) = t else { continue };
        let at = splat(b, s as i64);
        let here = b.ins().icmp(IntCC::Equal, scale, at);
        let value = splat(b, *t);
        threshold = b.ins().bitselect(here, value, threshold);
        known = b.ins().bor(known, here);
    }
    let holds = b.ins().icmp(cc, mantissa, threshold);
    let decided = b.ins().band(small, known);
    b.ins().band_not(decided, holds)
}
