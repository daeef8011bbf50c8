//! Numbers in requests, on both engines (the interpreter and native code,
//! which must have run): random floats render back as the text they were
//! sent as; a decimal means the same, or is refused the same way, whether
//! it is sent as a JSON string, a plain JSON number or a JSON number with
//! an exponent; ints are read from their text. The reported values are in
//! `cases/numbers_in_requests`.

use std::sync::{Arc, LazyLock};

use proptest::prelude::*;
use runtime::Contract;

/// One contract, loaded into each engine of the suite.
struct Loaded {
    contracts: Vec<(&'static str, Arc<Contract>)>,
}

impl Loaded {
    fn new(source: &str) -> Loaded {
        let contracts = conformance::ENGINES
            .iter()
            .map(|&name| {
                let bundle = frontend::compile(source).expect("the contract compiles");
                (name, conformance::engine(name).load(bundle).expect("the contract loads"))
            })
            .collect();
        Loaded { contracts }
    }

    /// The result line of `request` on every engine, checked to be the
    /// same bytes; native code must have finished the evaluation unless
    /// the request was refused.
    fn evaluate(&self, request: &str) -> Result<String, TestCaseError> {
        let mut first: Option<String> = None;
        for (name, contract) in &self.contracts {
            let before = contract.native_counts().0;
            let mut out = Vec::new();
            contract.evaluate_json(request, &mut out);
            let out = String::from_utf8(out).expect("results are UTF-8");
            if *name == "jit" && !out.starts_with("{\"error\"") {
                prop_assert!(contract.native_counts().0 > before, "native code did not run for {request}");
            }
            match &first {
                None => first = Some(out),
                Some(reference) => prop_assert_eq!(reference, &out, "{} differs on {}", name, request),
            }
        }
        Ok(first.unwrap_or_default())
    }
}

fn contract(ty: &str) -> String {
    format!(
        "contract: p.numbers\nversion: 1.0.0\ninput:\n  v: {ty}\nrules:\n  - id: show\n    when: \"true\"\n    \
         finding: {{ code: SHOW, severity: info, message: \"{{v}}\" }}\n"
    )
}

static FLOATS: LazyLock<Loaded> = LazyLock::new(|| Loaded::new(&contract("float")));
static DECIMALS: LazyLock<Loaded> = LazyLock::new(|| Loaded::new(&contract("decimal")));
static INTS: LazyLock<Loaded> = LazyLock::new(|| Loaded::new(&contract("int")));

/// The message of the one finding of a result line.
fn message(result: &str) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(result).ok()?;
    json["findings"][0]["message"].as_str().map(str::to_string)
}

/// Finite floats: any bit pattern, and ordinary magnitudes.
fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        (-1e6f64..1e6),
        (1u64..100_000, 0i32..40).prop_map(|(m, e)| m as f64 * 10f64.powi(-e)),
    ]
}

/// A decimal as its sign, digits (no leading zeros) and places; any
/// number of digits and places, so some do not fit.
fn decimal_parts() -> impl Strategy<Value = (bool, String, usize)> {
    (any::<bool>(), "[0-9]{1,32}", 0usize..=32).prop_map(|(negative, digits, places)| {
        let digits = digits.trim_start_matches('0');
        (negative, if digits.is_empty() { "0".into() } else { digits.to_string() }, places)
    })
}

/// The plain text of `digits / 10^places`.
fn plain(negative: bool, digits: &str, places: usize) -> String {
    let padded = format!("{digits:0>width$}", width = places + 1);
    let (whole, fraction) = padded.split_at(padded.len() - places);
    let sign = if negative { "-" } else { "" };
    if places == 0 { format!("{sign}{whole}") } else { format!("{sign}{whole}.{fraction}") }
}

/// The same decimal as a JSON number with an exponent: the digits with
/// `point` places written (behind a `0.` and zeros when `point` is longer
/// than the digits), and the exponent that brings them back to `places`,
/// spelt with `e` or `E`, an optional `+` and leading zeros.
fn with_exponent(negative: bool, digits: &str, places: usize, form: (usize, bool, bool, usize)) -> String {
    let (point, upper, plus, zeros) = form;
    let mantissa = if point < digits.len() {
        let (whole, fraction) = digits.split_at(digits.len() - point);
        if fraction.is_empty() { whole.to_string() } else { format!("{whole}.{fraction}") }
    } else {
        format!("0.{}{digits}", "0".repeat(point - digits.len()))
    };
    let exponent = point as i64 - places as i64;
    let sign = if exponent < 0 {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    };
    format!(
        "{}{mantissa}{}{sign}{}{}",
        if negative { "-" } else { "" },
        if upper { 'E' } else { 'e' },
        "0".repeat(zeros),
        exponent.unsigned_abs()
    )
}

/// A result line with the text of the number sent (as messages show it:
/// quoted, cut when long) replaced, so refusals of different spellings
/// compare equal.
fn refusal_shape(result: &str, sent: &str) -> String {
    if !result.starts_with("{\"error\"") {
        return result.to_string();
    }
    let shown = serde_json::to_string(&ir::quote::quote(sent)).unwrap_or_default();
    let inner = &shown[1..shown.len().saturating_sub(1)];
    result.replace(inner, "\\\"X\\\"").replace(&*ir::quote::short(sent), "X")
}

#[test]
fn reported_floats_render_as_sent() {
    for text in ["1.38e-23", "0.9210986675838745", "-5.43e-21", "0.1e-31", "18446744073709590000.0"] {
        let f: f64 = text.parse().unwrap();
        let result = FLOATS.evaluate(&format!("{{\"input\":{{\"v\":{text}}}}}")).unwrap();
        assert_eq!(message(&result), Some(f.to_string()), "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Printed with Rust's shortest form (plain, `{:?}` and with an
    /// exponent), sent in a request, rendered in a message: the same text.
    #[test]
    fn floats_render_back_as_sent(f in float()) {
        for text in [format!("{f}"), format!("{f:?}"), format!("{f:e}")] {
            let result = FLOATS.evaluate(&format!("{{\"input\":{{\"v\":{text}}}}}"))?;
            prop_assert_eq!(message(&result), Some(f.to_string()), "sent {}: {}", text, result);
        }
    }

    /// A JSON string, a plain JSON number and JSON numbers with exponents
    /// give the same value, or the same refusal.
    #[test]
    fn decimals_mean_the_same_in_every_form(
        (negative, digits, places) in decimal_parts(),
        forms in prop::collection::vec((0usize..40, any::<bool>(), any::<bool>(), 0usize..3), 1..4),
    ) {
        let text = plain(negative, &digits, places);
        let string = DECIMALS.evaluate(&format!("{{\"input\":{{\"v\":\"{text}\"}}}}"))?;
        let reference = refusal_shape(&string, &text);
        if ir::value::parse_decimal(&text).is_ok() {
            // A zero is never shown negative.
            let shown = if digits == "0" { text.trim_start_matches('-') } else { text.as_str() };
            prop_assert_eq!(message(&string), Some(shown.to_string()));
        }
        let mut spellings = vec![text.clone()];
        spellings.extend(forms.into_iter().map(|form| with_exponent(negative, &digits, places, form)));
        for sent in spellings {
            let result = DECIMALS.evaluate(&format!("{{\"input\":{{\"v\":{sent}}}}}"))?;
            prop_assert_eq!(refusal_shape(&result, &sent), reference.clone(), "sent {} (plain {})", sent, text);
        }
    }

    /// An int is read from its text: it renders as sent, or is refused
    /// naming the text.
    #[test]
    fn ints_are_read_from_their_text(n in any::<i128>().prop_map(|n| n >> (n as u8 % 100))) {
        let text = n.to_string();
        let result = INTS.evaluate(&format!("{{\"input\":{{\"v\":{text}}}}}"))?;
        if i64::try_from(n).is_ok() {
            prop_assert_eq!(message(&result), Some(text));
        } else {
            prop_assert!(result.contains(&format!("{text} does not fit an int (64-bit)")), "{}", result);
        }
    }
}
