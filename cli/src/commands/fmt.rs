//! `rulec fmt`: rewrite contracts in the one layout (docs/FORMAT.md),
//! comments kept; `--check` lists the files it would change, for CI; no
//! path formats stdin to stdout, for editors.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use frontend::{Diagnostics, SourceFile};

use super::{Format, report};
use crate::inputs;
use crate::{Failure, Outcome};

/// Format contracts in place (or stdin to stdout), keeping every comment.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rulec fmt examples/contracts/\n  rulec fmt --check .\n  rulec fmt < transfer.yaml > formatted.yaml"
)]
pub struct Args {
    /// Contract files (`.yaml`, `.yml`) or folders of them; none reads stdin and writes stdout.
    paths: Vec<PathBuf>,
    /// Change nothing: list the files that are not formatted and exit 1 if there are any.
    #[arg(long)]
    check: bool,
    /// How a file that cannot be read as YAML is reported: `human` or `json`.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args) -> Outcome {
    if args.paths.is_empty() {
        return stdin(&args);
    }
    let files = inputs::contract_files(&args.paths)?;
    let (mut unformatted, mut failed) = (0, 0);
    for path in &files {
        let text = inputs::read_text(path)?;
        let Some(formatted) = formatted(&path.display().to_string(), &text, args.format) else {
            failed += 1;
            continue;
        };
        if formatted == text {
            continue;
        }
        unformatted += 1;
        if args.check {
            println!("{}", path.display());
        } else {
            write(path, &formatted)?;
        }
    }
    if failed > 0 || (args.check && unformatted > 0) { Err(Failure::Reported) } else { Ok(()) }
}

/// Formats stdin to stdout; with `--check`, prints nothing and exits 1 when
/// it is not formatted.
fn stdin(args: &Args) -> Outcome {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::Usage(format!("cannot read stdin: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        anstream::eprintln!(
            "<stdin>: error: the input is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        );
        Failure::Reported
    })?;
    let formatted = formatted("<stdin>", &text, args.format).ok_or(Failure::Reported)?;
    if args.check {
        return if formatted == text { Ok(()) } else { Err(Failure::Reported) };
    }
    std::io::stdout()
        .write_all(formatted.as_bytes())
        .map_err(|e| Failure::Usage(format!("cannot write stdout: {e}")))
}

/// The formatted text, or `None` once the reasons it cannot be were printed.
fn formatted(name: &str, text: &str, format: Format) -> Option<String> {
    let file = SourceFile::new(name, text);
    match frontend::format::format(&file) {
        Ok(formatted) => Some(formatted),
        Err(items) => {
            report(&Diagnostics { file, items }, format);
            None
        }
    }
}

/// Replaces `path`'s text through a file beside it, so that an
/// interrupted write leaves the original whole.
fn write(path: &Path, text: &str) -> Outcome {
    let staged = batch::output::Staged::beside(path).map_err(Failure::Usage)?;
    std::fs::write(staged.path(), text)
        .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", path.display())))?;
    staged.commit().map_err(Failure::Usage)
}
