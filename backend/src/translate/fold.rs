//! Constant folding while building: instructions whose operands are
//! already known constants are computed here instead of emitted. Cranelift
//! would fold them too, with its optimiser on, but that costs more compile
//! time than it saves for rulec's code (the backend runs it off); folding
//! where the translator knows operands are constants (decimal literals,
//! scales, zero flags) keeps the code small for nothing.

use cranelift_codegen::ir::{InstructionData, Opcode};

use super::*;

impl Translator<'_, '_> {
    /// The value of `v` when it is an integer constant.
    pub(super) fn known(&self, v: Value) -> Option<i64> {
        let inst = self.b.func.dfg.value_def(v).inst()?;
        match self.b.func.dfg.insts[inst] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => {
                let bits = self.b.func.dfg.value_type(v).bits();
                let raw = imm.bits();
                // Narrow constants hold their bits zero-extended.
                Some(if bits < 64 { raw & ((1i64 << bits) - 1) } else { raw })
            }
            _ => None,
        }
    }

    pub(super) fn fold_band_imm(&mut self, x: Value, imm: i64) -> Value {
        match self.known(x) {
            Some(c) => self.iconst(c & imm),
            None => self.b.ins().band_imm_s(x, imm),
        }
    }

    pub(super) fn fold_band(&mut self, x: Value, y: Value) -> Value {
        match (self.known(x), self.known(y)) {
            (Some(a), Some(b)) => self.iconst(a & b),
            (Some(0), None) | (None, Some(0)) => self.iconst(0),
            _ => self.b.ins().band(x, y),
        }
    }

    pub(super) fn fold_bor(&mut self, x: Value, y: Value) -> Value {
        match (self.known(x), self.known(y)) {
            (Some(a), Some(b)) => self.iconst(a | b),
            (Some(0), None) => y,
            (None, Some(0)) => x,
            _ => self.b.ins().bor(x, y),
        }
    }

    pub(super) fn fold_ushr_imm(&mut self, x: Value, shift: i64) -> Value {
        match self.known(x) {
            Some(c) => self.iconst(((c as u64) >> shift) as i64),
            None => self.b.ins().ushr_imm_s(x, shift),
        }
    }

    pub(super) fn fold_ishl_imm(&mut self, x: Value, shift: i64) -> Value {
        match self.known(x) {
            Some(c) => self.iconst(c << shift),
            None => self.b.ins().ishl_imm_s(x, shift),
        }
    }

    pub(super) fn fold_sshr_imm(&mut self, x: Value, shift: i64) -> Value {
        match self.known(x) {
            Some(c) => self.iconst(c >> shift),
            None => self.b.ins().sshr_imm_s(x, shift),
        }
    }

    pub(super) fn fold_bxor(&mut self, x: Value, y: Value) -> Value {
        match (self.known(x), self.known(y)) {
            (Some(a), Some(b)) => self.iconst(a ^ b),
            (_, Some(0)) => x,
            (Some(0), _) => y,
            _ => self.b.ins().bxor(x, y),
        }
    }

    pub(super) fn fold_isub(&mut self, x: Value, y: Value) -> Value {
        match (self.known(x), self.known(y)) {
            (Some(a), Some(b)) => self.iconst(a.wrapping_sub(b)),
            (_, Some(0)) => x,
            _ => self.b.ins().isub(x, y),
        }
    }

    pub(super) fn fold_iadd(&mut self, x: Value, y: Value) -> Value {
        match (self.known(x), self.known(y)) {
            (Some(a), Some(b)) => self.iconst(a.wrapping_add(b)),
            (_, Some(0)) => x,
            (Some(0), _) => y,
            _ => self.b.ins().iadd(x, y),
        }
    }

    /// `x cc imm` as a word flag.
    pub(super) fn fold_icmp_imm(&mut self, cc: IntCC, x: Value, imm: i64) -> Value {
        match self.known(x) {
            Some(c) => {
                let holds = match cc {
                    IntCC::Equal => c == imm,
                    IntCC::NotEqual => c != imm,
                    IntCC::SignedLessThan => c < imm,
                    IntCC::SignedLessThanOrEqual => c <= imm,
                    IntCC::SignedGreaterThan => c > imm,
                    IntCC::SignedGreaterThanOrEqual => c >= imm,
                    IntCC::UnsignedLessThan => (c as u64) < imm as u64,
                    IntCC::UnsignedLessThanOrEqual => (c as u64) <= imm as u64,
                    IntCC::UnsignedGreaterThan => (c as u64) > imm as u64,
                    IntCC::UnsignedGreaterThanOrEqual => (c as u64) >= imm as u64,
                };
                self.iconst(i64::from(holds))
            }
            None => {
                let holds = self.b.ins().icmp_imm_s(cc, x, imm);
                self.bool_word(holds)
            }
        }
    }

    /// `flag ? x : y` for a word flag.
    pub(super) fn fold_select(&mut self, flag: Value, x: Value, y: Value) -> Value {
        match self.known(flag) {
            Some(0) => y,
            Some(_) => x,
            None if x == y => x,
            None => self.b.ins().select(flag, x, y),
        }
    }

    /// `x * y` and a word flag set on overflow.
    pub(super) fn fold_smul_overflow(&mut self, x: Value, y: Value) -> (Value, Value) {
        match (self.known(x), self.known(y)) {
            (Some(a), Some(b)) => match a.checked_mul(b) {
                Some(p) => (self.iconst(p), self.iconst(0)),
                None => (self.iconst(a.wrapping_mul(b)), self.iconst(1)),
            },
            (_, Some(1)) => (x, self.iconst(0)),
            (Some(1), _) => (y, self.iconst(0)),
            _ => {
                let (p, overflow) = self.b.ins().smul_overflow(x, y);
                (p, self.bool_word(overflow))
            }
        }
    }

    /// `|x|` (wrapping: `|i64::MIN|` is `i64::MIN`).
    pub(super) fn fold_iabs(&mut self, x: Value) -> Value {
        match self.known(x) {
            Some(c) => self.iconst(c.wrapping_abs()),
            None => self.b.ins().iabs(x),
        }
    }

    /// Goes to `then` when the word flag is set, else to `otherwise`; a
    /// known flag is a plain jump.
    pub(super) fn branch(&mut self, flag: Value, then: Block, otherwise: Block) {
        match self.known(flag) {
            Some(0) => {
                self.b.ins().jump(otherwise, &[]);
            }
            Some(_) => {
                self.b.ins().jump(then, &[]);
            }
            None => {
                self.b.ins().brif(flag, then, &[], otherwise, &[]);
            }
        }
    }
}
