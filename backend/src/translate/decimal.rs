//! Decimal `+ - *` and comparisons inline, on the same scaled-`i64` fast
//! paths as `runtime::decimal` (whose rules are checked against
//! rust_decimal there): when both mantissas fit an `i64`, the scales align
//! with a power of ten and nothing overflows, the result is built from
//! machine integers. Everything else (a zero operand, whose sign and scale
//! rust_decimal treats specially, a 96-bit mantissa, an overflow) calls the
//! shared Rust helper, which gives the reference answer.
//!
//! A decimal is two words ([`runtime::data::Slot`]): `a` holds mantissa
//! bits 0..64; `b` holds bits 64..96 in its low half and rust_decimal's
//! flags in its high half (scale in bits 48..56, sign in bit 63).

use super::*;

/// Bits of word `b` that hold the mantissa's top 32 bits.
const HIGH_MANTISSA: i64 = 0xFFFF_FFFF;
/// The largest scale rust_decimal keeps.
const MAX_SCALE: i64 = 28;
/// The largest exponent in [`runtime::native::POW10`].
const MAX_POW10: i64 = 18;

/// A decimal taken apart for a fast path.
#[derive(Clone, Copy)]
struct Small {
    /// The signed mantissa (meaningful when `slow` is zero).
    m: Value,
    scale: Value,
    /// Non-zero when the mantissa does not fit the fast path.
    slow: Value,
}

/// Two operands at one scale.
struct Aligned {
    l: Value,
    r: Value,
    scale: Value,
    /// Non-zero when aligning overflowed.
    slow: Value,
}

impl Translator<'_, '_> {
    /// `l op r` for `op` in `+ - * / %` on decimals.
    pub(super) fn decimal_arith(&mut self, op: BinaryOp, l: NVal, r: NVal) -> NVal {
        let helper = match op {
            BinaryOp::AddDecimal => "dec_add",
            BinaryOp::SubDecimal => "dec_sub",
            BinaryOp::MulDecimal => "dec_mul",
            BinaryOp::DivDecimal => "dec_div",
            _ => "dec_rem",
        };
        if !matches!(op, BinaryOp::AddDecimal | BinaryOp::SubDecimal | BinaryOp::MulDecimal) {
            return self.helper_with_result(helper, vec![l.a, l.b, r.a, r.b]);
        }
        let (x, y) = (self.small(l), self.small(r));
        let (result, slow) =
            if op == BinaryOp::MulDecimal { self.small_mul(x, y) } else { self.small_add(op, x, y) };
        let (fast, slow_block, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(done, W);
        self.b.append_block_param(done, W);
        self.b.ins().brif(slow, slow_block, &[], fast, &[]);
        self.b.switch_to_block(fast);
        let (a, b) = self.make(result.0, result.1);
        self.b.ins().jump(done, &args(&[a, b]));
        self.b.switch_to_block(slow_block);
        let v = self.helper_with_result(helper, vec![l.a, l.b, r.a, r.b]);
        self.b.ins().jump(done, &args(&[v.a, v.b]));
        self.b.switch_to_block(done);
        let params = self.b.block_params(done).to_vec();
        NVal { a: params[0], b: params[1], present: None }
    }

    /// The ordering of two decimals as -1, 0 or 1 (a word).
    pub(super) fn decimal_ordering(&mut self, l: NVal, r: NVal) -> Value {
        let (x, y) = (self.small(l), self.small(r));
        let aligned = self.align(x, y);
        let slow = self.any(&[x.slow, y.slow, aligned.slow]);
        let (fast, slow_block, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(done, W);
        self.b.ins().brif(slow, slow_block, &[], fast, &[]);
        self.b.switch_to_block(fast);
        let greater = self.b.ins().icmp(IntCC::SignedGreaterThan, aligned.l, aligned.r);
        let less = self.b.ins().icmp(IntCC::SignedLessThan, aligned.l, aligned.r);
        let (greater, less) = (self.bool_word(greater), self.bool_word(less));
        let ordering = self.b.ins().isub(greater, less);
        self.b.ins().jump(done, &args(&[ordering]));
        self.b.switch_to_block(slow_block);
        let ordering = self.helper("dec_cmp", &[l.a, l.b, r.a, r.b], W);
        self.b.ins().jump(done, &args(&[ordering]));
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    /// `x + y` or `x - y`: the result's mantissa and scale, and the slow flag.
    fn small_add(&mut self, op: BinaryOp, x: Small, y: Small) -> ((Value, Value), Value) {
        let aligned = self.align(x, y);
        let (m, overflow) = if op == BinaryOp::AddDecimal {
            self.b.ins().sadd_overflow(aligned.l, aligned.r)
        } else {
            self.b.ins().ssub_overflow(aligned.l, aligned.r)
        };
        let overflow = self.bool_word(overflow);
        let zeros = self.zero_operand(x, y);
        let zero_result = self.b.ins().icmp_imm_s(IntCC::Equal, m, 0);
        let zero_result = self.bool_word(zero_result);
        let slow = self.any(&[x.slow, y.slow, aligned.slow, overflow, zeros, zero_result]);
        ((m, aligned.scale), slow)
    }

    /// `x * y`: the scales add up (at most 28), the mantissas multiply.
    fn small_mul(&mut self, x: Small, y: Small) -> ((Value, Value), Value) {
        let scale = self.b.ins().iadd(x.scale, y.scale);
        let too_fine = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, scale, MAX_SCALE);
        let too_fine = self.bool_word(too_fine);
        let (m, overflow) = self.b.ins().smul_overflow(x.m, y.m);
        let overflow = self.bool_word(overflow);
        let zeros = self.zero_operand(x, y);
        let slow = self.any(&[x.slow, y.slow, too_fine, overflow, zeros]);
        ((m, scale), slow)
    }

    /// Takes a decimal apart: signed mantissa, scale, and whether it is too
    /// large for the fast path (mantissa beyond 63 bits).
    fn small(&mut self, v: NVal) -> Small {
        let high = self.b.ins().band_imm_s(v.b, HIGH_MANTISSA);
        let top = self.b.ins().ushr_imm_s(v.a, 63);
        let slow = self.b.ins().bor(high, top);
        let sign = self.b.ins().sshr_imm_s(v.b, 63);
        let flipped = self.b.ins().bxor(v.a, sign);
        let m = self.b.ins().isub(flipped, sign);
        let shifted = self.b.ins().ushr_imm_s(v.b, 48);
        let scale = self.b.ins().band_imm_s(shifted, 0xFF);
        Small { m, scale, slow }
    }

    /// Brings both mantissas to the larger scale (`runtime::decimal`'s
    /// `aligned`): the one with the smaller scale is multiplied by
    /// `10^difference`, which must be in the table and must not overflow.
    fn align(&mut self, x: Small, y: Small) -> Aligned {
        let difference = self.b.ins().isub(x.scale, y.scale);
        let distance = self.b.ins().iabs(difference);
        let too_far = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, distance, MAX_POW10);
        let zero = self.iconst(0);
        let exponent = self.b.ins().select(too_far, zero, distance);
        let table = self.ctx_field(NativeCtx::POW10);
        let offset = self.b.ins().ishl_imm_s(exponent, 3);
        let at = self.b.ins().iadd(table, offset);
        let factor = self.b.ins().load(W, MemFlagsData::trusted(), at, 0);
        let one = self.iconst(1);
        let x_finer = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, difference, 0);
        let y_finer = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, difference, 0);
        let x_factor = self.b.ins().select(y_finer, factor, one);
        let y_factor = self.b.ins().select(x_finer, factor, one);
        let (l, l_overflow) = self.b.ins().smul_overflow(x.m, x_factor);
        let (r, r_overflow) = self.b.ins().smul_overflow(y.m, y_factor);
        let scale = self.b.ins().select(y_finer, y.scale, x.scale);
        let too_far = self.bool_word(too_far);
        let l_overflow = self.bool_word(l_overflow);
        let r_overflow = self.bool_word(r_overflow);
        let slow = self.any(&[too_far, l_overflow, r_overflow]);
        Aligned { l, r, scale, slow }
    }

    /// Non-zero when either operand is zero.
    fn zero_operand(&mut self, x: Small, y: Small) -> Value {
        let x_zero = self.b.ins().icmp_imm_s(IntCC::Equal, x.m, 0);
        let y_zero = self.b.ins().icmp_imm_s(IntCC::Equal, y.m, 0);
        let either = self.b.ins().bor(x_zero, y_zero);
        self.bool_word(either)
    }

    /// The bitwise or of flag words.
    fn any(&mut self, flags: &[Value]) -> Value {
        let mut all = flags[0];
        for flag in &flags[1..] {
            all = self.b.ins().bor(all, *flag);
        }
        all
    }

    /// A decimal's words from a non-zero signed mantissa and a scale:
    /// the magnitude (an `i64::MIN` mantissa's magnitude, `2^63`, is still
    /// right as an unsigned word), the scale and the sign.
    fn make(&mut self, m: Value, scale: Value) -> (Value, Value) {
        let magnitude = self.b.ins().iabs(m);
        let sign = self.b.ins().band_imm_s(m, i64::MIN);
        let flags = self.b.ins().ishl_imm_s(scale, 48);
        let b = self.b.ins().bor(flags, sign);
        (magnitude, b)
    }
}
