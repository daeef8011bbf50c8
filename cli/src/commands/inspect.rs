//! `rulec inspect`: show a stage's output for a contract or bundle: the
//! syntax tree, the IR, and the native code (Cranelift IR, or machine
//! code for x86-64 or aarch64, whatever the host).

use std::path::PathBuf;

use super::{Format, compile_and_report};
use crate::inputs;
use crate::{Failure, Outcome};

/// What to show.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Emit {
    /// The syntax tree, expressions fully parenthesised (contracts only).
    Ast,
    /// The typed IR after verification.
    Ir,
    /// The Cranelift IR of every native function (lets, rules, entry).
    Clif,
    /// The machine code of every native function, disassembled.
    Asm,
}

/// A target for `--emit asm`.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Target {
    #[value(name = "x86_64")]
    X86_64,
    #[value(name = "aarch64")]
    Aarch64,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::X86_64 => "x86_64",
            Target::Aarch64 => "aarch64",
        }
    }

    fn host() -> Target {
        if cfg!(target_arch = "aarch64") { Target::Aarch64 } else { Target::X86_64 }
    }
}

/// Show what a compiler stage produced for a contract or a bundle.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rulec inspect transfer.yaml --emit ast\n  rulec inspect build/acme.payments.transfer.bundle.json --emit ir\n  rulec inspect transfer.yaml --emit asm --target aarch64"
)]
pub struct Args {
    /// A contract (`.yaml`) or a bundle (`.bundle.json`).
    #[arg(value_name = "TARGET")]
    path: PathBuf,
    /// The stage to show.
    #[arg(long, value_enum)]
    emit: Emit,
    /// The machine code's target for `--emit clif|asm` (default: the host).
    #[arg(long, value_enum)]
    target: Option<Target>,
}

pub fn run(args: Args) -> Outcome {
    if args.target.is_some() && !matches!(args.emit, Emit::Clif | Emit::Asm) {
        return Err(Failure::Usage("--target goes with --emit clif or --emit asm".into()));
    }
    let is_bundle = inputs::is_bundle(&args.path);
    match (args.emit, is_bundle) {
        (Emit::Clif | Emit::Asm, _) => native(&args, is_bundle),
        (Emit::Ast, true) => {
            Err(Failure::Usage("a bundle has no syntax tree: inspect the contract's .yaml".into()))
        }
        (Emit::Ir, true) => {
            let bytes = inputs::read_bytes(&args.path)?;
            let bundle = ir::Bundle::from_json(&bytes).map_err(|e| {
                anstream::eprintln!("{}: error: {e}", args.path.display());
                Failure::Reported
            })?;
            print!("{}", ir::print::print(bundle.contract()));
            Ok(())
        }
        (emit, false) => {
            let compiled = compile_and_report(&args.path, Format::Human)?;
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

/// `--emit clif|asm`: the native code of the contract for a target.
fn native(args: &Args, is_bundle: bool) -> Outcome {
    let bundle = if is_bundle {
        let bytes = inputs::read_bytes(&args.path)?;
        ir::Bundle::from_json(&bytes).map_err(|e| {
            anstream::eprintln!("{}: error: {e}", args.path.display());
            Failure::Reported
        })?
    } else {
        compile_and_report(&args.path, Format::Human)?.bundle.ok_or(Failure::Reported)?
    };
    let program =
        runtime::program::Program::new(std::sync::Arc::new(bundle.contract().clone())).map_err(|e| {
            anstream::eprintln!("{}: error: {e}", args.path.display());
            Failure::Reported
        })?;
    let what =
        if args.emit == Emit::Clif { backend::inspect::Emit::Clif } else { backend::inspect::Emit::Asm };
    let target = args.target.unwrap_or_else(Target::host);
    let text = backend::inspect::emit(&program, target.name(), what).map_err(|e| {
        anstream::eprintln!("{}: error: {e}", args.path.display());
        Failure::Reported
    })?;
    print!("{text}");
    Ok(())
}
