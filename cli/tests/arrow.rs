//! Batch input as Arrow IPC: `rulec eval --input records.arrow` gives, byte
//! for byte, what the same records give as NDJSON, in the file and the
//! stream formats and across batch boundaries; a column of a type no
//! contract reads, and a damaged file, are clear errors (exit 2). A
//! contract that declares no channels needs no `--channel`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use arrow_array::builder::{
    Decimal128Builder, Int32Builder, Int64Builder, LargeStringBuilder, ListBuilder, StringBuilder,
    StringDictionaryBuilder,
};
use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, BinaryArray, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use serde_json::Value;

const CONTRACT: &str = "examples/contracts/acme.payments.transfer.yaml";
const RECORDS: &str = "cli/tests/data/records.ndjson";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn rulec(input: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rulec"))
        .args(["eval", CONTRACT, "--input"])
        .arg(input)
        .args(["--channel", "server", "--engine", "interp", "--threads", "2"])
        .current_dir(root())
        .output()
        .expect("rulec runs")
}

/// `rulec eval CONTRACT --input INPUT --engine interp`, with `extra` arguments.
fn rulec_batch(contract: &str, input: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rulec"))
        .args(["eval", contract, "--input"])
        .arg(input)
        .args(["--engine", "interp"])
        .args(extra)
        .current_dir(root())
        .output()
        .expect("rulec runs")
}

fn records() -> Vec<Value> {
    let text = std::fs::read_to_string(root().join(RECORDS)).expect("records");
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("JSON")).collect()
}

/// Cents of a decimal string with at most two places.
fn cents(value: &Value) -> Option<i128> {
    let text = value.as_str()?;
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let fraction = format!("{fraction:0<2}");
    Some(whole.parse::<i128>().ok()? * 100 + fraction.parse::<i128>().ok()?)
}

fn strings<'a>(records: impl Iterator<Item = Option<&'a Value>>) -> ArrayRef {
    let mut b = StringBuilder::new();
    records.for_each(|v| b.append_option(v.and_then(Value::as_str)));
    Arc::new(b.finish())
}

/// A struct column of string fields, then int fields.
fn record_column(records: &[Value], name: &str, texts: &[&str], ints: &[&str]) -> (Field, ArrayRef) {
    let part = |r: &Value| r.get(name).filter(|v| v.is_object()).cloned();
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for text in texts {
        fields.push(Field::new(*text, DataType::Utf8, true));
        columns.push(strings(records.iter().map(|r| r.get(name).and_then(|p| p.get(*text)))));
    }
    for int in ints {
        let mut b = Int64Builder::new();
        records.iter().for_each(|r| b.append_option(part(r).and_then(|p| p[*int].as_i64())));
        fields.push(Field::new(*int, DataType::Int64, true));
        columns.push(Arc::new(b.finish()));
    }
    let nulls = records.iter().map(|r| part(r).is_some()).collect::<Vec<_>>();
    let array =
        StructArray::try_new(Fields::from(fields.clone()), columns, Some(nulls.into())).expect("struct");
    (Field::new(name, DataType::Struct(Fields::from(fields)), true), Arc::new(array))
}

/// The transfer records as one Arrow batch: decimals as Decimal128, the
/// currency dictionary-encoded (or a large string: an IPC file keeps one
/// dictionary for all its batches), nested structs, a list of strings,
/// and a column no contract field has (ignored, as unknown JSON fields
/// are).
fn transfer_batch(records: &[Value], dictionary: bool) -> RecordBatch {
    let decimal = |name: &str| {
        let mut b = Decimal128Builder::new().with_precision_and_scale(18, 2).expect("decimal type");
        records.iter().for_each(|r| b.append_option(r.get(name).and_then(cents)));
        (Field::new(name, DataType::Decimal128(18, 2), true), Arc::new(b.finish()) as ArrayRef)
    };
    let currency: ArrayRef = if dictionary {
        let mut b = StringDictionaryBuilder::<Int8Type>::new();
        records.iter().for_each(|r| b.append_option(r["currency"].as_str()));
        Arc::new(b.finish())
    } else {
        let mut b = LargeStringBuilder::new();
        records.iter().for_each(|r| b.append_option(r["currency"].as_str()));
        Arc::new(b.finish())
    };
    let mut branch = Int32Builder::new();
    records
        .iter()
        .for_each(|r| branch.append_option(r["source"]["kyc_level"].as_i64().map(|n| n as i32 + 100)));
    let mut tags = ListBuilder::new(StringBuilder::new());
    for r in records {
        match r["tags"].as_array() {
            Some(items) => {
                items.iter().for_each(|t| tags.values().append_option(t.as_str()));
                tags.append(true);
            }
            None => tags.append(false),
        }
    }
    let (amount, daily_total) = (decimal("amount"), decimal("daily_total"));
    let source =
        record_column(records, "source", &["account", "country"], &["account_age_days", "kyc_level"]);
    let destination = record_column(records, "destination", &["country", "iban", "name"], &[]);
    let tags: ArrayRef = Arc::new(tags.finish());
    let columns: Vec<(Field, ArrayRef)> = vec![
        amount,
        (Field::new("currency", currency.data_type().clone(), true), currency),
        daily_total,
        source,
        destination,
        (Field::new("purpose", DataType::Utf8, true), strings(records.iter().map(|r| r.get("purpose")))),
        (Field::new("tags", tags.data_type().clone(), true), tags),
        (Field::new("branch_code", DataType::Int32, true), Arc::new(branch.finish())),
    ];
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = columns.into_iter().unzip();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).expect("batch")
}

fn write_file(path: &Path, batches: &[RecordBatch]) {
    let file = std::fs::File::create(path).expect("create");
    let mut writer = arrow_ipc::writer::FileWriter::try_new(file, &batches[0].schema()).expect("writer");
    batches.iter().for_each(|b| writer.write(b).expect("write"));
    writer.finish().expect("finish");
}

fn write_stream(path: &Path, batches: &[RecordBatch]) {
    let file = std::fs::File::create(path).expect("create");
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(file, &batches[0].schema()).expect("writer");
    batches.iter().for_each(|b| writer.write(b).expect("write"));
    writer.finish().expect("finish");
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rulec-arrow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

#[test]
fn arrow_records_give_the_ndjson_results() {
    let records = records();
    let expected = rulec(&root().join(RECORDS));
    let whole = transfer_batch(&records, true);
    let (first, rest) = records.split_at(3);
    let split = [transfer_batch(first, false), transfer_batch(rest, false)];
    let split_dictionaries = [transfer_batch(first, true), transfer_batch(rest, true)];
    let cases = [
        ("one batch, file format", "one.arrow", true, std::slice::from_ref(&whole)),
        ("two batches, file format", "two.arrow", true, &split[..]),
        ("two batches, stream format", "two.arrows", false, &split_dictionaries[..]),
    ];
    for (what, name, file_format, batches) in cases {
        let path = temp(name);
        if file_format {
            write_file(&path, batches)
        } else {
            write_stream(&path, batches)
        }
        let got = rulec(&path);
        assert_eq!(
            got.status.code(),
            expected.status.code(),
            "{what}: {}",
            String::from_utf8_lossy(&got.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&got.stdout), String::from_utf8_lossy(&expected.stdout), "{what}");
    }
    assert_eq!(String::from_utf8_lossy(&expected.stdout).lines().count(), records.len());
}

#[test]
fn an_unreadable_column_or_file_is_a_clear_error() {
    let path = temp("binary.arrow");
    let column: ArrayRef = Arc::new(BinaryArray::from_vec(vec![b"\x00\x01".as_slice()]));
    let schema = Schema::new(vec![Field::new("amount", DataType::Binary, false)]);
    write_file(&path, &[RecordBatch::try_new(Arc::new(schema), vec![column]).expect("batch")]);
    let got = rulec(&path);
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("column `amount` has Arrow type Binary"), "{stderr}");

    let good = temp("good.arrow");
    write_file(&good, &[transfer_batch(&records(), true)]);
    let bytes = std::fs::read(&good).expect("read");
    for cut in [0, 5, bytes.len() / 2, bytes.len() - 3] {
        let damaged = temp(&format!("cut{cut}.arrow"));
        std::fs::write(&damaged, &bytes[..cut]).expect("write");
        let got = rulec(&damaged);
        let stderr = String::from_utf8_lossy(&got.stderr);
        assert_eq!(got.status.code(), Some(2), "cut at {cut}: {stderr}");
        assert!(stderr.contains("Arrow IPC"), "cut at {cut}: {stderr}");
        assert!(!stderr.contains("panicked"), "cut at {cut}: {stderr}");
    }
}

/// The Arrow reader panics on some malformed files (an offset past a
/// buffer's end); rulec contains it: every damaged copy of a good file is
/// read or refused with a message, never a crash.
#[test]
fn damaged_arrow_files_never_crash_rulec() {
    let good = temp("flip-source.arrow");
    write_file(&good, &[transfer_batch(&records(), true)]);
    let bytes = std::fs::read(&good).expect("read");
    let damaged = temp("flipped.arrow");
    for at in (0..bytes.len()).step_by(17) {
        for value in [0x00, 0xff] {
            let mut edited = bytes.clone();
            edited[at] = value;
            std::fs::write(&damaged, &edited).expect("write");
            let got = rulec(&damaged);
            let stderr = String::from_utf8_lossy(&got.stderr);
            assert!(matches!(got.status.code(), Some(0..=2)), "byte {at} = {value}: {stderr}");
            assert!(!stderr.contains("panicked"), "byte {at} = {value}: {stderr}");
        }
    }
}

/// Batch mode leaves `--channel` out for a contract that declares none,
/// from Arrow as from NDJSON; one that declares channels asks for it by
/// name before opening the input.
#[test]
fn a_contract_without_channels_needs_no_channel() {
    let contract = "cli/tests/data/no_channels.yaml";
    let mut amounts = Int64Builder::new();
    [50, 150].into_iter().for_each(|n| amounts.append_value(n));
    let mut notes = StringBuilder::new();
    notes.append_null();
    notes.append_value("big");
    let schema = Schema::new(vec![
        Field::new("amount", DataType::Int64, false),
        Field::new("note", DataType::Utf8, true),
    ]);
    let columns: Vec<ArrayRef> = vec![Arc::new(amounts.finish()), Arc::new(notes.finish())];
    let path = temp("no_channels.arrow");
    write_file(&path, &[RecordBatch::try_new(Arc::new(schema), columns).expect("batch")]);
    let ndjson = temp("no_channels.ndjson");
    std::fs::write(&ndjson, "{\"amount\": 50}\n{\"amount\": 150, \"note\": \"big\"}\n").expect("write");

    let from_ndjson = rulec_batch(contract, &ndjson, &[]);
    let from_arrow = rulec_batch(contract, &path, &[]);
    let stdout = String::from_utf8_lossy(&from_arrow.stdout);
    assert_eq!(from_arrow.status.code(), Some(0), "{}", String::from_utf8_lossy(&from_arrow.stderr));
    assert_eq!(stdout, String::from_utf8_lossy(&from_ndjson.stdout));
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(stdout.contains("150 is over 100."), "{stdout}");

    let got = rulec_batch(CONTRACT, &temp("never-written.arrow"), &[]);
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim(),
        "error: --channel is required: the contract declares channels (server, mobile, batch)"
    );
}
