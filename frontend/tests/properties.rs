//! Property tests: the YAML reader, the expression parser, the whole
//! compiler and the bundle loader never panic, whatever they are given.
//! (For long runs, the cargo-fuzz targets in `fuzz/` cover the same
//! entry points.)

use frontend::syntax::scalar::ScalarText;
use frontend::{SourceFile, syntax};
use proptest::prelude::*;

const TRANSFER: &str = include_str!("fixtures/ok/transfer.yaml");

/// Text built from the pieces contracts are made of, so generated inputs
/// get past the first character more often than random bytes do.
fn contract_like() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "contract: a.b\n",
        "version: 1.0.0\n",
        "input:\n",
        "  amount: decimal\n",
        "  tags: list<string>\n",
        "rules:\n",
        "  - id: r\n",
        "    when: ",
        "    deny: ",
        "amount > 1",
        " && ",
        "tags",
        "[0]",
        " ?? ",
        "\"x\"",
        "'y'",
        "{",
        "}",
        "[",
        "]",
        ": ",
        "- ",
        "\n",
        "  ",
        "&a ",
        "*a",
        "!t ",
        ">-\n",
        "|\n",
        "é€",
        "0.92",
        "-",
        "=>",
        "any(tags, t => t == \"a\")",
        "rules.r",
        "tables:\n",
        "  t: { set: string, rows: [A] }\n",
        "let:\n",
        "  x: x\n",
        "---\n",
        "\t",
        "#",
        "\"\\u00e9\"",
    ]);
    prop::collection::vec(pieces, 0..60).prop_map(|parts| parts.concat())
}

fn expression_like() -> impl Strategy<Value = String> {
    let tokens = prop::sample::select(vec![
        "a",
        "b.c",
        "(",
        ")",
        "[",
        "]",
        ",",
        "?",
        ":",
        "??",
        "||",
        "&&",
        "==",
        "!=",
        "<",
        "<=",
        "in",
        "not in",
        "+",
        "-",
        "*",
        "/",
        "%",
        "!",
        "=>",
        "1",
        "12.50",
        "1.5e3",
        "\"s\"",
        "'t'",
        "true",
        "any",
        "x",
        " ",
        "rules",
        ".",
        "9999999999999999999999",
    ]);
    prop::collection::vec(tokens, 0..40).prop_map(|parts| parts.join(" "))
}

/// A node whose type does not exist is reported, and the nodes above it
/// are not checked against it (found by `bundle_loader_refuses_edits`:
/// the verifier looked up the missing type and panicked).
#[test]
fn bundle_loader_reports_a_node_of_a_missing_type() {
    let text = String::from_utf8(frontend::compile(TRANSFER).unwrap().to_json()).unwrap();
    let exprs = text.find("\"exprs\"").expect("the bundle has exprs");
    let ty = exprs + text[exprs..].find("\"ty\": ").expect("a node has a type") + "\"ty\": ".len();
    let edited = format!("{}9999{}", &text[..ty], &text[ty..]);
    let error =
        ir::Bundle::from_json(edited.as_bytes()).expect_err("the edited bundle is refused").to_string();
    assert!(error.contains("does not exist"), "{error}");
}

/// A table key repeated in a bundle is refused (the check is linear: a
/// table of 50,000 keys once took seconds to load).
#[test]
fn bundle_loader_refuses_a_repeated_table_key() {
    let text = String::from_utf8(frontend::compile(TRANSFER).unwrap().to_json()).unwrap();
    let edited = text.replacen("\"KP\"", "\"IR\"", 1);
    assert_ne!(edited, text, "the sanctioned set lists KP");
    let error =
        ir::Bundle::from_json(edited.as_bytes()).expect_err("the edited bundle is refused").to_string();
    assert!(error.contains("key \"IR\" appears twice"), "{error}");
}

/// A bundle whose type table holds an optional record is refused: records
/// are laid out inline, so an absent one would have no slot of its own
/// (reading a request into one overran its slot).
#[test]
fn bundle_loader_refuses_an_optional_record() {
    let source = "contract: a.b\nversion: 1.0.0\ninput:\n  r: { x: int }\n  p: int?\nrules:\n  - id: a\n    when: has(p)\n    deny: x\n";
    let text = String::from_utf8(frontend::compile(source).unwrap().to_json()).unwrap();
    // Type 8 is the record `{ x: int }`, type 9 `int?`: make it `{ x: int }?`.
    let edited = text.replacen("\"optional\": 1", "\"optional\": 8", 1);
    assert_ne!(edited, text, "the bundle has `int?`");
    let error =
        ir::Bundle::from_json(edited.as_bytes()).expect_err("the edited bundle is refused").to_string();
    assert!(error.contains("an optional record"), "{error}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn yaml_reader_never_panics(text in any::<String>()) {
        let _ = syntax::yaml::parse(&SourceFile::new("p.yaml", text));
    }

    #[test]
    fn compiler_never_panics_on_contract_like_text(text in contract_like()) {
        let compiled = frontend::compile_file("p.yaml", &text);
        let _ = compiled.diagnostics.render(false);
        let _ = compiled.diagnostics.to_json_lines();
    }

    #[test]
    fn expression_parser_never_panics(text in any::<String>()) {
        let _ = syntax::expr::parse(&ScalarText::detached(&text));
    }

    #[test]
    fn expression_parser_never_panics_on_token_soup(text in expression_like()) {
        let _ = syntax::expr::parse(&ScalarText::detached(&text));
    }

    #[test]
    fn compiler_never_panics_on_edited_contracts(position in 0..TRANSFER.len(), insert in "[ -~é\n]{0,8}", cut in 0usize..20) {
        let mut text = TRANSFER.to_string();
        let at = (0..=position).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let end = (at + cut).min(text.len());
        let end = (end..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
        text.replace_range(at..end, &insert);
        let compiled = frontend::compile_file("p.yaml", &text);
        let _ = compiled.diagnostics.render(false);
    }

    #[test]
    fn bundle_loader_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        prop_assert!(ir::Bundle::from_json(&bytes).is_err());
    }

    #[test]
    fn bundle_loader_refuses_edits(position in 0usize..100_000, byte in any::<u8>(), truncate in any::<bool>()) {
        let bundle = frontend::compile(TRANSFER).unwrap();
        let mut bytes = bundle.to_json();
        let at = position % bytes.len();
        if truncate {
            // Cutting only the trailing newline leaves the same document.
            let cut_content = bytes[at..].iter().any(|b| !b.is_ascii_whitespace());
            bytes.truncate(at);
            let loaded = ir::Bundle::from_json(&bytes);
            if cut_content {
                prop_assert!(loaded.is_err());
            } else {
                prop_assert_eq!(loaded.map(|b| b.hash().to_string()).ok(), Some(bundle.hash().to_string()));
            }
        } else {
            let original = bytes[at];
            bytes[at] = byte;
            let loaded = ir::Bundle::from_json(&bytes);
            // Whitespace and same-byte edits may still load; anything that
            // changes the content must be refused.
            if let Ok(loaded) = loaded {
                prop_assert!(original == byte || original.is_ascii_whitespace() || byte.is_ascii_whitespace());
                prop_assert_eq!(loaded.hash(), bundle.hash());
            }
        }
    }
}
