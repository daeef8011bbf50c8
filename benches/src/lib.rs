//! The benchmark harness behind `rulec bench`: the same requests for
//! every target, round-robin on one thread, with warm-up, several measured
//! runs, per-evaluation timing on the monotonic clock, medians and ranges.
//!
//! - [`harness`]: timing, statistics and the report (markdown or JSON);
//! - [`targets`]: what is measured (the interpreter, JSON end to end, ...);
//! - [`native`]: the reference contract written by hand, the limit;
//! - `peers` (feature `peers`): the reference contract in other engines
//!   (zen-engine, CEL, JSONLogic, rhai); [`peer`] sets one up, or says why
//!   it cannot run;
//! - [`compile`]: the compile-time bench, stage by stage;
//! - [`generate`]: deterministic generated contracts of any size;
//! - [`load`]: the HTTP load generator behind `rulec bench --server`;
//! - [`matrix`]: the batch matrix behind `rulec bench --batch`;
//! - [`cluster`]: a local cluster of `rulec cluster` processes (the
//!   matrix's cluster rows, and the CLI's cluster test).
//!
//! A measurement tool, never a gate: nothing fails on a slow number.

pub mod cluster;
pub mod compile;
pub mod generate;
pub mod harness;
pub mod load;
pub mod machine;
pub mod matrix;
pub mod native;
#[cfg(feature = "peers")]
pub mod peers;
pub mod targets;
pub mod workload;

pub use harness::{Report, Settings, TargetReport, run};

/// The peer engines `rulec bench` measures, in report order.
pub const PEERS: [&str; 4] = ["zen", "cel", "datalogic", "rhai"];

/// Why a build without the `peers` feature skips every peer.
pub const WITHOUT_PEERS: &str =
    "built without the `peers` feature: `cargo build --release --bin rulec --features peers`";

/// Sets up peer `name` (one of [`PEERS`]) on `workload`, the reference
/// workload: the target to measure and how its semantics differ from
/// rulec's, or why it cannot run (in a build without the `peers` feature,
/// [`WITHOUT_PEERS`]).
pub fn peer(
    name: &str,
    workload: &targets::Workload,
) -> Result<(Box<dyn harness::Target>, &'static str), String> {
    #[cfg(feature = "peers")]
    {
        peers::build(name, workload).map(|peer| {
            let notes = peer.notes();
            (peer as Box<dyn harness::Target>, notes)
        })
    }
    #[cfg(not(feature = "peers"))]
    {
        let _ = (name, workload);
        Err(WITHOUT_PEERS.to_string())
    }
}
