//! Batch results as Arrow (`--output x.arrow`, `--output-format arrow`),
//! read back with arrow-rs: every row says what the NDJSON result line
//! says, for every set of `--fields`, with `--keep` columns first. And
//! `--fields`/`--keep` on NDJSON results: the full line with the other
//! parts left out, the kept fields first.

use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::Int8Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use serde_json::{Map, Value, json};

const CONTRACT: &str = "examples/contracts/acme.payments.transfer.yaml";
const RECORDS: &str = "cli/tests/data/records.ndjson";
/// Invalid records too, so `error` columns are checked.
const EXTRA: &str = "{\"amount\": \"x\", \"currency\": \"EUR\"}\n{\"amount\": \"1.00\", \"currency\": \"XXX\", \"daily_total\": \"0\"}\n";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The records and the invalid ones, in a file of `test`'s own.
fn input(test: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("rulec-{test}-{}.ndjson", std::process::id()));
    let records = std::fs::read_to_string(root().join(RECORDS)).expect("records");
    std::fs::write(&path, format!("{records}{EXTRA}")).expect("written");
    path
}

/// Runs a batch to `output` with `extra` flags; its stdout when no output.
fn batch(input: &Path, output: Option<&Path>, extra: &[&str]) -> Vec<u8> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rulec"));
    command.args(["eval", CONTRACT, "--input"]).arg(input).args(["--channel", "server"]).args(extra);
    if let Some(output) = output {
        command.arg("--output").arg(output);
    }
    let out = command.current_dir(root()).output().expect("rulec runs");
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

/// Row `row` of a results batch as the JSON its NDJSON line holds.
fn row_json(batch: &RecordBatch, row: usize) -> Value {
    let mut object = Map::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        match field.name().as_str() {
            "error" => {
                let error = column.as_struct();
                if error.is_valid(row) {
                    return json!({ "error": struct_json(error, row) });
                }
            }
            name => {
                object.insert(name.to_string(), value(column.as_ref(), row));
            }
        }
    }
    Value::Object(object)
}

fn struct_json(record: &arrow_array::StructArray, row: usize) -> Value {
    let mut object = Map::new();
    for (field, column) in record.fields().iter().zip(record.columns()) {
        if column.is_valid(row) {
            object.insert(field.name().clone(), value(column.as_ref(), row));
        }
    }
    Value::Object(object)
}

/// A value of a results column as JSON: decimals are text in Arrow and
/// strings in JSON alike.
fn value(array: &dyn Array, row: usize) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Utf8 => json!(array.as_string::<i32>().value(row)),
        DataType::Int64 => json!(array.as_primitive::<arrow_array::types::Int64Type>().value(row)),
        DataType::Boolean => json!(array.as_boolean().value(row)),
        DataType::Dictionary(..) => {
            let dictionary = array.as_dictionary::<Int8Type>();
            let key = dictionary.keys().value(row) as usize;
            json!(dictionary.values().as_string::<i32>().value(key))
        }
        DataType::List(_) => {
            let list = array.as_list::<i32>().value(row);
            Value::Array((0..list.len()).map(|i| value(list.as_ref(), i)).collect())
        }
        DataType::Struct(_) => struct_json(array.as_struct(), row),
        other => panic!("unexpected result column type {other}"),
    }
}

fn read_arrow(path: &Path) -> Vec<Value> {
    let file = std::fs::File::open(path).expect("the results");
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).expect("an Arrow IPC file");
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.expect("a batch");
        rows.extend((0..batch.num_rows()).map(|row| row_json(&batch, row)));
    }
    rows
}

/// The NDJSON line without the parts `fields` leaves out (and, for Arrow,
/// without the contract and version, which are no columns). An effect no
/// rule set is a null field in Arrow, read back as absent, as in NDJSON.
fn expected(line: &Value, fields: &[&str], arrow: bool) -> Value {
    let mut line = line.clone();
    if let Some(object) = line.as_object_mut()
        && !object.contains_key("error")
    {
        object.retain(|key, _| {
            fields.contains(&key.as_str())
                || key == "decision"
                || (!arrow && (key == "contract" || key == "version"))
        });
    }
    line
}

const SETS: [&[&str]; 4] = [
    &["reasons", "findings", "effects", "errors"],
    &["decision"],
    &["reasons", "effects"],
    &["findings", "errors"],
];

#[test]
fn arrow_results_say_what_the_ndjson_lines_say() {
    let input = input("arrow-results");
    let full = lines(&batch(&input, None, &[]));
    assert_eq!(full.len(), 9);
    for fields in SETS {
        let list = fields.join(",");
        let output =
            std::env::temp_dir().join(format!("rulec-results-{}-{}.arrow", std::process::id(), fields.len()));
        batch(&input, Some(&output), &["--fields", &list]);
        let rows = read_arrow(&output);
        let _ = std::fs::remove_file(&output);
        assert_eq!(rows.len(), full.len(), "--fields {list}");
        for (row, line) in rows.iter().zip(&full) {
            let mut want = expected(line, fields, true);
            if let Some(error) = want.get_mut("error").and_then(Value::as_object_mut) {
                error.retain(|k, _| k == "kind" || k == "details");
            }
            let mut got = row.clone();
            if let Some(error) = got.get_mut("error").and_then(Value::as_object_mut) {
                error.remove("message");
            }
            assert_eq!(got, want, "--fields {list}");
        }
    }
    let _ = std::fs::remove_file(&input);
}

#[test]
fn ndjson_results_keep_the_asked_parts_and_fields() {
    let input = input("kept-fields");
    let full = lines(&batch(&input, None, &[]));
    for fields in SETS {
        let list = fields.join(",");
        let got = lines(&batch(&input, None, &["--fields", &list, "--keep", "currency,purpose"]));
        let records: Vec<Value> = String::from_utf8_lossy(&std::fs::read(&input).expect("input"))
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON"))
            .collect();
        for ((line, want), record) in got.iter().zip(&full).zip(&records) {
            let mut want = expected(want, fields, false);
            let object = want.as_object_mut().expect("an object");
            for key in ["currency", "purpose"] {
                if let Some(v) = record.get(key) {
                    object.insert(key.to_string(), v.clone());
                }
            }
            assert_eq!(line, &want, "--fields {list}");
        }
    }
    // The kept fields come first.
    let raw = String::from_utf8(batch(&input, None, &["--keep", "currency"])).expect("UTF-8");
    assert!(raw.lines().all(|l| l.starts_with("{\"currency\":")), "{raw}");
    let _ = std::fs::remove_file(&input);
}
