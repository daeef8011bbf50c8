//! [`Arena`]: the strings and lists native code computes during one
//! evaluation, kept at fixed addresses until the next.

use crate::value::data::Slot;

/// Strings and lists computed during one evaluation (by `lower`, `+`,
/// `string(x)`, list literals), which generated code refers to by address.
/// Each is boxed, so it stays put until the arena is cleared before the
/// next evaluation on the thread.
#[derive(Debug, Default)]
pub struct Arena {
    strings: Vec<Box<str>>,
    lists: Vec<Box<[Slot]>>,
}

impl Arena {
    pub(super) fn clear(&mut self) {
        self.strings.clear();
        self.lists.clear();
    }

    /// A copy of `text` that lives until the arena is cleared, as words.
    pub(super) fn string(&mut self, text: &str) -> (u64, u64) {
        let boxed: Box<str> = text.into();
        let words = (boxed.as_ptr() as u64, boxed.len() as u64);
        self.strings.push(boxed);
        words
    }

    /// `n` absent slots that live until the arena is cleared.
    pub(super) fn slots(&mut self, n: usize) -> *mut Slot {
        let mut boxed = vec![Slot::ABSENT; n.max(1)].into_boxed_slice();
        let at = boxed.as_mut_ptr();
        self.lists.push(boxed);
        at
    }
}
