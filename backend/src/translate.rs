//! The IR of one let, rule or the entry point, as Cranelift IR.
//!
//! Every function has the signature `(ctx: i64) -> i32`: it takes the
//! [`NativeCtx`] and returns `OK` or `FALLBACK`. Values travel as two
//! 64-bit words, exactly as in slots ([`runtime::data::Slot`]): a decimal
//! is its packed mantissa and flags, a string or a list its pointer and
//! length, a record a pointer to its slots, a float its `f64`. Optionals
//! carry a presence flag beside.
//!
//! Generated code handles the error-free path: an overflow, a division by
//! zero, an uncaught missing key, anything not built in yet, all jump to
//! the function's fallback block, and the runtime re-evaluates the request
//! with the interpreter.

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, FuncRef, Function, InstBuilder, MemFlagsData, SigRef, Signature,
    StackSlotData, StackSlotKind, Type, Value, types,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use ir::{BinaryOp, Builtin, CmpOp, Combine, ExprId, ExprKind, TypeId, TypeTable as T, UnaryOp};
use runtime::native::{FALLBACK, Helpers, NativeCtx, OK, str_ops};
use runtime::program::{Node, Program};

use crate::plan::{Plan, RULE_FIRED, RULE_NOT_FIRED};

/// Pointers and words.
const W: Type = types::I64;
/// Bytes per slot.
const SLOT: i64 = 24;

/// What a generated function computes.
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    Let(usize),
    Rule(usize),
    Entry,
}

/// The functions of the other units, as a function being built sees them.
#[derive(Debug)]
pub struct Callees {
    pub lets: Vec<FuncRef>,
    pub rules: Vec<FuncRef>,
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
pub fn translate(
    program: &Program,
    plan: &Plan,
    unit: Unit,
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    callees: Callees,
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
    callees: Callees,
    sigs: HashMap<&'static str, SigRef>,
    /// Two words of stack for helpers' results.
    scratch: Option<Value>,
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

    fn ctx_field(&mut self, offset: i32) -> Value {
        self.b.ins().load(W, MemFlagsData::trusted(), self.ctx, offset)
    }

    /// Continues when `ok` is non-zero; otherwise falls back.
    fn check(&mut self, ok: Value) {
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
    fn helper(&mut self, name: &'static str, arguments: &[Value], ret: Type) -> Value {
        let sig = match self.sigs.get(name) {
            Some(sig) => *sig,
            None => {
                let mut s = Signature::new(self.b.func.signature.call_conv);
                for arg in arguments {
                    s.params.push(AbiParam::new(self.b.func.dfg.value_type(*arg)));
                }
                s.returns.push(AbiParam::new(ret));
                let sig = self.b.import_signature(s);
                self.sigs.insert(name, sig);
                sig
            }
        };
        let table = self.ctx_field(NativeCtx::HELPERS);
        let callee = self.b.ins().load(W, MemFlagsData::trusted(), table, Helpers::offset(name));
        let call = self.b.ins().call_indirect(sig, callee, arguments);
        self.b.inst_results(call)[0]
    }

    /// A helper that writes a decimal into the scratch words and returns a
    /// status; falls back on failure.
    fn decimal_helper(&mut self, name: &'static str, mut arguments: Vec<Value>) -> NVal {
        let out = self.scratch();
        arguments.push(out);
        let status = self.helper(name, &arguments, types::I32);
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

    // ----- units -----

    fn let_body(&mut self, i: usize) {
        let l = &self.c.lets[i];
        let v = self.expr(l.value);
        let (a, b) = self.stored_words(v, l.ty);
        let at = self.plan.lets[i];
        self.store_word(at + 1, a);
        self.store_word(at + 2, b);
        // The flag: 1 computed and present, 2 computed and absent.
        let flag = match v.present {
            Some(present) => {
                let two = self.iconst(2);
                let one = self.iconst(1);
                self.b.ins().select(present, one, two)
            }
            None => self.iconst(1),
        };
        self.store_word(at, flag);
        self.status(OK);
    }

    fn rule_body(&mut self, i: usize) {
        let rule = &self.c.rules[i];
        let memo = self.plan.rules[i];
        let current = self.load_word(memo);
        let (compute, done) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(current, done, &[], compute, &[]);
        self.b.switch_to_block(done);
        self.status(OK);
        self.b.switch_to_block(compute);
        let when = self.expr(rule.when);
        let (fired, not_fired) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(when.a, fired, &[], not_fired, &[]);
        self.b.switch_to_block(not_fired);
        let v = self.iconst(RULE_NOT_FIRED);
        self.store_word(memo, v);
        self.status(OK);
        self.b.switch_to_block(fired);
        let templates =
            rule.verdict.iter().map(|v| &v.message).chain(rule.finding.iter().map(|f| &f.message));
        let parts: Vec<ExprId> = templates.flat_map(ir::verify::template_exprs).collect();
        for (k, id) in parts.into_iter().enumerate() {
            let v = self.expr(id);
            let (a, b) = self.stored_words(v, self.c.expr(id).ty);
            let at = self.plan.layout.parts[i][k];
            self.store_word(at, a);
            self.store_word(at + 1, b);
        }
        for (k, assign) in rule.effects.iter().enumerate() {
            let v = self.expr(assign.value);
            let (a, b) = self.stored_words(v, self.c.effects[assign.effect.index()].ty);
            let at = self.plan.rule_effects[i][k];
            self.store_word(at, a);
            self.store_word(at + 1, b);
        }
        let v = self.iconst(RULE_FIRED);
        self.store_word(memo, v);
        self.status(OK);
    }

    /// Calls rule `i`'s function; returns whether it fired.
    fn call_rule(&mut self, i: usize) -> Value {
        let call = self.b.ins().call(self.callees.rules[i], &[self.ctx]);
        let status = self.b.inst_results(call)[0];
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, status, i64::from(OK));
        self.check(ok);
        let memo = self.load_word(self.plan.rules[i]);
        let fired = self.b.ins().icmp_imm_s(IntCC::Equal, memo, RULE_FIRED);
        self.bool_word(fired)
    }

    fn entry_body(&mut self) {
        let c = self.c;
        for (i, rule) in c.rules.iter().enumerate() {
            let (apply, skip) = (self.b.create_block(), self.b.create_block());
            let applies = self.applies(rule);
            self.b.ins().brif(applies, apply, &[], skip, &[]);
            self.b.switch_to_block(apply);
            let fired = self.call_rule(i);
            let commit = self.b.create_block();
            self.b.ins().brif(fired, commit, &[], skip, &[]);
            self.b.switch_to_block(commit);
            self.commit(i);
            if c.decision == ir::DecisionMode::FirstMatch && rule.verdict.is_some() {
                let n = self.iconst(i as i64 + 1);
                let at = self.plan.layout.decided;
                self.store_word(at, n);
                self.status(OK);
            } else {
                self.b.ins().jump(skip, &[]);
            }
            self.b.switch_to_block(skip);
        }
        self.status(OK);
    }

    /// Whether rule `rule` applies to the request's channel and component.
    fn applies(&mut self, rule: &ir::Rule) -> Value {
        let channel_ok = match &rule.channels {
            None => self.iconst(1),
            Some(channels) => {
                let mask = channels.iter().fold(0u64, |m, ch| m | 1 << ch.0) as i64;
                let bit = self.ctx_field(NativeCtx::CHANNEL_BIT);
                let hit = self.b.ins().band_imm_s(bit, mask);
                let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, hit, 0);
                self.bool_word(ok)
            }
        };
        let component = self.ctx_field(NativeCtx::COMPONENT);
        let none = self.b.ins().icmp_imm_s(IntCC::Equal, component, 0);
        let same = match rule.component {
            Some(id) => self.b.ins().icmp_imm_s(IntCC::Equal, component, i64::from(id.0) + 1),
            None => self.b.ins().iconst(types::I8, 0),
        };
        let component_ok = self.b.ins().bor(none, same);
        let component_ok = self.bool_word(component_ok);
        self.b.ins().band(channel_ok, component_ok)
    }

    /// Sets rule `i`'s fired bit and folds its effects in.
    fn commit(&mut self, i: usize) {
        let word = self.plan.layout.fired + i / 64;
        let bits = self.load_word(word);
        let bits = self.b.ins().bor_imm_s(bits, (1u64 << (i % 64)) as i64);
        self.store_word(word, bits);
        let rule = &self.c.rules[i];
        for (k, assign) in rule.effects.iter().enumerate() {
            let effect = &self.c.effects[assign.effect.index()];
            let at = self.plan.layout.effects[assign.effect.index()];
            let source = self.plan.rule_effects[i][k];
            let (a, b) = (self.load_word(source), self.load_word(source + 1));
            let present = self.load_word(at);
            let (first, combine, done) =
                (self.b.create_block(), self.b.create_block(), self.b.create_block());
            self.b.ins().brif(present, combine, &[], first, &[]);
            self.b.switch_to_block(first);
            self.store_word(at + 1, a);
            self.store_word(at + 2, b);
            let one = self.iconst(1);
            self.store_word(at, one);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(combine);
            let (old_a, old_b) = (self.load_word(at + 1), self.load_word(at + 2));
            let (new_a, new_b) = self.combine(effect.combine, effect.ty, (old_a, old_b), (a, b));
            self.store_word(at + 1, new_a);
            self.store_word(at + 2, new_b);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(done);
        }
    }

    /// The combination of an effect's old and new words.
    fn combine(
        &mut self,
        policy: Combine,
        ty: TypeId,
        old: (Value, Value),
        new: (Value, Value),
    ) -> (Value, Value) {
        match policy {
            Combine::Last => new,
            Combine::Any => (self.b.ins().bor(old.0, new.0), old.1),
            Combine::All => (self.b.ins().band(old.0, new.0), old.1),
            Combine::Max | Combine::Min => {
                let o = self.loaded_value(old.0, old.1, ty);
                let n = self.loaded_value(new.0, new.1, ty);
                let op = if policy == Combine::Max { CmpOp::Gt } else { CmpOp::Lt };
                let better = self.compare(op, ty, n, o);
                let a = self.b.ins().select(better, new.0, old.0);
                let b = self.b.ins().select(better, new.1, old.1);
                (a, b)
            }
            Combine::Sum => {
                let o = self.loaded_value(old.0, old.1, ty);
                let n = self.loaded_value(new.0, new.1, ty);
                let op = match ty {
                    T::DECIMAL => BinaryOp::AddDecimal,
                    T::FLOAT => BinaryOp::AddFloat,
                    T::DURATION => BinaryOp::AddDuration,
                    _ => BinaryOp::AddInt,
                };
                let sum = self.binary(op, o, n);
                self.stored_words(sum, ty)
            }
        }
    }

    // ----- expressions -----

    fn expr(&mut self, id: ExprId) -> NVal {
        ir::stack::guard(|| self.expr_unguarded(id))
    }

    fn expr_unguarded(&mut self, id: ExprId) -> NVal {
        let c = self.c;
        let node = c.expr(id);
        let ty = node.ty;
        match &node.kind {
            ExprKind::Const(_) => self.constant(id, ty),
            ExprKind::Input => {
                let input = self.ctx_field(NativeCtx::INPUT);
                self.word(input)
            }
            ExprKind::Field { base, index } => {
                if let Node::Input { offset, .. } = &self.program.nodes[id.index()] {
                    let input = self.ctx_field(NativeCtx::INPUT);
                    return self.read_at(input, *offset as i64, ty);
                }
                let record = self.expr(*base);
                let offset = self.program.layouts.field_offset(c.expr(*base).ty, *index) as i64;
                self.read_at(record.a, offset, ty)
            }
            ExprKind::Let(l) => self.let_value(l.index(), ty),
            ExprKind::RuleFired(r) => {
                let fired = self.call_rule(r.index());
                self.word(fired)
            }
            ExprKind::Unary { op, arg } => {
                let v = self.expr(*arg);
                self.unary(*op, v)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (l, r) = (self.expr(*lhs), self.expr(*rhs));
                self.binary(*op, l, r)
            }
            ExprKind::Compare { op, lhs, rhs } => {
                let operand = c.expr(*lhs).ty;
                let (l, r) = (self.expr(*lhs), self.expr(*rhs));
                let holds = self.compare(*op, operand, l, r);
                let w = self.bool_word(holds);
                self.word(w)
            }
            ExprKind::And { lhs, rhs } => {
                let l = self.expr(*lhs);
                let rhs = *rhs;
                self.join(
                    T::BOOL,
                    l.a,
                    move |t| t.expr(rhs),
                    |t| {
                        let z = t.iconst(0);
                        t.word(z)
                    },
                )
            }
            ExprKind::Or { lhs, rhs } => {
                let l = self.expr(*lhs);
                let rhs = *rhs;
                self.join(
                    T::BOOL,
                    l.a,
                    |t| {
                        let one = t.iconst(1);
                        t.word(one)
                    },
                    move |t| t.expr(rhs),
                )
            }
            ExprKind::Cond { cond, then, otherwise } => {
                let cv = self.expr(*cond);
                let (then, otherwise) = (*then, *otherwise);
                self.join(ty, cv.a, move |t| t.expr(then), move |t| t.expr(otherwise))
            }
            ExprKind::Coalesce { value, default } => self.coalesce(*value, *default, ty),
            ExprKind::Present(value) => {
                let v = self.expr(*value);
                let present = match v.present {
                    Some(flag) => self.bool_word(flag),
                    None => self.iconst(1),
                };
                self.word(present)
            }
            ExprKind::TableGet { table, key } => self.table_get(table.index(), *key, ty),
            ExprKind::TableHas { table, key } => {
                let row = self.table_row(table.index(), *key);
                let found = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, row, 0);
                let w = self.bool_word(found);
                self.word(w)
            }
            ExprKind::Index { list, index } => {
                let (l, i) = (self.expr(*list), self.expr(*index));
                let in_range = self.b.ins().icmp(IntCC::UnsignedLessThan, i.a, l.b);
                self.found_or_missing(in_range);
                let stride = self.program.layouts.width(ty) as i64 * SLOT;
                let step = self.b.ins().imul_imm_s(i.a, stride);
                let at = self.b.ins().iadd(l.a, step);
                self.read_at(at, 0, ty)
            }
            ExprKind::Call { func, args } => self.call(*func, args, ty),
            ExprKind::Matches { subject, regex } => {
                let s = self.expr(*subject);
                let program = self.ctx_field(NativeCtx::PROGRAM);
                let r = self.iconst(i64::from(regex.0));
                let hit = self.helper("regex_match", &[program, r, s.a, s.b], W);
                self.word(hit)
            }
            ExprKind::Local(_)
            | ExprKind::List(_)
            | ExprKind::InList { .. }
            | ExprKind::Lambda { .. }
            | ExprKind::Extern { .. } => self.unsupported(),
        }
    }

    /// A constant from the program's prepared node.
    fn constant(&mut self, id: ExprId, ty: TypeId) -> NVal {
        let Node::Const { slot, .. } = &self.program.nodes[id.index()] else { return self.unsupported() };
        let (a, b) = slot.words();
        if slot.is_absent() {
            let z = self.iconst(0);
            let absent = self.b.ins().iconst(types::I8, 0);
            return NVal { a: z, b: z, present: Some(absent) };
        }
        let b = self.iconst(b as i64);
        let a = if self.c.types.optional_inner(ty).unwrap_or(ty) == T::FLOAT {
            self.b.ins().f64const(f64::from_bits(a))
        } else {
            self.iconst(a as i64)
        };
        let present = self.c.types.optional_inner(ty).map(|_| self.b.ins().iconst(types::I8, 1));
        NVal { a, b, present }
    }

    /// Reads a value of type `ty` laid out at slot `offset` from `base`.
    fn read_at(&mut self, base: Value, offset: i64, ty: TypeId) -> NVal {
        let byte = (offset * SLOT) as i32;
        if runtime::native::is_record(self.program, ty) {
            let at = self.b.ins().iadd_imm_s(base, i64::from(byte));
            return self.word(at);
        }
        let optional = self.c.types.optional_inner(ty).is_some();
        let inner = self.c.types.optional_inner(ty).unwrap_or(ty);
        let a = if inner == T::FLOAT {
            self.b.ins().load(types::F64, MemFlagsData::trusted(), base, byte + 8)
        } else {
            self.b.ins().load(W, MemFlagsData::trusted(), base, byte + 8)
        };
        let b = self.b.ins().load(W, MemFlagsData::trusted(), base, byte + 16);
        let present = if optional {
            let tag = self.b.ins().load(W, MemFlagsData::trusted(), base, byte);
            Some(self.b.ins().icmp_imm_s(IntCC::NotEqual, tag, 0))
        } else {
            None
        };
        NVal { a, b, present }
    }

    fn let_value(&mut self, i: usize, ty: TypeId) -> NVal {
        let at = self.plan.lets[i];
        let flag = self.load_word(at);
        let (compute, done) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(flag, done, &[], compute, &[]);
        self.b.switch_to_block(compute);
        let call = self.b.ins().call(self.callees.lets[i], &[self.ctx]);
        let status = self.b.inst_results(call)[0];
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, status, i64::from(OK));
        self.check(ok);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        let (a, b) = (self.load_word(at + 1), self.load_word(at + 2));
        let mut v = self.loaded_value(a, b, ty);
        if self.c.types.optional_inner(ty).is_some() {
            let flag = self.load_word(at);
            v.present = Some(self.b.ins().icmp_imm_s(IntCC::Equal, flag, 1));
        }
        v
    }

    fn coalesce(&mut self, value: ExprId, default: ExprId, ty: TypeId) -> NVal {
        let optional = self.c.types.optional_inner(self.c.expr(value).ty).is_some();
        let (default_block, done) = (self.b.create_block(), self.b.create_block());
        let a_ty = if ty == T::FLOAT { types::F64 } else { W };
        self.b.append_block_param(done, a_ty);
        self.b.append_block_param(done, W);
        let outer = self.missing.replace(default_block);
        let v = self.expr(value);
        self.missing = outer;
        if optional {
            let present = v.present.unwrap_or_else(|| self.b.ins().iconst(types::I8, 1));
            self.b.ins().brif(present, done, &args(&[v.a, v.b]), default_block, &[]);
        } else {
            self.b.ins().jump(done, &args(&[v.a, v.b]));
        }
        self.b.switch_to_block(default_block);
        let d = self.expr(default);
        self.b.ins().jump(done, &args(&[d.a, d.b]));
        self.b.switch_to_block(done);
        let params = self.b.block_params(done).to_vec();
        NVal { a: params[0], b: params[1], present: None }
    }

    /// The row of a key in a table, or -1.
    fn table_row(&mut self, table: usize, key: ExprId) -> Value {
        let key_ty = self.c.expr(key).ty;
        let k = self.expr(key);
        let program = self.ctx_field(NativeCtx::PROGRAM);
        let t = self.iconst(table as i64);
        if key_ty == T::INT {
            self.helper("table_row_int", &[program, t, k.a], W)
        } else {
            self.helper("table_row_str", &[program, t, k.a, k.b], W)
        }
    }

    fn table_get(&mut self, table: usize, key: ExprId, ty: TypeId) -> NVal {
        let row = self.table_row(table, key);
        let found = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, row, 0);
        self.found_or_missing(found);
        let program = self.ctx_field(NativeCtx::PROGRAM);
        let t = self.iconst(table as i64);
        let slots = self.helper("table_value", &[program, t, row], W);
        let valid = self.b.ins().icmp_imm_s(IntCC::NotEqual, slots, 0);
        self.check(valid);
        self.read_at(slots, 0, ty)
    }

    fn unary(&mut self, op: UnaryOp, v: NVal) -> NVal {
        match op {
            UnaryOp::Not => {
                let a = self.b.ins().bxor_imm_s(v.a, 1);
                self.word(a)
            }
            UnaryOp::NegInt | UnaryOp::NegDuration => {
                let not_min = self.b.ins().icmp_imm_s(IntCC::NotEqual, v.a, i64::MIN);
                self.check(not_min);
                let a = self.b.ins().ineg(v.a);
                self.word(a)
            }
            UnaryOp::NegFloat => {
                let a = self.b.ins().fneg(v.a);
                self.word(a)
            }
            UnaryOp::NegDecimal => {
                // The sign is bit 63 of the second word, as rust_decimal's.
                let b = self.b.ins().bxor_imm_s(v.b, i64::MIN);
                NVal { a: v.a, b, present: None }
            }
            UnaryOp::IntToDecimal => self.int_to_decimal(v.a),
        }
    }

    /// An int as a decimal: the magnitude as mantissa, the sign flag, scale 0.
    fn int_to_decimal(&mut self, i: Value) -> NVal {
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, i, 0);
        let magnitude = self.b.ins().iabs(i);
        let sign = self.iconst(i64::MIN);
        let zero = self.iconst(0);
        let b = self.b.ins().select(negative, sign, zero);
        NVal { a: magnitude, b, present: None }
    }

    fn checked(&mut self, result: (Value, Value)) -> NVal {
        let (value, overflow) = result;
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, overflow, 0);
        self.check(ok);
        self.word(value)
    }

    /// Falls back unless `x` is finite.
    fn finite(&mut self, x: Value) -> NVal {
        let magnitude = self.b.ins().fabs(x);
        let infinity = self.b.ins().f64const(f64::INFINITY);
        let ok = self.b.ins().fcmp(FloatCC::LessThan, magnitude, infinity);
        self.check(ok);
        self.word(x)
    }

    fn binary(&mut self, op: BinaryOp, l: NVal, r: NVal) -> NVal {
        use BinaryOp::*;
        match op {
            AddInt | AddDuration | AddTimestamp => {
                let result = self.b.ins().sadd_overflow(l.a, r.a);
                self.checked(result)
            }
            SubInt | SubDuration | SubTimestamp | DiffTimestamps => {
                let result = self.b.ins().ssub_overflow(l.a, r.a);
                self.checked(result)
            }
            MulInt => {
                let result = self.b.ins().smul_overflow(l.a, r.a);
                self.checked(result)
            }
            DivInt | RemInt => {
                let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r.a, 0);
                self.check(nonzero);
                let min = self.b.ins().icmp_imm_s(IntCC::Equal, l.a, i64::MIN);
                let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, r.a, -1);
                let overflow = self.b.ins().band(min, minus_one);
                let ok = self.b.ins().bxor_imm_s(overflow, 1);
                self.check(ok);
                let a = if op == DivInt { self.b.ins().sdiv(l.a, r.a) } else { self.b.ins().srem(l.a, r.a) };
                self.word(a)
            }
            AddDecimal => self.decimal_helper("dec_add", vec![l.a, l.b, r.a, r.b]),
            SubDecimal => self.decimal_helper("dec_sub", vec![l.a, l.b, r.a, r.b]),
            MulDecimal => self.decimal_helper("dec_mul", vec![l.a, l.b, r.a, r.b]),
            DivDecimal => self.decimal_helper("dec_div", vec![l.a, l.b, r.a, r.b]),
            RemDecimal => self.decimal_helper("dec_rem", vec![l.a, l.b, r.a, r.b]),
            AddFloat | SubFloat | MulFloat => {
                let x = match op {
                    AddFloat => self.b.ins().fadd(l.a, r.a),
                    SubFloat => self.b.ins().fsub(l.a, r.a),
                    _ => self.b.ins().fmul(l.a, r.a),
                };
                self.finite(x)
            }
            DivFloat => {
                let zero = self.b.ins().f64const(0.0);
                let nonzero = self.b.ins().fcmp(FloatCC::NotEqual, r.a, zero);
                self.check(nonzero);
                let x = self.b.ins().fdiv(l.a, r.a);
                self.finite(x)
            }
            RemFloat | Concat => self.unsupported(),
        }
    }

    /// Whether `op` holds between `l` and `r`, both of type `ty`.
    fn compare(&mut self, op: CmpOp, ty: TypeId, l: NVal, r: NVal) -> Value {
        let types = &self.c.types;
        let int_cc = match op {
            CmpOp::Eq => IntCC::Equal,
            CmpOp::Ne => IntCC::NotEqual,
            CmpOp::Lt => IntCC::SignedLessThan,
            CmpOp::Le => IntCC::SignedLessThanOrEqual,
            CmpOp::Gt => IntCC::SignedGreaterThan,
            CmpOp::Ge => IntCC::SignedGreaterThanOrEqual,
        };
        match ty {
            T::INT | T::TIMESTAMP | T::DURATION | T::BOOL => self.b.ins().icmp(int_cc, l.a, r.a),
            T::FLOAT => {
                let cc = match op {
                    CmpOp::Eq => FloatCC::Equal,
                    CmpOp::Ne => FloatCC::NotEqual,
                    CmpOp::Lt => FloatCC::LessThan,
                    CmpOp::Le => FloatCC::LessThanOrEqual,
                    CmpOp::Gt => FloatCC::GreaterThan,
                    CmpOp::Ge => FloatCC::GreaterThanOrEqual,
                };
                self.b.ins().fcmp(cc, l.a, r.a)
            }
            T::DECIMAL => {
                let ordering = self.helper("dec_cmp", &[l.a, l.b, r.a, r.b], W);
                self.b.ins().icmp_imm_s(int_cc, ordering, 0)
            }
            _ if types.is_stringy(ty) => {
                if matches!(op, CmpOp::Eq | CmpOp::Ne) {
                    let op_code = self.iconst(str_ops::EQ as i64);
                    let equal = self.helper("str_op", &[op_code, l.a, l.b, r.a, r.b], W);
                    let cc = if op == CmpOp::Eq { IntCC::NotEqual } else { IntCC::Equal };
                    self.b.ins().icmp_imm_s(cc, equal, 0)
                } else {
                    let op_code = self.iconst(str_ops::CMP as i64);
                    let ordering = self.helper("str_op", &[op_code, l.a, l.b, r.a, r.b], W);
                    let ordering = self.b.ins().ireduce(types::I8, ordering);
                    let ordering = self.b.ins().sextend(W, ordering);
                    self.b.ins().icmp_imm_s(int_cc, ordering, 0)
                }
            }
            _ => {
                self.unsupported();
                self.b.ins().iconst(types::I8, 0)
            }
        }
    }

    fn call(&mut self, func: Builtin, arg_ids: &[ExprId], ty: TypeId) -> NVal {
        let arg_ty = arg_ids.first().map(|a| self.c.expr(*a).ty);
        match func {
            Builtin::Now => {
                let now = self.ctx_field(NativeCtx::NOW);
                self.word(now)
            }
            Builtin::Round | Builtin::RoundHalfEven if ty == T::DECIMAL => {
                let (x, places) = (self.expr(arg_ids[0]), self.expr(arg_ids[1]));
                let even = self.iconst(i64::from(func == Builtin::RoundHalfEven));
                self.decimal_helper("dec_round", vec![x.a, x.b, places.a, even])
            }
            Builtin::Min | Builtin::Max => {
                let mut best = self.expr(arg_ids[0]);
                let op = if func == Builtin::Min { CmpOp::Lt } else { CmpOp::Gt };
                let operand = arg_ty.unwrap_or(ty);
                for id in &arg_ids[1..] {
                    let candidate = self.expr(*id);
                    let better = self.compare(op, operand, candidate, best);
                    let a = self.b.ins().select(better, candidate.a, best.a);
                    let b = self.b.ins().select(better, candidate.b, best.b);
                    best = NVal { a, b, present: None };
                }
                best
            }
            Builtin::Abs => {
                let v = self.expr(arg_ids[0]);
                match ty {
                    T::FLOAT => {
                        let a = self.b.ins().fabs(v.a);
                        self.word(a)
                    }
                    T::DECIMAL => {
                        let b = self.b.ins().band_imm_s(v.b, i64::MAX);
                        NVal { a: v.a, b, present: None }
                    }
                    _ => {
                        let not_min = self.b.ins().icmp_imm_s(IntCC::NotEqual, v.a, i64::MIN);
                        self.check(not_min);
                        let a = self.b.ins().iabs(v.a);
                        self.word(a)
                    }
                }
            }
            Builtin::Floor | Builtin::Ceil if ty == T::FLOAT => {
                let v = self.expr(arg_ids[0]);
                let a = if func == Builtin::Floor { self.b.ins().floor(v.a) } else { self.b.ins().ceil(v.a) };
                self.word(a)
            }
            Builtin::ToDecimal if arg_ty == Some(T::INT) => {
                let v = self.expr(arg_ids[0]);
                self.int_to_decimal(v.a)
            }
            Builtin::ToInt if arg_ty == Some(T::INT) => self.expr(arg_ids[0]),
            Builtin::ToFloat if arg_ty == Some(T::INT) => {
                let v = self.expr(arg_ids[0]);
                let a = self.b.ins().fcvt_from_sint(types::F64, v.a);
                self.word(a)
            }
            Builtin::Len => {
                let v = self.expr(arg_ids[0]);
                if arg_ty.is_some_and(|t| self.c.types.list_element(t).is_some()) {
                    return self.word(v.b);
                }
                let op = self.iconst(str_ops::LEN_CHARS as i64);
                let n = self.helper("str_op", &[op, v.a, v.b, v.a, v.b], W);
                self.word(n)
            }
            Builtin::StartsWith | Builtin::EndsWith | Builtin::Contains => {
                let (s, part) = (self.expr(arg_ids[0]), self.expr(arg_ids[1]));
                let code = match func {
                    Builtin::StartsWith => str_ops::STARTS_WITH,
                    Builtin::EndsWith => str_ops::ENDS_WITH,
                    _ => str_ops::CONTAINS,
                };
                let op = self.iconst(code as i64);
                let hit = self.helper("str_op", &[op, s.a, s.b, part.a, part.b], W);
                self.word(hit)
            }
            Builtin::Days | Builtin::Hours => {
                let v = self.expr(arg_ids[0]);
                let unit: i64 = if func == Builtin::Days { 86_400_000_000_000 } else { 3_600_000_000_000 };
                let divisor = self.iconst(unit);
                let a = self.b.ins().sdiv(v.a, divisor);
                self.word(a)
            }
            _ => self.unsupported(),
        }
    }
}
