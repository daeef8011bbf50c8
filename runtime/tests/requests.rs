//! Request validation never panics, whatever JSON (or non-JSON) arrives,
//! numbers of any length included, and a valid request survives
//! arbitrary extra fields.

use proptest::prelude::*;
use serde_json::Value as Json;

const TRANSFER: &str = include_str!("../../examples/contracts/acme.payments.transfer.yaml");
const REQUESTS: &str = include_str!("../../examples/requests/acme.payments.transfer.ndjson");

/// The transfer contract, compiled once for every case.
fn contract() -> std::sync::Arc<runtime::Contract> {
    static CONTRACT: std::sync::OnceLock<std::sync::Arc<runtime::Contract>> = std::sync::OnceLock::new();
    CONTRACT
        .get_or_init(|| {
            let bundle = frontend::compile(TRANSFER).expect("the example compiles");
            runtime::Engine::builder().build().load(bundle).expect("loads")
        })
        .clone()
}

/// Arbitrary JSON values, nested a few levels.
fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Json::from),
        "[ -~é€]{0,12}".prop_map(Json::String),
        prop::sample::select(vec!["EUR", "12.50", "DE", "2026-01-01T00:00:00Z", "1h", "-0", "1e400"])
            .prop_map(|s| Json::String(s.into())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "amount",
                    "currency",
                    "source",
                    "destination",
                    "tags",
                    "kyc_level",
                    "country",
                    "iban",
                    "x"
                ])
                .prop_map(String::from),
                inner,
                0..6
            )
            .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn arbitrary_json_never_panics(input in json(), channel in prop::option::of("[a-z]{0,7}"), now in prop::option::of("[0-9TZ:-]{0,22}")) {
        let contract = contract();
        let request = serde_json::json!({"channel": channel, "input": input, "now": now});
        let text = request.to_string();
        if let Ok(request) = contract.request(&text) {
            let _ = contract.evaluate(&request).unwrap().to_json();
        }
        let mut out = Vec::new();
        contract.evaluate_json(&text, &mut out);
        prop_assert!(!out.is_empty());
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let contract = contract();
        let mut out = Vec::new();
        contract.evaluate_json(&text, &mut out);
        let is_error = String::from_utf8_lossy(&out).starts_with(r#"{"error""#);
        prop_assert!(is_error, "not an error line");
    }

    /// Any JSON number, in a decimal and an int field: a value or a
    /// refusal, never a panic (exponents of any length included).
    #[test]
    fn arbitrary_numbers_never_panic(number in "-?(0|[1-9][0-9]{0,40})(\\.[0-9]{1,40})?([eE][+-]?[0-9]{1,25})?") {
        let contract = contract();
        let line = REQUESTS.lines().next().unwrap();
        for field in ["\"amount\":", "\"kyc_level\":"] {
            let at = line.find(field).expect("the field") + field.len();
            let end = at + line[at..].find([',', '}']).expect("the value ends");
            let text = format!("{}{number}{}", &line[..at], &line[end..]);
            let mut out = Vec::new();
            contract.evaluate_json(&text, &mut out);
            prop_assert!(!out.is_empty());
        }
    }

    #[test]
    fn valid_requests_ignore_unknown_fields(line in 0usize..4, extra in json()) {
        let contract = contract();
        let original: Json = serde_json::from_str(REQUESTS.lines().nth(line).unwrap()).unwrap();
        let mut widened = original.clone();
        widened["input"]["zz_unknown"] = extra.clone();
        widened["zz_unknown"] = extra;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        contract.evaluate_json(&original.to_string(), &mut a);
        contract.evaluate_json(&widened.to_string(), &mut b);
        prop_assert_eq!(a, b);
    }
}
