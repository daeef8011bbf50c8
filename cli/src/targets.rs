//! Loading what `eval` and `test` run: contracts (compiled in-process),
//! bundles, or folders of either, into an engine; and routing requests to
//! the contract they name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use runtime::{Contract, Engine, Envelope, InvalidInput};

use crate::Failure;
use crate::commands::{Format, compile_and_report};
use crate::inputs::{self, FileKind};

/// The loaded contracts, in the order their files were found.
pub struct Loaded {
    pub contracts: Vec<Arc<Contract>>,
}

/// Compiles or reads every contract and bundle under `paths` and loads
/// them into `engine`. Diagnostics and load errors are reported.
pub fn load(engine: &Engine, paths: &[PathBuf]) -> Result<Loaded, Failure> {
    let files = inputs::expand(paths, &[FileKind::Contract, FileKind::Bundle])?;
    let mut contracts: Vec<Arc<Contract>> = Vec::new();
    let mut failed = false;
    for path in &files {
        match load_one(engine, path) {
            Ok(contract) => {
                if let Some(other) = contracts.iter().find(|c| c.name() == contract.name()) {
                    anstream::eprintln!(
                        "{}: error: the contract `{}` is loaded twice",
                        path.display(),
                        other.name()
                    );
                    failed = true;
                } else {
                    contracts.push(contract);
                }
            }
            Err(Failure::Reported) => failed = true,
            Err(usage) => return Err(usage),
        }
    }
    if failed { Err(Failure::Reported) } else { Ok(Loaded { contracts }) }
}

fn load_one(engine: &Engine, path: &Path) -> Result<Arc<Contract>, Failure> {
    let bundle = if inputs::kind_of(path) == Some(FileKind::Bundle) {
        let bytes = inputs::read_bytes(path)?;
        ir::Bundle::from_json(&bytes).map_err(|e| {
            anstream::eprintln!("{}: error: {e}", path.display());
            Failure::Reported
        })?
    } else {
        let compiled = compile_and_report(path, Format::Human)?;
        compiled.bundle.ok_or(Failure::Reported)?
    };
    engine.load(bundle).map_err(|e| {
        anstream::eprintln!("{}: error: {e}", path.display());
        Failure::Reported
    })
}

impl Loaded {
    /// Says once, on stderr, why a contract could not be compiled to
    /// native code (it runs interpreted).
    pub fn report_native_failures(&self) {
        for contract in &self.contracts {
            if let runtime::engine::NativeStatus::Failed(why) = contract.native_status() {
                anstream::eprintln!("note: `{}` runs interpreted: {why}", contract.name());
            }
        }
    }

    /// The contract a request is for: the one it names, or the only one.
    pub fn route(&self, envelope: &Envelope<'_>) -> Result<&Arc<Contract>, InvalidInput> {
        match &envelope.contract {
            Some(name) => self.contracts.iter().find(|c| c.name() == name).ok_or_else(|| {
                let known: Vec<&str> = self.contracts.iter().map(|c| c.name()).collect();
                InvalidInput::one(
                    "contract",
                    format!("unknown contract {} (loaded: {})", ir::quote::quote(name), known.join(", ")),
                )
            }),
            None if self.contracts.len() == 1 => Ok(&self.contracts[0]),
            None => Err(InvalidInput::one(
                "contract",
                "missing: several contracts are loaded, so the request must name one",
            )),
        }
    }

    /// Evaluates one request line; appends its result or error line.
    pub fn evaluate_line(&self, line: &str, out: &mut Vec<u8>) -> bool {
        let outcome = Envelope::parse(line).and_then(|envelope| {
            let contract = self.route(&envelope)?;
            let request = contract.request_from(&envelope)?;
            Ok((contract, request))
        });
        match outcome {
            Ok((contract, request)) => match contract.evaluate(&request) {
                Ok(result) => {
                    result.write_json(out);
                    true
                }
                Err(e) => {
                    out.extend_from_slice(&e.to_json());
                    false
                }
            },
            Err(invalid) => {
                out.extend_from_slice(&invalid.to_json());
                false
            }
        }
    }
}
