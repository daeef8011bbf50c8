//! `rulec check`: parse and type-check contracts, report every problem.

use std::path::PathBuf;

use super::{Format, compile_and_report, summary};
use crate::inputs;
use crate::{Failure, Outcome};

/// Parse and type-check contracts; report every problem at once.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rulec check examples/contracts/\n  rulec check transfer.yaml --format json"
)]
pub struct Args {
    /// Contract files (`.yaml`) or folders of them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// `human` (rustc-style, on stderr) or `json` (one object per line, on stdout).
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args) -> Outcome {
    let files = inputs::contract_files(&args.paths)?;
    let (mut errors, mut warnings) = (0, 0);
    for path in &files {
        let compiled = compile_and_report(path, args.format)?;
        errors += compiled.diagnostics.error_count();
        warnings += compiled.diagnostics.items.len() - compiled.diagnostics.error_count();
    }
    if args.format == Format::Human {
        summary("checked", files.len(), errors, warnings);
    }
    if errors > 0 { Err(Failure::Reported) } else { Ok(()) }
}
