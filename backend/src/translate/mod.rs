//! The IR of one let, rule or the entry point, as Cranelift IR.
//!
//! This module holds the translator and its plumbing; [`units`] builds the
//! three kinds of function, [`expr`] the expressions, [`arith`] operators
//! and comparisons (with inline decimal fast paths), [`calls`] the
//! built-in functions and [`lists`] lambdas and membership.
//!
//! Every function has the signature `(ctx: i64) -> i32`: it takes the
//! [`NativeCtx`] and returns `OK` or `FALLBACK`. Values travel as two
//! 64-bit words, exactly as in slots ([`runtime::value::data::Slot`]): a decimal
//! is its packed mantissa and flags, a string or a list its pointer and
//! length, a record a pointer to its slots, a float its `f64`. Optionals
//! carry a presence flag beside.
//!
//! Generated code handles the error-free path: an overflow, a division by
//! zero, an uncaught missing key, anything not built in yet, all jump to
//! the function's fallback block, and the runtime re-evaluates the request
//! with the interpreter.

mod arith;
mod calls;
mod decimal;
mod expr;
mod fold;
mod lists;
mod tables;
mod units;

pub(crate) use crate::conditions::{float_cc, int_cc};

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, FuncRef, Function, InstBuilder, MemFlagsData, SigRef, Signature,
    StackSlotData, StackSlotKind, Type, Value, types,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Module};
use ir::{BinaryOp, Builtin, CmpOp, Combine, ExprId, ExprKind, TypeId, TypeTable as T, UnaryOp};
use runtime::native::{EQ_FAILED, FALLBACK, Helper, NativeCtx, OK, StrOp};
use runtime::program::Program;
use runtime::value::data::Slot;

use crate::plan::{Plan, RULE_FIRED, RULE_NOT_FIRED};

/// Pointers and words.
const W: Type = types::I64;
/// Bytes per slot, and the byte offsets of its tag and words (`Slot`'s
/// layout).
const SLOT: i64 = Slot::SIZE as i64;
const SLOT_TAG: i32 = Slot::TAG as i32;
const SLOT_A: i32 = Slot::A as i32;
const SLOT_B: i32 = Slot::B as i32;

/// What a generated function computes.
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    Let(usize),
    Rule(usize),
    Entry,
}

/// The functions of the other units, imported into the function being
/// built on first call: importing all of them into every function made
/// compiling a contract quadratic in its lets (50,000 chained lets did not
/// compile in ten minutes).
pub(crate) struct Callees<'m> {
    pub module: &'m mut dyn Module,
    pub lets: &'m [FuncId],
    /// `None` for rules the entry point computes inline.
    pub rules: &'m [Option<FuncId>],
    pub imported: HashMap<FuncId, FuncRef>,
}

impl Callees<'_> {
    /// `callee` as `func` calls it, imported on first use.
    fn import(&mut self, callee: FuncId, func: &mut Function) -> FuncRef {
        let module = &mut *self.module;
        *self.imported.entry(callee).or_insert_with(|| module.declare_func_in_func(callee, func))
    }
}

/// The signature of every generated function.
pub fn unit_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(W));
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// A value as words: `a` (an `f64` for floats), `b`, and a presence flag
/// for optionals.
#[derive(Clone, Copy, Debug)]
struct NVal {
    a: Value,
    b: Value,
    present: Option<Value>,
}

/// Builds one function.
pub(crate) fn translate<'a>(
    program: &'a Program,
    plan: &'a Plan,
    unit: Unit,
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    callees: Callees<'a>,
    config: TargetFrontendConfig,
) {
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let ctx = b.block_params(entry)[0];
    let fallback = b.create_block();
    let mut t = Translator {
        program,
        c: &program.contract,
        plan,
        b,
        ctx,
        state: None,
        fallback,
        missing: None,
        callees,
        sigs: HashMap::new(),
        scratch: None,
        locals: HashMap::new(),
    };
    // Values every block uses are made in the entry block, which dominates
    // them all.
    t.state();
    t.scratch();
    match unit {
        Unit::Let(i) => t.let_body(i),
        Unit::Rule(i) => t.rule_body(i),
        Unit::Entry => t.entry_body(),
    }
    t.b.switch_to_block(fallback);
    let status = t.b.ins().iconst(types::I32, i64::from(FALLBACK));
    t.b.ins().return_(&[status]);
    t.b.seal_all_blocks();
    t.b.finalize(config);
}

struct Translator<'a, 'f> {
    program: &'a Program,
    c: &'a ir::Contract,
    plan: &'a Plan,
    b: FunctionBuilder<'f>,
    ctx: Value,
    state: Option<Value>,
    fallback: Block,
    /// Where a missing key or index goes: the default of the innermost
    /// enclosing `??`, or the fallback when there is none.
    missing: Option<Block>,
    callees: Callees<'a>,
    sigs: HashMap<Helper, SigRef>,
    /// Two words of stack for helpers' results.
    scratch: Option<Value>,
    /// The values of the lambda parameters in scope.
    locals: HashMap<u32, NVal>,
}

fn args(values: &[Value]) -> Vec<BlockArg> {
    values.iter().map(|v| BlockArg::Value(*v)).collect()
}

impl Translator<'_, '_> {
    // ----- plumbing -----

    fn iconst(&mut self, v: i64) -> Value {
        self.b.ins().iconst(W, v)
    }

    fn status(&mut self, status: u32) {
        let v = self.b.ins().iconst(types::I32, i64::from(status));
        self.b.ins().return_(&[v]);
    }

    fn state(&mut self) -> Value {
        if let Some(state) = self.state {
            return state;
        }
        let state = self.b.ins().load(W, MemFlagsData::trusted(), self.ctx, NativeCtx::STATE);
        self.state = Some(state);
        state
    }

    fn load_word(&mut self, word: usize) -> Value {
        let state = self.state();
        self.b.ins().load(W, MemFlagsData::trusted(), state, (word * 8) as i32)
    }

    fn store_word(&mut self, word: usize, value: Value) {
        let state = self.state();
        self.b.ins().store(MemFlagsData::trusted(), value, state, (word * 8) as i32);
    }

    /// Address number `place` of [`NativeCtx::addresses`].
    fn address(&mut self, place: usize) -> Value {
        let addresses = self.ctx_field(NativeCtx::ADDRESSES);
        self.b.ins().load(W, MemFlagsData::trusted(), addresses, place as i32 * 8)
    }

    fn ctx_field(&mut self, offset: i32) -> Value {
        self.b.ins().load(W, MemFlagsData::trusted(), self.ctx, offset)
    }

    /// Continues when `ok` is non-zero; otherwise falls back.
    fn check(&mut self, ok: Value) {
        if self.known(ok).is_some_and(|ok| ok != 0) {
            return;
        }
        let next = self.b.create_block();
        let fallback = self.fallback;
        self.b.ins().brif(ok, next, &[], fallback, &[]);
        self.b.switch_to_block(next);
    }

    /// Continues when `found` is non-zero; otherwise goes where a missing
    /// key goes.
    fn found_or_missing(&mut self, found: Value) {
        let next = self.b.create_block();
        let target = self.missing.unwrap_or(self.fallback);
        self.b.ins().brif(found, next, &[], target, &[]);
        self.b.switch_to_block(next);
    }

    /// Gives up on this path: the interpreter takes over.
    fn unsupported(&mut self) -> NVal {
        let fallback = self.fallback;
        self.b.ins().jump(fallback, &[]);
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
        let z = self.iconst(0);
        NVal { a: z, b: z, present: None }
    }

    /// [`Self::unsupported`] where a value of type `ty` is expected (a
    /// float is an `f64` value, even on a path never taken).
    fn unsupported_of(&mut self, ty: TypeId) -> NVal {
        let mut value = self.unsupported();
        if ty == T::FLOAT {
            value.a = self.b.ins().f64const(0.0);
        }
        value
    }

    /// Signal slot `slot` of the record ([`NativeCtx::SIGNALS`]) as a value
    /// of type `ty`; an absent slot (reading it is an error) falls back,
    /// and the interpreter reports the error.
    fn signal(&mut self, slot: usize, ty: TypeId) -> NVal {
        let signals = self.ctx_field(NativeCtx::SIGNALS);
        let byte = i32::try_from(slot as i64 * SLOT).expect("a contract's signals fit in an i32 offset");
        let tag = self.b.ins().load(W, MemFlagsData::trusted(), signals, byte + SLOT_TAG);
        let next = self.b.create_block();
        let fallback = self.fallback;
        self.b.ins().brif(tag, next, &[], fallback, &[]);
        self.b.switch_to_block(next);
        self.read_at(signals, slot as i64, ty)
    }

    /// Spends `units` of the evaluation's fuel (a loop's element) and asks
    /// the budget for more when it is spent; falls back when the budget
    /// ran out (the runtime then reports it: `runtime::semantics::budget`).
    fn tick(&mut self, units: i64) {
        let fuel = self.ctx_field(NativeCtx::FUEL);
        let left = self.b.ins().iadd_imm_s(fuel, -units);
        self.b.ins().store(MemFlagsData::trusted(), left, self.ctx, NativeCtx::FUEL);
        let spent = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, left, 0);
        let (refuel, next) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(refuel);
        self.b.ins().brif(spent, refuel, &[], next, &[]);
        self.b.switch_to_block(refuel);
        let ctx = self.ctx;
        let status = self.helper(Helper::Refuel, &[ctx], types::I32);
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, status, i64::from(OK));
        let fallback = self.fallback;
        self.b.ins().brif(ok, next, &[], fallback, &[]);
        self.b.switch_to_block(next);
    }

    /// Spends the fuel of string work on `bytes` bytes (a length word),
    /// one unit per `1 << shift` bytes, when inside a loop (elsewhere work
    /// is linear in the contract and the input); the loop's next element
    /// checks it.
    fn charge_bytes(&mut self, bytes: Value, shift: u32) {
        if self.locals.is_empty() {
            return;
        }
        let units = self.b.ins().ushr_imm_u(bytes, i64::from(shift));
        let fuel = self.ctx_field(NativeCtx::FUEL);
        let left = self.b.ins().isub(fuel, units);
        self.b.ins().store(MemFlagsData::trusted(), left, self.ctx, NativeCtx::FUEL);
    }

    fn scratch(&mut self) -> Value {
        if let Some(s) = self.scratch {
            return s;
        }
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3));
        let addr = self.b.ins().stack_addr(W, slot, 0);
        self.scratch = Some(addr);
        addr
    }

    /// Calls helper `name` with `params` word arguments and one result.
    fn helper(&mut self, helper: Helper, arguments: &[Value], ret: Type) -> Value {
        let sig = match self.sigs.get(&helper) {
            Some(sig) => *sig,
            None => {
                let mut s = Signature::new(self.b.func.signature.call_conv);
                for arg in arguments {
                    s.params.push(AbiParam::new(self.b.func.dfg.value_type(*arg)));
                }
                s.returns.push(AbiParam::new(ret));
                let sig = self.b.import_signature(s);
                self.sigs.insert(helper, sig);
                sig
            }
        };
        let table = self.ctx_field(NativeCtx::HELPERS);
        let callee = self.b.ins().load(W, MemFlagsData::trusted(), table, helper.offset());
        let call = self.b.ins().call_indirect(sig, callee, arguments);
        self.b.inst_results(call)[0]
    }

    /// Calls a helper that writes a value's two words into the scratch
    /// words and returns a status; falls back when it fails.
    fn helper_with_result(&mut self, helper: Helper, mut arguments: Vec<Value>) -> NVal {
        let out = self.scratch();
        arguments.push(out);
        let status = self.helper(helper, &arguments, types::I32);
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, status, i64::from(OK));
        self.check(ok);
        let a = self.b.ins().load(W, MemFlagsData::trusted(), out, 0);
        let b = self.b.ins().load(W, MemFlagsData::trusted(), out, 8);
        NVal { a, b, present: None }
    }

    fn bool_word(&mut self, flag: Value) -> Value {
        self.b.ins().uextend(W, flag)
    }

    fn word(&mut self, a: Value) -> NVal {
        let z = self.iconst(0);
        NVal { a, b: z, present: None }
    }

    /// A value's two words as stored in the state area (floats as bits).
    fn stored_words(&mut self, v: NVal, ty: TypeId) -> (Value, Value) {
        let inner = self.c.types.optional_inner(ty).unwrap_or(ty);
        let a = if inner == T::FLOAT { self.b.ins().bitcast(W, MemFlagsData::new(), v.a) } else { v.a };
        (a, v.b)
    }

    fn loaded_value(&mut self, a: Value, b: Value, ty: TypeId) -> NVal {
        let inner = self.c.types.optional_inner(ty).unwrap_or(ty);
        let a = if inner == T::FLOAT { self.b.ins().bitcast(types::F64, MemFlagsData::new(), a) } else { a };
        NVal { a, b, present: None }
    }

    /// Branches on `cond` to two computations joined into one value.
    fn join(
        &mut self,
        ty: TypeId,
        cond: Value,
        then: impl FnOnce(&mut Self) -> NVal,
        otherwise: impl FnOnce(&mut Self) -> NVal,
    ) -> NVal {
        let (then_block, else_block, done) =
            (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let a_ty = if self.c.types.optional_inner(ty).unwrap_or(ty) == T::FLOAT { types::F64 } else { W };
        self.b.append_block_param(done, a_ty);
        self.b.append_block_param(done, W);
        self.b.append_block_param(done, types::I8);
        self.b.ins().brif(cond, then_block, &[], else_block, &[]);
        self.b.switch_to_block(then_block);
        let v = then(self);
        let p = v.present.unwrap_or_else(|| self.b.ins().iconst(types::I8, 1));
        self.b.ins().jump(done, &args(&[v.a, v.b, p]));
        self.b.switch_to_block(else_block);
        let v = otherwise(self);
        let p = v.present.unwrap_or_else(|| self.b.ins().iconst(types::I8, 1));
        self.b.ins().jump(done, &args(&[v.a, v.b, p]));
        self.b.switch_to_block(done);
        let params = self.b.block_params(done).to_vec();
        let optional = self.c.types.optional_inner(ty).is_some();
        NVal { a: params[0], b: params[1], present: optional.then_some(params[2]) }
    }
}
