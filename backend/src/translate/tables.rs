//! Table lookups and set membership. Keys are known at compile time, so a
//! short table of short string keys is matched inline: dispatch on the
//! key's length, then compare the key's bytes, loaded in at most two
//! (possibly overlapping) words that never read past its end, with each
//! candidate's bytes as constants. Int keys `min..min+n` in row order are a
//! subtraction and a bounds check. Other tables go through the shared
//! helpers (the runtime's hash index).
//!
//! A row's value is read from the program's value slots, whose address the
//! context gives ([`NativeCtx::addresses`]).

use std::collections::BTreeMap;

use super::*;

/// Tables with more keys than this use the runtime's hash index.
const INLINE_KEYS: usize = 32;
/// Keys longer than this (bytes) use the runtime's hash index.
const INLINE_KEY_BYTES: usize = 16;

impl Translator<'_, '_> {
    /// The row of `key` in table `table`, or -1.
    pub(super) fn table_row(&mut self, table: usize, key: ExprId) -> Value {
        let key_ty = self.c.expr(key).ty;
        let k = self.expr(key);
        let runtime_table = &self.program.tables[table];
        if key_ty == T::INT {
            if let Some((min, n)) = runtime_table.dense_identity() {
                return self.dense_row(k.a, min, n);
            }
            let program = self.ctx_field(NativeCtx::PROGRAM);
            let t = self.iconst(table as i64);
            return self.helper(Helper::TableRowInt, &[program, t, k.a], W);
        }
        match runtime_table.string_keys() {
            Some(keys)
                if keys.len() <= INLINE_KEYS && keys.iter().all(|(k, _)| k.len() <= INLINE_KEY_BYTES) =>
            {
                self.string_row(k, &keys)
            }
            _ => {
                let program = self.ctx_field(NativeCtx::PROGRAM);
                let t = self.iconst(table as i64);
                self.helper(Helper::TableRowStr, &[program, t, k.a, k.b], W)
            }
        }
    }

    /// The value of `key` in table `table` (a missing key goes where
    /// missing keys go: the enclosing `??`, or the fallback).
    pub(super) fn table_get(&mut self, table: usize, key: ExprId, ty: TypeId) -> NVal {
        let row = self.table_row(table, key);
        let found = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, row, 0);
        self.found_or_missing(found);
        let base = self.address(self.plan.addresses.table(table));
        let row_bytes = self.program.tables[table].width() as i64 * SLOT;
        let offset = self.b.ins().imul_imm_s(row, row_bytes);
        let slots = self.b.ins().iadd(base, offset);
        self.read_at(slots, 0, ty)
    }

    /// `key - min` when it is in `0..n`, else -1.
    fn dense_row(&mut self, key: Value, min: i64, n: usize) -> Value {
        let index = self.b.ins().iadd_imm_s(key, min.wrapping_neg());
        // A key below `min` is missing; above it, `key - min` either is a
        // row or (wrapping, when `min` is negative) is beyond `n` unsigned.
        let below_min = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, key, min);
        let beyond = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, index, n as i64);
        let outside = self.b.ins().bor(below_min, beyond);
        let missing = self.iconst(-1);
        self.b.ins().select(outside, missing, index)
    }

    /// The row of string `s` among `keys` (each at most
    /// [`INLINE_KEY_BYTES`] long), or -1.
    fn string_row(&mut self, s: NVal, keys: &[(&str, u32)]) -> Value {
        let mut by_length: BTreeMap<usize, Vec<(&[u8], u32)>> = BTreeMap::new();
        for (key, row) in keys {
            by_length.entry(key.len()).or_default().push((key.as_bytes(), *row));
        }
        let done = self.b.create_block();
        self.b.append_block_param(done, W);
        for (length, group) in by_length {
            let (matching, next) = (self.b.create_block(), self.b.create_block());
            let same_length = self.b.ins().icmp_imm_s(IntCC::Equal, s.b, length as i64);
            self.b.ins().brif(same_length, matching, &[], next, &[]);
            self.b.switch_to_block(matching);
            let row = self.match_bytes(s.a, length, &group);
            self.b.ins().jump(done, &args(&[row]));
            self.b.switch_to_block(next);
        }
        let missing = self.iconst(-1);
        self.b.ins().jump(done, &args(&[missing]));
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    /// Which of `group` (keys of `length` bytes) the bytes at `ptr` are:
    /// its row, or -1.
    fn match_bytes(&mut self, ptr: Value, length: usize, group: &[(&[u8], u32)]) -> Value {
        let windows = windows(length);
        let loaded: Vec<Value> =
            windows.iter().map(|&(offset, size)| self.load_bytes(ptr, offset, size)).collect();
        let mut row = self.iconst(-1);
        for (key, key_row) in group {
            let mut all = self.iconst(1);
            for (value, &(offset, size)) in loaded.iter().zip(&windows) {
                let expected = little_endian(&key[offset..offset + size]);
                let same = self.b.ins().icmp_imm_s(IntCC::Equal, *value, expected);
                let same = self.bool_word(same);
                all = self.b.ins().band(all, same);
            }
            let candidate = self.iconst(i64::from(*key_row));
            row = self.b.ins().select(all, candidate, row);
        }
        row
    }

    /// `size` bytes (1, 2, 4 or 8) at `ptr + offset`, zero-extended.
    fn load_bytes(&mut self, ptr: Value, offset: usize, size: usize) -> Value {
        let flags = MemFlagsData::trusted();
        let offset = offset as i32;
        match size {
            1 => self.b.ins().uload8(W, flags, ptr, offset),
            2 => self.b.ins().uload16(W, flags, ptr, offset),
            4 => self.b.ins().uload32(flags, ptr, offset),
            _ => self.b.ins().load(W, flags, ptr, offset),
        }
    }
}

/// The loads that cover `length` bytes without reading past them: one
/// word of the largest size that fits, and a second (overlapping) one
/// ending at the last byte when the first does not reach it.
fn windows(length: usize) -> Vec<(usize, usize)> {
    if length == 0 {
        return Vec::new();
    }
    let size = [8, 4, 2, 1].into_iter().find(|s| *s <= length).unwrap_or(1);
    if size == length { vec![(0, size)] } else { vec![(0, size), (length - size, size)] }
}

/// Bytes as the little-endian integer a load of them gives (both targets,
/// x86-64 and aarch64 Linux, are little-endian).
fn little_endian(bytes: &[u8]) -> i64 {
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    i64::from_le_bytes(word)
}
