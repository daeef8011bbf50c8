//! `cargo xtask`: the project's automation, in Rust so it runs anywhere
//! Cargo does.
//!
//! - `cargo xtask ci`: exactly what CI runs (format check, clippy with
//!   warnings denied, the test suite).
//! - `cargo xtask gen-contract --rules N`, `cargo xtask gen-requests
//!   --count N --items K`: a deterministic generated contract, and requests
//!   for it, on stdout ([`benches::generate`]).
//! - `cargo xtask differential --executions N [--seed S]`: a long
//!   interpreter-vs-native run ([`differential`]);
//!   `cargo xtask differential-contract SEED` prints one generated contract.
//! - `cargo xtask write-models`: the committed ONNX model files, written
//!   from the builders that describe them ([`model_files`]).

mod differential;
mod model_files;

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("gen-contract") => {
            let rules = match args.get(1..) {
                Some([flag, n]) if flag == "--rules" => n.parse().ok(),
                _ => None,
            };
            match rules {
                Some(rules) => {
                    print!("{}", benches::generate::contract(rules));
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!("usage: cargo xtask gen-contract --rules N");
                    ExitCode::from(2)
                }
            }
        }
        Some("gen-requests") => match gen_requests_args(&args[1..]) {
            Some((count, items)) => {
                for seed in 0..count {
                    println!("{}", benches::generate::request(seed, items));
                }
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("usage: cargo xtask gen-requests --count N --items K");
                ExitCode::from(2)
            }
        },
        Some("differential-contract") => match args.get(1).and_then(|seed| seed.parse().ok()) {
            Some(seed) => {
                print!("{}", conformance::differential::contract(seed));
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("usage: cargo xtask differential-contract SEED");
                ExitCode::from(2)
            }
        },
        Some("write-models") => model_files::write(),
        Some("differential") => match differential_args(&args[1..]) {
            Some((executions, seed)) => differential::run(executions, seed),
            None => {
                eprintln!("usage: cargo xtask differential --executions N [--seed S]");
                ExitCode::from(2)
            }
        },
        _ => {
            eprintln!(
                "usage: cargo xtask ci | gen-contract --rules N | differential --executions N [--seed S] | write-models"
            );
            ExitCode::from(2)
        }
    }
}

/// `--count N --items K`.
fn gen_requests_args(args: &[String]) -> Option<(u64, usize)> {
    match args {
        [c, count, i, items] if c == "--count" && i == "--items" => {
            Some((count.parse().ok()?, items.parse().ok()?))
        }
        _ => None,
    }
}

/// `--executions N [--seed S]`.
fn differential_args(args: &[String]) -> Option<(u64, u64)> {
    let (mut executions, mut seed) = (None, 1);
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value: u64 = rest.next()?.parse().ok()?;
        match flag.as_str() {
            "--executions" => executions = Some(value),
            "--seed" => seed = value,
            _ => return None,
        }
    }
    Some((executions?, seed))
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
