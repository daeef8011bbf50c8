//! `rulec test`: run contracts' `tests:` on every engine, and check that
//! the engines give the same bytes; `--coverage` reports what they left
//! untried (`crate::coverage`).

use std::path::PathBuf;

use runtime::contract_set::load::Source;

use crate::commands::eval::{EngineChoice, engine};
use crate::commands::targets;
use crate::coverage;
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
    /// Also report what the tests left untried: rules never fired or fired in every test,
    /// condition operands never true or never false, lets never read, table rows never matched.
    #[arg(long)]
    coverage: bool,
    /// The coverage report's format: `text` (each gap at its source line), `json` or `lcov`.
    #[arg(long, value_enum, default_value_t, requires = "coverage")]
    coverage_format: coverage::Format,
    /// Write the coverage report to this file instead of stdout.
    #[arg(long, requires = "coverage")]
    coverage_output: Option<PathBuf>,
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
    if args.coverage {
        failed += report_coverage(&args, &sources, &runs[runs.len() - 1].1)?;
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 { Err(Failure::Reported) } else { Ok(()) }
}

/// Writes the coverage of every contract's tests (measured on `set`,
/// whose native code is checked against the interpreter); the number of
/// tests where the engines fired different rules.
fn report_coverage(args: &Args, sources: &[Source], set: &runtime::ContractSet) -> Result<usize, Failure> {
    let mut text = String::new();
    let mut documents = Vec::new();
    let mut differ = 0;
    for contract in set.contracts() {
        let path = sources
            .iter()
            .find(|s| s.bundle.contract().name == contract.name())
            .map_or_else(PathBuf::new, |s| s.path.clone());
        let report =
            coverage::report(contract.ir(), &path, &runtime::engine::contract_tests::cover(contract));
        differ += report.disagreements().len();
        match args.coverage_format {
            coverage::Format::Text => text.push_str(&report.text()),
            coverage::Format::Lcov => text.push_str(&report.lcov()),
            coverage::Format::Json => documents.push(report.json()),
        }
    }
    if args.coverage_format == coverage::Format::Json {
        text = format!("{}\n", serde_json::json!({ "contracts": documents }));
    }
    match &args.coverage_output {
        Some(file) => std::fs::write(file, text)
            .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", file.display())))?,
        None => print!("{text}"),
    }
    Ok(differ)
}
