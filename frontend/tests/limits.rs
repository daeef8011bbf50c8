//! Hostile inputs are refused cleanly: no panic, no stack overflow, a
//! located diagnostic.

fn codes(text: &str) -> Vec<&'static str> {
    let compiled = frontend::compile_file("limits.yaml", text);
    assert!(compiled.bundle.is_none());
    let _ = compiled.diagnostics.render(false);
    compiled.diagnostics.items.iter().map(|d| d.code.id()).collect()
}

#[test]
fn a_contract_nested_100_000_deep_is_refused() {
    let flow =
        format!("contract: a.b\nversion: 1.0.0\ninput: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(codes(&flow), ["E0001"]);
    let block: String = (0..100_000).map(|i| format!("{}k{i}:\n", " ".repeat(i % 200 + 1))).collect();
    assert!(!codes(&format!("contract: a.b\nversion: 1.0.0\ninput:\n{block}")).is_empty());
    let maps =
        format!("contract: a.b\nversion: 1.0.0\ninput: {}{}\n", "{a: ".repeat(100_000), "}".repeat(100_000));
    assert_eq!(codes(&maps), ["E0005"]);
}

#[test]
fn a_10_mb_expression_is_refused() {
    let expression = vec!["amount"; 10 * 1024 * 1024 / 9].join(" + ");
    let text = format!(
        "contract: a.b\nversion: 1.0.0\ninput: {{ amount: int }}\nrules:\n  - id: r\n    when: {expression} > 0\n    deny: no\n"
    );
    assert_eq!(codes(&text), ["E0301"]);
}

#[test]
fn deep_expressions_and_types_are_refused() {
    let parens = format!("{}amount{}", "(".repeat(5_000), ")".repeat(5_000));
    let text = format!(
        "contract: a.b\nversion: 1.0.0\ninput: {{ amount: int }}\nrules:\n  - id: r\n    when: {parens} > 0\n    deny: no\n"
    );
    assert_eq!(codes(&text), ["E0301"]);
    let ty = format!("{}int{}", "list<".repeat(100_000), ">".repeat(100_000));
    let text = format!("contract: a.b\nversion: 1.0.0\ninput: {{ xs: '{ty}' }}\nrules: []\n");
    assert_eq!(codes(&text), ["E0200"]);
}

#[test]
fn a_file_over_64_mib_is_refused() {
    let text = format!("contract: a.b\n#{}\n", "x".repeat(frontend::MAX_FILE_BYTES));
    assert_eq!(codes(&text), ["E0008"]);
}
