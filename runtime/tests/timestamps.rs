//! Requests read timestamps with the one strict RFC 3339 parser every
//! stage shares: each case of `ir/tests/timestamps.tsv` as an input
//! field, as `now`, and as the text of `timestamp(s)` at evaluation.

use serde_json::Value as Json;

const CONTRACT: &str = r#"
contract: a.b
version: 1.0.0
input: { at: timestamp, s: string }
rules:
  - id: shown
    when: "true"
    deny: "{at} {now()} {timestamp(s)}"
"#;

#[path = "../../ir/tests/common/timestamp_cases.rs"]
mod timestamp_cases;
use timestamp_cases::cases;

fn evaluate(contract: &runtime::Contract, at: &str, now: &str, s: &str) -> Json {
    let request = serde_json::json!({"now": now, "input": {"at": at, "s": s}}).to_string();
    let mut out = Vec::new();
    contract.evaluate_json(&request, &mut out);
    serde_json::from_slice(&out).expect("JSON")
}

#[test]
fn requests_read_the_cases() {
    let bundle = frontend::compile(CONTRACT).expect("compiles");
    let contract = runtime::Engine::builder().build().load(bundle).expect("loads");
    let valid = "2026-01-02T03:04:05Z";
    for (text, expected) in cases() {
        match expected {
            Ok(utc) => {
                let result = evaluate(&contract, &text, &text, &text);
                assert_eq!(result["reasons"][0]["message"], format!("{utc} {utc} {utc}"), "{text}: {result}");
            }
            Err(part) => {
                let message = format!("timestamp {text:?}: {part}");
                for (path, result) in [
                    ("input.at", evaluate(&contract, &text, valid, valid)),
                    ("now", evaluate(&contract, valid, &text, valid)),
                ] {
                    let detail = &result["error"]["details"][0];
                    assert_eq!(detail["path"], path, "{text}: {result}");
                    assert!(
                        detail["message"].as_str().is_some_and(|m| m.contains(&message)),
                        "{text}: {result}"
                    );
                }
                let result = evaluate(&contract, valid, valid, &text);
                let error =
                    result["errors"][0]["message"].as_str().unwrap_or_else(|| panic!("{text}: {result}"));
                assert!(error.contains(&message), "{text}: {result}");
            }
        }
    }
}
