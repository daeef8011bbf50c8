//! Timestamps are read by one strict RFC 3339 parser,
//! `ir::time::parse_timestamp`: the cases of `timestamps.tsv` (also read
//! by the frontend's and the runtime's tests) parsed directly and as the
//! constants of a bundle; and every instant written reads back.

use ir::{
    Bundle, Const, Contract, DecisionMode, Expr, ExprId, ExprKind, Let, OnError, TypeKind, TypeTable, Verdict,
};

#[path = "common/timestamp_cases.rs"]
mod timestamp_cases;
use timestamp_cases::cases;

#[test]
fn the_parser_reads_the_cases() {
    for (text, expected) in cases() {
        let got = ir::time::parse_timestamp(&text).map(ir::time::format_timestamp);
        match (&got, &expected) {
            (Ok(got), Ok(utc)) => assert_eq!(got, utc, "{text}"),
            (Err(message), Err(part)) => {
                assert!(message.starts_with(&format!("timestamp {text:?}: ")), "{text}: {message}");
                assert!(message.contains(part.as_str()), "{text}: {message}");
            }
            _ => panic!("{text}: got {got:?}, expected {expected:?}"),
        }
    }
}

/// A contract whose one let is the timestamp constant `nanos`.
fn contract_with(nanos: i64) -> Contract {
    let mut types = TypeTable::new();
    let input = types.intern(TypeKind::Record(Vec::new()));
    Contract {
        name: "a.b".into(),
        version: "1.0.0".into(),
        description: None,
        decision: DecisionMode::DenyOverrides,
        default: Verdict::Allow,
        on_error: OnError::Deny,
        channels: Vec::new(),
        components: Vec::new(),
        types,
        input,
        tables: Vec::new(),
        effects: Vec::new(),
        externs: Vec::new(),
        regexes: Vec::new(),
        locals: Vec::new(),
        exprs: vec![Expr { ty: TypeTable::TIMESTAMP, kind: ExprKind::Const(Const::Timestamp(nanos)) }],
        lets: vec![Let { name: "at".into(), ty: TypeTable::TIMESTAMP, value: ExprId::from_index(0) }],
        rules: Vec::new(),
        tests: Vec::new(),
        windows: Vec::new(),
        models: Vec::new(),
    }
}

/// A bundle whose constant is written as `text`, sealed with the hash of
/// the contract it should read as (the hash is of the rebuilt IR).
fn bundle_with_text(text: &str, nanos: i64) -> Vec<u8> {
    let bundle = Bundle::new(contract_with(nanos)).expect("verifies");
    let json = String::from_utf8(bundle.to_json()).expect("UTF-8");
    let written = format!("{:?}", ir::time::format_timestamp(nanos));
    assert!(json.contains(&written), "{json}");
    json.replacen(&written, &serde_json::Value::from(text).to_string(), 1).into_bytes()
}

#[test]
fn bundles_read_the_cases() {
    for (text, expected) in cases() {
        match expected {
            Ok(utc) => {
                let nanos = ir::time::parse_timestamp(&utc).expect("the UTC form parses");
                let loaded = Bundle::from_json(&bundle_with_text(&text, nanos))
                    .unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(
                    loaded.contract().exprs[0].kind,
                    ExprKind::Const(Const::Timestamp(nanos)),
                    "{text}"
                );
            }
            Err(part) => {
                let error = Bundle::from_json(&bundle_with_text(&text, 0)).expect_err(&text).to_string();
                assert!(error.contains(&format!("timestamp {:?}: {part}", text)), "{text}: {error}");
            }
        }
    }
}

proptest::proptest! {
    /// Every instant the runtime can hold is written in a form the parser
    /// reads back as the same instant.
    #[test]
    fn written_timestamps_read_back(nanos in proptest::prelude::any::<i64>()) {
        let text = ir::time::format_timestamp(nanos);
        proptest::prop_assert_eq!(ir::time::parse_timestamp(&text), Ok(nanos), "{}", text);
    }
}
