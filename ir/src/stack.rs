//! Guards for the recursive passes (parser, checker, printer, engines).
//!
//! Expression trees are bounded in height, but a pass may still recurse a
//! few hundred levels with large frames, deeper than a small thread stack
//! (test threads, server workers) allows. [`guard`] grows the stack on the
//! heap when little is left, so no input can overflow it.

/// Grow when less than this much stack is left.
const RED_ZONE: usize = 128 * 1024;
/// Each growth adds this much.
const GROWTH: usize = 2 * 1024 * 1024;

/// Runs `f`, on a fresh stack segment if the current one is nearly full.
#[inline]
pub fn guard<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, GROWTH, f)
}

/// The stack address below which [`guard`] would grow the stack: a hot
/// recursive pass compares [`here`] with it instead of calling [`guard`]
/// at every level. `usize::MAX` (always guard) where the stack's size is
/// unknown.
pub fn floor() -> usize {
    match stacker::remaining_stack() {
        Some(remaining) => here().saturating_sub(remaining.saturating_sub(RED_ZONE)),
        None => usize::MAX,
    }
}

/// About where the stack is now: the address of a local of the caller.
#[inline(always)]
pub fn here() -> usize {
    let marker = 0u8;
    std::ptr::addr_of!(marker) as usize
}
