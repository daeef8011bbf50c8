//! `rulec bench` runs end to end with a handful of iterations, so the
//! harness cannot rot. It checks the report's shape, never a speed.

use std::process::Command;

#[test]
fn bench_reports_every_target_as_json() {
    let output = Command::new(env!("CARGO_BIN_EXE_rulec"))
        .args(["bench", "--seconds", "0.02", "--warmup", "0", "--runs", "2", "--format", "json"])
        .output()
        .expect("rulec runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert!(report["machine"]["cores"].as_u64().unwrap_or(0) >= 1);
    let targets = report["targets"].as_array().expect("targets");
    let names: Vec<&str> = targets.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"interp") && names.contains(&"e2e-interp"), "{names:?}");
    for target in targets {
        let measured = target["evals_per_s"].as_f64().unwrap_or(0.0) > 0.0;
        assert!(measured || target["skipped"].is_string(), "{target}");
        // A skipped target (a peer in a build without `--features peers`) has no runs.
        assert_eq!(target["runs"].as_array().map(Vec::len), Some(if measured { 2 } else { 0 }), "{target}");
    }
}
