//! Window state (SIGNALS.md, "Windows"): per key, the records a sliding
//! event-time window still needs, and each entering record's aggregates
//! (`count`, `sum`, `distinct`, `max`, `min`) over the records of its key
//! in `(t - span, t]`. A record behind its key's latest time by more than
//! the grace is late and does not enter; what is kept is bounded by the
//! span and grace (records pruned, keys dropped once the watermark passes
//! them) and by `max_keys` (least recently entered keys evicted).
//!
//! The store knows no expressions: the caller computes each record's key,
//! event time and aggregate arguments and hands them over.

mod aggregate;
mod bounds;
mod index;
mod records;
mod shape;
mod store;

pub use shape::{Aggregated, Arg, ArgKind, Key, ShapeError, WindowShape};
pub use store::{Ahead, Entering, Observation, SharedWindowStore, WindowStore};
