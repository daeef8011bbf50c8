//! Decimal `+ - *` and comparisons inline, on the same scaled-`i64` fast
//! paths as `runtime::value::decimal` (whose rules are checked against
//! rust_decimal there): when both mantissas fit an `i64`, the scales align
//! with a power of ten and nothing overflows, the result is built from
//! machine integers. Everything else (a zero operand, whose sign and scale
//! rust_decimal treats specially, a 96-bit mantissa, an overflow) calls the
//! shared Rust helper, which gives the reference answer.
//!
//! A decimal is two words ([`runtime::value::data::Slot`]): `a` holds mantissa
//! bits 0..64; `b` holds bits 64..96 in its low half and rust_decimal's
//! flags in its high half (scale in bits 48..56, sign in bit 63).
//!
//! Operands that are constants (literals, table values are not) are taken
//! apart while translating ([`super::fold`]): a comparison with a literal
//! costs a few instructions, and one with zero needs no slow path at all.

use runtime::value::decimal::Midpoint;

use super::*;

/// Bits of word `b` that hold the mantissa's top 32 bits.
const HIGH_MANTISSA: i64 = 0xFFFF_FFFF;
/// The largest scale rust_decimal keeps (the runtime's decimals are its).
const MAX_SCALE: i64 = rust_decimal::Decimal::MAX_SCALE as i64;
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
            BinaryOp::AddDecimal => Helper::DecAdd,
            BinaryOp::SubDecimal => Helper::DecSub,
            BinaryOp::MulDecimal => Helper::DecMul,
            BinaryOp::DivDecimal => Helper::DecDiv,
            _ => Helper::DecRem,
        };
        if !matches!(op, BinaryOp::AddDecimal | BinaryOp::SubDecimal | BinaryOp::MulDecimal) {
            return self.helper_with_result(helper, vec![l.a, l.b, r.a, r.b]);
        }
        let (x, y) = (self.small(l), self.small(r));
        let ((m, scale), slow) =
            if op == BinaryOp::MulDecimal { self.small_mul(x, y) } else { self.small_add(op, x, y) };
        let words = self.fast_or_slow(
            slow,
            2,
            |t| {
                let (a, b) = t.make(m, scale);
                vec![a, b]
            },
            |t| {
                let v = t.helper_with_result(helper, vec![l.a, l.b, r.a, r.b]);
                vec![v.a, v.b]
            },
        );
        NVal { a: words[0], b: words[1], present: None }
    }

    /// The ordering of two decimals as -1, 0 or 1 (a word).
    pub(super) fn decimal_ordering(&mut self, l: NVal, r: NVal) -> Value {
        if self.is_known_zero(r) {
            return self.sign(l);
        }
        if self.is_known_zero(l) {
            let sign = self.sign(r);
            return self.b.ins().ineg(sign);
        }
        let (x, y) = (self.small(l), self.small(r));
        let aligned = self.align(x, y);
        let slow = self.any(&[x.slow, y.slow, aligned.slow]);
        let words = self.fast_or_slow(
            slow,
            1,
            |t| {
                let greater = t.b.ins().icmp(IntCC::SignedGreaterThan, aligned.l, aligned.r);
                let less = t.b.ins().icmp(IntCC::SignedLessThan, aligned.l, aligned.r);
                let (greater, less) = (t.bool_word(greater), t.bool_word(less));
                vec![t.b.ins().isub(greater, less)]
            },
            |t| vec![t.helper(Helper::DecCmp, &[l.a, l.b, r.a, r.b], W)],
        );
        words[0]
    }

    /// Whether `v` is a constant zero (any scale, either sign).
    fn is_known_zero(&self, v: NVal) -> bool {
        self.known(v.a) == Some(0) && self.known(v.b).is_some_and(|b| b & HIGH_MANTISSA == 0)
    }

    /// The sign of a decimal as -1, 0 or 1: a zero mantissa is 0 whatever
    /// its sign flag (rust_decimal compares `-0` equal to `0`).
    fn sign(&mut self, v: NVal) -> Value {
        let low = self.fold_icmp_imm(IntCC::NotEqual, v.a, 0);
        let high = self.fold_band_imm(v.b, HIGH_MANTISSA);
        let nonzero = self.fold_bor(low, high);
        let negative = self.fold_icmp_imm(IntCC::SignedLessThan, v.b, 0);
        let (minus_one, one, zero) = (self.iconst(-1), self.iconst(1), self.iconst(0));
        let signed = self.fold_select(negative, minus_one, one);
        let nonzero = self.fold_icmp_imm(IntCC::NotEqual, nonzero, 0);
        self.fold_select(nonzero, signed, zero)
    }

    /// The fast path's words when `slow` is clear, else the slow path's;
    /// a known flag emits only the path taken.
    fn fast_or_slow(
        &mut self,
        slow: Value,
        width: usize,
        fast: impl FnOnce(&mut Self) -> Vec<Value>,
        slow_path: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        match self.known(slow) {
            Some(0) => return fast(self),
            Some(_) => return slow_path(self),
            None => {}
        }
        let (fast_block, slow_block, done) =
            (self.b.create_block(), self.b.create_block(), self.b.create_block());
        for _ in 0..width {
            self.b.append_block_param(done, W);
        }
        self.b.ins().brif(slow, slow_block, &[], fast_block, &[]);
        self.b.switch_to_block(fast_block);
        let words = fast(self);
        self.b.ins().jump(done, &args(&words));
        self.b.switch_to_block(slow_block);
        let words = slow_path(self);
        self.b.ins().jump(done, &args(&words));
        self.b.switch_to_block(done);
        self.b.block_params(done).to_vec()
    }

    /// `round(v, places)` (a midpoint as `midpoint` says) for a
    /// constant `places` in `0..=28`: `runtime::value::decimal::round`'s fast
    /// path. A finer scale divides by `10^(scale - places)` and rounds on
    /// the remainder; a coarser one multiplies up to `places`. A negative
    /// value that rounds to zero (whose sign rust_decimal decides) and
    /// everything outside the fast path call the helper.
    pub(super) fn decimal_round(&mut self, v: NVal, places: i64, midpoint: Midpoint) -> NVal {
        let x = self.small(v);
        let difference = self.b.ins().iadd_imm_s(x.scale, -places);
        let (fits, coarser, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let slow_block = self.b.create_block();
        self.b.append_block_param(done, W);
        self.b.append_block_param(done, W);
        let places_word = self.iconst(places);
        let is_finer = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, difference, 0);
        self.branch(x.slow, slow_block, fits);
        self.b.switch_to_block(fits);
        let divide = self.b.create_block();
        self.b.ins().brif(is_finer, divide, &[], coarser, &[]);

        // scale > places: q = m / f, rounded on the remainder.
        self.b.switch_to_block(divide);
        let too_far = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, difference, MAX_POW10);
        let in_range = self.b.create_block();
        self.b.ins().brif(too_far, slow_block, &[], in_range, &[]);
        self.b.switch_to_block(in_range);
        let factor = self.pow10(difference);
        let q = self.b.ins().sdiv(x.m, factor);
        let r = self.b.ins().srem(x.m, factor);
        let magnitude = self.b.ins().iabs(r);
        let twice = self.b.ins().ishl_imm_s(magnitude, 1);
        let above = self.b.ins().icmp(IntCC::SignedGreaterThan, twice, factor);
        let half = self.b.ins().icmp(IntCC::Equal, twice, factor);
        let tie_goes_up = match midpoint {
            Midpoint::ToEven => {
                let odd = self.b.ins().band_imm_s(q, 1);
                self.b.ins().icmp_imm_s(IntCC::NotEqual, odd, 0)
            }
            Midpoint::AwayFromZero => self.b.ins().iconst(types::I8, 1),
            Midpoint::TowardZero => self.b.ins().iconst(types::I8, 0),
        };
        let tie_up = self.b.ins().band(half, tie_goes_up);
        let up = self.b.ins().bor(above, tie_up);
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x.m, 0);
        let one = self.iconst(1);
        let minus_one = self.iconst(-1);
        let step = self.b.ins().select(negative, minus_one, one);
        let stepped = self.b.ins().iadd(q, step);
        let rounded = self.b.ins().select(up, stepped, q);
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, rounded, 0);
        let negative_zero = self.b.ins().band(zero, negative);
        let fast = self.b.create_block();
        self.b.ins().brif(negative_zero, slow_block, &[], fast, &[]);
        self.b.switch_to_block(fast);
        let (a, b) = self.make(rounded, places_word);
        self.b.ins().jump(done, &args(&[a, b]));

        // scale <= places: m * 10^(places - scale), if it fits.
        self.b.switch_to_block(coarser);
        let up_by = self.b.ins().ineg(difference);
        let too_far = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, up_by, MAX_POW10);
        let in_range = self.b.create_block();
        self.b.ins().brif(too_far, slow_block, &[], in_range, &[]);
        self.b.switch_to_block(in_range);
        let factor = self.pow10(up_by);
        let (m, overflow) = self.b.ins().smul_overflow(x.m, factor);
        let fast = self.b.create_block();
        self.b.ins().brif(overflow, slow_block, &[], fast, &[]);
        self.b.switch_to_block(fast);
        let (a, b) = self.make(m, places_word);
        self.b.ins().jump(done, &args(&[a, b]));

        self.b.switch_to_block(slow_block);
        let midpoint = self.iconst(midpoint as i64);
        let v = self.helper_with_result(Helper::DecRound, vec![v.a, v.b, places_word, midpoint]);
        self.b.ins().jump(done, &args(&[v.a, v.b]));
        self.b.switch_to_block(done);
        let params = self.b.block_params(done).to_vec();
        NVal { a: params[0], b: params[1], present: None }
    }

    /// `10^exponent` from the context's table (`exponent` in `0..=18`).
    fn pow10(&mut self, exponent: Value) -> Value {
        let table = self.ctx_field(NativeCtx::POW10);
        let offset = self.b.ins().ishl_imm_s(exponent, 3);
        let at = self.b.ins().iadd(table, offset);
        self.b.ins().load(W, MemFlagsData::trusted(), at, 0)
    }

    /// `x + y` or `x - y`: the result's mantissa and scale, and the slow flag.
    fn small_add(&mut self, op: BinaryOp, x: Small, y: Small) -> ((Value, Value), Value) {
        let aligned = self.align(x, y);
        let (m, overflow) = match (self.known(aligned.l), self.known(aligned.r)) {
            (Some(l), Some(r)) => {
                let result = if op == BinaryOp::AddDecimal { l.checked_add(r) } else { l.checked_sub(r) };
                (self.iconst(result.unwrap_or(0)), self.iconst(i64::from(result.is_none())))
            }
            _ => {
                let (m, overflow) = if op == BinaryOp::AddDecimal {
                    self.b.ins().sadd_overflow(aligned.l, aligned.r)
                } else {
                    self.b.ins().ssub_overflow(aligned.l, aligned.r)
                };
                (m, self.bool_word(overflow))
            }
        };
        let zeros = self.zero_operand(x, y);
        let zero_result = self.fold_icmp_imm(IntCC::Equal, m, 0);
        let slow = self.any(&[x.slow, y.slow, aligned.slow, overflow, zeros, zero_result]);
        ((m, aligned.scale), slow)
    }

    /// `x * y`: the scales add up (at most 28), the mantissas multiply.
    fn small_mul(&mut self, x: Small, y: Small) -> ((Value, Value), Value) {
        let scale = self.fold_iadd(x.scale, y.scale);
        let too_fine = self.fold_icmp_imm(IntCC::SignedGreaterThan, scale, MAX_SCALE);
        let (m, overflow) = self.fold_smul_overflow(x.m, y.m);
        let zeros = self.zero_operand(x, y);
        let slow = self.any(&[x.slow, y.slow, too_fine, overflow, zeros]);
        ((m, scale), slow)
    }

    /// Takes a decimal apart: signed mantissa, scale, and whether it is too
    /// large for the fast path (mantissa beyond 63 bits).
    fn small(&mut self, v: NVal) -> Small {
        let high = self.fold_band_imm(v.b, HIGH_MANTISSA);
        let top = self.fold_ushr_imm(v.a, 63);
        let slow = self.fold_bor(high, top);
        let sign = self.fold_sshr_imm(v.b, 63);
        let flipped = self.fold_bxor(v.a, sign);
        let m = self.fold_isub(flipped, sign);
        let shifted = self.fold_ushr_imm(v.b, 48);
        let scale = self.fold_band_imm(shifted, 0xFF);
        Small { m, scale, slow }
    }

    /// Brings both mantissas to the larger scale (`runtime::value::decimal`'s
    /// `aligned`): the one with the smaller scale is multiplied by
    /// `10^difference`, which must be in the table and must not overflow.
    fn align(&mut self, x: Small, y: Small) -> Aligned {
        let difference = self.fold_isub(x.scale, y.scale);
        if let Some(d) = self.known(difference) {
            // Both scales known: the factor is too.
            let Some(&factor) = runtime::native::POW10.get(d.unsigned_abs() as usize) else {
                let slow = self.iconst(1);
                return Aligned { l: x.m, r: y.m, scale: x.scale, slow };
            };
            let (x_factor, y_factor) =
                (self.iconst(if d < 0 { factor } else { 1 }), self.iconst(if d > 0 { factor } else { 1 }));
            let (l, l_overflow) = self.fold_smul_overflow(x.m, x_factor);
            let (r, r_overflow) = self.fold_smul_overflow(y.m, y_factor);
            let scale = if d < 0 { y.scale } else { x.scale };
            let slow = self.any(&[l_overflow, r_overflow]);
            return Aligned { l, r, scale, slow };
        }
        let distance = self.b.ins().iabs(difference);
        let too_far = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, distance, MAX_POW10);
        let zero = self.iconst(0);
        let exponent = self.b.ins().select(too_far, zero, distance);
        let factor = self.pow10(exponent);
        let one = self.iconst(1);
        let x_finer = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, difference, 0);
        let y_finer = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, difference, 0);
        let x_factor = self.b.ins().select(y_finer, factor, one);
        let y_factor = self.b.ins().select(x_finer, factor, one);
        let (l, l_overflow) = self.fold_smul_overflow(x.m, x_factor);
        let (r, r_overflow) = self.fold_smul_overflow(y.m, y_factor);
        let scale = self.b.ins().select(y_finer, y.scale, x.scale);
        let too_far = self.bool_word(too_far);
        let slow = self.any(&[too_far, l_overflow, r_overflow]);
        Aligned { l, r, scale, slow }
    }

    /// Non-zero when either operand is zero.
    fn zero_operand(&mut self, x: Small, y: Small) -> Value {
        let x_zero = self.fold_icmp_imm(IntCC::Equal, x.m, 0);
        let y_zero = self.fold_icmp_imm(IntCC::Equal, y.m, 0);
        self.fold_bor(x_zero, y_zero)
    }

    /// The bitwise or of flag words.
    fn any(&mut self, flags: &[Value]) -> Value {
        let mut all = flags[0];
        for flag in &flags[1..] {
            all = self.fold_bor(all, *flag);
        }
        all
    }

    /// A decimal's words from a non-zero signed mantissa and a scale:
    /// the magnitude (an `i64::MIN` mantissa's magnitude, `2^63`, is still
    /// right as an unsigned word), the scale and the sign.
    fn make(&mut self, m: Value, scale: Value) -> (Value, Value) {
        let magnitude = self.fold_iabs(m);
        let sign = self.fold_band_imm(m, i64::MIN);
        let flags = self.fold_ishl_imm(scale, 48);
        let b = self.fold_bor(flags, sign);
        (magnitude, b)
    }
}
