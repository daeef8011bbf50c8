//! The limits every stage holds a contract to: the checker reports them
//! at the source, the verifier refuses a bundle past them, and the engines
//! rely on them (a channel mask of 64 bits, recursion as deep as the
//! tallest expression).

/// At most this many channels: engines keep them in a 64-bit mask.
pub const MAX_CHANNELS: usize = 64;
/// The deepest nesting of types (records in lists in records ...).
pub const MAX_TYPE_DEPTH: usize = 64;
/// The tallest expression tree; engines may recurse this deep.
pub const MAX_EXPR_HEIGHT: u32 = 512;
/// The widest model input `score` takes.
pub const MAX_FEATURES: u32 = 1 << 16;
