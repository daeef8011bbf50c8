//! `rulec sql` as a process (INTERFACES.md, SQL): the same records, as
//! Parquet files written by pyarrow, give through the SQL functions what
//! `rulec eval --input` gives for the same files, row by row. Both sides
//! are rendered by `rulec sql --format ndjson` (the results of `rulec
//! eval` read back from the Arrow files it wrote), so a row compares byte
//! for byte.
//!
//! The reference contract over many varied records; every conformance
//! case whose records pyarrow makes one table of and whose contract SQL
//! can call (no windows, one channel); a query that filters, joins the
//! results with a second table and groups them; a damaged Parquet file.
//! The planning errors, each with its message and exit code, are the
//! `sql_errors` case of `cli.rs` (a snapshot).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use support::{python_can_import, root, rulec, run_python};

const TRANSFER: &str = "examples/contracts/acme.payments.transfer.yaml";
const WRITER: &str = "cli/tests/data/write_formats.py";
const INFERRED: &str = "cli/tests/data/write_inferred_parquet.py";

/// The example transfer contract's input, as a record of a table's columns.
const RECORD: &str = "named_struct('amount', amount, 'currency', currency, 'daily_total', daily_total, \
    'source', source, 'destination', destination, 'purpose', purpose, 'tags', tags)";

/// SIGPIPE's number on Linux and macOS.
const SIGPIPE: i32 = 13;

/// The files the records are split over.
const PARTS: usize = 4;

/// The folder of a run: `parts/` holds the records as Parquet files,
/// `ndjson/` as NDJSON, `expected/` what `rulec eval --input` gives for
/// each Parquet file, as Arrow.
struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn write(count: usize) -> Files {
        let dir = tempfile::tempdir().expect("a folder");
        for sub in ["parts", "expected", "ndjson"] {
            std::fs::create_dir(dir.path().join(sub)).expect("a folder");
        }
        let records = support::transfer_records(count);
        for (k, part) in records.chunks(count.div_ceil(PARTS)).enumerate() {
            let ndjson = dir.path().join(format!("ndjson/part-{k}.ndjson"));
            std::fs::write(&ndjson, part.join("\n") + "\n").expect("written");
            let parquet = dir.path().join(format!("parts/part-{k}.parquet"));
            run_python(
                "pyarrow writes Parquet",
                WRITER,
                [
                    "parquet".as_ref(),
                    "numbered".as_ref(),
                    ndjson.as_os_str(),
                    parquet.as_os_str(),
                    "snappy".as_ref(),
                    "700".as_ref(),
                ],
            );
            let expected = dir.path().join(format!("expected/part-{k}.arrow"));
            let eval = eval(TRANSFER, Some("batch"), &parquet, &expected);
            assert!(evaluated(&eval, &expected), "rulec eval: {}", String::from_utf8_lossy(&eval.stderr));
        }
        Files { dir }
    }

    fn path(&self, sub: &str) -> String {
        self.dir.path().join(sub).display().to_string()
    }
}

/// `rulec eval CONTRACT --input INPUT --keep id --output OUTPUT`.
fn eval(contract: &str, channel: Option<&str>, input: &Path, output: &Path) -> Output {
    let mut command = rulec();
    command.args(["eval", contract, "--keep", "id", "--input"]).arg(input).arg("--output").arg(output);
    if let Some(channel) = channel {
        command.args(["--channel", channel]);
    }
    command.output().expect("rulec eval runs")
}

/// Whether `rulec eval --input` evaluated the records into `results`:
/// exit 0, or 1 when some were invalid (their errors are results too).
fn evaluated(eval: &Output, results: &Path) -> bool {
    matches!(eval.status.code(), Some(0 | 1)) && results.exists()
}

/// What `rulec eval --input` wrote to the Arrow files `results` (a file
/// or a folder), a line per record in `id` order.
fn expected(contract: &str, results: &str) -> Vec<String> {
    sql_lines(contract, &format!("SELECT * FROM '{results}' ORDER BY id"))
}

/// The query giving the results of `call` over `table`, as `rulec eval
/// --input --keep id` writes them: the kept `id`, then each part.
fn results_query(call: &str, table: &str) -> String {
    format!(
        "SELECT id, r['decision'] AS decision, r['reasons'] AS reasons, r['findings'] AS findings, \
         r['effects'] AS effects, r['errors'] AS errors, r['error'] AS error \
         FROM (SELECT id, {call} AS r FROM '{table}') ORDER BY id"
    )
}

/// The contract `yaml`, written as a file in `dir`: its path.
fn contract_in(dir: &Path, yaml: &str) -> String {
    let path = dir.join("contract.yaml");
    std::fs::write(&path, yaml).expect("written");
    path.display().to_string()
}

/// `rulec sql --contracts CONTRACT --format ndjson QUERY`: its lines (it
/// must succeed).
fn sql_lines(contract: &str, query: &str) -> Vec<String> {
    let out = sql(contract, &[], query);
    assert!(out.status.success(), "rulec sql {query}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8").lines().map(String::from).collect()
}

fn sql(contract: &str, flags: &[&str], query: &str) -> Output {
    rulec()
        .args(["sql", "--contracts", contract, "--format", "ndjson"])
        .args(flags)
        .arg(query)
        .output()
        .expect("rulec sql runs")
}

fn assert_same_lines(what: &str, got: &[String], expected: &[String]) {
    assert_eq!(got.len(), expected.len(), "{what}: rows");
    for (row, (got, expected)) in got.iter().zip(expected).enumerate() {
        assert_eq!(got, expected, "{what}: row {row}");
    }
}

#[test]
fn sql_over_parquet_gives_what_rulec_eval_gives_for_every_row() {
    if !python_can_import("pyarrow") {
        return;
    }
    let files = Files::write(6000);
    let expected = expected(TRANSFER, &format!("{}/", files.path("expected")));
    assert_eq!(expected.len(), 6000);
    assert!(expected.iter().any(|l| l.contains(r#""decision":"deny""#)));
    assert!(expected.iter().any(|l| l.contains(r#""decision":"allow""#)));
    assert!(expected.iter().any(|l| l.contains(r#""error":{"kind":"invalid_input""#)), "a refused currency");
    let call = format!("rulec('acme.payments.transfer', 'batch', {RECORD})");
    let query = results_query(&call, &format!("{}/", files.path("parts")));
    let out = sql(TRANSFER, &["--threads", "2"], &query);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Vec<String> = String::from_utf8(out.stdout).expect("UTF-8").lines().map(String::from).collect();
    assert_same_lines("rulec(...) over Parquet", &got, &expected);
    // The decision alone, over the same records as NDJSON.
    let decisions = sql_lines(
        TRANSFER,
        &format!(
            "SELECT id, rulec_decision('acme.payments.transfer', 'batch', {RECORD}) AS decision \
             FROM '{}/' ORDER BY id",
            files.path("ndjson")
        ),
    );
    let expected_decisions = sql_lines(
        TRANSFER,
        &format!(
            "SELECT id, arrow_cast(decision, 'Utf8') AS decision FROM '{}/' ORDER BY id",
            files.path("expected")
        ),
    );
    assert_same_lines("rulec_decision over NDJSON", &decisions, &expected_decisions);
}

/// A chain of thousands of `+` or `AND` is refused with a message (it
/// overflowed a thread's stack and aborted the process); a chain within
/// the limit runs.
#[test]
fn a_query_nested_too_deep_is_refused_and_one_within_the_limit_runs() {
    let chain = |term: &str, op: &str, terms: usize| vec![term; terms].join(op);
    for query in [
        format!("SELECT {} AS n", chain("1", " + ", 8000)),
        format!(
            "SELECT count(*) AS n FROM 'cli/tests/data/records.ndjson' WHERE {}",
            chain("true", " AND ", 8000)
        ),
    ] {
        let out = sql(TRANSFER, &[], &query);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("nests more than 1000 deep"), "{stderr}");
    }
    let within = sql_lines(TRANSFER, &format!("SELECT {} AS n", chain("1", " + ", 900)));
    assert_eq!(within, [r#"{"n":900}"#]);
}

/// An NDJSON table's types come from the whole file: a field first seen
/// on line 1,201 is in its struct (DataFusion's first 1,000 lines dropped
/// it, and 300 deny became allow), and an int column holding a fraction
/// after line 1,000 is not read as ints.
#[test]
fn an_ndjson_table_is_typed_from_every_line() {
    let dir = tempfile::tempdir().expect("a folder");
    let contract = contract_in(
        dir.path(),
        "contract: t.late\nversion: 1.0.0\ninput:\n  amount: int\n  flag: bool?\nrules:\n  - id: flagged\n    \
         when: flag ?? false\n    deny: \"flagged\"\n",
    );
    let records = dir.path().join("records.ndjson");
    let lines: String = (0..1500)
        .map(|i| match i >= 1200 {
            true => format!("{{\"r\":{{\"amount\":{i},\"flag\":true}},\"n\":{i}}}\n"),
            false => format!("{{\"r\":{{\"amount\":{i}}},\"n\":{i}}}\n"),
        })
        .collect();
    std::fs::write(&records, lines + "{\"r\":{\"amount\":1},\"n\":500.5}\n").expect("written");
    let denied = sql_lines(
        &contract,
        &format!(
            "SELECT count(*) AS n FROM '{}' WHERE rulec_decision('t.late', NULL, r) = 'deny'",
            records.display()
        ),
    );
    assert_eq!(denied, [r#"{"n":300}"#]);
    let fraction =
        sql_lines(&contract, &format!("SELECT n FROM '{}' WHERE n > 500 AND n < 501", records.display()));
    assert_eq!(fraction, [r#"{"n":500.5}"#], "500.5 is not read as 500");
    // A record with a field twice: neither value is guessed.
    let twice =
        sql(&contract, &[], "SELECT rulec_decision('t.late', NULL, named_struct('amount', 1, 'amount', 2))");
    let stderr = String::from_utf8_lossy(&twice.stderr);
    assert_eq!(twice.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the input has the column `amount` more than once"), "{stderr}");
}

/// A CSV file's timestamps meet the contract's own parser, as an NDJSON
/// file's do: one without an offset is the record's error in both
/// (DataFusion took the CSV column for timestamps and read it as UTC).
#[test]
fn a_csv_timestamp_without_an_offset_is_refused_as_in_ndjson() {
    let dir = tempfile::tempdir().expect("a folder");
    let contract = contract_in(
        dir.path(),
        "contract: t.at\nversion: 1.0.0\ninput:\n  at: timestamp\nrules:\n  - id: late\n    \
         when: at > timestamp(\"2026-01-01T12:00:00Z\")\n    deny: \"late\"\n",
    );
    let values = ["2026-01-01T13:00:00", "2026-01-01T13:00:00Z", "2026-01-01T13:00:00+02:00"];
    let csv = dir.path().join("at.csv");
    let rows: String = values.iter().enumerate().map(|(id, at)| format!("{id},{at}\n")).collect();
    std::fs::write(&csv, format!("id,at\n{rows}")).expect("written");
    let ndjson = dir.path().join("at.ndjson");
    let lines: String =
        values.iter().enumerate().map(|(id, at)| format!("{{\"id\":{id},\"at\":\"{at}\"}}\n")).collect();
    std::fs::write(&ndjson, lines).expect("written");
    let results = |table: &Path| {
        let query = format!(
            "SELECT rulec('t.at', NULL, named_struct('at', at)) AS r FROM '{}' ORDER BY id",
            table.display()
        );
        sql_lines(&contract, &query)
    };
    let from_csv = results(&csv);
    assert_same_lines("CSV against NDJSON", &from_csv, &results(&ndjson));
    assert!(from_csv[0].contains("the offset is missing"), "{}", from_csv[0]);
    assert!(from_csv[1].contains(r#""decision":"deny""#), "{}", from_csv[1]);
    assert!(from_csv[2].contains(r#""decision":"allow""#), "{}", from_csv[2]);
}

/// A reader that stops reading (`rulec sql ... | head`) ends rulec by
/// SIGPIPE with nothing on stderr, in every format and in `rulec eval`'s
/// batch mode; each format's writer said it in its own words.
#[test]
fn a_reader_that_stops_ends_rulec_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().expect("a folder");
    let records = dir.path().join("many.ndjson");
    let lines: String = (0..200_000).map(|i| format!("{{\"id\":{i}}}\n")).collect();
    std::fs::write(&records, lines).expect("written");
    let query = format!("SELECT * FROM '{}'", records.display());
    let eval = [TRANSFER, "--channel", "batch", "--input", &records.display().to_string()].map(String::from);
    let mut runs: Vec<(String, Vec<String>)> = ["table", "ndjson", "csv", "arrow"]
        .iter()
        .map(|format| {
            (
                format!("sql as {format}"),
                vec!["sql".into(), "--format".into(), format.to_string(), query.clone()],
            )
        })
        .collect();
    runs.push(("eval --input".into(), std::iter::once("eval".to_string()).chain(eval).collect()));
    for (what, args) in runs {
        let mut child = rulec()
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("rulec runs");
        let mut start = [0u8; 16];
        child.stdout.take().expect("stdout").read_exact(&mut start).expect("a first write");
        let out = child.wait_with_output().expect("rulec ends");
        assert_eq!(out.status.signal(), Some(SIGPIPE), "{what}: {:?}", out.status);
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{what}");
    }
}

/// No rows still have their header, in a table and in CSV; a struct
/// column, which CSV cannot hold, is refused before anything is written.
#[test]
fn results_without_rows_keep_their_header_and_csv_refuses_a_struct() {
    let run = |format: &str, query: &str| {
        rulec().args(["sql", "--format", format, query]).output().expect("rulec sql runs")
    };
    let table = run("table", "SELECT 1 AS n WHERE false");
    assert!(table.status.success());
    assert_eq!(String::from_utf8_lossy(&table.stdout), "+---+\n| n |\n+---+\n+---+\n");
    let csv = run("csv", "SELECT 1 AS n, 'x' AS s WHERE false");
    assert!(csv.status.success());
    assert_eq!(String::from_utf8_lossy(&csv.stdout), "n,s\n");
    let nested = run("csv", "SELECT 1 AS n, named_struct('a', 1) AS r");
    let stderr = String::from_utf8_lossy(&nested.stderr);
    assert_eq!(nested.status.code(), Some(2), "{stderr}");
    assert!(nested.stdout.is_empty());
    assert!(
        stderr.contains("column `r` is a struct, which CSV cannot hold") && stderr.len() < 300,
        "{stderr}"
    );
}

/// `--output` is written beside the file and moved over it at the end: a
/// query whose output is its own input reads the input whole, and a query
/// that fails leaves the file as it was (and nothing beside it).
#[test]
fn output_onto_an_input_or_from_a_failed_query_leaves_no_file_half_written() {
    let dir = tempfile::tempdir().expect("a folder");
    let records = dir.path().join("records.ndjson");
    std::fs::write(&records, support::transfer_records(2000).join("\n") + "\n").expect("written");
    let path = records.display().to_string();
    let out = sql(TRANSFER, &["--output", &path], &format!("SELECT * FROM '{path}'"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&records).expect("the results").lines().count(), 2000);

    let kept = dir.path().join("kept.ndjson");
    std::fs::write(&kept, "kept\n").expect("written");
    let missing = dir.path().join("missing.parquet").display().to_string();
    let out =
        sql(TRANSFER, &["--output", &kept.display().to_string()], &format!("SELECT * FROM '{missing}'"));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&kept).expect("the file"), "kept\n");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("the folder")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["kept.ndjson", "records.ndjson"]);
}

/// Strings dictionary-encoded, inside lists and structs too (Polars
/// categoricals, Spark's and pyarrow's dictionary reads), give what the
/// plain file gives, through SQL and through `rulec eval --input`.
#[test]
fn dictionary_encoded_strings_give_the_plain_results() {
    if !python_can_import("pyarrow") {
        return;
    }
    let dir = tempfile::tempdir().expect("a folder");
    let ndjson = dir.path().join("records.ndjson");
    std::fs::write(&ndjson, support::transfer_records(3000).join("\n") + "\n").expect("written");
    let write = |codec: &str| {
        let parquet = dir.path().join(format!("{codec}.parquet"));
        let args = ["parquet".as_ref(), "numbered".as_ref(), ndjson.as_os_str(), parquet.as_os_str()];
        run_python(
            "pyarrow writes Parquet",
            WRITER,
            args.into_iter().chain([codec.as_ref(), "700".as_ref()]),
        );
        parquet
    };
    let (plain, dictionary) = (write("snappy"), write("snappy-dictionary"));
    let call = format!("rulec('acme.payments.transfer', 'batch', {RECORD})");
    let lines = |file: &Path| sql_lines(TRANSFER, &results_query(&call, &file.display().to_string()));
    assert_same_lines("rulec(...) over dictionary strings", &lines(&dictionary), &lines(&plain));
    let evaluated = |file: &Path| {
        let results = dir.path().join(format!("{}.arrow", file.file_stem().unwrap().to_string_lossy()));
        assert!(evaluated(&eval(TRANSFER, Some("batch"), file, &results), &results));
        expected(TRANSFER, &results.display().to_string())
    };
    assert_same_lines("rulec eval over dictionary strings", &evaluated(&dictionary), &evaluated(&plain));
}

#[test]
fn a_query_that_filters_joins_and_groups_counts_what_the_batch_results_count() {
    if !python_can_import("pyarrow") {
        return;
    }
    let files = Files::write(2000);
    // A second table: each record's region.
    let regions = files.dir.path().join("regions.csv");
    let rows: String = (0..2000).map(|id| format!("{id},{}\n", ["north", "south", "east"][id % 3])).collect();
    std::fs::write(&regions, format!("id,region\n{rows}")).expect("written");
    let query = format!(
        "SELECT r.region, rulec_decision('acme.payments.transfer', 'batch', {RECORD}) AS decision, count(*) AS n \
         FROM '{}/' AS t JOIN '{}' AS r ON t.id = r.id WHERE t.id % 4 <> 0 \
         GROUP BY r.region, decision ORDER BY r.region, decision",
        files.path("parts"),
        regions.display()
    );
    let got = sql_lines(TRANSFER, &query);
    // The same counts from the batch results.
    let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
    for line in expected(TRANSFER, &format!("{}/", files.path("expected"))) {
        let result: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        let id = result["id"].as_u64().expect("an id") as usize;
        if id.is_multiple_of(4) {
            continue;
        }
        let decision = result["decision"].as_str().map(String::from);
        // NDJSON leaves nulls out: a record not evaluated has no decision.
        *counts
            .entry((["north", "south", "east"][id % 3].to_string(), decision.unwrap_or_default()))
            .or_default() += 1;
    }
    let expected: Vec<String> = counts
        .into_iter()
        .map(|((region, decision), n)| {
            let decision =
                if decision.is_empty() { String::new() } else { format!(r#","decision":"{decision}""#) };
            format!(r#"{{"region":"{region}"{decision},"n":{n}}}"#)
        })
        .collect();
    let mut got_sorted = got.clone();
    got_sorted.sort();
    let mut expected_sorted = expected;
    expected_sorted.sort();
    assert_same_lines("grouped counts", &got_sorted, &expected_sorted);
}

#[test]
fn a_damaged_parquet_file_is_an_error_not_a_panic() {
    if !python_can_import("pyarrow") {
        return;
    }
    let files = Files::write(400);
    let part = PathBuf::from(files.path("parts")).join("part-0.parquet");
    let bytes = std::fs::read(&part).expect("written");
    // Cut in half; a footer whose metadata length is past the file's size
    // (DataFusion's reader panicked); empty.
    let mut past = bytes.clone();
    let at = past.len() - 8;
    past[at..at + 4].copy_from_slice(&(bytes.len() as u32 * 10).to_le_bytes());
    for (name, damaged) in [("half", &bytes[..bytes.len() / 2]), ("past", &past[..]), ("empty", &[][..])] {
        let path = files.dir.path().join(format!("{name}.parquet"));
        std::fs::write(&path, damaged).expect("written");
        let out = sql(
            TRANSFER,
            &[],
            &format!(
                "SELECT rulec_decision('acme.payments.transfer', 'batch', {RECORD}) FROM '{}'",
                path.display()
            ),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(out.stdout.is_empty());
        let expected = format!("{} is not a readable Parquet file", path.display());
        assert!(stderr.starts_with("error: ") && stderr.contains(&expected), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    // A file that does not exist is named as missing, not as a table.
    let missing = files.dir.path().join("nope.parquet");
    let out = sql(TRANSFER, &[], &format!("SELECT * FROM '{}'", missing.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("cannot read {}: No such file", missing.display())), "{stderr}");
}

#[test]
fn one_ordered_partition_of_many_batches_is_written_in_its_order() {
    // One output partition (ORDER BY) of 50,000 rows: several batches,
    // each rendered on its own, written in the partition's order.
    let lines = sql_lines(TRANSFER, "SELECT value FROM generate_series(1, 50000) ORDER BY value DESC");
    let expected: Vec<String> = (1..=50000).rev().map(|v| format!(r#"{{"value":{v}}}"#)).collect();
    assert_same_lines("ordered rows", &lines, &expected);
}

/// A conformance case as SQL can call it: its contract's name and file,
/// and the one channel of its requests.
struct Case {
    name: String,
    dir: PathBuf,
    contract: String,
    channel: Option<String>,
}

/// The case in `dir`, or why SQL cannot run it as one batch.
fn case(dir: &Path) -> Result<Case, String> {
    let yaml = std::fs::read_to_string(dir.join("contract.yaml")).map_err(|e| e.to_string())?;
    if yaml.lines().any(|l| l.starts_with("windows:")) {
        return Err("windows".into());
    }
    let contract = yaml
        .lines()
        .find_map(|l| l.strip_prefix("contract:"))
        .map(|name| name.trim().to_string())
        .ok_or("no contract name")?;
    let requests = std::fs::read_to_string(dir.join("requests.ndjson")).map_err(|e| e.to_string())?;
    let mut channels = std::collections::BTreeSet::new();
    for line in requests.lines().filter(|l| !l.trim().is_empty()) {
        let request: serde_json::Value = serde_json::from_str(line).map_err(|_| "a request is not JSON")?;
        let Some(object) = request.as_object() else { return Err("a request is not an object".into()) };
        if object.keys().any(|k| k != "input" && k != "channel") {
            return Err("requests with more than an input and a channel".into());
        }
        channels.insert(object.get("channel").and_then(|c| c.as_str()).map(String::from));
    }
    if channels.len() > 1 {
        return Err("requests of several channels".into());
    }
    let channel = channels.into_iter().next().flatten();
    let name = dir.file_name().expect("a name").to_string_lossy().into_owned();
    Ok(Case { name, dir: dir.to_path_buf(), contract, channel })
}

#[test]
fn every_conformance_case_that_fits_gives_through_sql_what_rulec_eval_gives() {
    if !python_can_import("pyarrow") {
        return;
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("conformance/cases"))
        .expect("the cases")
        .map(|e| e.expect("an entry").path())
        .collect();
    dirs.sort();
    let tmp = tempfile::tempdir().expect("a folder");
    let (mut compared, mut skipped) = (Vec::new(), Vec::new());
    for dir in dirs {
        let case = match case(&dir) {
            Ok(case) => case,
            Err(why) => {
                skipped.push(format!("{}: {why}", dir.file_name().expect("a name").to_string_lossy()));
                continue;
            }
        };
        let parquet = tmp.path().join(format!("{}.parquet", case.name));
        let written = std::process::Command::new("python3")
            .arg(INFERRED)
            .arg(case.dir.join("requests.ndjson"))
            .arg(&parquet)
            .current_dir(root())
            .output()
            .expect("python3 runs");
        if !written.status.success() {
            skipped.push(format!("{}: {}", case.name, String::from_utf8_lossy(&written.stderr).trim()));
            continue;
        }
        let fields: Vec<String> =
            String::from_utf8_lossy(&written.stdout).lines().map(String::from).collect();
        let contract = case.dir.join("contract.yaml").display().to_string();
        let results = tmp.path().join(format!("{}.arrow", case.name));
        let channel = case.channel.as_deref();
        let eval = eval(&contract, channel, &parquet, &results);
        let record: Vec<String> = fields.iter().map(|f| format!("'{f}', \"{f}\"")).collect();
        let channel_sql = channel.map_or("NULL".to_string(), |c| format!("'{c}'"));
        let call = format!("rulec('{}', {channel_sql}, named_struct({}))", case.contract, record.join(", "));
        let query = results_query(&call, &parquet.display().to_string());
        if !evaluated(&eval, &results) {
            // The file does not fit the contract (or the contract needs
            // host functions): SQL refuses the same call while planning.
            let refused = sql(&contract, &[], &query);
            assert_eq!(
                refused.status.code(),
                Some(1),
                "{}: rulec eval refused the file, rulec sql did not",
                case.name
            );
            skipped.push(format!("{}: refused by both", case.name));
            continue;
        }
        let expected = expected(&contract, &results.display().to_string());
        assert_same_lines(&case.name, &sql_lines(&contract, &query), &expected);
        compared.push(case.name);
    }
    println!("compared: {}\nskipped:\n  {}", compared.join(", "), skipped.join("\n  "));
    assert!(
        compared.len() >= 20,
        "only {} cases compared: {compared:?}; skipped: {skipped:#?}",
        compared.len()
    );
    assert!(compared.iter().any(|c| c == "models_score"), "the model case runs through SQL");
}
