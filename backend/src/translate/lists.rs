//! Lists: lambdas (`any all count sum`) as loops over the elements, `in`
//! over list literals and list values, and list literals built in the
//! arena.
//!
//! A list value is two words: the address of its first element slot and
//! the element count; element `i` starts `i * stride` slots further, the
//! stride being the element type's width (records are laid out inline).

use cranelift_frontend::Variable;
use ir::{LambdaKind, LocalId};

use super::*;

/// List literals longer than this are compared in a loop, not unrolled.
const UNROLL: usize = 16;

impl Translator<'_, '_> {
    /// `any/all/count/sum(list, param => body)`, whose type is `ty`.
    pub(super) fn lambda(
        &mut self,
        kind: LambdaKind,
        list: ExprId,
        param: LocalId,
        body: ExprId,
        ty: TypeId,
    ) -> NVal {
        let element = self.c.locals[param.index()];
        let list = self.expr(list);
        let a_ty = if ty == T::FLOAT { types::F64 } else { W };
        let (acc_a, acc_b) = (self.b.declare_var(a_ty), self.b.declare_var(W));
        let start = match (kind, ty) {
            (LambdaKind::All, _) => self.iconst(1),
            (_, T::FLOAT) => self.b.ins().f64const(0.0),
            _ => self.iconst(0),
        };
        let zero = self.iconst(0);
        self.b.def_var(acc_a, start);
        self.b.def_var(acc_b, zero);
        let exit = self.b.create_block();
        self.b.append_block_param(exit, a_ty);
        self.b.append_block_param(exit, W);
        self.each_element(list, element, |t, value| {
            t.locals.insert(param.0, value);
            let v = t.expr(body);
            t.locals.remove(&param.0);
            match kind {
                LambdaKind::Any | LambdaKind::All => {
                    // Stop at the first element that decides.
                    let decided = if kind == LambdaKind::Any { v.a } else { t.b.ins().bxor_imm_s(v.a, 1) };
                    let next = t.b.create_block();
                    let result = t.iconst(i64::from(kind == LambdaKind::Any));
                    let zero = t.iconst(0);
                    t.b.ins().brif(decided, exit, &args(&[result, zero]), next, &[]);
                    t.b.switch_to_block(next);
                }
                LambdaKind::Count => {
                    let count = t.b.use_var(acc_a);
                    let count = t.b.ins().iadd(count, v.a);
                    t.b.def_var(acc_a, count);
                }
                LambdaKind::Sum => {
                    let sum = NVal { a: t.b.use_var(acc_a), b: t.b.use_var(acc_b), present: None };
                    let sum = t.binary(BinaryOp::add_for(ty), sum, v);
                    t.b.def_var(acc_a, sum.a);
                    t.b.def_var(acc_b, sum.b);
                }
            }
        });
        let (a, b) = (self.b.use_var(acc_a), self.b.use_var(acc_b));
        self.b.ins().jump(exit, &args(&[a, b]));
        self.b.switch_to_block(exit);
        let params = self.b.block_params(exit).to_vec();
        NVal { a: params[0], b: params[1], present: None }
    }

    /// Runs `body` on each element of `list` (elements of type `element`),
    /// in order, in a loop; returns in the block after the loop.
    fn each_element(&mut self, list: NVal, element: TypeId, body: impl FnOnce(&mut Self, NVal)) {
        let stride = self.program.layouts.width(element) as i64 * SLOT;
        let index: Variable = self.b.declare_var(W);
        let zero = self.iconst(0);
        self.b.def_var(index, zero);
        let (header, step, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let i = self.b.use_var(index);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, i, list.b);
        self.b.ins().brif(more, step, &[], done, &[]);
        self.b.switch_to_block(step);
        self.tick(1);
        let i = self.b.use_var(index);
        let offset = self.b.ins().imul_imm_s(i, stride);
        let at = self.b.ins().iadd(list.a, offset);
        let value = self.read_at(at, 0, element);
        body(self, value);
        let i = self.b.use_var(index);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.def_var(index, next);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(done);
    }

    /// `item in list`: every element is evaluated (as the interpreter
    /// does, so an element's error is never skipped), then compared.
    pub(super) fn in_list(&mut self, item: ExprId, list: ExprId) -> NVal {
        let item_ty = self.c.expr(item).ty;
        if !self.comparable(item_ty) {
            return self.unsupported();
        }
        let x = self.expr(item);
        let literal = match &self.c.expr(list).kind {
            ExprKind::List(items) if items.len() <= UNROLL && !self.is_constant(list) => Some(items.clone()),
            _ => None,
        };
        if let Some(items) = literal {
            let values: Vec<NVal> = items.iter().map(|id| self.expr(*id)).collect();
            let mut found = self.iconst(0);
            for v in values {
                let hit = self.compare(CmpOp::Eq, item_ty, x, v);
                let hit = self.bool_word(hit);
                found = self.b.ins().bor(found, hit);
            }
            return self.word(found);
        }
        let element = self.c.types.list_element(self.c.expr(list).ty).unwrap_or(item_ty);
        let l = self.expr(list);
        let exit = self.b.create_block();
        self.b.append_block_param(exit, W);
        self.each_element(l, element, |t, v| {
            let hit = t.compare(CmpOp::Eq, item_ty, x, v);
            let one = t.iconst(1);
            let next = t.b.create_block();
            t.b.ins().brif(hit, exit, &args(&[one]), next, &[]);
            t.b.switch_to_block(next);
        });
        let zero = self.iconst(0);
        self.b.ins().jump(exit, &args(&[zero]));
        self.b.switch_to_block(exit);
        let found = self.b.block_params(exit)[0];
        self.word(found)
    }

    /// A list literal of scalars, built in the arena.
    pub(super) fn list_literal(&mut self, items: &[ExprId], ty: TypeId) -> NVal {
        let element = self.c.types.list_element(ty).unwrap_or(ty);
        let Some(tag) = runtime::native::scalar_tag(self.program, element) else { return self.unsupported() };
        let values: Vec<NVal> = items.iter().map(|id| self.expr(*id)).collect();
        let n = self.iconst(items.len() as i64);
        let slots = self.helper(Helper::AllocSlots, &[self.ctx, n], W);
        let allocated = self.b.ins().icmp_imm_s(IntCC::NotEqual, slots, 0);
        self.check(allocated);
        let tag = self.iconst(tag as i64);
        for (i, v) in values.into_iter().enumerate() {
            let (a, b) = self.stored_words(v, element);
            let at = i as i32 * SLOT as i32;
            self.b.ins().store(MemFlagsData::trusted(), tag, slots, at + SLOT_TAG);
            self.b.ins().store(MemFlagsData::trusted(), a, slots, at + SLOT_A);
            self.b.ins().store(MemFlagsData::trusted(), b, slots, at + SLOT_B);
        }
        NVal { a: slots, b: n, present: None }
    }

    /// Whether values of `ty` can be compared by [`Translator::compare`].
    fn comparable(&self, ty: TypeId) -> bool {
        matches!(ty, T::BOOL | T::INT | T::DECIMAL | T::FLOAT | T::TIMESTAMP | T::DURATION)
            || self.c.types.is_stringy(ty)
    }

    fn is_constant(&self, id: ExprId) -> bool {
        self.program.constant(id).is_some()
    }
}
