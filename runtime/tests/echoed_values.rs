//! A value a request sends is never echoed whole in an error: a 900 KB bad
//! value in any field gives a short message, in every place a request
//! can go wrong (the envelope, the input's types, the contract's
//! conversions at evaluation).

use std::sync::Arc;

const CONTRACT: &str = r#"
contract: echo.values
version: 1.0.0
channels: [web]
components: [core]
input:
  amount: decimal
  count: int
  ratio: float
  kind: { enum: [a, b] }
  at: timestamp
  wait: duration
  text: string
tables:
  known: { key: string, value: int, rows: { a: 1 } }
rules:
  - { id: lookup, when: "known[text] > 0", deny: lookup }
  - { id: to_int, when: int(text) > 0, deny: int }
  - { id: to_decimal, when: decimal(text) > 0, deny: decimal }
  - { id: to_float, when: float(text) > 0.0, deny: float }
  - { id: to_timestamp, when: timestamp(text) > at, deny: timestamp }
  - { id: to_duration, when: duration(text) > wait, deny: duration }
"#;

/// A value far longer than any message should be.
fn huge(kind: &str) -> String {
    let unit = match kind {
        "digits" => "9",
        _ => "x",
    };
    unit.repeat(900 * 1024)
}

fn contract() -> Arc<runtime::Contract> {
    let bundle = frontend::compile(CONTRACT).expect("compiles");
    runtime::Engine::builder().jit(runtime::Jit::Off).build().load(bundle).expect("loads")
}

/// A valid input with `field` replaced by the raw JSON `value`.
fn request(field: &str, value: &str) -> String {
    let input = [
        ("amount", r#""1.50""#),
        ("count", "1"),
        ("ratio", "0.5"),
        ("kind", r#""a""#),
        ("at", r#""2026-01-01T00:00:00Z""#),
        ("wait", r#""1h""#),
        ("text", r#""0""#),
    ]
    .iter()
    .map(|(name, json)| format!("\"{name}\":{}", if *name == field { value } else { json }))
    .collect::<Vec<_>>()
    .join(",");
    let envelope = [("contract", r#""echo.values""#), ("channel", r#""web""#)]
        .iter()
        .map(|(name, json)| format!("\"{name}\":{}", if *name == field { value } else { json }))
        .collect::<Vec<_>>()
        .join(",");
    // The rules belong to no component, so a request naming one would
    // apply none of them: `component` and `now` only when they are tested.
    let extra = match field {
        "component" | "now" => format!(",\"{field}\":{value}"),
        _ => String::new(),
    };
    format!("{{{envelope}{extra},\"input\":{{{input}}}}}")
}

#[test]
fn huge_bad_values_give_short_messages() {
    let contract = contract();
    let text = format!("\"{}\"", huge("letters"));
    let digits = huge("digits");
    // How the cut values look inside the result's JSON.
    let x = format!("\\\"{}...\\\"", "x".repeat(37));
    let nines = format!("\\\"{}...\\\"", "9".repeat(37));
    let exponent = format!("1e{}...", "9".repeat(35));
    let cases = [
        ("contract", text.clone(), x.clone()),
        ("channel", text.clone(), x.clone()),
        ("component", text.clone(), x.clone()),
        ("now", text.clone(), x.clone()),
        ("amount", text.clone(), x.clone()),
        ("amount", digits.clone(), nines.clone()),
        ("amount", format!("{digits}.5"), nines.clone()),
        ("amount", format!("1e{digits}"), exponent),
        ("count", digits.clone(), format!("{}... does not fit an int", "9".repeat(37))),
        ("count", text.clone(), x.clone()),
        ("ratio", format!("{digits}.5"), format!("{}... is beyond the range of a float", "9".repeat(37))),
        ("kind", text.clone(), x.clone()),
        ("at", text.clone(), x.clone()),
        ("wait", text.clone(), x.clone()),
        ("wait", format!("\"{digits}d\""), nines),
        // Each rule's conversion fails on the text at evaluation.
        ("text", text.clone(), x.clone()),
    ];
    let mut long = Vec::new();
    for (field, value, cut) in &cases {
        let mut out = Vec::new();
        contract.evaluate_json(&request(field, value), &mut out);
        let shown = String::from_utf8_lossy(&out);
        if out.len() > 1_000 || !shown.contains(cut.as_str()) {
            long.push(format!(
                "{field}: {} bytes: {}",
                out.len(),
                shown.chars().take(300).collect::<String>()
            ));
        }
    }
    let mut out = Vec::new();
    contract.evaluate_json(&request("text", &text), &mut out);
    let shown = String::from_utf8_lossy(&out);
    for rule in ["to_int", "to_decimal", "to_float", "to_timestamp", "to_duration", "lookup"] {
        assert!(shown.contains(&format!("{{\"rule\":\"{rule}\",\"message\":")), "{rule} errs: {shown}");
    }
    // The whole request as a string, not an object.
    let mut out = Vec::new();
    contract.evaluate_json(&text, &mut out);
    if out.len() > 1_000 {
        long.push(format!("a string request: {} bytes", out.len()));
    }
    assert!(long.is_empty(), "values echoed whole:\n{}", long.join("\n"));
}
