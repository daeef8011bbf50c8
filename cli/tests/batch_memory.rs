//! Batch memory stays flat whatever the size of the results: records
//! whose results are forty times their own size (forty rules firing,
//! each echoing a kilobyte of the record) are evaluated by `rulec eval
//! --input` with a peak resident set a fraction of the results' size, in
//! NDJSON and Arrow results. Requests read with `--request FILE` are
//! streamed as stdin is: a file of requests many times the memory limit
//! is evaluated with a peak a fraction of its size.

mod support;

use std::io::Write;

use benches::matrix::child;

/// Rules that fire on every record, each echoing its text.
const RULES: usize = 40;
const RECORDS: usize = 10_000;
const TEXT: usize = 1_000;

/// Half the 410 MB of results (held a chunk at a time, the peak was 450
/// to 560 MB; written in pieces, 80 to 150 MB).
const PEAK_LIMIT: u64 = 200 << 20;

fn contract() -> String {
    let mut yaml = String::from("contract: t.echo\nversion: 1.0.0\ninput:\n  text: string\nrules:\n");
    for rule in 0..RULES {
        yaml.push_str(&format!("  - id: echo_{rule}\n    when: len(text) > 0\n    deny: \"{{text}}\"\n"));
    }
    yaml
}

fn records(path: &std::path::Path) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("records"));
    let text = "x".repeat(TEXT);
    for _ in 0..RECORDS {
        writeln!(file, "{{\"text\":\"{text}\"}}").expect("a record");
    }
    file.flush().expect("records written");
}

#[test]
fn results_far_larger_than_memory_are_written_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (yaml, input) = (dir.path().join("echo.yaml"), dir.path().join("records.ndjson"));
    std::fs::write(&yaml, contract()).expect("the contract");
    records(&input);
    for format in ["ndjson", "arrow"] {
        let mut command = support::rulec();
        command.arg("eval").arg(&yaml).arg("--input").arg(&input);
        command.args(["--output-format", format, "--threads", "2", "--output", "/dev/null"]);
        assert_peak_under(&mut command, PEAK_LIMIT, &format!("{format} results"));
    }
}

/// Half the 100 MB of requests (the whole file was read, then copied line
/// by line: a 1.5 GB file took 3.1 GB).
const REQUESTS_PEAK_LIMIT: u64 = 50 << 20;

#[test]
fn a_file_of_requests_is_streamed() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (yaml, requests) = (dir.path().join("quiet.yaml"), dir.path().join("requests.ndjson"));
    let rules = "contract: t.quiet\nversion: 1.0.0\ninput:\n  text: string\nrules:\n  - id: empty\n    when: len(text) == 0\n    deny: \"empty\"\n";
    std::fs::write(&yaml, rules).expect("the contract");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&requests).expect("requests"));
    let text = "x".repeat(TEXT);
    for _ in 0..100_000 {
        writeln!(file, "{{\"input\":{{\"text\":\"{text}\"}}}}").expect("a request");
    }
    file.flush().expect("requests written");
    drop(file);
    let mut command = support::rulec();
    command.arg("eval").arg(&yaml).arg("--request").arg(&requests).args(["--engine", "interp"]);
    command.stdout(std::process::Stdio::null());
    assert_peak_under(&mut command, REQUESTS_PEAK_LIMIT, "a file of requests");
}

/// Runs `command`, which must succeed with a peak resident set under `limit`.
fn assert_peak_under(command: &mut std::process::Command, limit: u64, what: &str) {
    let (measured, status) = child::run(command).expect("rulec runs");
    assert!(status.success(), "{what}: {status:?}");
    assert!(
        measured.peak_rss_bytes < limit,
        "{what}: peak RSS {} MiB, over {} MiB",
        measured.peak_rss_bytes >> 20,
        limit >> 20
    );
}
