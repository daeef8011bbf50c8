//! `rulec bench --batch` end to end on a tiny slice: the table has a row
//! per format, the JSON rows say the same, and every format's results are
//! the same bytes. It checks the report's shape, never a speed.

use std::process::Command;

fn rulec(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rulec")).args(args).output().expect("rulec runs")
}

#[test]
fn a_tiny_slice_runs_every_format_and_the_formats_agree() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("matrix.json");
    let json_arg = json.to_str().expect("a UTF-8 path");
    let output = rulec(&[
        "bench",
        "--batch",
        "--records",
        "2000",
        "--contracts",
        "6",
        "--shapes",
        "flat",
        "--json",
        json_arg,
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    for format in batch::InputFormat::ALL {
        let row = format!("| rulec | {} | 6 | flat | 2000 |", format.name());
        assert!(stdout.contains(&row), "no row `{row}` in\n{stdout}");
    }
    assert!(stdout.contains("cross-format check: ok"), "{stdout}");

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON rows")).expect("JSON");
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), batch::InputFormat::ALL.len(), "{report}");
    let mut digests = Vec::new();
    for row in rows {
        if row["skipped"] == "not built" {
            continue;
        }
        assert!(row["records_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{row}");
        assert!(row["peak_rss_mib"].as_f64().unwrap_or(0.0) > 1.0, "{row}");
        // Text holds every record's ~200 bytes; columns (Parquet) compress.
        let per_record = if matches!(row["format"].as_str(), Some("ndjson" | "json")) { 50 } else { 10 };
        assert!(row["input_bytes"].as_u64().unwrap_or(0) > 2000 * per_record, "{row}");
        digests.push(row["results_sha256"].as_str().expect("a digest").to_string());
    }
    let ran: Vec<&str> = rows
        .iter()
        .filter(|r| r["results_sha256"].is_string())
        .filter_map(|r| r["format"].as_str())
        .collect();
    for format in ["ndjson", "json", "arrow", "avro", "parquet"] {
        assert!(ran.contains(&format), "no results in {format}: {report}");
    }
    assert!(digests.iter().all(|d| d == &digests[0]), "{digests:?}");
    assert_eq!(report["cross_format"]["compared"], 1);
}

#[test]
fn bad_batch_flags_are_usage_errors() {
    for (args, expected) in [
        (&["bench", "--batch", "--shapes", "round"][..], "unknown shape `round`"),
        (&["bench", "--batch", "--contracts", "many"][..], "unknown contract `many`"),
        (&["bench", "--batch", "--formats", "csv"][..], "unknown format `csv`"),
        (&["bench", "--records", "10"][..], "--batch"),
    ] {
        let output = rulec(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// The DuckDB peer runs beside the reference contract on the same Arrow
/// file, and its results say what rulec's do, record for record. It needs
/// `python3 -m pip install duckdb pyarrow` (`.ci/run` installs them): under
/// `CI=true` their absence fails, elsewhere the test says so and passes.
#[test]
fn the_duckdb_peer_gives_rulecs_results() {
    let imports = Command::new("python3").args(["-c", "import duckdb, pyarrow"]).output();
    if !imports.is_ok_and(|o| o.status.success()) {
        assert!(std::env::var_os("CI").is_none(), "CI needs python3 with duckdb and pyarrow");
        eprintln!(
            "skipped: python3 cannot import duckdb and pyarrow (python3 -m pip install duckdb pyarrow)"
        );
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let json = dir.path().join("matrix.json");
    let json_arg = json.to_str().expect("a UTF-8 path");
    let args = ["--contracts", "reference", "--shapes", "nested", "--formats", "arrow", "--json", json_arg];
    let output = rulec(&[&["bench", "--batch", "--records", "2000"][..], &args[..]].concat());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("rulec/duckdb (reference × nested × 2000, Arrow): "), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON rows")).expect("JSON");
    let rows = report["rows"].as_array().expect("rows");
    let peer = rows.iter().find(|r| r["engine"] == "duckdb").expect("a DuckDB row");
    assert_eq!(peer["agrees_with_rulec"], true, "{peer}");
    assert!(peer["rulec_over_duckdb"].as_f64().unwrap_or(0.0) > 0.0, "{peer}");
}
