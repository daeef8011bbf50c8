//! `cargo xtask`: the project's automation, in Rust so it runs anywhere
//! Cargo does.
//!
//! - `cargo xtask ci`: exactly what CI runs (format check, clippy with
//!   warnings denied, the test suite).

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        _ => {
            eprintln!("usage: cargo xtask ci");
            ExitCode::from(2)
        }
    }
}

/// Runs each CI step in order, stopping at the first failure.
fn ci() -> ExitCode {
    let steps: [&[&str]; 3] = [
        &["fmt", "--all", "--", "--check"],
        &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"],
        &["test", "--workspace"],
    ];
    for step in steps {
        eprintln!("$ cargo {}", step.join(" "));
        let status = Command::new(env!("CARGO")).args(step).status();
        match status {
            Ok(s) if s.success() => {}
            Ok(_) | Err(_) => {
                eprintln!("xtask ci: `cargo {}` failed", step.join(" "));
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
