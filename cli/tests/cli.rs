//! The `rulec` binary, run as a process on the cases in `tests/cases/`.
//!
//! A case file holds one step per line: `rulec` arguments (optionally
//! ending in `< FILE` to feed stdin), or a `%` line that prepares or shows
//! a file (`% truncate FILE BYTES`, `% replace FILE FROM TO`, `% show
//! FILE`, `% copy FROM TO`, `% symlink TARGET LINK`, `% sparse FILE
//! BYTES`: a file of zeros that takes no disk). `$TMP` is a fresh folder
//! per case; other relative paths are from the workspace root. The
//! snapshot records each step's exit code, stdout and stderr, with `$TMP`
//! filtered out. A model's scores are shown in full: they are the same
//! bits on every CPU (models/src/fixed.rs).

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn check(case: &Path) -> String {
    let tmp = std::env::temp_dir().join(format!(
        "rulec-cli-{}-{}",
        std::process::id(),
        case.file_stem().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let mut out = String::new();
    for line in
        std::fs::read_to_string(case).unwrap().lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let line = line.replace("$TMP", tmp.to_str().unwrap());
        let (command, stdin) = match line.split_once(" < ") {
            Some((command, file)) => (command.to_string(), Some(workspace_root().join(file.trim()))),
            None => (line.clone(), None),
        };
        let words: Vec<&str> = command.split_whitespace().collect();
        if words[0] == "%" {
            out.push_str(&prepare(&words[1..]).replace(tmp.to_str().unwrap(), "$TMP"));
            continue;
        }
        let stdin_file = match &stdin {
            Some(path) => std::process::Stdio::from(std::fs::File::open(path).expect("stdin file exists")),
            None => std::process::Stdio::null(),
        };
        let output = Command::new(env!("CARGO_BIN_EXE_rulec"))
            .args(&words)
            .current_dir(workspace_root())
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .stdin(stdin_file)
            .output()
            .expect("rulec runs");
        let shown = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(tmp.to_str().unwrap(), "$TMP");
        out.push_str(&format!(
            "$ rulec {}\nexit: {}\n--- stdout\n{}--- stderr\n{}\n",
            line.replace(tmp.to_str().unwrap(), "$TMP"),
            output.status.code().map_or("signal".to_string(), |c| c.to_string()),
            shown(&output.stdout),
            shown(&output.stderr),
        ));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    out
}

/// `%` steps: edit files between commands, or show one (the returned text
/// goes into the snapshot).
fn prepare(words: &[&str]) -> String {
    match words {
        ["show", file] => return format!("% show {file}\n{}\n", std::fs::read_to_string(file).unwrap()),
        ["truncate", file, bytes] => {
            let data = std::fs::read(file).unwrap();
            std::fs::write(file, &data[..bytes.parse::<usize>().unwrap().min(data.len())]).unwrap();
        }
        ["replace", file, from, to] => {
            let text = std::fs::read_to_string(file).unwrap();
            assert!(text.contains(from), "`{from}` is in {file}");
            std::fs::write(file, text.replacen(from, to, 1)).unwrap();
        }
        ["copy", from, to] => {
            std::fs::create_dir_all(Path::new(to).parent().unwrap()).unwrap();
            std::fs::copy(workspace_root().join(from), to).unwrap();
        }
        ["symlink", target, link] => {
            std::fs::create_dir_all(Path::new(link).parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, link).unwrap();
        }
        ["sparse", file, bytes] => {
            std::fs::create_dir_all(Path::new(file).parent().unwrap()).unwrap();
            std::fs::File::create(file).unwrap().set_len(bytes.parse().unwrap()).unwrap();
        }
        other => panic!("unknown step {other:?}"),
    }
    String::new()
}

#[test]
fn cli_cases() {
    insta::glob!("cases/*.cmd", |path| {
        insta::assert_snapshot!(check(path));
    });
}
