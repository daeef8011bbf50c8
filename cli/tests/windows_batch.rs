//! Batch over a contract with windows, as a process: `rulec eval --input`
//! on two threads gives, byte for byte, what `rulec eval` gives for the
//! same records sent one at a time as a stream, in order; the input spans
//! several chunks, so a chunk evaluated before the one ahead of it would
//! show as late records.

mod support;

use std::io::Write as _;
use std::process::Stdio;

const CONTRACT: &str = "contract: velocity\nversion: 1.0.0\non_error: skip\n\
input:\n  at: timestamp\n  account: string\n  amount: decimal\n\
windows:\n  recent:\n    key: account\n    time: at\n    span: 1m\n    aggregates:\n      \
transfers: count()\n      total: sum(amount)\n\
rules:\n  - id: counted\n    when: windows.recent.transfers >= 1\n    \
finding: { code: COUNTED, severity: info, message: \"{windows.recent.transfers} for {windows.recent.total}\" }\n";

/// 30,000 records of two accounts, a second apart: over 1 MiB.
fn records() -> Vec<String> {
    (0..30_000)
        .map(|i| {
            let (hour, minute, second) = (10 + i / 3600, i / 60 % 60, i % 60);
            let account = if i % 3 == 0 { "A" } else { "B" };
            format!(
                r#"{{"at":"2026-01-01T{hour:02}:{minute:02}:{second:02}Z","account":"{account}","amount":"{}.5"}}"#,
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
