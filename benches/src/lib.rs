//! The benchmark harness behind `rulec bench`.
//!
//! Not yet built: issue 5 fills this crate.
