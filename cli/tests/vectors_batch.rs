//! Embeddings as batch input (SIGNALS.md, Vectors): a `list<float>` input
//! read from an Arrow column of every list layout (`FixedSizeList`,
//! `List` and `LargeList` of `Float16`, `Float32` and `Float64`), in
//! Parquet and Arrow IPC files written by pyarrow, gives on both engines,
//! byte for byte, what the same records give as NDJSON to `dot`,
//! `cosine` and `l2`: lengths that differ, a zero vector, an empty list,
//! a null element (the record's invalid-input error) and a nullable list
//! included.
//!
//! The files are written by `cli/tests/data/write_vectors.py` (pyarrow):
//! under `CI=true` a missing pyarrow fails the test, elsewhere it is
//! skipped. Every value in the records is exact in half precision, so
//! every layout holds the same numbers.

mod support;

use std::path::Path;
use std::process::Output;

use support::root;

const CONTRACT: &str = "cli/tests/data/vectors.yaml";
const RECORDS: &str = "cli/tests/data/vectors.ndjson";
const WRITER: &str = "cli/tests/data/write_vectors.py";

/// The embedding column's layouts, and whether it holds only the records
/// whose embedding is 4 long (a fixed-size list).
const LAYOUTS: [(&str, bool); 5] =
    [("fixed32", true), ("fixed64", true), ("list64", false), ("large32", false), ("list16", false)];

fn eval(input: &Path, engine: &str) -> Output {
    support::rulec()
        .args(["eval", CONTRACT, "--input"])
        .arg(input)
        .args(["--engine", engine, "--threads", "2"])
        .output()
        .expect("rulec runs")
}

/// The records a layout holds, as NDJSON.
fn records(fixed: bool) -> String {
    let text = std::fs::read_to_string(root().join(RECORDS)).expect("records");
    text.lines()
        .filter(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("a record");
            !fixed || record["embedding"].as_array().is_some_and(|e| e.len() == 4)
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn every_list_layout_reads_the_embeddings_ndjson_reads() {
    if !support::python_can_import("pyarrow.parquet") {
        return;
    }
    let dir = tempfile::tempdir().expect("a folder");
    for (layout, fixed) in LAYOUTS {
        let ndjson = dir.path().join(format!("{layout}.ndjson"));
        std::fs::write(&ndjson, records(fixed)).expect("written");
        for kind in ["parquet", "arrow"] {
            let file = dir.path().join(format!("{layout}.{kind}"));
            support::run_python(
                layout,
                WRITER,
                [kind.as_ref(), layout.as_ref(), ndjson.as_os_str(), file.as_os_str()],
            );
            for engine in ["interp", "jit"] {
                let expected = eval(&ndjson, engine);
                let lines = String::from_utf8_lossy(&expected.stdout).lines().count();
                assert_eq!(lines, records(fixed).lines().count(), "{layout}: one result per record");
                // Worked by hand: the centroid itself (0.25 + 0.0625 + 1 +
                // 0.015625), and its opposite.
                let results = String::from_utf8_lossy(&expected.stdout);
                assert!(results.contains("id=1 dot=1.328125 cosine=1 l2=0 "), "{results}");
                assert!(results.contains("id=3 dot=-1.328125 cosine=-1 "), "{results}");
                support::assert_same_output(
                    &format!("{layout} {kind} {engine}"),
                    &eval(&file, engine),
                    &expected,
                );
            }
        }
    }
}
