//! The same requests, with tricky numbers (many digits, trailing zeros,
//! exponents, big ints, floats whose shortest form has an exponent), give
//! the same result bytes through every entry point: NDJSON on stdin,
//! `--request` with one pretty-printed request, `--request` with NDJSON,
//! batch `--input` (NDJSON records, and Arrow rows for the floats and
//! ints), and `rulec serve` over loopback. And the numbers mean what they
//! say: `100.0000000000000000001` is not a whole number of cents. A
//! decimal keeps its own scale in every format: a `Decimal128(20, 4)`
//! column's `122564.5600` renders as the JSON text `"122564.5600"` does,
//! and a `Decimal128(20, 2)` column's as `122564.56` (docs/LANGUAGE.md,
//! "Messages").

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use support::rulec;

const CONTRACT: &str = "contract: t.numbers
version: 1.0.0
channels: [batch, web]
decision: deny-overrides
default: allow
input:
  amount: decimal?
  n: int?
  x: float?
effects:
  amount: decimal
rules:
  - id: cent_precision
    when: round(amount ?? 0.0, 2) != (amount ?? 0.0)
    deny: \"{amount ?? 0.0} has more than two places.\"
  - id: show
    when: \"true\"
    finding: { code: SHOW, severity: info, message: \"amount={amount ?? 0.0} n={n ?? 0} x={x ?? 0.0}\" }
    effects: { amount: amount ?? 0.0 }
";

/// Input records; the last ones are refused.
const RECORDS: [&str; 10] = [
    r#"{"amount":100.0000000000000000001,"n":1,"x":1.38e-23}"#,
    r#"{"amount":12345678901234567890.5,"n":9223372036854775807,"x":0.9210986675838745}"#,
    r#"{"amount":123.4500,"n":-0,"x":18446744073709590000.0}"#,
    r#"{"amount":1.50e1,"n":-9223372036854775808,"x":-5.43e-21}"#,
    r#"{"amount":0.000000000000000000000000000000001e5,"x":0.1e-31}"#,
    r#"{"amount":"0.12345678901234567890123456789e0","x":1e-32}"#,
    r#"{"amount":0.1e29,"x":1E+2}"#,
    r#"{"amount":"0.10","n":-9223372036854775809}"#,
    r#"{"amount":1.00000000000000000000000000005e0,"n":1e2}"#,
    r#"{"amount":0.12345678901234567890123456789e0,"n":100.0}"#,
];

/// A folder holding the contract (the server serves a folder), removed
/// when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("rulec-numbers-{test}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("rules")).expect("a folder");
        std::fs::write(dir.join("rules/numbers.yaml"), CONTRACT).expect("written");
        Scratch(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    fn write(&self, name: &str, text: &str) -> String {
        std::fs::write(self.0.join(name), text).expect("written");
        self.path(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn request(record: &str) -> String {
    format!(r#"{{"channel":"batch","input":{record}}}"#)
}

/// The request spread over lines and indented, as people write files (the
/// records hold no string with `{`, `,` or `}`).
fn pretty(request: &str) -> String {
    request.replace('{', "{\n  ").replace(',', ",\n  ").replace('}', "\n}") + "\n"
}

/// `rulec eval ARGS` with `stdin`: its stdout.
fn eval(args: &[&str], stdin: &str) -> String {
    let mut child = rulec()
        .arg("eval")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rulec runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("sent");
    let output = child.wait_with_output().expect("rulec finishes");
    String::from_utf8(output.stdout).expect("UTF-8")
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[test]
fn every_entry_point_reads_numbers_the_same() {
    let scratch = Scratch::new("entry-points");
    let rules = scratch.path("rules");
    let requests: Vec<String> = RECORDS.iter().map(|r| request(r)).collect();
    let ndjson = requests.join("\n") + "\n";

    let stdin = lines(&eval(&[&rules, "--engine", "jit"], &ndjson));
    assert_eq!(stdin.len(), RECORDS.len(), "{stdin:?}");
    for engine in ["interp", "jit"] {
        assert_eq!(lines(&eval(&[&rules, "--engine", engine], &ndjson)), stdin, "stdin, {engine}");
        let file = scratch.write("requests.ndjson", &ndjson);
        assert_eq!(
            lines(&eval(&[&rules, "--request", &file, "--engine", engine], "")),
            stdin,
            "--request NDJSON"
        );
        for (i, request) in requests.iter().enumerate() {
            let file = scratch.write("request.json", &pretty(request));
            let one = lines(&eval(&[&rules, "--request", &file, "--engine", engine], ""));
            assert_eq!(one, [stdin[i].clone()], "--request with one pretty-printed request: {request}");
        }
        let records = scratch.write("records.ndjson", &(RECORDS.join("\n") + "\n"));
        let batch = eval(&[&rules, "--input", &records, "--channel", "batch", "--engine", engine], "");
        assert_eq!(lines(&batch), stdin, "batch --input, {engine}");
    }

    let served = support::serve(&rules);
    for (request, want) in requests.iter().zip(&stdin) {
        assert_eq!(&support::post(&served.addr, request), want, "the server: {request}");
    }

    let shown = |i: usize| stdin[i].as_str();
    assert!(shown(0).contains(r#""decision":"deny","reasons":[{"rule":"cent_precision""#), "{}", shown(0));
    assert!(shown(0).contains("amount=100.0000000000000000001 n=1 x=0.0000000000000000000000138"));
    assert!(shown(1).contains("amount=12345678901234567890.5 n=9223372036854775807 x=0.9210986675838745"));
    assert!(shown(2).contains("amount=123.4500 n=0 x=18446744073709590000"), "{}", shown(2));
    assert!(shown(3).contains("amount=15.0 n=-9223372036854775808 x=-0.00000000000000000000543"));
    assert!(
        shown(4).contains("amount=0.0000000000000000000000000001 n=0 x=0.00000000000000000000000000000001")
    );
    assert!(shown(6).contains("amount=10000000000000000000000000000 n=0 x=100"), "{}", shown(6));
    assert!(shown(7).contains("-9223372036854775809 does not fit an int (64-bit)"), "{}", shown(7));
    assert!(shown(8).contains("does not fit a decimal exactly"), "{}", shown(8));
    assert!(
        shown(9).contains("does not fit a decimal exactly") && shown(9).contains("expected int, got 100.0")
    );
}

/// Arrow rows: floats and ints give what the same NDJSON records give.
#[test]
fn arrow_floats_and_ints_read_like_ndjson() {
    let scratch = Scratch::new("arrow");
    let floats = [1.38e-23, 0.9210986675838745, 18446744073709590000.0, -5.43e-21, 0.1e-31, 1e-32];
    let ints = [1, i64::MAX, 0, i64::MIN, -1, 7];
    let records: Vec<String> =
        floats.iter().zip(ints).map(|(x, n)| format!(r#"{{"n":{n},"x":{x}}}"#)).collect();
    let ndjson = scratch.write("records.ndjson", &(records.join("\n") + "\n"));
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new("x", DataType::Float64, false),
    ]));
    let columns: Vec<ArrayRef> =
        vec![Arc::new(Int64Array::from(ints.to_vec())), Arc::new(Float64Array::from(floats.to_vec()))];
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns).expect("a batch");
    let arrow = scratch.path("records.arrow");
    write_arrow(&arrow, &batch);

    let rules = scratch.path("rules");
    let from_ndjson = eval(&[&rules, "--input", &ndjson, "--channel", "batch", "--engine", "jit"], "");
    let from_arrow = eval(&[&rules, "--input", &arrow, "--channel", "batch", "--engine", "jit"], "");
    assert_eq!(from_arrow, from_ndjson);
    for (line, x) in from_ndjson.lines().zip(floats) {
        assert!(line.contains(&format!(" x={x}\"")), "{x}: {line}");
    }
}

/// A decimal's scale is part of its value, in every format: an Arrow
/// column of scale 4 gives what the JSON text with four places gives, one
/// of scale 2 what the text with two gives.
#[test]
fn a_decimal_keeps_its_scale_in_every_format() {
    let scratch = Scratch::new("scale");
    let rules = scratch.path("rules");
    for (scale, text) in [(2i8, "122564.56"), (4, "122564.5600")] {
        let ndjson = scratch.write(&format!("s{scale}.ndjson"), &format!("{{\"amount\":\"{text}\"}}\n"));
        let schema =
            Arc::new(Schema::new(vec![Field::new("amount", DataType::Decimal128(20, scale), false)]));
        let mantissa = 12_256_456i128 * 10i128.pow(u32::from(scale.unsigned_abs()) - 2);
        let column = arrow_array::Decimal128Array::from(vec![mantissa]).with_precision_and_scale(20, scale);
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(column.expect("a decimal"))])
            .expect("a batch");
        let arrow = scratch.path(&format!("s{scale}.arrow"));
        write_arrow(&arrow, &batch);
        let from_ndjson = eval(&[&rules, "--input", &ndjson, "--channel", "batch"], "");
        let from_arrow = eval(&[&rules, "--input", &arrow, "--channel", "batch"], "");
        assert_eq!(from_arrow, from_ndjson, "scale {scale}");
        assert!(from_ndjson.contains(&format!("amount={text} ")), "scale {scale}: {from_ndjson}");
    }
}

/// `batch` as an Arrow IPC file at `path`.
fn write_arrow(path: &str, batch: &RecordBatch) {
    let file = std::fs::File::create(Path::new(path)).expect("created");
    let mut writer = arrow_ipc::writer::FileWriter::try_new(file, &batch.schema()).expect("a writer");
    writer.write(batch).expect("written");
    writer.finish().expect("finished");
}
