//! Hostile inputs are refused cleanly: no panic, no stack overflow, a
//! located diagnostic. Expression depth is tested at its limit and one
//! past it, in the parser and in the verifier.

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

/// An expression `levels` deep, in each of the ways an expression grows:
/// nesting (parentheses, unary operators, `?:`, calls), height (a chain of
/// operators) and both, including the shapes lowering adds most IR nodes
/// to (int widened to decimal, `not in`).
fn expressions(levels: usize) -> Vec<(&'static str, String)> {
    let n = levels;
    // `d + int(...)` adds two levels; a leaf `-d` one more than `d`; the
    // comparison one.
    let converted = {
        let fill = n - 2;
        let mut text = if fill % 2 == 1 { "-d".to_string() } else { "d".to_string() };
        for _ in 0..fill / 2 {
            text = format!("d + int({text})");
        }
        text
    };
    vec![
        // The expression is one level, each parenthesis one more.
        ("parentheses", format!("{}amount{} > 0", "(".repeat(n - 1), ")".repeat(n - 1))),
        ("unary operators", format!("{}flag", "!".repeat(n - 1))),
        ("a chain of `?:`", format!("{}false", "flag ? true : ".repeat(n - 1))),
        ("a chain of `+`", format!("{} > 0", vec!["amount"; n - 1].join(" + "))),
        ("int widened to decimal", format!("{converted} > 0")),
        // `[true]` is two levels tall, and nests one level inside the
        // innermost parenthesis.
        ("`not in`", format!("{}flag{}", "(".repeat(n - 2), " not in [true])".repeat(n - 2))),
    ]
}

fn contract(when: &str) -> String {
    format!(
        "contract: a.b\nversion: 1.0.0\ninput: {{ amount: int, d: decimal, flag: bool }}\nrules:\n  - id: r\n    when: '{when}'\n    deny: no\n"
    )
}

/// Expressions are at most 200 levels deep (docs/decisions.md): at the
/// limit they compile and verify (lowering stays within the verifier's
/// bound), one level more is a located E0301.
#[test]
fn expressions_are_at_most_200_levels_deep() {
    for (shape, when) in expressions(200) {
        let compiled = frontend::compile_file("limits.yaml", &contract(&when));
        assert!(compiled.bundle.is_some(), "{shape} at 200 levels: {}", compiled.diagnostics.render(false));
    }
    for (shape, when) in expressions(201) {
        let compiled = frontend::compile_file("limits.yaml", &contract(&when));
        let shown = compiled.diagnostics.render(false);
        assert!(compiled.bundle.is_none(), "{shape} at 201 levels compiled");
        let codes: Vec<&str> = compiled.diagnostics.items.iter().map(|d| d.code.id()).collect();
        assert_eq!(codes, ["E0301"], "{shape}: {shown}");
        assert!(shown.contains("limits.yaml:6:"), "{shape}: {shown}");
        assert!(shown.contains("the expression is more than 200 levels deep"), "{shape}: {shown}");
    }
}

/// The verifier's own bound on IR expressions (taller than the parser's,
/// for the nodes lowering adds): a tree `height` tall, `!` over `!` over
/// the input's `flag`.
fn contract_of_height(height: u32) -> ir::Contract {
    let compiled = frontend::compile_file("limits.yaml", &contract("!flag"));
    let mut contract = compiled.bundle.expect("compiles").contract().clone();
    let mut top = contract.rules[0].when;
    let not = contract.exprs[top.index()].clone();
    let ir::ExprKind::Unary { op, .. } = not.kind else { panic!("a `!` node") };
    // `input`, `.flag` and one `!` are three levels.
    for _ in 3..height {
        contract.exprs.push(ir::Expr { ty: not.ty, kind: ir::ExprKind::Unary { op, arg: top } });
        top = ir::ExprId::from_index(contract.exprs.len() - 1);
    }
    contract.rules[0].when = top;
    contract
}

#[test]
fn the_verifier_bounds_ir_expressions_at_512() {
    let bundle = ir::Bundle::new(contract_of_height(ir::limits::MAX_EXPR_HEIGHT)).expect("512 tall verifies");
    assert!(ir::Bundle::from_json(&bundle.to_json()).is_ok());
    let error = ir::Bundle::new(contract_of_height(ir::limits::MAX_EXPR_HEIGHT + 1)).expect_err("513 tall");
    assert!(error.message.contains("taller than 512"), "{error}");
}

/// YAML 1.2 allows printable characters, tab, line feed and carriage
/// return in a stream: any other is one located E0001 naming it, whether
/// in a quoted scalar, a plain one or a comment (saphyr-parser alone let
/// some through and reported a NUL as the end of the stream).
#[test]
fn characters_yaml_does_not_allow_are_named_where_they_are() {
    let places = [
        ("a double-quoted scalar", "    deny: \"a{c}b\"\n", 13),
        ("a single-quoted scalar", "    deny: 'a{c}b'\n", 13),
        ("a plain scalar", "    deny: a{c}b\n", 12),
        ("a comment", "    deny: ab  # {c}\n", 17),
    ];
    let refused =
        (0..0x20u32).filter(|c| ![0x09, 0x0a, 0x0d].contains(c)).chain(0x7f..0xa0).filter(|c| *c != 0x85);
    for code in refused.chain([0xfffe, 0xffff]) {
        let c = char::from_u32(code).expect("a char");
        for (place, line, column) in places {
            let text = format!(
                "contract: a.b\nversion: 1.0.0\ninput: {{ n: int }}\nrules:\n  - id: r\n    when: n > 0\n{}",
                line.replace("{c}", &c.to_string())
            );
            let compiled = frontend::compile_file("chars.yaml", &text);
            let shown = compiled.diagnostics.render(false);
            let codes: Vec<&str> = compiled.diagnostics.items.iter().map(|d| d.code.id()).collect();
            assert_eq!(codes, ["E0001"], "U+{code:04X} in {place}: {shown}");
            assert!(
                shown.starts_with(&format!("chars.yaml:7:{column}: ")),
                "U+{code:04X} in {place}: {shown}"
            );
            assert!(shown.contains(&format!("U+{code:04X}")), "{shown}");
            assert!(shown.contains("is not allowed in YAML"), "{shown}");
        }
    }
    for allowed in ['\t', '\u{85}', '\u{a0}', 'é', '\u{fffd}', '\u{1f600}'] {
        let text = format!(
            "contract: a.b\nversion: 1.0.0\ninput: {{ n: int }}\nrules:\n  - id: r\n    when: n > 0\n    deny: \"a{allowed}b\"\n"
        );
        let compiled = frontend::compile_file("chars.yaml", &text);
        assert!(
            compiled.bundle.is_some(),
            "U+{:04X}: {}",
            u32::from(allowed),
            compiled.diagnostics.render(false)
        );
    }
}
