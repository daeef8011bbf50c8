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
