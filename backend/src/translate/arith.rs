//! Operators and comparisons: ints and floats inline with overflow and
//! finiteness checks, decimals on inline scaled-`i64` fast paths with the
//! shared Rust helpers behind them.

use super::*;

impl Translator<'_, '_> {
    pub(super) fn unary(&mut self, op: UnaryOp, v: NVal) -> NVal {
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
    pub(super) fn int_to_decimal(&mut self, i: Value) -> NVal {
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, i, 0);
        let magnitude = self.b.ins().iabs(i);
        let sign = self.iconst(i64::MIN);
        let zero = self.iconst(0);
        let b = self.b.ins().select(negative, sign, zero);
        NVal { a: magnitude, b, present: None }
    }

    pub(super) fn checked(&mut self, result: (Value, Value)) -> NVal {
        let (value, overflow) = result;
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, overflow, 0);
        self.check(ok);
        self.word(value)
    }

    /// Falls back unless `x` is finite.
    pub(super) fn finite(&mut self, x: Value) -> NVal {
        let magnitude = self.b.ins().fabs(x);
        let infinity = self.b.ins().f64const(f64::INFINITY);
        let ok = self.b.ins().fcmp(FloatCC::LessThan, magnitude, infinity);
        self.check(ok);
        self.word(x)
    }

    pub(super) fn binary(&mut self, op: BinaryOp, l: NVal, r: NVal) -> NVal {
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
            AddDecimal | SubDecimal | MulDecimal | DivDecimal | RemDecimal => self.decimal_arith(op, l, r),
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
    pub(super) fn compare(&mut self, op: CmpOp, ty: TypeId, l: NVal, r: NVal) -> Value {
        let types = &self.c.types;
        let int_cc = int_cc(op);
        match ty {
            T::INT | T::TIMESTAMP | T::DURATION | T::BOOL => self.b.ins().icmp(int_cc, l.a, r.a),
            T::FLOAT => self.b.ins().fcmp(float_cc(op), l.a, r.a),
            T::DECIMAL => {
                let ordering = self.decimal_ordering(l, r);
                self.b.ins().icmp_imm_s(int_cc, ordering, 0)
            }
            _ if types.is_stringy(ty) => {
                self.charge_bytes(l.b, runtime::semantics::budget::STRING_SHIFT);
                if matches!(op, CmpOp::Eq | CmpOp::Ne) {
                    let op_code = self.iconst(StrOp::Eq as i64);
                    let equal = self.helper(Helper::StrOp, &[op_code, l.a, l.b, r.a, r.b], W);
                    let cc = if op == CmpOp::Eq { IntCC::NotEqual } else { IntCC::Equal };
                    self.b.ins().icmp_imm_s(cc, equal, 0)
                } else {
                    let op_code = self.iconst(StrOp::Cmp as i64);
                    let ordering = self.helper(Helper::StrOp, &[op_code, l.a, l.b, r.a, r.b], W);
                    let ordering = self.b.ins().ireduce(types::I8, ordering);
                    let ordering = self.b.ins().sextend(W, ordering);
                    self.b.ins().icmp_imm_s(int_cc, ordering, 0)
                }
            }
            _ if matches!(op, CmpOp::Eq | CmpOp::Ne)
                && (types.list_element(ty).is_some() || runtime::native::is_record(self.program, ty)) =>
            {
                let program = self.ctx_field(NativeCtx::PROGRAM);
                let ty_word = self.iconst(i64::from(ty.0));
                let equal = self.helper(Helper::StructuralEq, &[program, ty_word, l.a, l.b, r.a, r.b], W);
                let decided = self.b.ins().icmp_imm_s(IntCC::NotEqual, equal, EQ_FAILED as i64);
                self.check(decided);
                let cc = if op == CmpOp::Eq { IntCC::NotEqual } else { IntCC::Equal };
                self.b.ins().icmp_imm_s(cc, equal, 0)
            }
            _ => {
                self.unsupported();
                self.b.ins().iconst(types::I8, 0)
            }
        }
    }
}
