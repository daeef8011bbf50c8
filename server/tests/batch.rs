//! Batch over HTTP (`POST /evaluations?contract=NAME` with bare records),
//! over loopback against the real server: an Arrow IPC stream in gives,
//! read back with arrow-rs, what the `batch` crate (the CLI's
//! `rulec eval --input`) gives for the same records, and NDJSON records
//! give its lines; `fields` and `keep` as the CLI's flags. Errors before
//! the first byte are statuses (unknown contract 404, a bad query or a
//! damaged stream 400, a body over `--max-batch-body` 413, overload 503
//! with `Retry-After`); after it, the results end with an error row or
//! line.

mod common;

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::builder::{Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use batch::source::{ArrowFile, NdjsonReader, Source};
use batch::{InputFormat, OutputFormat};
use common::{TOKEN, TestServer, upload};
use serde_json::Value;

const CONTRACT: &str = r#"contract: test.orders
version: 1.0.0
channels: [web, pos]
decision: deny-overrides
default: allow
input:
  id: string
  amount: int
  country: string
  note: string?
tables:
  ships_to: { set: string, rows: [DE, AT, FR] }
effects:
  fee: int
  review: { type: bool, combine: any }
rules:
  - id: too_big
    when: amount > 900
    deny: "Order {id} of {amount} is over 900."
  - id: no_delivery
    when: country not in ships_to
    deny: "We do not deliver to {country}."
  - id: noted
    when: has(note)
    finding: { code: NOTE, severity: info, message: "Order {id} has a note." }
    effects: { review: "true" }
  - id: fee
    channels: [web]
    when: amount > 100
    effects: { fee: "amount - 100" }
"#;

const ARROW: &str = "application/vnd.apache.arrow.stream";
const NDJSON: &str = "application/x-ndjson";

/// A server of the test contract alone.
fn server(adjust: impl FnOnce(&mut server::Config)) -> TestServer {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("orders.yaml"), CONTRACT).expect("written");
    TestServer::start_in(dir, adjust)
}

/// Record `i`: every rule fires now and then; every 997th has no amount
/// (invalid: it is required).
fn record(i: usize) -> (String, Option<i64>, &'static str, Option<String>) {
    let amount = (!i.is_multiple_of(997)).then_some((i * 37 % 1000) as i64);
    let country = ["DE", "AT", "US", "FR", "CH"][i % 5];
    let note = i.is_multiple_of(7).then(|| format!("note {i}"));
    (format!("o-{i}"), amount, country, note)
}

fn ndjson_records(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let (id, amount, country, note) = record(i);
        // A missing amount is `null`, as the Arrow form's null cell is.
        let mut line = serde_json::json!({ "id": id, "country": country, "amount": amount });
        if let Some(note) = note {
            line["note"] = note.into();
        }
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("amount", DataType::Int64, true),
        Field::new("country", DataType::Utf8, false),
        Field::new("note", DataType::Utf8, true),
    ]))
}

/// Records `range` as one Arrow batch.
fn arrow_batch(range: std::ops::Range<usize>) -> RecordBatch {
    let (mut ids, mut amounts, mut countries, mut notes) =
        (StringBuilder::new(), Int64Builder::new(), StringBuilder::new(), StringBuilder::new());
    for i in range {
        let (id, amount, country, note) = record(i);
        ids.append_value(id);
        amounts.append_option(amount);
        countries.append_value(country);
        notes.append_option(note);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(ids.finish()),
        Arc::new(amounts.finish()),
        Arc::new(countries.finish()),
        Arc::new(notes.finish()),
    ];
    RecordBatch::try_new(schema(), columns).expect("a batch")
}

/// `n` records as an Arrow IPC stream of batches of `rows`.
fn arrow_records(n: usize, rows: usize) -> Vec<u8> {
    let mut writer = StreamWriter::try_new(Vec::new(), &schema()).expect("a writer");
    for start in (0..n).step_by(rows) {
        writer.write(&arrow_batch(start..(start + rows).min(n))).expect("written");
    }
    writer.into_inner().expect("finished")
}

/// A shared buffer the `batch` writer writes into.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("the buffer").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the `batch` crate (`rulec eval --input`) answers for `body`.
fn in_process(
    input: InputFormat,
    body: Vec<u8>,
    output: OutputFormat,
    fields: &str,
    keep: &[&str],
) -> Vec<u8> {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    let contract = engine.load(frontend::compile(CONTRACT).expect("compiles")).expect("loads");
    let mut source: Box<dyn Source> = match input {
        InputFormat::Arrow => {
            Box::new(ArrowFile::stream(Cursor::new(body), "test".into(), u64::MAX).expect("a stream"))
        }
        InputFormat::Ndjson => Box::new(NdjsonReader::new(Box::new(Cursor::new(body)), "test".into())),
        other => panic!("{} is not a body the server takes", other.name()),
    };
    let settings = batch::Settings {
        channel: Some("web".into()),
        parts: batch::result_parts(fields).expect("parts"),
        keep: keep.iter().map(|k| k.to_string()).collect(),
        output,
        limit: None,
    };
    let job = batch::Job::new(contract, &settings, source.schema().as_ref()).expect("a job");
    let out = Shared::default();
    let writer = batch::output::Writer::new(Box::new(out.clone()), output, false, job.result_schema())
        .expect("a writer");
    batch::run(&job, source.as_mut(), writer, 2, &batch::Progress::hidden()).expect("a run");
    out.0.lock().expect("the buffer").clone()
}

/// Every row of an Arrow IPC stream of results, as JSON (nulls left out).
fn arrow_rows(bytes: &[u8]) -> Vec<Value> {
    let reader = StreamReader::try_new(Cursor::new(bytes), None).expect("an Arrow stream");
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.expect("a batch");
        for row in 0..batch.num_rows() {
            let json = batch::json_rows::record_json(batch.schema().fields(), batch.columns(), row);
            rows.push(serde_json::from_str(&json).expect("JSON"));
        }
    }
    rows
}

/// NDJSON result lines as JSON, without the contract and version (the
/// same on every line, and not Arrow columns).
fn result_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).expect("a JSON line");
            if let Some(object) = value.as_object_mut() {
                object.remove("contract");
                object.remove("version");
            }
            value
        })
        .collect()
}

/// A `POST` with `headers` and a `Content-Length` body.
fn post(server: &TestServer, path: &str, headers: &[(&str, &str)], body: &[u8]) -> common::Response {
    let mut raw = format!(
        "POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    raw.push_str("\r\n");
    let mut raw = raw.into_bytes();
    raw.extend_from_slice(body);
    server.request(&raw)
}

fn error_kind(response: &common::Response) -> String {
    error_part(response, "kind")
}

fn error_part(response: &common::Response, part: &str) -> String {
    let body: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
    body["error"][part].as_str().unwrap_or("").to_string()
}

/// Records over several chunks of the batch crate (16 Ki rows each).
const RECORDS: usize = 40_000;

#[test]
fn arrow_records_give_the_batch_crates_results_as_arrow_or_ndjson() {
    let server = server(|_| {});
    let body = arrow_records(RECORDS, 5_000);
    let path = "/evaluations?contract=test.orders&channel=web";
    let answer = post(&server, path, &[("Content-Type", ARROW)], &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some(ARROW));
    assert!(answer.header("x-rulec-revision").is_some());
    let rows = arrow_rows(&answer.body);
    assert_eq!(rows.len(), RECORDS);
    let batch_arrow = in_process(
        InputFormat::Arrow,
        body.clone(),
        OutputFormat::Arrow,
        "decision,reasons,findings,effects,errors",
        &[],
    );
    assert!(rows == arrow_rows(&batch_arrow), "the batch crate's Arrow results");
    // Row for row what the NDJSON result lines of the same records say.
    let lines = result_lines(&in_process(
        InputFormat::Ndjson,
        ndjson_records(RECORDS),
        OutputFormat::Ndjson,
        "decision,reasons,findings,effects,errors",
        &[],
    ));
    assert_eq!(rows.len(), lines.len());
    for (k, (row, line)) in rows.iter().zip(&lines).enumerate() {
        assert_eq!(row, line, "record {k}");
    }
    let invalid = rows.iter().filter(|r| r["error"]["kind"] == "invalid_input").count();
    assert_eq!(invalid, RECORDS.div_ceil(997), "the records without an amount");

    // NDJSON answers: the CLI's lines, byte for byte.
    let answer = post(&server, path, &[("Content-Type", ARROW), ("Accept", NDJSON)], &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some(NDJSON));
    let want = in_process(
        InputFormat::Arrow,
        body.clone(),
        OutputFormat::Ndjson,
        "decision,reasons,findings,effects,errors",
        &[],
    );
    assert!(answer.body == want, "the batch crate's NDJSON lines");

    // `fields` and `keep` as the CLI's `--fields` and `--keep`.
    let path = "/evaluations?contract=test.orders&channel=web&fields=decision,effects&keep=id,note";
    let answer = post(&server, path, &[("Content-Type", ARROW)], &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let want = in_process(
        InputFormat::Arrow,
        body.clone(),
        OutputFormat::Arrow,
        "decision,effects",
        &["id", "note"],
    );
    assert!(arrow_rows(&answer.body) == arrow_rows(&want), "--fields and --keep");
    let first = &arrow_rows(&answer.body)[1];
    assert_eq!(first["id"], "o-1", "{first}");
    assert!(first.get("reasons").is_none(), "{first}");

    let metrics = server.get("/metrics").text();
    let counted = metrics.lines().find(|l| l.starts_with("rulec_batch_records_total ")).expect("the counter");
    assert_eq!(counted, format!("rulec_batch_records_total {}", 3 * RECORDS));
    assert!(
        metrics.contains(&format!("rulec_batch_failed_records_total {}", 3 * RECORDS.div_ceil(997))),
        "{metrics}"
    );
    assert!(metrics.contains("rulec_batch_seconds_total "), "{metrics}");
    assert!(metrics.contains("rulec_batches_running 0"), "{metrics}");
}

#[test]
fn ndjson_records_with_a_contract_in_the_query_give_result_lines() {
    let server = server(|_| {});
    let mut body = ndjson_records(3_000);
    body.extend_from_slice(b"\n{\"id\": \"x\", \"amount\": \"ten\", \"country\": \"DE\"}\nnot json\n");
    let path = "/evaluations?contract=test.orders&channel=web&keep=id";
    let answer = post(&server, path, &[("Content-Type", NDJSON)], &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some(NDJSON));
    let want = in_process(
        InputFormat::Ndjson,
        body.clone(),
        OutputFormat::Ndjson,
        "decision,reasons,findings,effects,errors",
        &["id"],
    );
    assert!(answer.body == want, "the batch crate's lines:\n{}", answer.text());
    assert_eq!(answer.text().lines().count(), 3_002, "one line per record, blank lines skipped");
    // As Arrow when asked.
    let answer = post(&server, path, &[("Content-Type", NDJSON), ("Accept", ARROW)], &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some(ARROW));
    let want = in_process(
        InputFormat::Ndjson,
        body,
        OutputFormat::Arrow,
        "decision,reasons,findings,effects,errors",
        &["id"],
    );
    assert!(arrow_rows(&answer.body) == arrow_rows(&want));
    // Without a contract in the query, NDJSON lines are requests, as before.
    let request = r#"{"channel":"pos","input":{"id":"r-1","amount":950,"country":"DE"}}"#;
    let answer =
        post(&server, "/evaluations", &[("Content-Type", NDJSON)], format!("{request}\n").as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert!(answer.text().contains("\"decision\":\"deny\""), "{}", answer.text());
}

#[test]
fn a_batch_that_cannot_start_is_a_status_saying_why() {
    let server = server(|config| config.max_batch_body = 1 << 20);
    let body = arrow_records(100, 100);
    let orders = "/evaluations?contract=test.orders&channel=web";
    let cases: [(&str, &[u8], u16, &str, &str); 8] = [
        (
            "/evaluations?contract=no.such&channel=web",
            &body,
            404,
            "unknown_contract",
            "no contract \"no.such\"",
        ),
        (
            "/evaluations?contract=test.orders&chanel=web",
            &body,
            400,
            "invalid_query",
            "unknown query parameter",
        ),
        ("/evaluations?contract=test.orders", &body, 400, "invalid_query", "`channel` is required"),
        ("/evaluations?contract=test.orders&channel=tv", &body, 400, "invalid_query", "`channel`: "),
        (&format!("{orders}&fields=verdict"), &body, 400, "invalid_query", "unknown part `verdict`"),
        (
            &format!("{orders}&keep=nope"),
            &body,
            400,
            "schema_mismatch",
            "`keep` nope: the input has no column",
        ),
        (
            orders,
            b"this is not Arrow at all",
            400,
            "bad_arrow",
            "a message announces a metadata of 1936287860 bytes",
        ),
        (orders, &missing_column(), 400, "schema_mismatch", "the input has no column `amount`"),
    ];
    for (path, body, status, kind, message) in cases {
        let answer = post(&server, path, &[("Content-Type", ARROW)], body);
        assert_eq!(answer.status, status, "{path}: {}", answer.text());
        assert_eq!(error_kind(&answer), kind, "{path}: {}", answer.text());
        assert!(error_part(&answer, "message").contains(message), "{path}: {}", answer.text());
    }
    // An announced length over the limit: answered before the body is
    // read (only its start is sent: the server closes without reading it).
    let raw = format!(
        "POST {orders} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: {ARROW}\r\nContent-Length: {}\r\n\r\nxx",
        2 << 20
    );
    let answer = server.request(raw.as_bytes());
    assert_eq!(answer.status, 413, "{}", answer.text());
    assert!(error_part(&answer, "message").contains("over the limit of 1048576 bytes"), "{}", answer.text());
    // Over the limit without announcing it: sent chunked, once the refused
    // batches have let go of their places (else this one could be 503).
    let app = server.running.as_ref().expect("running").app.clone();
    let waited = Instant::now();
    while app.batches.load(std::sync::atomic::Ordering::Relaxed) > 0 {
        assert!(waited.elapsed() < Duration::from_secs(10), "a refused batch still runs");
        std::thread::sleep(Duration::from_millis(5));
    }
    let (mut sender, mut answer) =
        upload(server.addr, "/evaluations?contract=test.orders&channel=web", NDJSON);
    let writer = std::thread::spawn(move || {
        let line = format!("{:1000}\n", r#"{"id":"a","amount":1,"country":"DE"}"#);
        for _ in 0..2_000 {
            if sender.send(line.as_bytes()).is_err() {
                return;
            }
        }
        let _ = sender.finish();
    });
    assert_eq!(answer.head(), 413);
    assert!(answer.rest().concat().contains("payload_too_large"));
    writer.join().expect("the writer");
}

/// Records without the `country` column the contract requires.
fn missing_column() -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Utf8, false)]));
    let ids: ArrayRef = Arc::new(arrow_array::StringArray::from(vec!["a", "b"]));
    let batch = RecordBatch::try_new(schema.clone(), vec![ids]).expect("a batch");
    let mut writer = StreamWriter::try_new(Vec::new(), &schema).expect("a writer");
    writer.write(&batch).expect("written");
    writer.into_inner().expect("finished")
}

/// A valid stream's first batches, then a message that is not one.
fn damaged_after(batches: usize) -> Vec<u8> {
    let mut writer = StreamWriter::try_new(Vec::new(), &schema()).expect("a writer");
    for k in 0..batches {
        writer.write(&arrow_batch(k * 1000..(k + 1) * 1000)).expect("written");
    }
    let mut bytes = writer.get_ref().clone();
    bytes.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x20, 0, 0, 0]);
    bytes.extend_from_slice(&[0xab; 32]);
    bytes.extend_from_slice(&[0xcd; 4096]);
    bytes
}

#[test]
fn a_stream_damaged_after_the_first_results_ends_with_an_error() {
    let server = server(|_| {});
    let path = "/evaluations?contract=test.orders&channel=web";
    let body = damaged_after(2);
    let answer = post(&server, path, &[("Content-Type", ARROW)], &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let rows = arrow_rows(&answer.body);
    assert_eq!(rows.len(), 2_001, "the records before the damage, and the error");
    let last = &rows[2_000];
    assert_eq!(last["error"]["kind"], "bad_arrow", "{last}");
    let message = last["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("the body, Arrow IPC record batch 3"), "{message}");
    assert!(message.ends_with("(the results stop after 2000 records)"), "{message}");
    assert!(last.get("decision").is_none(), "{last}");

    let answer = post(&server, path, &[("Content-Type", ARROW), ("Accept", NDJSON)], &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let text = answer.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2_001);
    assert!(lines[2_000].starts_with("{\"error\":{\"kind\":\"bad_arrow\""), "{}", lines[2_000]);
    // The server goes on serving.
    let answer = post(&server, path, &[("Content-Type", ARROW)], &arrow_records(10, 10));
    assert_eq!(answer.status, 200, "{}", answer.text());
}

#[test]
fn overload_is_503_with_retry_after_before_the_first_byte() {
    let server = server(|config| {
        config.workers = 1;
        config.queue = 1;
        config.max_batches = 1;
        config.evaluation_timeout = Duration::from_secs(10);
        // The first batch waits, its body unfinished, while the test goes on.
        config.body_pace = server::BodyPace { window: Duration::from_secs(60), min_rate: 0 };
    });
    let app = server.running.as_ref().expect("running").app.clone();
    let path = "/evaluations?contract=test.orders&channel=web";
    let body = arrow_records(100, 100);

    // The one worker busy and the queue full: the first chunk cannot be queued.
    let (release, blocked) = std::sync::mpsc::channel::<()>();
    let blocked = Arc::new(Mutex::new(blocked));
    let far = Instant::now() + Duration::from_secs(60);
    for queued in 0..2 {
        let blocked = blocked.clone();
        app.pool.submit(far, move || drop(blocked.lock().map(|b| b.recv()))).expect("queued");
        while queued == 0 && app.pool.busy() == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let answer = post(&server, path, &[("Content-Type", ARROW)], &body);
    assert_eq!(answer.status, 503, "{}", answer.text());
    assert_eq!(answer.header("retry-after"), Some("1"));
    assert_eq!(error_kind(&answer), "overloaded");
    release.send(()).expect("released");
    release.send(()).expect("released");
    // The refused batch holds its slot until its blocking side has ended,
    // which may be after its 503 left: wait for it, or it would be taken
    // for the next batch below.
    while app.pool.busy() > 0
        || app.pool.queue_depth() > 0
        || app.batches.load(std::sync::atomic::Ordering::Relaxed) > 0
    {
        std::thread::sleep(Duration::from_millis(5));
    }

    // As many batches running as the server takes: the next one waits outside.
    let (mut sender, mut running) = upload(server.addr, path, ARROW);
    let mut head = StreamWriter::try_new(Vec::new(), &schema()).expect("a writer");
    head.flush().expect("the schema");
    sender.send(head.get_ref()).expect("sent");
    let waited = Instant::now();
    while app.batches.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        assert!(waited.elapsed() < Duration::from_secs(10), "the first batch never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    let answer = post(&server, path, &[("Content-Type", ARROW)], &body);
    assert_eq!(answer.status, 503, "{}", answer.text());
    assert_eq!(answer.header("retry-after"), Some("1"));
    // The first one finishes as any other.
    head.write(&arrow_batch(0..10)).expect("written");
    head.finish().expect("finished");
    let rest = head.into_inner().expect("the bytes");
    let schema_len = {
        let mut only_schema = StreamWriter::try_new(Vec::new(), &schema()).expect("a writer");
        only_schema.flush().expect("the schema");
        only_schema.get_ref().len()
    };
    sender.send(&rest[schema_len..]).expect("sent");
    sender.finish().expect("finished");
    assert_eq!(running.head(), 200);
    let mut bytes = Vec::new();
    running.body().read_to_end(&mut bytes).expect("the results");
    assert_eq!(arrow_rows(&bytes).len(), 10);
}
