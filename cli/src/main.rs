//! `rulec`: the command-line front of the contract compiler and runtime.
//!
//! Each subcommand lives in [`commands`]; this file parses the command
//! line and turns outcomes into exit codes: 0 success, 1 a contract or
//! request is wrong (diagnostics were printed), 2 usage, configuration or
//! I/O errors.

// One `unsafe` block: SIGPIPE's default action back ([`pipe`]).
#![deny(unsafe_code)]

mod batch;
mod commands;
mod coverage;
mod explain;
mod inputs;
mod pipe;
mod written;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc keeps freed memory for reuse instead of returning it to the
/// kernel, which hands it back zeroed page by page (see Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How a command ended, short of success.
#[derive(Debug)]
pub enum Failure {
    /// Diagnostics or invalid requests were reported (exit 1).
    Reported,
    /// Usage, configuration or I/O problem, with its message (exit 2).
    Usage(String),
}

pub type Outcome = Result<(), Failure>;

#[derive(Parser, Debug)]
#[command(
    name = "rulec",
    version,
    about = "Compiler and runtime for YAML rule contracts",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Check(commands::check::Args),
    Fmt(commands::fmt::Args),
    Compile(commands::compile::Args),
    Inspect(commands::inspect::Args),
    Eval(commands::eval::Args),
    Test(commands::test::Args),
    Bench(commands::bench::Args),
    Serve(commands::serve::Args),
    Lsp(commands::lsp::Args),
    Schema(commands::schema::Args),
    #[cfg(feature = "sql")]
    Sql(commands::sql::Args),
    #[cfg(feature = "cluster")]
    Cluster(commands::cluster::Args),
}

impl Command {
    /// Whether what the command writes to stdout is its product, which a
    /// reader may stop reading ([`pipe`]): not so for the servers and the
    /// benches, which talk to peers and children.
    fn writes_its_product(&self) -> bool {
        !matches!(self, Command::Bench(_) | Command::Serve(_) | Command::Lsp(_)) && !self.is_cluster()
    }

    #[cfg(feature = "cluster")]
    fn is_cluster(&self) -> bool {
        matches!(self, Command::Cluster(_))
    }

    #[cfg(not(feature = "cluster"))]
    fn is_cluster(&self) -> bool {
        false
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.command.writes_its_product() {
        pipe::end_when_the_reader_stops();
    }
    let outcome = match cli.command {
        Command::Check(args) => commands::check::run(args),
        Command::Fmt(args) => commands::fmt::run(args),
        Command::Compile(args) => commands::compile::run(args),
        Command::Inspect(args) => commands::inspect::run(args),
        Command::Eval(args) => commands::eval::run(args),
        Command::Test(args) => commands::test::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Lsp(args) => commands::lsp::run(args),
        Command::Schema(args) => commands::schema::run(args),
        #[cfg(feature = "sql")]
        Command::Sql(args) => commands::sql::run(args),
        #[cfg(feature = "cluster")]
        Command::Cluster(args) => commands::cluster::run(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Reported) => ExitCode::from(1),
        Err(Failure::Usage(message)) => {
            anstream::eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
