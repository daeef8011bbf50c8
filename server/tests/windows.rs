//! Window state in the server, over loopback HTTP: requests of one key
//! from many threads at once are each counted exactly once; a reload that
//! keeps a contract's windows keeps their state, one that changes them
//! starts them empty; past `--max-window-keys` a key is dropped and
//! `/metrics` counts it; a batch of bare records enters them in input
//! order; a record far in the future of one key changes no other key; a
//! hot key reads as its bound, and the bytes bound drops keys, both
//! counted; a request answered 503 leaves no trace.

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
    server_with(text, |config| config.window_limits.keys = Some(max_keys))
}

fn server_with(text: &str, adjust: impl FnOnce(&mut server::Config)) -> TestServer {
    let dir = tempfile::tempdir().expect("a folder");
    write(dir.path(), text);
    TestServer::start_in(dir, adjust)
}

/// The value of metric `name` for the velocity contract.
fn metric(server: &TestServer, name: &str) -> u64 {
    let metrics = server.get("/metrics").text();
    let prefix = format!("{name}{{contract=\"velocity\"}} ");
    let line = metrics.lines().find_map(|line| line.strip_prefix(&prefix));
    line.and_then(|value| value.parse().ok()).unwrap_or_else(|| panic!("no {name} in {metrics}"))
}

/// The count the server answers for `account` at second `second`.
fn count(server: &TestServer, account: &str, second: u32) -> u64 {
    let body = format!(r#"{{"input":{{"at":"2026-01-01T10:00:{second:02}Z","account":"{account}"}}}}"#);
    let answer = server.post(&body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let result: serde_json::Value = serde_json::from_slice(&answer.body).expect("JSON");
    result["findings"][0]["message"].as_str().and_then(|m| m.parse().ok()).expect("a count")
}

/// Which set the server loaded: 1 at start, one more per reload.
fn generation(server: &TestServer) -> u64 {
    let listing: serde_json::Value = serde_json::from_slice(&server.get("/contracts").body).expect("JSON");
    listing["generation"].as_u64().expect("a generation")
}

fn wait_for_reload(server: &TestServer, before: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while generation(server) <= before {
        assert!(Instant::now() < deadline, "no reload after generation {before}");
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
    let before = generation(&server);
    write(server.dir.path(), &contract("1.0.1", "1h"));
    wait_for_reload(&server, before);
    assert_eq!(count(&server, "A", 2), 3);
    // A changed span: the windows start empty.
    let before = generation(&server);
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

#[test]
fn a_record_far_in_the_future_of_one_key_changes_no_other() {
    let server = server_for(&contract("1.0.0", "1h"), 1000);
    assert_eq!(count(&server, "A", 0), 1);
    assert_eq!(count(&server, "A", 1), 2);
    let far = r#"{"input":{"at":"2262-04-11T23:47:16Z","account":"B"}}"#;
    assert_eq!(server.post(far).status, 200);
    assert_eq!(count(&server, "A", 2), 3, "A keeps its records");
    assert_eq!(metric(&server, "rulec_window_keys"), 2);
}

#[test]
fn a_hot_key_reads_as_its_bound_and_is_counted() {
    let server = server_with(&contract("1.0.0", "1h"), |config| config.window_limits.key_records = Some(3));
    for second in 0..3 {
        assert_eq!(count(&server, "A", second), u64::from(second) + 1);
    }
    let answer = server.post(r#"{"input":{"at":"2026-01-01T10:00:03Z","account":"A"}}"#);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let bound = "window recent is full for this key: one key holds at most 3 records";
    assert!(answer.text().contains(bound), "{}", answer.text());
    assert_eq!(count(&server, "B", 3), 1, "other keys are not held back");
    assert_eq!(metric(&server, "rulec_window_full_total"), 1);
}

#[test]
fn past_the_bytes_bound_keys_are_dropped_and_counted() {
    let server = server_with(&contract("1.0.0", "1h"), |config| {
        config.window_limits.bytes = Some(8192);
        config.window_limits.key_bytes = Some(1024);
    });
    let long = "k".repeat(500);
    for i in 0..100 {
        assert_eq!(count(&server, &format!("{long}{i:03}"), 0), 1);
    }
    let bytes = metric(&server, "rulec_window_bytes");
    assert!(bytes > 0 && bytes <= 8192, "{bytes} bytes held");
    let keys = metric(&server, "rulec_window_keys");
    assert_eq!(keys + metric(&server, "rulec_window_evictions_total"), 100);
    assert!(keys < 20, "{keys} keys of over 500 bytes in 8 KiB");
}

#[test]
fn a_request_answered_503_leaves_no_trace_in_the_windows() {
    // A rule that takes seconds (every pair of 20,000 items) is stopped at
    // the 100 ms evaluation timeout: 503, and its record is withdrawn.
    let text = format!(
        "{}  - id: slow\n    when: any(items, x => any(items, y => y == x + 1000000))\n    \
         finding: {{ code: SLOW, severity: info, message: \"slow\" }}\n",
        contract("1.0.0", "1h").replace("  account: string\n", "  account: string\n  items: list<int>\n")
    );
    let server = server_with(&text, |config| config.evaluation_timeout = Duration::from_millis(100));
    let items: Vec<String> = (0..20_000).map(|i| i.to_string()).collect();
    let slow =
        format!(r#"{{"input":{{"at":"2026-01-01T10:00:00Z","account":"A","items":[{}]}}}}"#, items.join(","));
    for _ in 0..3 {
        let answer = server.post(&slow);
        assert_eq!(answer.status, 503, "{}", answer.text());
        assert_eq!(answer.header("retry-after"), Some("1"));
    }
    let quick = r#"{"input":{"at":"2026-01-01T10:00:01Z","account":"A","items":[]}}"#;
    let answer = server.post(quick);
    let result: serde_json::Value = serde_json::from_slice(&answer.body).expect("JSON");
    assert_eq!(result["findings"][0]["message"], "1", "only the answered request counts: {}", answer.text());
}
