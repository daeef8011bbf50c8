//! Built-in functions: the cheap ones inline, the rest through the shared
//! helpers.

use runtime::semantics::budget::STRING_SHIFT;
use runtime::value::decimal::Midpoint;

use super::*;

impl Translator<'_, '_> {
    pub(super) fn call(&mut self, id: ExprId, func: Builtin, arg_ids: &[ExprId], ty: TypeId) -> NVal {
        let arg_ty = arg_ids.first().map(|a| self.c.expr(*a).ty);
        match func {
            Builtin::Now => {
                let now = self.ctx_field(NativeCtx::NOW);
                self.word(now)
            }
            Builtin::Round | Builtin::RoundHalfEven | Builtin::RoundHalfDown if ty == T::DECIMAL => {
                let (x, places) = (self.expr(arg_ids[0]), self.expr(arg_ids[1]));
                let midpoint = Midpoint::of(func).unwrap_or(Midpoint::AwayFromZero);
                match self.constant_int(arg_ids[1]) {
                    Some(p) if (0..=28).contains(&p) => self.decimal_round(x, p, midpoint),
                    _ => {
                        let midpoint = self.iconst(midpoint as i64);
                        self.helper_with_result(Helper::DecRound, vec![x.a, x.b, places.a, midpoint])
                    }
                }
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
                self.charge_bytes(v.b, STRING_SHIFT);
                let op = self.iconst(StrOp::LenChars as i64);
                let n = self.helper(Helper::StrOp, &[op, v.a, v.b, v.a, v.b], W);
                self.word(n)
            }
            Builtin::StartsWith | Builtin::EndsWith | Builtin::Contains => {
                let (s, part) = (self.expr(arg_ids[0]), self.expr(arg_ids[1]));
                let code = match func {
                    Builtin::StartsWith => StrOp::StartsWith,
                    Builtin::EndsWith => StrOp::EndsWith,
                    _ => StrOp::Contains,
                };
                self.charge_bytes(s.b, STRING_SHIFT);
                let op = self.iconst(code as i64);
                let hit = self.helper(Helper::StrOp, &[op, s.a, s.b, part.a, part.b], W);
                self.word(hit)
            }
            Builtin::Days | Builtin::Hours => {
                let v = self.expr(arg_ids[0]);
                let unit: i64 = if func == Builtin::Days { 86_400_000_000_000 } else { 3_600_000_000_000 };
                let divisor = self.iconst(unit);
                let a = self.b.ins().sdiv(v.a, divisor);
                self.word(a)
            }
            _ if arg_ids.len() <= 2 => {
                let operands: Vec<(NVal, TypeId)> =
                    arg_ids.iter().map(|a| (self.expr(*a), self.c.expr(*a).ty)).collect();
                self.apply(id, &operands)
            }
            _ => self.unsupported(),
        }
    }

    /// A host function call: the arguments' words go to a stack slot, and
    /// the `host` helper calls the engine's function through the
    /// conversions of `runtime::semantics`; a failure falls back.
    pub(super) fn extern_call(&mut self, id: ExprId, arg_ids: &[ExprId], ty: TypeId) -> NVal {
        let Ok(size) = u32::try_from(16 * arg_ids.len().max(1)) else { return self.unsupported() };
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size, 3));
        let mut words = Vec::with_capacity(arg_ids.len());
        for arg in arg_ids {
            let v = self.expr(*arg);
            words.push(self.stored_words(v, self.c.expr(*arg).ty));
        }
        let args = self.b.ins().stack_addr(W, slot, 0);
        for (k, (a, b)) in words.into_iter().enumerate() {
            let offset = 16 * k as i32;
            self.b.ins().store(MemFlagsData::trusted(), a, args, offset);
            self.b.ins().store(MemFlagsData::trusted(), b, args, offset + 8);
        }
        let expr = self.iconst(id.index() as i64);
        let v = self.helper_with_result(Helper::Host, vec![self.ctx, expr, args]);
        self.loaded_value(v.a, v.b, ty)
    }

    /// The value of an int constant expression.
    fn constant_int(&self, id: ExprId) -> Option<i64> {
        let slot = self.program.constant(id)?;
        (self.c.expr(id).ty == T::INT).then(|| slot.as_int())
    }

    /// Computes node `id` (a call or an operator) from its operands with
    /// `runtime::semantics`, through the `apply` helper; what
    /// needs memory (strings, lists) goes to the arena.
    pub(super) fn apply(&mut self, id: ExprId, operands: &[(NVal, TypeId)]) -> NVal {
        let mut arguments = vec![self.ctx, self.iconst(id.index() as i64)];
        for k in 0..2 {
            let (a, b) = match operands.get(k) {
                Some((v, ty)) if self.c.types.is_stringy(*ty) => {
                    self.charge_bytes(v.b, STRING_SHIFT);
                    self.stored_words(*v, *ty)
                }
                Some((v, ty)) => self.stored_words(*v, *ty),
                None => {
                    let zero = self.iconst(0);
                    (zero, zero)
                }
            };
            arguments.extend([a, b]);
        }
        let v = self.helper_with_result(Helper::Apply, arguments);
        let ty = self.c.expr(id).ty;
        self.loaded_value(v.a, v.b, ty)
    }
}
