//! `rulec eval DIR` and `rulec serve --rules DIR`, as processes, load the
//! same contract set from the same folder: one table of folders (dot-files,
//! a dot-folder, nested folders, a bundle beside its YAML, one name in two
//! folders), each loaded by both; the names each answers for are compared
//! with each other and with the case's, every probe's answer is the same
//! bytes from both, and a folder that cannot load fails both with the
//! same error naming both files.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use support::{TOKEN, post, rulec};

/// A folder: each file's path and the contract it holds (its YAML, or its
/// bundle for `.bundle.json`; `-` for text that is no contract).
struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// The names loaded, or the error both print (`$DIR` for the folder).
    want: Result<&'static [&'static str], &'static str>,
}

const CASES: &[Case] = &[
    Case {
        name: "dot-files and dot-folders are skipped; folders are walked to any depth",
        files: &[
            ("a.yaml", "t.a"),
            (".b.yaml", "t.hidden_file"),
            (".git/c.yaml", "t.hidden_folder"),
            ("sub/.cache/d.bundle.json", "t.hidden_bundle"),
            ("sub/e.yml", "t.e"),
            ("sub/deeper/f.yaml", "t.f"),
            ("sub/g.bundle.json", "t.g"),
            ("README.txt", "-"),
        ],
        want: Ok(&["t.a", "t.e", "t.f", "t.g"]),
    },
    Case {
        name: "a bundle beside its YAML",
        files: &[("x.yaml", "t.x"), ("x.bundle.json", "t.x"), ("y.yaml", "t.y")],
        want: Err("error: $DIR/x.bundle.json and $DIR/x.yaml both define the contract `t.x`"),
    },
    Case {
        name: "one name in two folders",
        files: &[("one/a.yaml", "t.a"), ("two/nested/a.yaml", "t.a")],
        want: Err("error: $DIR/one/a.yaml and $DIR/two/nested/a.yaml both define the contract `t.a`"),
    },
];

fn contract(name: &str) -> String {
    format!(
        "contract: {name}\nversion: 1.0.0\ninput:\n  amount: int\nrules:\n  - id: big\n    when: amount > 10\n    deny: \"big\"\n"
    )
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (path, name) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        let bytes = match *name {
            "-" => b"not a contract".to_vec(),
            name if path.to_string_lossy().ends_with(".bundle.json") => {
                frontend::compile(&contract(name)).expect("compiles").to_json()
            }
            name => contract(name).into_bytes(),
        };
        std::fs::write(&path, bytes).expect("written");
    }
}

/// One request naming each contract any file of the case holds.
fn probes(case: &Case) -> Vec<String> {
    let mut names: Vec<&str> = case.files.iter().map(|(_, name)| *name).filter(|n| *n != "-").collect();
    names.sort();
    names.dedup();
    names.iter().map(|name| format!(r#"{{"contract":"{name}","input":{{"amount":50}}}}"#)).collect()
}

/// The names a set answers for, from its answers to the probes.
fn answered(answers: &[String]) -> Vec<String> {
    answers
        .iter()
        .filter_map(|answer| serde_json::from_str::<serde_json::Value>(answer).ok())
        .filter_map(|answer| answer["contract"].as_str().map(String::from))
        .collect()
}

/// `rulec eval DIR` on the probes: its exit code, result lines and stderr.
fn eval(dir: &str, probes: &[String]) -> (i32, Vec<String>, String) {
    let mut child = rulec()
        .args(["eval", dir, "--engine", "interp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rulec eval runs");
    child.stdin.take().expect("stdin").write_all(probes.join("\n").as_bytes()).expect("written");
    let output = child.wait_with_output().expect("rulec eval ends");
    let lines = String::from_utf8_lossy(&output.stdout).lines().map(String::from).collect();
    (output.status.code().unwrap_or(-1), lines, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// The names `GET /contracts` lists.
fn listed(addr: &str) -> Vec<String> {
    let mut stream = TcpStream::connect(addr).expect("connected");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("a timeout");
    let request = format!(
        "GET /contracts HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let body = response.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or_default();
    let listing: serde_json::Value = serde_json::from_str(body).expect("JSON");
    let contracts = listing["contracts"].as_array().expect("contracts");
    contracts.iter().map(|c| c["name"].as_str().expect("a name").to_string()).collect()
}

/// `rulec serve --rules DIR` that fails to start: its exit code and stderr.
fn serve_fails(dir: &str) -> (i32, String) {
    let output = rulec()
        .args(["serve", "--rules", dir, "--no-auth", "--addr", "127.0.0.1:0"])
        .output()
        .expect("rulec serve runs");
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn eval_and_serve_load_the_same_set_from_a_folder() {
    for case in CASES {
        let folder = tempfile::tempdir().expect("a folder");
        write(folder.path(), case.files);
        let dir = folder.path().display().to_string();
        let probes = probes(case);
        let (code, from_eval, stderr) = eval(&dir, &probes);
        match case.want {
            Ok(names) => {
                // The probes for the contracts not loaded are errors: exit 1.
                assert_eq!(code, if probes.len() == names.len() { 0 } else { 1 }, "{}: {stderr}", case.name);
                let served = support::serve(&dir);
                let from_server: Vec<String> = probes.iter().map(|probe| post(&served.addr, probe)).collect();
                assert_eq!(from_eval, from_server, "{}: the same answers", case.name);
                assert_eq!(answered(&from_eval), listed(&served.addr), "{}: the same names", case.name);
                assert_eq!(answered(&from_eval), names, "{}", case.name);
            }
            Err(error) => {
                let want = error.replace("$DIR", &dir);
                assert_eq!(code, 1, "{}: {stderr}", case.name);
                assert!(stderr.lines().any(|line| line == want), "{}: eval says\n{stderr}", case.name);
                let (code, stderr) = serve_fails(&dir);
                assert_eq!(code, 2, "{}: {stderr}", case.name);
                assert!(stderr.lines().any(|line| line == want), "{}: serve says\n{stderr}", case.name);
            }
        }
    }
}
