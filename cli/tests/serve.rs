//! `rulec serve` as a process: it refuses to start without a token or with
//! rules that do not compile; it answers what `rulec eval` prints, byte for
//! byte, for every example contract (both run as processes); it logs one
//! JSON line per request; and SIGTERM drains and exits 0.

mod support;

use std::io::{Read, Write};
use std::process::Command;

use support::{post, post_reply, root, rulec};

/// Runs `rulec` to the end: exit code and stderr.
fn finished(args: &[&str]) -> (i32, String) {
    let output = rulec().args(args).output().expect("rulec runs");
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn without_a_token_the_server_refuses_to_start() {
    let (code, stderr) = finished(&["serve", "--rules", "examples/contracts/", "--addr", "127.0.0.1:0"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no token") && stderr.contains("--no-auth"), "{stderr}");
}

#[test]
fn rules_that_do_not_compile_stop_the_start_with_their_diagnostics() {
    let dir = std::env::temp_dir().join(format!("rulec-serve-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    std::fs::write(dir.join("bad.yaml"), "contract: bad\nversion: 1.0.0\ninput:\n  n: nope\nrules: []\n")
        .expect("written");
    let dir_text = dir.display().to_string();
    let (code, stderr) = finished(&["serve", "--rules", &dir_text, "--no-auth", "--addr", "127.0.0.1:0"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.yaml:4:"), "the diagnostic names the place: {stderr}");
}

fn serve() -> support::Served {
    support::serve("examples/contracts/")
}

#[test]
fn the_server_answers_what_eval_prints_logs_each_request_and_drains_on_sigterm() {
    let mut served = serve();
    let requests =
        std::fs::read_to_string(root().join("examples/requests/shop.orders.check.ndjson")).expect("requests");
    let eval = rulec()
        .args(["eval", "examples/contracts/", "--request", "examples/requests/shop.orders.check.ndjson"])
        .output()
        .expect("rulec eval runs");
    let printed = String::from_utf8_lossy(&eval.stdout).into_owned();
    for (line, want) in requests.lines().filter(|l| !l.trim().is_empty()).zip(printed.lines()) {
        assert_eq!(post(&served.addr, line), want, "{line}");
    }
    // SIGTERM: drain, log, exit 0.
    let pid = served.child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
    assert!(killed.success());
    let status = served.child.wait().expect("the server exits");
    assert_eq!(status.code(), Some(0), "a clean exit after SIGTERM");
    let mut log = String::new();
    served.log.read_to_string(&mut log).expect("the log");
    let requests_logged: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["target"] == "rulec::request")
        .collect();
    assert_eq!(requests_logged.len(), printed.lines().count(), "one log line per request:\n{log}");
    let first = &requests_logged[0];
    for field in ["method", "path", "status", "contract", "revision", "decision", "latency_us", "timestamp"] {
        assert!(!first[field].is_null(), "the log line has `{field}`: {first}");
    }
    assert!(log.contains("\"stopped\""), "{log}");
}

/// The example requests of each contract, each naming its contract (the
/// files of a folder with one contract may leave it out).
fn example_requests(contract: &str) -> Vec<String> {
    std::fs::read_to_string(root().join(format!("examples/requests/{contract}.ndjson")))
        .expect("the example requests")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            if l.contains("\"contract\"") {
                l.to_string()
            } else {
                l.replacen('{', &format!("{{\"contract\":\"{contract}\","), 1)
            }
        })
        .collect()
}

/// `rulec eval`, the process, on the example requests of every example
/// contract: each response body of `rulec serve` is byte for byte the
/// line `rulec eval` prints for the same request (an error line with 400,
/// a result with 200), all under one revision.
#[test]
fn results_are_the_bytes_rulec_eval_prints() {
    let served = serve();
    let mut revisions = std::collections::BTreeSet::new();
    // The velocity contract has windows: its requests, sent in order to
    // each, count the same transfers before them.
    for contract in
        ["acme.payments.transfer", "shop.orders.check", "acme.access.documents", "acme.payments.velocity"]
    {
        let lines = example_requests(contract);
        let mut eval = rulec()
            .args(["eval", "examples/contracts/"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("rulec eval runs");
        let mut stdin = eval.stdin.take().expect("stdin");
        let input = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).expect("requests sent"));
        let output = eval.wait_with_output().expect("rulec eval finishes");
        writer.join().expect("the requests were written");
        let printed: Vec<&[u8]> = output.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
        assert_eq!(printed.len(), lines.len(), "{contract}: one line per request from rulec eval");
        for (line, want) in lines.iter().zip(printed) {
            let reply = post_reply(&served.addr, line);
            assert!(
                reply.body == want,
                "{contract}: {line}\n  served: {}\n  eval:   {}",
                String::from_utf8_lossy(&reply.body),
                String::from_utf8_lossy(want)
            );
            let status = if want.starts_with(b"{\"error\"") { 400 } else { 200 };
            assert_eq!(reply.status, status, "{line}");
            revisions.insert(reply.header("x-rulec-revision").unwrap_or("none").to_string());
        }
    }
    assert_eq!(revisions.len(), 1, "{revisions:?}");
    assert!(revisions.iter().all(|r| r.starts_with("sha256:")), "{revisions:?}");
}

#[test]
fn dependencies_log_at_warn_so_cranelift_does_not_log_the_functions_it_compiles() {
    // `serve` runs with `--engine jit`: loading compiles every contract.
    let mut served = serve();
    let request = std::fs::read_to_string(root().join("examples/requests/shop.orders.check.ndjson"))
        .expect("requests")
        .lines()
        .find(|l| !l.trim().is_empty())
        .expect("a request")
        .to_string();
    assert!(post(&served.addr, &request).contains("\"decision\""));
    let pid = served.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs").success());
    served.child.wait().expect("the server exits");
    let mut log = served.started.clone();
    served.log.read_to_string(&mut log).expect("the log");
    let foreign: Vec<&str> = log.lines().filter(|l| !l.contains("\"target\":\"rulec::")).collect();
    assert!(foreign.is_empty(), "{} lines from dependencies, the first: {:.300}", foreign.len(), foreign[0]);
    assert!(log.contains("\"target\":\"rulec::request\""), "the request is still logged: {log}");
}
