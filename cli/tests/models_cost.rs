//! A model's cost against `rulec eval --timeout-ms`, as a process: a model
//! whose one row would run for seconds (an Expand to a `[4000, 4000, n,
//! 4]` tensor and its mean) is refused when the contract loads, with its
//! estimated cost and the limit, instead of being run past the timeout;
//! a model under the limit that still takes longer than the timeout
//! makes its request's line a timeout.

mod support;

const CONTRACT: &str = r#"
contract: costly
version: 1.0.0
on_error: deny
input:
  a: float
models:
  wide: { onnx: wide.onnx, features: 4, output: value }
rules:
  - id: scored
    when: score(wide, [a, a, a, a]) > 100.0
    deny: "too high"
"#;

/// `rulec eval` of one request with `--timeout-ms 1` over the contract
/// and a model of side `side`: its exit status, stdout and stderr.
fn eval_with_model(side: i64) -> (bool, String, String) {
    let dir = tempfile::tempdir().expect("a folder");
    let contract = dir.path().join("costly.yaml");
    std::fs::write(&contract, CONTRACT).expect("written");
    std::fs::write(dir.path().join("wide.onnx"), models::testing::expanded(4, side)).expect("written");
    let request = dir.path().join("request.json");
    std::fs::write(&request, r#"{"input":{"a":1.5}}"#).expect("written");
    let output = support::rulec()
        .args(["eval"])
        .arg(&contract)
        .arg("--request")
        .arg(&request)
        .args(["--timeout-ms", "1"])
        .output()
        .expect("rulec runs");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.success(), text(&output.stdout), text(&output.stderr))
}

#[test]
fn a_model_over_the_cost_limit_is_refused_at_load() {
    let (ok, stdout, stderr) = eval_with_model(4000);
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("model `wide`"), "{stderr}");
    let limit = format!("over the limit of {}", models::MAX_OPERATIONS_PER_ROW);
    assert!(stderr.contains("operations a row") && stderr.contains(&limit), "{stderr}");
}

#[test]
fn a_model_under_the_limit_that_outlasts_the_timeout_times_the_request_out() {
    // 4 · 1000² = 4M values written a row, well over a millisecond.
    let (ok, stdout, stderr) = eval_with_model(1000);
    assert!(!ok, "a request that timed out is not a result: exit 1");
    assert!(stdout.contains(r#""kind":"timeout""#), "{stdout}{stderr}");
}
