//! One set of contracts, the one every front end serves: `rulec eval` and
//! `rulec test`, the rule server and the batch runs they start; its
//! [`revision`](ContractSet::revision) names it by its content.
//!
//! - [`ContractSet`]: contracts by name, sorted, each name once;
//! - [`route`]: the contract a request names, or the only one, and the
//!   one message when there is none ([`RouteError`]);
//! - [`line`]: a request line's bytes to its result line's bytes
//!   ([`ContractSet::evaluate_line`]), the one path of every caller;
//! - [`walk`]: the one folder walker (which files are contracts and
//!   bundles; names starting with `.` skipped);
//! - [`load`]: the files found, read, compiled (YAML through a function
//!   the caller passes: compiling is the front end's job, and this crate
//!   never depends on it), checked for duplicate names, and loaded into
//!   an engine as a set.

pub mod line;
pub mod load;
pub mod route;
pub mod walk;

use std::sync::Arc;

use crate::engine::Contract;

pub use line::{Line, LineOutcome, Refused};
pub use load::{CompileYaml, LoadFailure, Source};
pub use route::RouteError;
pub use walk::{FileKind, Found};

/// Contracts by name: what one `rulec eval` loads and one server revision
/// serves.
#[derive(Clone, Debug, Default)]
pub struct ContractSet {
    /// Sorted by name; no name twice.
    contracts: Vec<Arc<Contract>>,
}

impl ContractSet {
    /// The set of `contracts`; two with the same name are an error naming
    /// it (the loader names the files: [`load::duplicates`]).
    pub fn new(mut contracts: Vec<Arc<Contract>>) -> Result<ContractSet, String> {
        contracts.sort_by(|a, b| a.name().cmp(b.name()));
        if let Some(pair) = contracts.windows(2).find(|pair| pair[0].name() == pair[1].name()) {
            return Err(format!("error: the contract `{}` is in the set twice", pair[0].name()));
        }
        Ok(ContractSet { contracts })
    }

    /// Every contract, sorted by name.
    pub fn contracts(&self) -> &[Arc<Contract>] {
        &self.contracts
    }

    /// Every contract's name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.contracts.iter().map(|c| c.name())
    }

    pub fn len(&self) -> usize {
        self.contracts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.contracts.is_empty()
    }

    /// The set's revision, from its content alone: the SHA-256 of each
    /// contract's name and bundle hash, in name order, as `sha256:` and
    /// its first 16 hex digits. Processes holding the same contracts
    /// report the same revision, whenever and however they loaded them
    /// (replicas behind a load balancer agree; a client tells which rules
    /// answered).
    pub fn revision(&self) -> String {
        let mut content = Vec::with_capacity(self.contracts.len() * 96);
        for contract in &self.contracts {
            content.extend_from_slice(contract.name().as_bytes());
            content.push(b'\n');
            content.extend_from_slice(contract.hash().as_bytes());
            content.push(b'\n');
        }
        let mut revision = ir::digest::sha256_of(&content);
        revision.truncate("sha256:".len() + 16);
        revision
    }

    /// The contract called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Contract>> {
        let index = self.contracts.binary_search_by(|c| c.name().cmp(name)).ok()?;
        Some(&self.contracts[index])
    }
}
