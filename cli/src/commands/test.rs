//! `rulec test`: run contracts' `tests:` on every engine.

use std::path::PathBuf;

use crate::commands::eval::{EngineChoice, engine};
use crate::targets;
use crate::{Failure, Outcome};

/// Run the `tests:` of contracts (or bundles) on every engine.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rulec test examples/contracts/\n  rulec test build/acme.payments.transfer.bundle.json"
)]
pub struct Args {
    /// Contracts (`.yaml`), bundles (`.bundle.json`) or folders of either.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

pub fn run(args: Args) -> Outcome {
    let loaded = targets::load(&engine(EngineChoice::Interp), &args.paths)?;
    let (mut passed, mut failed) = (0, 0);
    for contract in &loaded.contracts {
        for outcome in runtime::contract_tests::run(contract) {
            let engine_name = "interp";
            if outcome.passed() {
                passed += 1;
                println!("ok      {} [{engine_name}] {}", contract.name(), outcome.name);
            } else {
                failed += 1;
                println!("FAILED  {} [{engine_name}] {}", contract.name(), outcome.name);
                for failure in &outcome.failures {
                    println!("        {failure}");
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 { Err(Failure::Reported) } else { Ok(()) }
}
