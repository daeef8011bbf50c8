//! The window store's index: a key's hash to the first slot of the keys
//! with that hash ([`HashIndex`]), open addressing with linear probing, so
//! that where a hash's entry lives is known from the hash alone and can be
//! fetched into the cache ahead of the record that needs it
//! ([`HashIndex::prefetch`]).
//!
//! Entries hold the full hash, so a probe compares hashes without reading
//! the slots; removal shifts the entries after it back (no tombstones),
//! so a probe never runs longer than the cluster its hash falls in. The
//! table grows at 3/4 full and never shrinks.

use std::mem::size_of;

/// No slot: an empty entry.
const EMPTY: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Entry {
    hash: u64,
    slot: u32,
}

const VACANT: Entry = Entry { hash: 0, slot: EMPTY };

/// A hash to a slot number (never [`EMPTY`]).
#[derive(Debug, Default)]
pub struct HashIndex {
    /// A power of two of entries, or none before the first insert.
    entries: Vec<Entry>,
    len: usize,
}

impl HashIndex {
    /// The slot `hash` maps to.
    pub fn get(&self, hash: u64) -> Option<u32> {
        let at = self.find(hash)?;
        Some(self.entries[at].slot)
    }

    /// Maps `hash` to `slot`, replacing what it mapped to.
    pub fn insert(&mut self, hash: u64, slot: u32) {
        debug_assert_ne!(slot, EMPTY);
        if let Some(at) = self.find(hash) {
            self.entries[at].slot = slot;
            return;
        }
        if (self.len + 1) * 4 > self.entries.len() * 3 {
            self.grow();
        }
        let at = self.vacancy(hash);
        self.entries[at] = Entry { hash, slot };
        self.len += 1;
    }

    /// Forgets `hash`.
    pub fn remove(&mut self, hash: u64) {
        let Some(mut hole) = self.find(hash) else { return };
        let mask = self.mask();
        let mut next = (hole + 1) & mask;
        // Shift back each entry after the hole whose home is not between
        // the hole and it, until an empty entry.
        while self.entries[next].slot != EMPTY {
            let home = self.home(self.entries[next].hash);
            if (next.wrapping_sub(home) & mask) >= (next.wrapping_sub(hole) & mask) {
                self.entries[hole] = self.entries[next];
                hole = next;
            }
            next = (next + 1) & mask;
        }
        self.entries[hole] = VACANT;
        self.len -= 1;
    }

    /// Asks the processor to fetch the entry `hash` starts probing at,
    /// ahead of a [`HashIndex::get`] of it.
    pub fn prefetch(&self, hash: u64) {
        if !self.entries.is_empty() {
            prefetch(&self.entries[self.home(hash)]);
        }
    }

    /// The heap bytes of the entries.
    pub fn heap_bytes(&self) -> usize {
        self.entries.capacity() * size_of::<Entry>()
    }

    fn mask(&self) -> usize {
        self.entries.len().wrapping_sub(1)
    }

    fn home(&self, hash: u64) -> usize {
        (hash as usize) & self.mask()
    }

    /// Where `hash`'s entry is.
    fn find(&self, hash: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mut at = self.home(hash);
        loop {
            let entry = self.entries[at];
            if entry.slot == EMPTY {
                return None;
            }
            if entry.hash == hash {
                return Some(at);
            }
            at = (at + 1) & self.mask();
        }
    }

    /// The first empty entry from `hash`'s home on (there is one: the
    /// table is never full).
    fn vacancy(&self, hash: u64) -> usize {
        let mut at = self.home(hash);
        while self.entries[at].slot != EMPTY {
            at = (at + 1) & self.mask();
        }
        at
    }

    fn grow(&mut self) {
        let size = (self.entries.len() * 2).max(16);
        let old = std::mem::replace(&mut self.entries, vec![VACANT; size]);
        for entry in old.into_iter().filter(|e| e.slot != EMPTY) {
            let at = self.vacancy(entry.hash);
            self.entries[at] = entry;
        }
    }
}

/// Asks the processor to bring the cache line of `value` into the cache;
/// does nothing where there is no such instruction.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is a hint: it reads nothing the program can
        // observe and cannot fault; SSE is part of x86-64.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Inserts and removes as a `HashMap` does, with hashes made to
    /// collide in long clusters and wrap around the table's end.
    #[test]
    fn the_index_is_a_map() {
        let mut index = HashIndex::default();
        let mut model = HashMap::new();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for step in 0..20_000u32 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Few distinct homes: long clusters; high bits tell hashes apart.
            let hash = (seed % 64) | ((seed >> 32) % 5000) << 32;
            if seed.is_multiple_of(3) {
                index.remove(hash);
                model.remove(&hash);
            } else {
                index.insert(hash, step);
                model.insert(hash, step);
            }
            assert_eq!(index.len, model.len());
        }
        for (hash, slot) in &model {
            assert_eq!(index.get(*hash), Some(*slot));
        }
        assert_eq!(index.get(u64::MAX), None);
    }
}
