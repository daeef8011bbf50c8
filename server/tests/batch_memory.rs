//! A batch body far larger than the memory the server may use, streamed
//! over loopback and answered as it streams: a 320 MB Arrow IPC stream
//! (generated on the fly from a repeated batch) and 320 MB of NDJSON
//! records, each answered record for record while the process's peak
//! resident memory (`VmHWM`, reset before each body through
//! `/proc/self/clear_refs`) stays under [`PEAK_LIMIT`]. The server runs in
//! this process, so this file holds one test: nothing else may run
//! meanwhile. Linux only (it reads `/proc`).

mod common;

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema};
use common::{TestServer, upload};

const CONTRACT: &str = r#"contract: test.padded
version: 1.0.0
input:
  id: string
  amount: int
rules:
  - id: too_big
    when: amount > 900
    deny: "Order {id} is over 900."
"#;

/// Bytes of each body.
const BODY_BYTES: usize = 320 << 20;
/// Each record carries this much padding (a column, or blanks, the
/// contract never reads), so the body is large in few evaluations.
const PADDING: usize = 8 * 1024;
/// Records per Arrow batch: about 8 MB a batch.
const BATCH_ROWS: usize = 1_000;
/// The peak resident memory allowed while a body streams.
const PEAK_LIMIT: u64 = 200 << 20;

#[test]
fn batch_bodies_far_larger_than_memory_stream_in_bounded_memory() {
    if !std::path::Path::new("/proc/self/clear_refs").exists() {
        assert!(std::env::var_os("CI").is_none(), "CI runs on Linux: /proc/self/clear_refs is missing");
        println!("skipped: this test reads /proc (Linux)");
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("padded.yaml"), CONTRACT).expect("written");
    let server =
        TestServer::start_in(dir, |config| config.evaluation_timeout = std::time::Duration::from_secs(30));
    arrow_body(&server);
    ndjson_body(&server);
}

fn arrow_body(server: &TestServer) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("amount", DataType::Int64, false),
        Field::new("padding", DataType::Utf8, false),
    ]));
    let (mut ids, mut amounts, mut padding) =
        (StringBuilder::new(), Int64Builder::new(), StringBuilder::new());
    let pad = "p".repeat(PADDING);
    for i in 0..BATCH_ROWS {
        ids.append_value(format!("o-{i}"));
        amounts.append_value((i * 37 % 1000) as i64);
        padding.append_value(&pad);
    }
    let columns: Vec<ArrayRef> =
        vec![Arc::new(ids.finish()), Arc::new(amounts.finish()), Arc::new(padding.finish())];
    let batch = RecordBatch::try_new(schema.clone(), columns).expect("a batch");
    let mut writer = StreamWriter::try_new(Vec::new(), &schema).expect("a writer");
    writer.flush().expect("the schema");
    let head = std::mem::take(writer.get_mut());
    writer.write(&batch).expect("a batch");
    let one_batch = std::mem::take(writer.get_mut());
    let batches = BODY_BYTES / one_batch.len();
    let denied_per_batch = (0..BATCH_ROWS).filter(|i| i * 37 % 1000 > 900).count();

    reset_peak();
    let (mut sender, mut answer) =
        upload(server.addr, "/evaluations?contract=test.padded", "application/vnd.apache.arrow.stream");
    let sending = std::thread::spawn(move || {
        sender.send(&head).expect("sent");
        for _ in 0..batches {
            for piece in one_batch.chunks(64 * 1024) {
                sender.send(piece).expect("sent");
            }
        }
        sender.send(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]).expect("the end of the stream");
        sender.finish().expect("finished");
    });
    assert_eq!(answer.head(), 200, "{:?}", answer.rest());
    let reader = StreamReader::try_new(answer.body(), None).expect("an Arrow stream of results");
    let (mut rows, mut denied) = (0, 0);
    for results in reader {
        let results = results.expect("a batch of results");
        let decisions = results
            .column_by_name("decision")
            .expect("decisions")
            .as_dictionary::<arrow_array::types::Int8Type>();
        let values = decisions.values().as_string::<i32>();
        denied +=
            decisions.keys().iter().filter(|k| k.is_some_and(|k| values.value(k as usize) == "deny")).count();
        rows += results.num_rows();
    }
    sending.join().expect("the sender");
    assert_eq!(rows, batches * BATCH_ROWS, "one result per record");
    assert_eq!(denied, batches * denied_per_batch);
    check_peak("a 320 MB Arrow stream");
}

fn ndjson_body(server: &TestServer) {
    let lines: Vec<String> = (0..100)
        .map(|i| format!("{:<PADDING$}\n", format!(r#"{{"id":"o-{i}","amount":{}}}"#, i * 37 % 1000)))
        .collect();
    let count = BODY_BYTES / PADDING;
    reset_peak();
    let (mut sender, mut answer) =
        upload(server.addr, "/evaluations?contract=test.padded", "application/x-ndjson");
    let sending = std::thread::spawn(move || {
        let mut piece = Vec::with_capacity(80_000);
        for k in 0..count {
            piece.extend_from_slice(lines[k % lines.len()].as_bytes());
            if piece.len() >= 64 * 1024 {
                sender.send(&piece).expect("sent");
                piece.clear();
            }
        }
        sender.send(&piece).expect("sent");
        sender.finish().expect("finished");
    });
    assert_eq!(answer.head(), 200);
    let mut answered = 0;
    let mut body = std::io::BufReader::new(answer.body());
    let mut line = String::new();
    while std::io::BufRead::read_line(&mut body, &mut line).expect("a line") > 0 {
        let want = if (answered % 100) * 37 % 1000 > 900 {
            "\"decision\":\"deny\""
        } else {
            "\"decision\":\"allow\""
        };
        assert!(line.contains(want), "line {answered}: {line}");
        answered += 1;
        line.clear();
    }
    sending.join().expect("the sender");
    assert_eq!(answered, count, "one result per record");
    check_peak("320 MB of NDJSON records");
}

/// Resets the process's peak resident memory to what it holds now.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("the peak reset");
}

/// The process's peak resident memory since [`reset_peak`], in bytes.
fn peak() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("the process status");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    let kib: u64 = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("a number");
    kib * 1024
}

fn check_peak(what: &str) {
    let peak = peak();
    println!("{what}: peak resident memory {} MB", peak >> 20);
    assert!(peak < PEAK_LIMIT, "{what}: the peak resident memory was {} MB", peak >> 20);
}
