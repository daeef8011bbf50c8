//! Runs every conformance case on every engine: one snapshot per case, all
//! contract tests passing, the same bytes from every engine, and a summary
//! that is current. Under each result line the snapshot says, for each
//! engine with native code, whether native code finished the request or
//! fell back to the interpreter (`jit: native`, `jit: fallback`), and
//! counts them per case: a case whose requests start falling back shows
//! in review instead of comparing the interpreter with itself.

use std::path::Path;

use conformance::{CaseRun, ENGINES, cases, run, summary};
use runtime::engine::NativeStatus;

fn check(case: &Path) -> (String, Vec<(&'static str, CaseRun)>) {
    let mut runs = Vec::new();
    for engine in ENGINES {
        let outcome = run(case, engine).unwrap_or_else(|e| panic!("{}: {e}", case.display()));
        runs.push((engine, outcome));
    }
    let (_, reference) = &runs[0];
    for (engine, other) in &runs[1..] {
        assert_eq!(
            other.transcript(),
            reference.transcript(),
            "{}: {engine} differs from {}",
            case.display(),
            ENGINES[0]
        );
    }
    // Each result, then who finished it on each engine but the reference
    // (the interpreter, which has no native code).
    let mut shown = String::new();
    for (i, request) in reference.requests.iter().enumerate() {
        shown.push_str(&format!("> {}\n< {}\n", request.request, request.result));
        for (engine, r) in &runs[1..] {
            shown.push_str(&format!("  {engine}: {}\n", r.requests[i].finished.name()));
        }
    }
    for (engine, r) in &runs[1..] {
        let status = match &r.status {
            NativeStatus::Native => "native code".to_string(),
            NativeStatus::Failed(why) => format!("no native code: {why}"),
            other => format!("{other:?}"),
        };
        shown.push_str(&format!("[{engine}] {status}; requests: {}\n", r.finished_counts()));
    }
    for (engine, r) in &runs {
        for (name, failures) in &r.tests {
            let status = if failures.is_empty() { "ok" } else { "FAILED" };
            shown.push_str(&format!("test [{engine}] {status}: {name}\n"));
            for failure in failures {
                shown.push_str(&format!("    {failure}\n"));
            }
        }
    }
    (shown, runs)
}

#[test]
fn every_case_on_every_engine() {
    let mut failed = Vec::new();
    let mut by_engine: Vec<(String, Vec<(String, CaseRun)>)> =
        ENGINES.iter().map(|e| (e.to_string(), Vec::new())).collect();
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let (shown, runs) = check(&case);
        insta::with_settings!({ snapshot_suffix => name.clone(), prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("case", shown);
        });
        for (i, (engine, r)) in runs.into_iter().enumerate() {
            if r.tests_passed() != r.tests.len() {
                failed.push(format!("{name} [{engine}]"));
            }
            by_engine[i].1.push((name.clone(), r));
        }
    }
    assert!(!by_engine[0].1.is_empty(), "found the cases");
    let expected = summary(&by_engine);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("SUMMARY.md");
    if std::env::var_os("RULEC_BLESS").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap_or_default(),
        expected,
        "SUMMARY.md is stale: run with RULEC_BLESS=1"
    );
    assert!(failed.is_empty(), "contract tests failed in: {failed:?}");
}
