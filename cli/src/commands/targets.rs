//! What `eval` and `test` run: the contract set of the paths given. The
//! runtime walks the folders, reads bundles, checks names and loads the
//! set (`runtime::contract_set`); YAML is compiled here, by the front
//! end, with its warnings reported; every problem goes to stderr.

use std::path::{Path, PathBuf};

use runtime::contract_set::{self, LoadFailure, Source};
use runtime::{ContractSet, Engine};

use crate::Failure;
use crate::commands::{Format, report};

/// Reads and compiles every contract and bundle under `paths` (each name
/// once), ready to load into any engine.
pub fn read(paths: &[PathBuf]) -> Result<Vec<Source>, Failure> {
    contract_set::load::read(paths, &mut compile).map_err(reported)
}

/// Loads `sources` into `engine`.
pub fn load(engine: &Engine, sources: &[Source]) -> Result<ContractSet, Failure> {
    contract_set::load::load(engine, sources).map_err(reported)
}

/// A contract's YAML to its bundle; its warnings are printed here, its
/// errors are the loader's problem to report.
fn compile(path: &Path, text: &str) -> Result<ir::Bundle, String> {
    let compiled = frontend::compile_file(&path.display().to_string(), text);
    match compiled.bundle {
        Some(bundle) => {
            report(&compiled.diagnostics, Format::Human);
            Ok(bundle)
        }
        None => Err(compiled.diagnostics.render(true).trim_end().to_string()),
    }
}

/// A failure to load, its problems printed: exit 2 when a path could not
/// be read, else 1.
fn reported(failure: LoadFailure) -> Failure {
    match failure {
        LoadFailure::Io(message) => Failure::Usage(message),
        LoadFailure::Contracts(problems) => {
            for problem in problems {
                anstream::eprintln!("{problem}");
            }
            Failure::Reported
        }
    }
}

/// Says once, on stderr, why a contract could not be compiled to native
/// code (it runs interpreted).
pub fn report_native_failures(set: &ContractSet) {
    for contract in set.contracts() {
        if let runtime::engine::NativeStatus::Failed(why) = contract.native_status() {
            anstream::eprintln!("note: `{}` runs interpreted: {why}", contract.name());
        }
    }
}
