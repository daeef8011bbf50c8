//! Every constant survives a bundle exactly: contracts with random float,
//! decimal, int, string, timestamp and duration literals (in expressions,
//! list literals and table rows) are compiled, written, loaded again, and
//! must give the same IR and the same bytes. (A float parser that is not
//! correctly rounded read `1e-32` one unit in the last place off, so the
//! recomputed hash did not match and the bundle could not be loaded.)

use proptest::prelude::*;

/// The literals of one generated contract.
#[derive(Debug)]
struct Literals {
    floats: [f64; 3],
    decimal: String,
    int: i64,
    string: String,
    timestamp: i64,
    duration: i64,
}

/// Finite floats: any bit pattern, and ordinary magnitudes.
fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        (-1e6f64..1e6),
        (1u32..40, 0u32..100).prop_map(|(m, e)| f64::from(m) * 10f64.powi(-(e as i32))),
    ]
}

/// Decimal text: up to 29 digits (a 29-digit mantissa may not fit, so
/// only those that do are kept) and 0 to 28 places, negative zero
/// included.
fn decimal() -> impl Strategy<Value = String> {
    (any::<bool>(), "[0-9]{1,29}", 0usize..=28)
        .prop_map(|(negative, digits, places)| {
            let digits = digits.trim_start_matches('0');
            let digits = if digits.is_empty() { "0" } else { digits };
            let padded = format!("{digits:0>width$}", width = places + 1);
            let (whole, fraction) = padded.split_at(padded.len() - places);
            let sign = if negative { "-" } else { "" };
            if places == 0 { format!("{sign}{whole}") } else { format!("{sign}{whole}.{fraction}") }
        })
        .prop_filter("fits a decimal", |text| ir::value::parse_decimal(text).is_ok())
        // Without a point the literal is an int, widened: it must fit one.
        .prop_filter("fits an int without a point", |text| text.contains('.') || text.parse::<i64>().is_ok())
}

fn literals() -> impl Strategy<Value = Literals> {
    (
        [float(), float(), float()],
        decimal(),
        (i64::MIN + 1)..=i64::MAX,
        "\\PC{0,12}",
        -9_223_372_036_854_775_807i64..=i64::MAX,
        any::<i64>(),
    )
        .prop_map(|(floats, decimal, int, string, timestamp, duration)| Literals {
            floats,
            decimal,
            int,
            string,
            timestamp,
            duration,
        })
}

/// A string literal of the expression language.
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

/// A float literal: always with an exponent, so it is read as a float.
fn float_literal(f: f64) -> String {
    format!("{f:e}")
}

fn contract(l: &Literals) -> String {
    let [f0, f1, f2] = l.floats.map(float_literal);
    format!(
        "contract: p.literals\nversion: 1.0.0\ninput:\n  x: float\n  a: decimal\n  n: int\n  s: string\n  \
         t: timestamp\n  d: duration\ntables:\n  floats: {{ key: string, value: float, rows: {{ f: \"{f2}\" }} }}\n  \
         decimals: {{ key: string, value: decimal, rows: {{ d: \"{dec}\" }} }}\nrules:\n  - id: r\n    when: |-\n      \
         x > {f0} || x in [{f1}, {f2}] || x == (floats[\"f\"] ?? 0.0) || a == {dec} || a == (decimals[\"d\"] ?? 0) \
         || n == {int} || s == {string} || t == timestamp(\"{ts}\") || d == duration(\"{dur}\")\n    deny: \"no\"\n",
        dec = l.decimal,
        int = l.int,
        string = quoted(&l.string),
        ts = ir::time::format_timestamp(l.timestamp),
        dur = ir::time::format_duration(l.duration),
    )
}

/// The reported literals that once broke the round trip.
#[test]
fn reported_float_literals_round_trip() {
    for f in [1e-32, 2e-32, 1e-25, 1e-30, 1.38e-23, -5.43e-21, 0.1e-31, 0.9210986675838745] {
        let l = Literals {
            floats: [f, f, f],
            decimal: "-0.00".into(),
            int: 0,
            string: String::new(),
            timestamp: 0,
            duration: 0,
        };
        check(&l).unwrap_or_else(|e| panic!("{f:e}: {e}"));
    }
}

fn check(l: &Literals) -> Result<(), String> {
    let text = contract(l);
    let bundle = frontend::compile(&text).map_err(|d| format!("{}\n{text}", d.render(false)))?;
    let printed = ir::print::print(bundle.contract());
    for f in l.floats {
        let shown = format!("{f:?}f");
        if !printed.contains(&shown) {
            return Err(format!("the IR does not hold {shown}:\n{printed}"));
        }
    }
    let bytes = bundle.to_json();
    let loaded = ir::Bundle::from_json(&bytes).map_err(|e| format!("the bundle does not load: {e}"))?;
    if ir::print::print(loaded.contract()) != printed {
        return Err("not the same IR after a round trip".into());
    }
    if loaded.to_json() != bytes {
        return Err("not the same bytes after a round trip".into());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_literal_round_trips_through_a_bundle(l in literals()) {
        check(&l).map_err(TestCaseError::fail)?;
    }
}
