//! `rulec test`: run contracts' `tests:` on every engine, and check that
//! the engines give the same bytes.

use std::path::PathBuf;

use crate::commands::eval::{EngineChoice, engine};
use crate::commands::targets;
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

/// The engines every test runs on.
const ENGINES: [(&str, EngineChoice); 2] = [("interp", EngineChoice::Interp), ("jit", EngineChoice::Jit)];

pub fn run(args: Args) -> Outcome {
    let sources = targets::read(&args.paths)?;
    let mut runs = Vec::new();
    for (name, choice) in ENGINES {
        let set = targets::load(&engine(choice), &sources)?;
        targets::report_native_failures(&set);
        runs.push((name, set));
    }
    let (mut passed, mut failed) = (0, 0);
    let (_, reference) = &runs[0];
    for (index, contract) in reference.contracts().iter().enumerate() {
        let reference_outcomes = runtime::engine::contract_tests::run(contract);
        for (engine_name, set) in &runs {
            let outcomes = if *engine_name == "interp" {
                reference_outcomes.clone()
            } else {
                runtime::engine::contract_tests::run(&set.contracts()[index])
            };
            for (outcome, expected) in outcomes.iter().zip(&reference_outcomes) {
                let mut failures = outcome.failures.clone();
                if outcome.result != expected.result {
                    failures.push(format!(
                        "engines differ: interp gave {}, {engine_name} gave {}",
                        String::from_utf8_lossy(&expected.result),
                        String::from_utf8_lossy(&outcome.result)
                    ));
                }
                if failures.is_empty() {
                    passed += 1;
                    println!("ok      {} [{engine_name}] {}", contract.name(), outcome.name);
                } else {
                    failed += 1;
                    println!("FAILED  {} [{engine_name}] {}", contract.name(), outcome.name);
                    for failure in &failures {
                        println!("        {failure}");
                    }
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 { Err(Failure::Reported) } else { Ok(()) }
}
