//! `rulec bench --batch` end to end on a tiny slice: the table has a row
//! per format and mode, the JSON rows say the same, and every format's
//! results, in process and over HTTP, are the same bytes (SQL's the same
//! lines in any order). It checks the report's shape, never a speed.

mod support;

use std::process::Command;

fn rulec(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rulec")).args(args).output().expect("rulec runs")
}

/// `rulec bench --batch ARGS --json FILE`, which must succeed: its table
/// and its JSON report.
fn matrix(args: &[&str]) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("matrix.json");
    let json_arg = json.to_str().expect("a UTF-8 path");
    let output = rulec(&[&["bench", "--batch"][..], args, &["--json", json_arg][..]].concat());
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let report = serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON rows")).expect("JSON");
    (stdout, report)
}

/// Every cell that ran, by contract and shape: its formats' digests.
type Digests = std::collections::BTreeMap<(String, String), Vec<(String, String)>>;

fn digests(rows: &[serde_json::Value]) -> Digests {
    let mut cells = Digests::new();
    for row in rows.iter().filter(|r| r["engine"] == "rulec") {
        let Some(sha256) = row["results_sha256"].as_str() else { continue };
        let cell = (
            row["contract"].as_str().unwrap_or("").to_string(),
            row["shape"].as_str().unwrap_or("").to_string(),
        );
        let format =
            format!("{} {}", row["format"].as_str().unwrap_or(""), row["mode"].as_str().unwrap_or(""));
        cells.entry(cell).or_default().push((format, sha256.to_string()));
    }
    cells
}

#[test]
fn a_tiny_slice_runs_every_format_and_the_formats_agree() {
    let (stdout, report) = matrix(&[
        "--records",
        "2000",
        "--contracts",
        "reference,6",
        "--shapes",
        "flat,nested",
        "--modes",
        "in-process",
        "--no-duckdb",
    ]);
    for format in batch::InputFormat::ALL {
        for (contract, shape) in [("6", "flat"), ("6", "nested"), ("reference", "nested")] {
            let row = format!("| rulec | in-process | {} | {contract} | {shape} | 2000 |", format.name());
            assert!(stdout.contains(&row), "no row `{row}` in\n{stdout}");
        }
    }
    assert!(stdout.contains("cross-format check: ok"), "{stdout}");
    let rows = report["rows"].as_array().expect("rows");
    // Four cells (the reference contract has no flat records), each in
    // every format.
    assert_eq!(rows.len(), 4 * batch::InputFormat::ALL.len(), "{report}");
    for row in rows.iter().filter(|r| r["skipped"].is_null()) {
        assert!(row["records_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{row}");
        assert!(row["peak_rss_mib"].as_f64().unwrap_or(0.0) > 1.0, "{row}");
        // Text holds every record's ~200 bytes; columns (Parquet) compress.
        let per_record = if matches!(row["format"].as_str(), Some("ndjson" | "json")) { 50 } else { 10 };
        assert!(row["input_bytes"].as_u64().unwrap_or(0) > 2000 * per_record, "{row}");
    }
    let cells = digests(rows);
    assert_eq!(cells.len(), 3, "{cells:?}");
    for (cell, runs) in &cells {
        let formats: Vec<&str> = runs.iter().map(|(f, _)| f.as_str()).collect();
        for format in batch::InputFormat::ALL {
            let format = format!("{} in-process", format.name());
            assert!(formats.contains(&format.as_str()), "{cell:?}: no results in {format}: {formats:?}");
        }
        assert!(runs.iter().all(|(_, d)| d == &runs[0].1), "{cell:?}: {runs:?}");
    }
    assert_eq!(report["cross_format"]["compared"], 3);
}

/// Over loopback HTTP (`rulec serve`, one POST a cell) Arrow and NDJSON
/// give the in-process results; the formats the endpoint does not take
/// are rows that say so.
#[test]
fn http_cells_give_the_in_process_results() {
    let (stdout, report) = matrix(&[
        "--records",
        "3000",
        "--contracts",
        "reference,6",
        "--shapes",
        "nested",
        "--formats",
        "ndjson,arrow,avro",
        "--modes",
        "in-process,http",
        "--no-duckdb",
    ]);
    for contract in ["reference", "6"] {
        let row = format!("| rulec | http | avro | {contract} | nested | 3000 |");
        let line =
            stdout.lines().find(|l| l.starts_with(&row)).unwrap_or_else(|| panic!("no `{row}`: {stdout}"));
        assert!(line.contains("skipped: HTTP takes Arrow IPC streams and NDJSON"), "{line}");
    }
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2 * 3 * 2, "{report}");
    for row in rows.iter().filter(|r| r["mode"] == "http" && r["skipped"].is_null()) {
        assert!(row["records_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{row}");
        // The server's own memory: a process that loaded a contract.
        assert!(row["peak_rss_mib"].as_f64().unwrap_or(0.0) > 5.0, "{row}");
    }
    let cells = digests(rows);
    assert_eq!(cells.len(), 2, "{cells:?}");
    for (cell, runs) in &cells {
        let mut formats: Vec<&str> = runs.iter().map(|(f, _)| f.as_str()).collect();
        formats.sort_unstable();
        assert_eq!(
            formats,
            ["arrow http", "arrow in-process", "avro in-process", "ndjson http", "ndjson in-process"],
            "{cell:?}"
        );
        assert!(runs.iter().all(|(_, d)| d == &runs[0].1), "{cell:?}: {runs:?}");
    }
    assert_eq!(report["cross_format"]["compared"], 2);
    assert_eq!(report["modes"], serde_json::json!(["in-process", "http"]));
}

/// The SQL rows: `rulec sql` over the same Parquet and Arrow files as the
/// batch rows; `rulec_decision` gives the decisions `rulec eval --fields
/// decision` gives (in any order), `rulec(...)` the same results from
/// both files; a contract with windows and the formats SQL does not read
/// are rows that say so.
#[cfg(feature = "sql")]
#[test]
fn sql_cells_give_the_batch_decisions() {
    let (stdout, report) = matrix(&[
        "--records",
        "2000",
        "--contracts",
        "6,windows,model",
        "--shapes",
        "flat",
        "--formats",
        "parquet,arrow,ndjson",
        "--modes",
        "in-process,decision,sql,sql-decision",
        "--no-duckdb",
    ]);
    let line = |row: &str| {
        stdout.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("no `{row}`: {stdout}"))
    };
    assert!(line("| rulec | sql | ndjson | 6 | flat | 2000 |").contains("skipped: SQL rows"));
    assert!(
        line("| rulec | sql | parquet | windows | flat | 2000 |")
            .contains("skipped: a contract with windows")
    );
    assert!(
        line("| rulec | sql-decision | arrow | model | flat | 2000 |")
            .contains("x the wall time of `rulec eval --input --fields decision`")
    );
    assert!(stdout.contains("cross-format check: ok"), "{stdout}");
    let rows = report["rows"].as_array().expect("rows");
    // 3 contracts × 3 formats × 4 modes.
    assert_eq!(rows.len(), 36, "{report}");
    let ran: Vec<&serde_json::Value> = rows.iter().filter(|r| r["skipped"].is_null()).collect();
    // In process: 3 formats; decision, sql and sql-decision: 2 each, but
    // the contract with windows in neither SQL mode.
    assert_eq!(ran.len(), 3 * (3 + 2 + 2 + 2) - 4, "{report}");
    for row in ran.iter().filter(|r| r["mode"].as_str().is_some_and(|m| m.starts_with("sql"))) {
        assert!(row["over_twin"].as_f64().unwrap_or(0.0) > 0.0, "{row}");
    }
    // Per contract: the full results (3 formats), the decisions (batch
    // and SQL, both files) and rulec(...) (both files); the contract with
    // windows has no SQL cell, but its decisions in both files compare.
    assert_eq!(report["cross_format"]["compared"], 3 * 3 - 1, "{report}");
}

#[test]
fn bad_batch_flags_are_usage_errors() {
    for (args, expected) in [
        (&["bench", "--batch", "--shapes", "round"][..], "unknown shape `round`"),
        (&["bench", "--batch", "--contracts", "many"][..], "unknown contract `many`"),
        (&["bench", "--batch", "--formats", "csv"][..], "unknown format `csv`"),
        (&["bench", "--batch", "--modes", "grpc"][..], "unknown mode `grpc`"),
        (&["bench", "--records", "10"][..], "--batch"),
    ] {
        let output = rulec(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// The DuckDB peer runs beside the reference contract on the same Arrow
/// and Parquet files, and its results say what rulec's do, record for record. It needs
/// `python3 -m pip install duckdb pyarrow` (`.ci/run` installs them): under
/// `CI=true` their absence fails, elsewhere the test says so and passes.
#[test]
fn the_duckdb_peer_gives_rulecs_results() {
    if !support::python_can_import("duckdb, pyarrow") {
        return;
    }
    let (stdout, report) = matrix(&[
        "--records",
        "2000",
        "--contracts",
        "reference",
        "--shapes",
        "nested",
        "--formats",
        "arrow,parquet",
        "--modes",
        "in-process",
    ]);
    for format in ["arrow", "parquet"] {
        let line = format!("rulec/duckdb (reference × nested × 2000, {format}), the records/s: in-process ");
        assert!(stdout.contains(&line), "{stdout}");
        let rows = report["rows"].as_array().expect("rows");
        let peer =
            rows.iter().find(|r| r["engine"] == "duckdb" && r["format"] == format).expect("a DuckDB row");
        assert_eq!(peer["agrees_with_rulec"], true, "{peer}");
        assert!(peer["rulec_over_duckdb"].as_f64().unwrap_or(0.0) > 0.0, "{peer}");
    }
}
