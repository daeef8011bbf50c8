//! The conformance suite every engine must pass.
//!
//! Not yet built: issue 3 fills this crate with cases and snapshots.
