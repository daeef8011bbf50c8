//! The README's two set-up commands stay true: the first (`rulec` on the
//! bundled example) runs this very binary with its arguments and must
//! give a result for every request; the second is what `.ci/run` calls.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The commands of the README's first code block, comments removed.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let block = readme.split("```sh\n").nth(1).and_then(|rest| rest.split("```").next()).expect("a sh block");
    block
        .lines()
        .map(|line| line.split(" # ").next().unwrap_or(line).trim().to_string())
        .filter(|line| !line.is_empty())
        .collect()
}

#[test]
fn the_first_command_evaluates_the_bundled_example() {
    let commands = readme_commands();
    let prefix = "cargo run --release --bin rulec -- ";
    let args = commands[0].strip_prefix(prefix).unwrap_or_else(|| panic!("`{}` runs rulec", commands[0]));
    let output = Command::new(env!("CARGO_BIN_EXE_rulec"))
        .args(args.split_whitespace())
        .current_dir(workspace_root())
        .output()
        .expect("rulec runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{args}: {stdout}{}", String::from_utf8_lossy(&output.stderr));
    let results: Vec<serde_json::Value> =
        stdout.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    assert!(!results.is_empty(), "{args} printed nothing");
    for result in &results {
        assert!(result["decision"].is_string(), "{args}: not a result: {result}");
    }
}

#[test]
fn the_second_command_is_what_ci_runs() {
    let commands = readme_commands();
    let ci = std::fs::read_to_string(workspace_root().join(".ci/run")).expect(".ci/run");
    assert!(ci.lines().any(|line| line.trim() == commands[1]), "`.ci/run` calls `{}`", commands[1]);
}
