//! The binary never echoes a huge value whole: a request naming a 200 KB
//! contract, or a 100 KB `--channel`, gets a short error.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const CONTRACT: &str = "examples/contracts/acme.payments.transfer.yaml";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn rulec(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rulec"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rulec runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("writes");
    child.wait_with_output().expect("rulec ends")
}

#[test]
fn huge_values_are_cut_in_messages() {
    let name = "x".repeat(200 * 1024);
    let request = format!("{{\"contract\":\"{name}\",\"channel\":\"server\",\"input\":{{}}}}\n");
    let got = rulec(&["eval", CONTRACT, "--engine", "interp"], &request);
    let stdout = String::from_utf8_lossy(&got.stdout);
    assert_eq!(got.status.code(), Some(1));
    assert!(stdout.len() < 300, "{} bytes", stdout.len());
    assert!(stdout.contains(&format!("no contract \\\"{}...\\\" is loaded", "x".repeat(37))), "{stdout}");

    let channel = "y".repeat(100 * 1024);
    let got =
        rulec(&["eval", CONTRACT, "--input", "cli/tests/data/records.ndjson", "--channel", &channel], "");
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), Some(2));
    assert!(stderr.len() < 300, "{} bytes", stderr.len());
    assert!(stderr.contains(&format!("unknown channel \"{}...\"", "y".repeat(37))), "{stderr}");
}
