//! Lowering shares work that several rules repeat: identical
//! subexpressions become one node, and those that cost something and
//! cannot fail become lets computed once per evaluation. What can fail is
//! never shared, so errors stay with the rule that hit them (the
//! conformance case `shared_work` checks that on both engines).

const HEADER: &str = "contract: t.share\nversion: 1.0.0\ninput:\n  email: string\n  country: string\n  n: int\ntables:\n  blocked: { set: string, rows: [IR, KP] }\nrules:\n";

/// The shared lets' values, as the IR prints them, for `rules`.
fn shared(rules: &str) -> Vec<String> {
    let bundle = frontend::compile(&format!("{HEADER}{rules}")).unwrap_or_else(|e| panic!("{e:?}"));
    let contract = bundle.contract_arc();
    contract
        .lets
        .iter()
        .filter(|l| l.name.starts_with("shared_"))
        .map(|l| ir::print::expr(&contract, l.value))
        .collect()
}

fn rule(id: &str, when: &str) -> String {
    format!("  - id: {id}\n    when: '{when}'\n    deny: \"{id}\"\n")
}

#[test]
fn repeated_costly_infallible_work_becomes_one_let() {
    let rules = [
        rule("a", "matches(email, \"^[a-z]+@x$\") && n > 1"),
        rule("b", "matches(email, \"^[a-z]+@x$\") && n > 2"),
        rule("c", "country in blocked || n > 3"),
        rule("d", "country in blocked || n > 4"),
    ]
    .concat();
    let lets = shared(&rules);
    assert_eq!(lets.len(), 2, "{lets:?}");
    assert!(lets.iter().any(|l| l.contains("matches")), "{lets:?}");
    assert!(lets.iter().any(|l| l.contains("has_key.blocked")), "{lets:?}");
}

#[test]
fn what_is_cheap_used_once_or_fallible_is_not_shared() {
    // Cheap: comparisons of input fields. Once: one rule. Fallible:
    // division (by zero), so its error must stay with each rule.
    let rules = [
        rule("a", "n > 1 && country == \"DE\""),
        rule("b", "n > 1 && country == \"DE\""),
        rule("c", "matches(email, \"^q\")"),
        rule("d", "100 / n > 3 && country in blocked"),
        rule("e", "100 / n > 3 && country in blocked"),
    ]
    .concat();
    let lets = shared(&rules);
    // Only the lookup inside d and e is shared, not the division.
    assert_eq!(lets.len(), 1, "{lets:?}");
    assert!(lets[0].contains("has_key.blocked") && !lets[0].contains("div"), "{lets:?}");
}
