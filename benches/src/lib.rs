//! The benchmark harness behind `rulec bench`: the same requests for
//! every target, round-robin on one thread, with warm-up, several measured
//! runs, per-evaluation timing on the monotonic clock, medians and ranges.
//!
//! - [`harness`]: timing, statistics and the report (markdown or JSON);
//! - [`targets`]: what is measured (the interpreter, JSON end to end, ...);
//! - [`native`]: the reference contract written by hand, the limit;
//! - [`compile`]: the compile-time bench, stage by stage;
//! - [`generate`]: deterministic generated contracts of any size.
//!
//! A measurement tool, never a gate: nothing fails on a slow number.

pub mod compile;
pub mod generate;
pub mod harness;
pub mod machine;
pub mod native;
pub mod targets;

pub use harness::{Report, Settings, TargetReport, run};
