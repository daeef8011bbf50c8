//! The reference workload's files, built in (every benchmark and peer reads
//! them from here).

/// The reference workload, built in: the transfer contract and its four
/// benchmark requests, exactly as `../shared/workloads/transfer/` has them.
pub const TRANSFER_CONTRACT: &str = include_str!("../data/transfer/acme.payments.transfer.yaml");
pub const TRANSFER_REQUESTS: &str = include_str!("../data/transfer/bench-requests.ndjson");
