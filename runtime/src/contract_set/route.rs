//! Routing: the contract a request is for (the one it names, or the only
//! one loaded), and the one message when there is none, whoever asks
//! (`rulec eval`, a JSON or NDJSON request to the server, a batch's
//! `?contract=`). An unknown name is answered with the closest loaded
//! name when one is close enough to be a typo, and the loaded names.

use std::fmt;
use std::sync::Arc;

use ir::quote::quote;

use super::ContractSet;
use crate::engine::Contract;
use crate::input::request::InvalidInput;

/// The most names a message lists.
const LISTED: usize = 8;

/// Why a request has no contract.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum RouteError {
    /// It names a contract the set does not hold (the server's 404).
    Unknown { message: String },
    /// It names none, and the set holds several (invalid input, 400).
    Missing { message: String },
}

impl RouteError {
    pub fn message(&self) -> &str {
        match self {
            RouteError::Unknown { message } | RouteError::Missing { message } => message,
        }
    }

    /// The error's line: `{"error":{"kind":"unknown_contract","message":...}}`
    /// for an unknown name; for a request that names none, the
    /// invalid-input line, at the path `contract`.
    pub fn to_json(&self) -> Vec<u8> {
        match self {
            RouteError::Unknown { message } => {
                let mut out = b"{\"error\":{\"kind\":\"unknown_contract\",\"message\":".to_vec();
                crate::value::write_json_str(message, &mut out);
                out.extend_from_slice(b"}}");
                out
            }
            RouteError::Missing { message } => InvalidInput::one("contract", message.as_str()).to_json(),
        }
    }
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for RouteError {}

impl ContractSet {
    /// The contract a request is for: the one it names, or, when it names
    /// none, the only one loaded.
    pub fn route(&self, name: Option<&str>) -> Result<&Arc<Contract>, RouteError> {
        match (name, self.contracts()) {
            (Some(name), _) => {
                self.get(name).ok_or_else(|| RouteError::Unknown { message: unknown(self, name) })
            }
            (None, [only]) => Ok(only),
            (None, _) => Err(RouteError::Missing { message: missing(self) }),
        }
    }
}

/// `no contract "acme.payments.transfr" is loaded; did you mean
/// `acme.payments.transfer`? (loaded: ...)`.
fn unknown(set: &ContractSet, name: &str) -> String {
    let mut message = format!("no contract {} is loaded", quote(name));
    if let Some(best) = ir::names::closest(name, set.names()) {
        message.push_str(&format!("; did you mean `{best}`?"));
    }
    message.push_str(&format!(" (loaded: {})", listed(set)));
    message
}

fn missing(set: &ContractSet) -> String {
    if set.is_empty() {
        return "no contract is loaded".to_string();
    }
    format!("several contracts are loaded ({}): name one in `contract`", listed(set))
}

/// The set's names, the first [`LISTED`] of them and how many more.
fn listed(set: &ContractSet) -> String {
    if set.is_empty() {
        return "none".to_string();
    }
    let names: Vec<&str> = set.names().take(LISTED).collect();
    match set.len() - names.len() {
        0 => names.join(", "),
        more => format!("{}, and {more} more", names.join(", ")),
    }
}
