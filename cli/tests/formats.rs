//! Batch input in every format (INTERFACES.md, Batch): the same records as
//! a JSON array (compact, pretty-printed, CRLF), as Parquet written by
//! pyarrow (every codec, small and large row groups), as Avro written by
//! fastavro (every codec arrow-avro reads here, a block per record or
//! many) and as Arrow IPC written by pyarrow give, byte for byte, what
//! they give as NDJSON, also with every string dictionary-encoded (inside
//! lists and structs too); by extension or by `--input-format`. A damaged
//! file of each format (cut short, bytes overwritten) is an error with
//! exit 2 or per-record errors, never a crash or a hang.
//!
//! The typed files are written by `cli/tests/data/write_formats.py`
//! (pyarrow, fastavro): under `CI=true` a missing module fails the tests,
//! elsewhere they say so and skip those files.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use support::root;

const TRANSFER: &str = "examples/contracts/acme.payments.transfer.yaml";
const TYPED: &str = "cli/tests/data/typed.yaml";
const WRITER: &str = "cli/tests/data/write_formats.py";

/// A contract and its records, and the shape the writer gives them.
struct Data {
    contract: &'static str,
    records: &'static str,
    /// The writer's schema for them.
    schema: &'static str,
    channel: Option<&'static str>,
}

const DATA: [Data; 2] = [
    Data {
        contract: TRANSFER,
        records: "cli/tests/data/records.ndjson",
        schema: "transfer",
        channel: Some("server"),
    },
    Data { contract: TYPED, records: "cli/tests/data/typed.ndjson", schema: "typed", channel: None },
];

/// The typed files: (writer kind, codec, rows per row group or block).
const WRITTEN: [(&str, &str, &str); 15] = [
    ("parquet", "snappy", "3"),
    ("parquet", "snappy-dictionary", "3"),
    ("arrow", "none-dictionary", "2"),
    ("parquet", "zstd", "1000"),
    ("parquet", "gzip", "1"),
    ("parquet", "lz4", "2"),
    ("parquet", "brotli", "1000"),
    ("parquet", "none", "1000"),
    ("avro", "null", "1"),
    ("avro", "null", "1000"),
    ("avro", "deflate", "1"),
    ("avro", "snappy", "1"),
    ("avro", "snappy", "1000"),
    ("avro", "zstandard", "1"),
    ("arrow", "none", "2"),
];

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rulec-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// Runs `rulec eval CONTRACT --input INPUT` with `extra` flags; fails on a
/// run longer than a minute (a hang).
fn rulec(data: &Data, input: &Path, extra: &[&str]) -> Output {
    let mut command = support::rulec();
    command.args(["eval", data.contract, "--input"]).arg(input).args([
        "--engine",
        "interp",
        "--threads",
        "2",
    ]);
    if let Some(channel) = data.channel {
        command.args(["--channel", channel]);
    }
    let child =
        command.args(extra).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("rulec runs");
    finish(child, &format!("rulec on {}", input.display()))
}

/// Waits for `child`, killing it (and failing) after a minute.
fn finish(mut child: std::process::Child, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{what} hung");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().expect("output")
}

/// Whether pyarrow and fastavro (with their codecs) are there; under CI
/// they must be.
fn have_writers() -> bool {
    support::python_can_import("pyarrow.parquet, fastavro, cramjam, backports.zstd")
}

/// Writes `data`'s records as `kind` (parquet, avro, arrow) with `codec`.
fn write_typed(data: &Data, kind: &str, codec: &str, rows: &str) -> PathBuf {
    let path = temp(&format!("{}-{codec}-{rows}.{kind}", data.schema));
    let args = [
        kind.as_ref(),
        data.schema.as_ref(),
        data.records.as_ref(),
        path.as_os_str(),
        codec.as_ref(),
        rows.as_ref(),
    ];
    support::run_python(&format!("{kind} {codec}"), WRITER, args);
    path
}

fn lines(data: &Data) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(data.records)).expect("records");
    text.lines().filter(|l| !l.trim().is_empty()).map(String::from).collect()
}

/// The records as one JSON array, each element on one line.
fn compact_array(lines: &[String]) -> String {
    format!("[{}]", lines.join(","))
}

/// The records as one JSON array, a line per value and `newline` between
/// lines (`\n` or `\r\n`).
fn pretty_array(lines: &[String], newline: &str) -> String {
    let mut out = format!("[{newline}");
    let (mut string, mut escape) = (false, false);
    for (i, line) in lines.iter().enumerate() {
        out.push_str("  ");
        for c in line.chars() {
            out.push(c);
            if string {
                if escape {
                    escape = false;
                } else if c == '\\' {
                    escape = true;
                } else if c == '"' {
                    string = false;
                }
                continue;
            }
            match c {
                '"' => string = true,
                '{' | '[' | ',' => out.push_str(newline),
                _ => {}
            }
        }
        out.push_str(if i + 1 < lines.len() { "," } else { "" });
        out.push_str(newline);
    }
    out.push(']');
    out.push_str(newline);
    out
}

/// The JSON array files of `data`: (what, file name, text).
fn json_arrays(data: &Data) -> Vec<(&'static str, String, String)> {
    let lines = lines(data);
    vec![
        ("a compact JSON array", format!("{}-compact.json", data.schema), compact_array(&lines)),
        ("a pretty JSON array", format!("{}-pretty.json", data.schema), pretty_array(&lines, "\n")),
        ("a CRLF JSON array", format!("{}-crlf.json", data.schema), pretty_array(&lines, "\r\n")),
    ]
}

#[test]
fn every_format_gives_the_ndjson_results() {
    let writers = have_writers();
    for data in &DATA {
        let expected = rulec(data, &root().join(data.records), &[]);
        let results = String::from_utf8_lossy(&expected.stdout);
        assert_eq!(results.lines().count(), lines(data).len(), "{}: {results}", data.records);
        for (what, name, text) in json_arrays(data) {
            let path = temp(&name);
            std::fs::write(&path, &text).expect("write");
            support::assert_same_output(
                &format!("{}: {what}", data.schema),
                &rulec(data, &path, &[]),
                &expected,
            );
        }
        if !writers {
            continue;
        }
        for (kind, codec, rows) in WRITTEN {
            let path = write_typed(data, kind, codec, rows);
            let what = format!("{}: {kind}, {codec}, {rows} rows a group", data.schema);
            support::assert_same_output(&what, &rulec(data, &path, &[]), &expected);
        }
    }
}

/// `--input-format` names the format whatever the file's name.
#[test]
fn the_flag_names_the_format_whatever_the_name() {
    let data = &DATA[1];
    let expected = rulec(data, &root().join(data.records), &[]);
    let (_, _, text) = json_arrays(data).remove(1);
    let json = temp("array.txt");
    std::fs::write(&json, text).expect("write");
    support::assert_same_output(
        "--input-format json",
        &rulec(data, &json, &["--input-format", "json"]),
        &expected,
    );
    let as_ndjson = rulec(data, &json, &[]);
    assert_ne!(as_ndjson.stdout, expected.stdout, "a .txt file is read as NDJSON");
    if !have_writers() {
        return;
    }
    for (kind, codec) in [("parquet", "snappy"), ("avro", "deflate")] {
        let written = write_typed(data, kind, codec, "2");
        let renamed = temp(&format!("typed-{kind}.data"));
        std::fs::rename(&written, &renamed).expect("rename");
        support::assert_same_output(kind, &rulec(data, &renamed, &["--input-format", kind]), &expected);
    }
}

/// A file whose columns do not fit the contract is refused before any
/// record, naming the column.
#[test]
fn a_file_of_the_wrong_schema_names_the_column() {
    if !have_writers() {
        return;
    }
    for kind in ["parquet", "avro"] {
        let typed = write_typed(&DATA[1], kind, if kind == "avro" { "null" } else { "none" }, "10");
        let got = rulec(&DATA[0], &typed, &[]);
        let stderr = String::from_utf8_lossy(&got.stderr);
        assert_eq!(got.status.code(), Some(2), "{kind}: {stderr}");
        assert!(stderr.contains("the input has no column `currency`"), "{kind}: {stderr}");
        assert!(got.stdout.is_empty(), "{kind}");
    }
}

/// A damaged array: cut anywhere, it is an error naming the array (exit
/// 2); a byte overwritten anywhere, it is read, or gives per-record
/// errors, or is refused with a message: never a crash.
#[test]
fn damaged_json_arrays_never_crash_rulec() {
    let data = &DATA[0];
    let text = compact_array(&lines(data)).into_bytes();
    let damaged = temp("damaged.json");
    for cut in (0..text.len() - 1).step_by(41) {
        std::fs::write(&damaged, &text[..cut]).expect("write");
        let got = rulec(data, &damaged, &[]);
        let stderr = String::from_utf8_lossy(&got.stderr);
        assert_eq!(got.status.code(), Some(2), "cut at {cut}: {stderr}");
        assert!(
            stderr.contains("JSON array") || stderr.contains("array is cut short"),
            "cut at {cut}: {stderr}"
        );
    }
    for at in (0..text.len()).step_by(31) {
        for value in [0x00, 0xff, b',', b']', b'"', b'{', b'\n'] {
            let mut edited = text.clone();
            edited[at] = value;
            std::fs::write(&damaged, &edited).expect("write");
            let got = rulec(data, &damaged, &[]);
            let stderr = String::from_utf8_lossy(&got.stderr);
            assert!(matches!(got.status.code(), Some(0..=2)), "byte {at} = {value}: {stderr}");
            assert!(!stderr.contains("panicked"), "byte {at} = {value}: {stderr}");
        }
    }
}

/// Parquet and Avro files cut short are errors naming the format (exit
/// 2); with bytes overwritten, read or refused, never a crash or a hang.
#[test]
fn damaged_parquet_and_avro_files_never_crash_rulec() {
    if !have_writers() {
        return;
    }
    let data = &DATA[0];
    for (kind, codec, name) in
        [("parquet", "snappy", "Parquet"), ("avro", "deflate", "Avro"), ("avro", "null", "Avro")]
    {
        let bytes = std::fs::read(write_typed(data, kind, codec, "3")).expect("read");
        let damaged = temp(&format!("damaged.{kind}"));
        for cut in [0, 3, 5, bytes.len() / 3, bytes.len() / 2, bytes.len() - 9, bytes.len() - 1] {
            std::fs::write(&damaged, &bytes[..cut]).expect("write");
            let got = rulec(data, &damaged, &[]);
            let stderr = String::from_utf8_lossy(&got.stderr);
            assert_eq!(got.status.code(), Some(2), "{kind} {codec} cut at {cut}: {stderr}");
            assert!(stderr.contains(name), "{kind} {codec} cut at {cut}: {stderr}");
            assert!(!stderr.contains("panicked"), "{kind} {codec} cut at {cut}: {stderr}");
        }
        let step = bytes.len() / 150 + 1;
        for at in (0..bytes.len()).step_by(step) {
            for value in [0x00, 0xff] {
                let mut edited = bytes.clone();
                edited[at] = value;
                std::fs::write(&damaged, &edited).expect("write");
                let got = rulec(data, &damaged, &[]);
                let stderr = String::from_utf8_lossy(&got.stderr);
                assert!(
                    matches!(got.status.code(), Some(0..=2)),
                    "{kind} {codec} byte {at} = {value}: {stderr}"
                );
                assert!(!stderr.contains("panicked"), "{kind} {codec} byte {at} = {value}: {stderr}");
            }
        }
    }
}
