//! Models as `rulec eval` runs them, as a process.
//!
//! Their cost against `--timeout-ms`: a model whose one row would run for
//! seconds (an Expand to a `[4000, 4000, n, 4]` tensor and its mean) is
//! refused when the contract loads, with its estimated cost and the
//! limit, instead of being run past the timeout; a model under the limit
//! that still takes longer than the timeout makes its request's line a
//! timeout.
//!
//! Their scores on other CPUs: the example's and the conformance case's
//! models give the same bytes natively and under `qemu-x86_64` as older
//! CPUs (tract picks its kernels by CPU; rulec scores in a fixed order,
//! models/src/fixed.rs). `.ci/run` installs qemu-user: without it the
//! test fails when `CI` is set and is skipped otherwise.

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

/// The CPUs the scores are compared on, as qemu names them: no AVX
/// (Nehalem), AVX2 and FMA (Haswell); the host has its own (AVX-512 on
/// the machine this was written on).
const OLDER_CPUS: [&str; 2] = ["Nehalem", "Haswell"];

/// `rulec eval` runs whose output shows models' scores in full.
const SCORED: [&[&str]; 2] = [
    &[
        "eval",
        "examples/contracts/acme.payments.velocity.yaml",
        "--request",
        "examples/requests/acme.payments.velocity.ndjson",
        "--explain",
        "--engine",
        "interp",
    ],
    &[
        "eval",
        "conformance/cases/models_score/contract.yaml",
        "--request",
        "conformance/cases/models_score/requests.ndjson",
        "--explain",
        "--engine",
        "jit",
    ],
];

#[test]
fn a_model_scores_the_same_bits_on_older_cpus() {
    let Some(qemu) = support::installed("qemu-x86_64", "qemu-user") else { return };
    for args in SCORED {
        let native = support::rulec().args(args).output().expect("rulec runs");
        assert!(native.status.success(), "{}", String::from_utf8_lossy(&native.stderr));
        assert!(String::from_utf8_lossy(&native.stdout).contains("signal score"), "scores are shown");
        for cpu in OLDER_CPUS {
            let emulated = std::process::Command::new(&qemu)
                .args(["-cpu", cpu, env!("CARGO_BIN_EXE_rulec")])
                .args(args)
                .current_dir(support::root())
                .output()
                .expect("qemu runs");
            support::assert_same_output(&format!("{} as {cpu}", args[1]), &emulated, &native);
        }
    }
}
