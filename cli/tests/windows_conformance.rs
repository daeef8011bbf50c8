//! The conformance cases with signals, through `rulec` as processes,
//! where window state lives from one request to the next and a batch
//! scores its models once per chunk. For every case whose contract
//! declares windows or models, its requests in order give the same
//! result lines sent as one stream to `rulec eval`, as bare records to
//! `rulec eval --input` (batch, on two threads), and one at a time over
//! one keep-alive HTTP connection to `rulec serve`. And `rulec serve
//! --max-window-keys 1` drops the least recently seen key, which `rulec
//! eval` (a million keys) does not: the conformance runner cannot bound
//! keys, so eviction is tested here, in `server/tests/windows.rs` and in
//! the store's own tests (`runtime/src/window/store.rs`).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use support::{TOKEN, root, rulec};

/// The conformance cases whose contract declares windows or models,
/// sorted.
fn signals_cases() -> Vec<PathBuf> {
    let entries = std::fs::read_dir(root().join("conformance/cases")).expect("the cases");
    let mut cases: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|dir| {
            std::fs::read_to_string(dir.join("contract.yaml"))
                .is_ok_and(|source| source.lines().any(|line| line == "windows:" || line == "models:"))
        })
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "found only {} cases with windows or models", cases.len());
    assert!(cases.iter().any(|case| case.join("models").is_dir()), "a case scores a model");
    cases
}

/// The request lines of `case`, in order.
fn requests(case: &Path) -> Vec<String> {
    std::fs::read_to_string(case.join("requests.ndjson"))
        .expect("the requests")
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(String::from)
        .collect()
}

/// The name of `case`'s contract (its `contract:` line).
fn contract_name(case: &Path) -> String {
    let source = std::fs::read_to_string(case.join("contract.yaml")).expect("the contract");
    let name = source.lines().find_map(|line| line.strip_prefix("contract: ")).expect("a contract: line");
    name.trim().to_string()
}

/// `line` naming `contract` (a case's requests leave it out).
fn named(contract: &str, line: &str) -> String {
    line.replacen('{', &format!("{{\"contract\":\"{contract}\","), 1)
}

/// The result lines of `rulec eval TARGET`, `lines` sent on stdin as one
/// stream.
fn eval_stream(target: &Path, lines: &[String]) -> Vec<String> {
    let mut eval = rulec()
        .arg("eval")
        .arg(target)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rulec eval runs");
    let mut stdin = eval.stdin.take().expect("stdin");
    let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = eval.wait_with_output().expect("rulec eval finishes");
    writer.join().expect("the writer").expect("the requests were sent");
    let printed: Vec<String> = String::from_utf8_lossy(&output.stdout).lines().map(String::from).collect();
    assert_eq!(
        printed.len(),
        lines.len(),
        "{}: one line per request\n{}",
        target.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    printed
}

#[test]
fn a_batch_of_each_cases_records_gives_its_stream_results() {
    let dir = tempfile::tempdir().expect("a folder");
    let mut compared = 0;
    for case in signals_cases() {
        let lines = requests(&case);
        let contract = case.join("contract.yaml");
        let stream = eval_stream(&contract, &lines);
        // The bare records: the input of each request that names nothing
        // else. A request that does (a channel, or one that is not JSON)
        // was refused, so it entered no window and leaving it out of the
        // batch changes nothing for the others.
        let mut records = String::new();
        let mut expected = Vec::new();
        for (line, result) in lines.iter().zip(&stream) {
            let bare = runtime::Envelope::parse(line).ok().and_then(|envelope| match envelope {
                runtime::Envelope {
                    contract: None,
                    channel: None,
                    component: None,
                    now: None,
                    input: Some(input),
                } => Some(input.get().to_string()),
                _ => None,
            });
            match bare {
                Some(record) => {
                    records.push_str(&record);
                    records.push('\n');
                    expected.push(result.as_str());
                }
                None => assert!(result.starts_with("{\"error\""), "{}: {line} was evaluated", case.display()),
            }
        }
        let input = dir.path().join("records.ndjson");
        std::fs::write(&input, records).expect("written");
        let batch = rulec()
            .arg("eval")
            .arg(&contract)
            .arg("--input")
            .arg(&input)
            .args(["--threads", "2"])
            .output()
            .expect("rulec eval --input runs");
        // Exit 1 when some record was invalid, as for a stream.
        let invalid = expected.iter().any(|result| result.starts_with("{\"error\""));
        assert_eq!(
            batch.status.code(),
            Some(i32::from(invalid)),
            "{}: {}",
            case.display(),
            String::from_utf8_lossy(&batch.stderr)
        );
        let batch = String::from_utf8_lossy(&batch.stdout).into_owned();
        let got: Vec<&str> = batch.lines().collect();
        assert_eq!(got, expected, "{}: the batch's results", case.display());
        compared += got.len();
    }
    assert!(compared > 60, "only {compared} records compared");
}

#[test]
fn each_cases_requests_over_one_http_connection_give_what_eval_prints() {
    // Every case's contract in one folder, so one server serves them all
    // and one `rulec eval` of the folder reads the same named requests.
    let dir = tempfile::tempdir().expect("a folder");
    let mut lines = Vec::new();
    for case in signals_cases() {
        let name = contract_name(&case);
        std::fs::copy(case.join("contract.yaml"), dir.path().join(format!("{name}.yaml"))).expect("copied");
        copy_models(&case.join("models"), &dir.path().join("models"));
        lines.extend(requests(&case).iter().map(|line| named(&name, line)));
    }
    let printed = eval_stream(dir.path(), &lines);
    let served = support::serve(&dir.path().display().to_string());
    let mut connection = Connection::open(&served.addr);
    for (line, want) in lines.iter().zip(&printed) {
        let (status, body) = connection.exchange("POST", "/evaluations", line);
        assert_eq!(String::from_utf8_lossy(&body), *want, "{line}");
        let expected_status = if want.starts_with("{\"error\"") { 400 } else { 200 };
        assert_eq!(status, expected_status, "{line}");
    }
    assert!(printed.iter().any(|line| line.contains("record is late")), "late records were replayed");
}

/// The model files of a case (`models/`, which its contract names
/// relative to itself) into `to`, beside the other cases' models.
fn copy_models(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else { return };
    std::fs::create_dir_all(to).expect("a models folder");
    for entry in entries.flatten() {
        let target = to.join(entry.file_name());
        assert!(!target.exists(), "two cases have a model {}", target.display());
        std::fs::copy(entry.path(), target).expect("copied");
    }
}

/// A contract counting each account's transfers over an hour.
const COUNTING: &str = "# Counts each account's transfers over an hour.\n\
    contract: counting\nversion: 1.0.0\non_error: skip\ninput:\n  at: timestamp\n  account: string\n\
    windows:\n  recent:\n    key: account\n    time: at\n    span: 1h\n    aggregates:\n      transfers: count()\n\
    rules:\n  - id: counted\n    when: windows.recent.transfers >= 1\n    \
    finding: { code: COUNTED, severity: info, message: \"{windows.recent.transfers}\" }\n";

/// The count in a result of [`COUNTING`].
fn count(result: &[u8]) -> u64 {
    let json: serde_json::Value = serde_json::from_slice(result).expect("a result");
    json["findings"][0]["message"].as_str().and_then(|m| m.parse().ok()).expect("a count")
}

#[test]
fn past_max_window_keys_the_server_drops_the_least_recently_seen_key() {
    let dir = tempfile::tempdir().expect("a folder");
    std::fs::write(dir.path().join("counting.yaml"), COUNTING).expect("written");
    let requests: Vec<String> = ["A", "A", "B", "A"]
        .iter()
        .enumerate()
        .map(|(minute, account)| {
            format!(r#"{{"input":{{"at":"2026-01-01T10:0{minute}:00Z","account":"{account}"}}}}"#)
        })
        .collect();
    // `rulec eval` holds a million keys: A's third record counts all three.
    let unbounded: Vec<u64> = eval_stream(&dir.path().join("counting.yaml"), &requests)
        .iter()
        .map(|r| count(r.as_bytes()))
        .collect();
    assert_eq!(unbounded, [1, 2, 1, 3]);
    // One key at most: B drops A, and A's third record meets a fresh key,
    // which drops B.
    let served = support::serve_with(&dir.path().display().to_string(), &["--max-window-keys", "1"]);
    let mut connection = Connection::open(&served.addr);
    let bounded: Vec<u64> = requests
        .iter()
        .map(|request| {
            let (status, body) = connection.exchange("POST", "/evaluations", request);
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
            count(&body)
        })
        .collect();
    assert_eq!(bounded, [1, 2, 1, 1]);
    let (_, metrics) = connection.exchange("GET", "/metrics", "");
    let metrics = String::from_utf8_lossy(&metrics);
    assert!(metrics.contains("rulec_window_keys{contract=\"counting\"} 1\n"), "{metrics}");
    assert!(metrics.contains("rulec_window_evictions_total{contract=\"counting\"} 2\n"), "{metrics}");
}

/// One keep-alive HTTP/1.1 connection: requests sent one at a time, each
/// answer read whole before the next is sent.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    fn open(addr: &str) -> Connection {
        let stream = TcpStream::connect(addr).expect("connected");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("a timeout");
        let writer = stream.try_clone().expect("a second handle");
        Connection { reader: BufReader::new(stream), writer }
    }

    /// Sends one request with the token and reads its answer: the status
    /// and the body. The server must keep the connection open.
    fn exchange(&mut self, method: &str, path: &str, body: &str) -> (u16, Vec<u8>) {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        self.writer.write_all(head.as_bytes()).expect("the head sent");
        self.writer.write_all(body.as_bytes()).expect("the body sent");
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("a status line");
        let status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let (mut length, mut chunked) = (0, false);
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("a header line");
            let Some((name, value)) = line.trim_end().split_once(':') else { break };
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_ascii_lowercase());
            match name.as_str() {
                "content-length" => length = value.parse().expect("a length"),
                "transfer-encoding" => chunked = value.contains("chunked"),
                "connection" => assert_ne!(value, "close", "the server closed the connection after {path}"),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line).expect("a chunk size");
                let size = usize::from_str_radix(line.trim(), 16).expect("a chunk size");
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).expect("a chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length, 0);
            self.reader.read_exact(&mut body).expect("the body");
        }
        (status, body)
    }
}
