//! Window state (SIGNALS.md, "Windows"): per key, the records a sliding
//! event-time window still needs, and each entering record's aggregates
//! (`count`, `sum`, `distinct`, `max`, `min`) over the records of its key
//! in `(t - span, t]`. A record behind its key's latest time by more than
//! the grace is late and does not enter. What a key keeps depends on its
//! own records only (pruned by its own latest time); what the state holds
//! in all is bounded by [`WindowLimits`] (keys and bytes, least recently
//! entered keys evicted; one key's records and bytes, a record past them
//! turned away and read as the bound).
//!
//! The store knows no expressions: the caller computes each record's key,
//! event time and aggregate arguments and hands them over.

mod aggregate;
mod bounds;
mod index;
mod key_records;
mod limits;
mod shape;
mod shared;
mod store;

pub use limits::{Bound, WindowLimits};
pub use shape::{Aggregated, Arg, ArgKind, Key, ShapeError, WindowShape};
pub use shared::{Entering, SharedWindowStore};
pub use store::{Ahead, Observation, Ticket, WindowStore};
