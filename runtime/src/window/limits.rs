//! The bounds on a window's state (SIGNALS.md, "Windows"): how many keys
//! and how many bytes one window holds in all (past them the least
//! recently seen key is dropped), and how many records and bytes one key
//! holds (a record that would pass them does not enter, and reading its
//! window, or any window that should have held it, is an error naming the
//! bound). Each is counted where it acts.

use std::fmt;

/// The bounds of one window's state; `None` is no bound.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct WindowLimits {
    /// The most keys held (`--max-window-keys`).
    pub keys: Option<usize>,
    /// The most bytes the keys' buffers hold in all (`--max-window-bytes`),
    /// counted as the allocator hands them out: each key, its records and
    /// its block's rounding.
    pub bytes: Option<usize>,
    /// The most records one key holds (`--max-key-records`).
    pub key_records: Option<usize>,
    /// The most bytes one key's key and records take (`--max-key-bytes`),
    /// as they are encoded: a long key counts by its bytes.
    pub key_bytes: Option<usize>,
}

impl WindowLimits {
    /// The defaults of `rulec serve`, `rulec eval` and the Rust API.
    pub const DEFAULT: WindowLimits = WindowLimits {
        keys: Some(1_000_000),
        bytes: Some(256 << 20),
        key_records: Some(100_000),
        key_bytes: Some(1 << 20),
    };

    /// No bound at all (tests of the store's semantics).
    pub const NONE: WindowLimits =
        WindowLimits { keys: None, bytes: None, key_records: None, key_bytes: None };

    /// Whether a key holding `count` records in `len` bytes may take one
    /// more of `record` bytes; the bound it would pass if not.
    pub(super) fn refuses(&self, count: usize, len: usize, record: usize) -> Option<Bound> {
        if let Some(most) = self.key_records
            && count >= most
        {
            return Some(Bound::KeyRecords(most));
        }
        match self.key_bytes {
            Some(most) if len.saturating_add(record) > most => Some(Bound::KeyBytes(most)),
            _ => None,
        }
    }
}

impl Default for WindowLimits {
    fn default() -> WindowLimits {
        WindowLimits::DEFAULT
    }
}

/// A bound on one key that turned a record away.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Bound {
    KeyRecords(usize),
    KeyBytes(usize),
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::KeyRecords(most) => write!(f, "one key holds at most {most} records"),
            Bound::KeyBytes(most) => write!(f, "one key holds at most {most} bytes"),
        }
    }
}
