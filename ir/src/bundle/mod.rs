//! Bundles: a compiled contract as one deterministic, versioned JSON file.
//!
//! A bundle holds a format tag and version, the compiler's version, the
//! contract's IR ([`model`] gives the shapes) and a sha256 hash of the
//! canonical form: the document serialised compactly with an empty `hash`.
//! Writing is deterministic (no hash-map iteration anywhere), so the same
//! contract always gives the same bytes.
//!
//! Loading parses the document, rebuilds the IR, runs the verifier and
//! recomputes the hash from the rebuilt IR: a truncated, damaged or
//! hand-edited bundle is refused with an error that says what is wrong.

mod decode;
mod encode;
mod model;

use std::fmt;
use std::sync::Arc;

use crate::contract::Contract;
use crate::verify;

/// The `format` tag of every bundle.
pub const FORMAT: &str = "rulec.bundle";
/// The version of the bundle format this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// The compiler that writes bundles, recorded in each one.
pub const COMPILER: &str = concat!("rulec ", env!("CARGO_PKG_VERSION"));
/// Bundles larger than this are refused before parsing, and the compiler
/// writes none larger: the one limit of a bundle's size.
pub const MAX_BUNDLE_BYTES: usize = 256 << 20;
/// The largest model file a bundle can hold: its base64 (four bytes for
/// three) alone fills [`MAX_BUNDLE_BYTES`]. The compiler refuses a larger
/// file before reading it; whether a smaller one fits with the rest is
/// [`Bundle::json_len`] against the limit.
pub const MAX_MODEL_BYTES: usize = MAX_BUNDLE_BYTES / 4 * 3;

/// A verified contract with its content hash, ready for any engine.
#[derive(Clone, Debug)]
pub struct Bundle {
    contract: Arc<Contract>,
    compiler: String,
    hash: String,
}

/// Why a bundle was refused.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BundleError {
    pub message: String,
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BundleError {}

fn error(message: impl Into<String>) -> BundleError {
    BundleError { message: message.into() }
}

impl Bundle {
    /// Verifies a freshly built contract and seals it with its hash.
    pub fn new(contract: Contract) -> Result<Bundle, BundleError> {
        verify::verify(&contract).map_err(|errors| verify_error(&errors))?;
        let compiler = COMPILER.to_string();
        let hash = content_hash(&contract, &compiler);
        Ok(Bundle { contract: Arc::new(contract), compiler, hash })
    }

    /// Reads and fully validates a bundle file's bytes.
    pub fn from_json(bytes: &[u8]) -> Result<Bundle, BundleError> {
        if bytes.len() > MAX_BUNDLE_BYTES {
            return Err(error(format!(
                "the bundle is {} bytes; the limit is {MAX_BUNDLE_BYTES}",
                bytes.len()
            )));
        }
        let doc: model::BundleDoc = serde_json::from_slice(bytes).map_err(|e| {
            let hint = if e.is_eof() { " (the file looks truncated)" } else { "" };
            error(format!("not a valid bundle: {e}{hint}"))
        })?;
        if doc.format != FORMAT {
            return Err(error(format!(
                "not a rulec bundle: format is `{}`, expected `{FORMAT}`",
                doc.format
            )));
        }
        if doc.format_version != FORMAT_VERSION {
            return Err(error(format!(
                "bundle format version {} is not supported (this rulec reads version {FORMAT_VERSION}); recompile the contract",
                doc.format_version
            )));
        }
        let claimed = doc.hash;
        let compiler = doc.compiler;
        let contract = decode::contract(doc.contract).map_err(|m| error(format!("invalid bundle: {m}")))?;
        verify::verify(&contract).map_err(|errors| verify_error(&errors))?;
        let hash = content_hash(&contract, &compiler);
        if hash != claimed {
            return Err(error(format!(
                "the bundle's content does not match its hash (it was edited or damaged): stored {claimed}, computed {hash}"
            )));
        }
        Ok(Bundle { contract: Arc::new(contract), compiler, hash })
    }

    /// The bundle file's bytes: pretty JSON ending in a newline.
    pub fn to_json(&self) -> Vec<u8> {
        let doc = document(&self.contract, &self.compiler, self.hash.clone());
        let mut bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// The length of [`Bundle::to_json`], counted without keeping the
    /// bytes.
    pub fn json_len(&self) -> usize {
        let doc = document(&self.contract, &self.compiler, self.hash.clone());
        let mut counter = Counter(0);
        serde_json::to_writer_pretty(&mut counter, &doc).unwrap_or_default();
        counter.0 + 1
    }

    pub fn contract(&self) -> &Contract {
        &self.contract
    }

    /// The contract, shareable between engines and threads.
    pub fn contract_arc(&self) -> Arc<Contract> {
        Arc::clone(&self.contract)
    }

    /// `sha256:<hex>` of the canonical form.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The compiler that wrote the bundle, e.g. `rulec 0.1.0`.
    pub fn compiler(&self) -> &str {
        &self.compiler
    }
}

/// A writer that counts the bytes written to it.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn verify_error(errors: &[verify::VerifyError]) -> BundleError {
    let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
    error(format!("the contract fails verification: {}", listed.join("; ")))
}

fn document(contract: &Contract, compiler: &str, hash: String) -> model::BundleDoc {
    model::BundleDoc {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        compiler: compiler.to_string(),
        hash,
        contract: encode::contract(contract),
    }
}

fn content_hash(contract: &Contract, compiler: &str) -> String {
    let canonical = serde_json::to_vec(&document(contract, compiler, String::new())).unwrap_or_default();
    crate::digest::sha256_of(&canonical)
}
