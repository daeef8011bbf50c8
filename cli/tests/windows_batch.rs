//! Batch over a contract with windows, as a process: `rulec eval --input`
//! on two threads gives, byte for byte, what `rulec eval` gives for the
//! same records sent one at a time as a stream, in order. The input spans
//! many chunks, evaluated in parallel, so a chunk entering the windows
//! before the one ahead of it would show as late records or wrong counts;
//! the contract's two windows have different keys (an account, a
//! country), so no routing of records by one key could keep both in
//! order; and a model scores the window values.

mod support;

use std::io::Write as _;
use std::process::Stdio;

const CONTRACT: &str = r#"
contract: velocity
version: 1.0.0
on_error: skip
input:
  at: timestamp
  account: string
  country: string
  amount: decimal
models:
  risk: { onnx: risk.onnx, features: 2, output: probability }
windows:
  recent:
    key: account
    time: at
    span: 1m
    aggregates:
      transfers: count()
      total: sum(amount)
  inbound:
    key: country
    time: at
    span: 10s
    grace: 0s
    aggregates:
      senders: distinct(account)
rules:
  - id: counted
    when: windows.recent.transfers >= 1
    finding:
      code: COUNTED
      severity: info
      message: "{windows.recent.transfers} for {windows.recent.total}, {windows.inbound.senders} into {country}, risk {score(risk, [windows.recent.transfers, windows.inbound.senders])}"
"#;

/// 30,000 records of three accounts and two countries, a second apart:
/// over 1 MiB.
fn records() -> Vec<String> {
    (0..30_000)
        .map(|i| {
            let (hour, minute, second) = (10 + i / 3600, i / 60 % 60, i % 60);
            let account = ["A", "B", "C"][i % 3];
            let country = if i % 5 < 2 { "DE" } else { "FR" };
            format!(
                r#"{{"at":"2026-01-01T{hour:02}:{minute:02}:{second:02}Z","account":"{account}","country":"{country}","amount":"{}.5"}}"#,
                i % 7
            )
        })
        .collect()
}

#[test]
fn a_batch_gives_the_results_of_its_records_one_at_a_time_in_order() {
    let dir = tempfile::tempdir().expect("a folder");
    let contract = dir.path().join("velocity.yaml");
    std::fs::write(&contract, CONTRACT).expect("written");
    let model = models::testing::logistic(&[0.01, 0.5], -1.0);
    std::fs::write(dir.path().join("risk.onnx"), model).expect("written");
    let records = records();
    let input = dir.path().join("records.ndjson");
    std::fs::write(&input, records.join("\n")).expect("written");
    assert!(std::fs::metadata(&input).expect("there").len() > 1 << 20);

    let batch = support::rulec()
        .args(["eval"])
        .arg(&contract)
        .arg("--input")
        .arg(&input)
        .args(["--threads", "2"])
        .output()
        .expect("rulec runs");
    assert!(batch.status.success(), "{}", String::from_utf8_lossy(&batch.stderr));

    let mut stream = support::rulec()
        .args(["eval"])
        .arg(&contract)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("rulec runs");
    let mut requests = String::new();
    for record in &records {
        requests.push_str(&format!("{{\"input\":{record}}}\n"));
    }
    let mut stdin = stream.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
    let one_at_a_time = stream.wait_with_output().expect("rulec runs");
    writer.join().expect("the writer").expect("written");
    assert!(one_at_a_time.status.success());

    let batch = String::from_utf8_lossy(&batch.stdout);
    let one_at_a_time = String::from_utf8_lossy(&one_at_a_time.stdout);
    assert_eq!(batch.lines().count(), records.len());
    assert!(!batch.contains("late"), "a record came out of order");
    for (i, (got, expected)) in batch.lines().zip(one_at_a_time.lines()).enumerate() {
        assert_eq!(got, expected, "record {i}");
    }
}
