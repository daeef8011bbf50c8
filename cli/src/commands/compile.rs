//! `rulec compile`: write one bundle per contract.

use std::path::PathBuf;

use super::{Format, compile_and_report, summary};
use crate::inputs;
use crate::{Failure, Outcome};

/// Compile contracts to bundles: one `<contract>.bundle.json` per contract.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rulec compile examples/contracts/ -o build/\n  rulec compile transfer.yaml -o out/"
)]
pub struct Args {
    /// Contract files (`.yaml`) or folders of them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The folder to write bundles to (created if needed).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: PathBuf,
    /// `human` (rustc-style, on stderr) or `json` (one object per line, on stdout).
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args) -> Outcome {
    let files = inputs::contract_files(&args.paths)?;
    let mut bundles = Vec::new();
    let (mut errors, mut warnings) = (0, 0);
    for path in &files {
        let compiled = compile_and_report(path, args.format)?;
        errors += compiled.diagnostics.error_count();
        warnings += compiled.diagnostics.items.len() - compiled.diagnostics.error_count();
        if let Some(bundle) = compiled.bundle {
            bundles.push((path.clone(), bundle));
        }
    }
    let names = bundles.iter().map(|(path, bundle)| (path.as_path(), bundle.contract().name.as_str()));
    for duplicate in runtime::contract_set::load::duplicates(names) {
        anstream::eprintln!("{duplicate}");
        errors += 1;
    }
    if errors == 0 {
        std::fs::create_dir_all(&args.out)
            .map_err(|e| Failure::Usage(format!("cannot create {}: {e}", args.out.display())))?;
        for (_, bundle) in &bundles {
            let target = args.out.join(format!("{}.bundle.json", bundle.contract().name));
            std::fs::write(&target, bundle.to_json())
                .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", target.display())))?;
        }
    }
    if args.format == Format::Human {
        summary("compiled", files.len(), errors, warnings);
    }
    if errors > 0 { Err(Failure::Reported) } else { Ok(()) }
}
