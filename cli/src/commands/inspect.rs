//! `rulec inspect`: show a stage's output for a contract or bundle.

use std::path::PathBuf;

use super::{Format, compile_and_report};
use crate::inputs::{self, FileKind};
use crate::{Failure, Outcome};

/// What to show.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Emit {
    /// The syntax tree, expressions fully parenthesised (contracts only).
    Ast,
    /// The typed IR after verification.
    Ir,
}

/// Show what a compiler stage produced for a contract or a bundle.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rulec inspect transfer.yaml --emit ast\n  rulec inspect build/acme.payments.transfer.bundle.json --emit ir"
)]
pub struct Args {
    /// A contract (`.yaml`) or a bundle (`.bundle.json`).
    target: PathBuf,
    /// The stage to show.
    #[arg(long, value_enum)]
    emit: Emit,
}

pub fn run(args: Args) -> Outcome {
    let is_bundle = inputs::kind_of(&args.target) == Some(FileKind::Bundle);
    match (args.emit, is_bundle) {
        (Emit::Ast, true) => {
            Err(Failure::Usage("a bundle has no syntax tree: inspect the contract's .yaml".into()))
        }
        (Emit::Ir, true) => {
            let bytes = inputs::read_bytes(&args.target)?;
            let bundle = ir::Bundle::from_json(&bytes).map_err(|e| {
                anstream::eprintln!("{}: error: {e}", args.target.display());
                Failure::Reported
            })?;
            print!("{}", ir::print::print(bundle.contract()));
            Ok(())
        }
        (emit, false) => {
            let compiled = compile_and_report(&args.target, Format::Human)?;
            match (emit, compiled.ast, compiled.bundle) {
                (Emit::Ast, Some(ast), _) if !compiled.diagnostics.has_errors() => {
                    print!("{}", frontend::ast_print::print(&ast));
                    Ok(())
                }
                (Emit::Ir, _, Some(bundle)) => {
                    print!("{}", ir::print::print(bundle.contract()));
                    Ok(())
                }
                _ => Err(Failure::Reported),
            }
        }
    }
}
