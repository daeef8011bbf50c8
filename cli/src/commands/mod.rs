//! One module per subcommand, each with its clap `Args` and a `run`.

pub mod bench;
pub mod bench_batch;
pub mod bench_server;
pub mod check;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod compile;
pub mod eval;
pub mod fmt;
pub mod inspect;
pub mod lsp;
pub mod schema;
pub mod serve;
#[cfg(feature = "sql")]
pub mod sql;
pub mod targets;
pub mod test;
pub mod window_limits;

use std::path::Path;

use frontend::Compiled;

use crate::Failure;
use crate::inputs;

/// How diagnostics are printed.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Format {
    /// rustc-style messages with the source underlined, on stderr.
    #[default]
    Human,
    /// One JSON object per diagnostic, on stdout.
    Json,
}

/// Compiles one contract file and prints its diagnostics.
pub fn compile_and_report(path: &Path, format: Format) -> Result<Compiled, Failure> {
    let text = inputs::read_text(path)?;
    let compiled = frontend::compile_file(&path.display().to_string(), &text);
    report(&compiled.diagnostics, format);
    Ok(compiled)
}

pub fn report(diagnostics: &frontend::Diagnostics, format: Format) {
    if diagnostics.items.is_empty() {
        return;
    }
    match format {
        Format::Human => anstream::eprint!("{}", diagnostics.render(true)),
        Format::Json => print!("{}", diagnostics.to_json_lines()),
    }
}

/// The closing line of `check` and `compile` in human format.
pub fn summary(verb: &str, files: usize, errors: usize, warnings: usize) {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    anstream::eprintln!(
        "{verb} {}: {}, {}",
        plural(files, "contract"),
        plural(errors, "error"),
        plural(warnings, "warning")
    );
}
