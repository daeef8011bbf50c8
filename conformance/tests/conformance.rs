//! Runs every conformance case on every engine: one snapshot per case, all
//! contract tests passing, the same bytes from every engine, and a summary
//! that is current.

use std::path::Path;

use conformance::{CaseRun, ENGINES, cases, run, summary};

fn check(case: &Path) -> (String, Vec<(&'static str, CaseRun)>) {
    let mut runs = Vec::new();
    for engine in ENGINES {
        let outcome = run(case, engine).unwrap_or_else(|e| panic!("{}: {e}", case.display()));
        runs.push((engine, outcome));
    }
    let (_, reference) = &runs[0];
    for (engine, other) in &runs[1..] {
        assert_eq!(
            other.transcript,
            reference.transcript,
            "{}: {engine} differs from {}",
            case.display(),
            ENGINES[0]
        );
    }
    let mut shown = reference.transcript.clone();
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
