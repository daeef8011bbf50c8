//! Window state in the server, over loopback HTTP: requests of one key
//! from many threads at once are each counted exactly once; a reload that
//! keeps a contract's windows keeps their state, one that changes them
//! starts them empty; past `--max-window-keys` a key is dropped and
//! `/metrics` counts it; a batch of bare records enters them in input
//! order.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::TestServer;

/// A contract counting transfers per account over `span`; `version` and
/// `span` tell revisions apart.
fn contract(version: &str, span: &str) -> String {
    format!(
        "contract: velocity\nversion: {version}\non_error: skip\n\
         input:\n  at: timestamp\n  account: string\n\
         windows:\n  recent:\n    key: account\n    time: at\n    span: {span}\n    aggregates:\n      transfers: count()\n\
         rules:\n  - id: counted\n    when: windows.recent.transfers >= 1\n    \
         finding: {{ code: COUNTED, severity: info, message: \"{{windows.recent.transfers}}\" }}\n"
    )
}

fn write(dir: &Path, text: &str) {
    let temporary = dir.join(".velocity.yaml.tmp");
    std::fs::write(&temporary, text).expect("written");
    std::fs::rename(&temporary, dir.join("velocity.yaml")).expect("renamed");
}

fn server_for(text: &str, max_keys: usize) -> TestServer {
    let dir = tempfile::tempdir().expect("a folder");
    write(dir.path(), text);
    TestServer::start_in(dir, |config| config.max_window_keys = max_keys)
}

/// The count the server answers for `account` at second `second`.
fn count(server: &TestServer, account: &str, second: u32) -> u64 {
    let body = format!(r#"{{"input":{{"at":"2026-01-01T10:00:{second:02}Z","account":"{account}"}}}}"#);
    let answer = server.post(&body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let result: serde_json::Value = serde_json::from_slice(&answer.body).expect("JSON");
    result["findings"][0]["message"].as_str().and_then(|m| m.parse().ok()).expect("a count")
}

fn revision(server: &TestServer) -> u64 {
    let listing: serde_json::Value = serde_json::from_slice(&server.get("/contracts").body).expect("JSON");
    listing["revision"].as_u64().expect("a revision")
}

fn wait_for_reload(server: &TestServer, before: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while revision(server) <= before {
        assert!(Instant::now() < deadline, "no reload after revision {before}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn concurrent_requests_of_one_key_are_each_counted_once() {
    let server = server_for(&contract("1.0.0", "1h"), 1000);
    let (threads, each) = (8, 25);
    let counts: Vec<u64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| (0..each).map(|_| count(&server, "A", 0)).collect::<Vec<_>>()))
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a client thread")).collect()
    });
    // Every request saw the count after its own record entered: each count
    // from 1 to the number of requests exactly once.
    let mut sorted = counts.clone();
    sorted.sort_unstable();
    let expected: Vec<u64> = (1..=(threads * each) as u64).collect();
    assert_eq!(sorted, expected);
}

#[test]
fn a_reload_keeps_unchanged_windows_and_empties_changed_ones() {
    let server = server_for(&contract("1.0.0", "1h"), 1000);
    assert_eq!(count(&server, "A", 0), 1);
    assert_eq!(count(&server, "A", 1), 2);
    // A new version with the same windows: the state carries over.
    let before = revision(&server);
    write(server.dir.path(), &contract("1.0.1", "1h"));
    wait_for_reload(&server, before);
    assert_eq!(count(&server, "A", 2), 3);
    // A changed span: the windows start empty.
    let before = revision(&server);
    write(server.dir.path(), &contract("1.0.2", "2h"));
    wait_for_reload(&server, before);
    assert_eq!(count(&server, "A", 3), 1);
}

#[test]
fn past_max_window_keys_a_key_is_dropped_and_counted() {
    // One key at most: each new key drops the one held (which of several
    // keys goes first, the least recently seen, is the store's own test).
    let server = server_for(&contract("1.0.0", "1h"), 1);
    assert_eq!(count(&server, "A", 0), 1);
    assert_eq!(count(&server, "A", 1), 2);
    assert_eq!(count(&server, "B", 2), 1);
    assert_eq!(count(&server, "A", 3), 1);
    let metrics = server.get("/metrics").text();
    assert!(metrics.contains("rulec_window_keys{contract=\"velocity\"} 1"), "{metrics}");
    assert!(metrics.contains("rulec_window_evictions_total{contract=\"velocity\"} 2"), "{metrics}");
}

#[test]
fn a_batch_of_bare_records_enters_them_in_input_order() {
    // Over 1 MiB of records, so the body is read in several chunks: a
    // chunk evaluated before the one ahead of it would make records late.
    let records: Vec<String> = (0..30_000)
        .map(|i| {
            let (hour, minute, second) = (10 + i / 3600, i / 60 % 60, i % 60);
            format!(r#"{{"at":"2026-01-01T{hour:02}:{minute:02}:{second:02}Z","account":"A"}}"#)
        })
        .collect();
    let server = server_for(&contract("1.0.0", "1m"), 1000);
    let body = records.join("\n");
    assert!(body.len() > 1 << 20);
    let answer =
        server.call("POST", "/evaluations?contract=velocity", "application/x-ndjson", body.as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.text());
    for (i, line) in answer.text().lines().enumerate() {
        let result: serde_json::Value = serde_json::from_str(line).expect("a result line");
        let count = result["findings"][0]["message"].as_str().and_then(|m| m.parse::<usize>().ok());
        // A record sees the records of the minute up to it: itself and
        // the 59 seconds before.
        assert_eq!(count, Some((i + 1).min(60)), "record {i}: {line}");
    }
}
