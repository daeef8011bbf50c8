//! The hand-written `native` target must give the interpreter's bytes:
//! on the benchmark requests, and on variants that reach every rule
//! (amounts, currencies, countries, KYC levels, ages, IBANs, channels and
//! components drawn from a fixed seed).

use benches::native::{Native, Transfer};
use benches::workload::{TRANSFER_CONTRACT, TRANSFER_REQUESTS};

/// A small deterministic generator (splitmix64).
struct Pick(u64);

impl Pick {
    fn one<'a>(&mut self, items: &[&'a str]) -> &'a str {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        items[((z ^ (z >> 31)) % items.len() as u64) as usize]
    }
}

fn variant(pick: &mut Pick) -> String {
    let component = match pick.one(&["", "limits", "sanctions", "kyc", "fees", "", ""]) {
        "" => String::new(),
        c => format!(r#","component":"{c}""#),
    };
    format!(
        r#"{{"channel":"{}"{component},"input":{{"amount":"{}","currency":"{}","daily_total":"{}","source":{{"account":"A-1","country":"{}","account_age_days":{},"kyc_level":{}}},"destination":{{"country":"{}","iban":"{}","name":"X"}},"tags":[]}}}}"#,
        pick.one(&["server", "mobile", "batch"]),
        pick.one(&[
            "120.00",
            "0",
            "-5.00",
            "12.345",
            "999.99",
            "15000.00",
            "2500.50",
            "100000.01",
            "543.21",
            "1",
            "0.005"
        ]),
        pick.one(&["EUR", "USD", "GBP", "CHF"]),
        pick.one(&["0.00", "300.00", "24000.00", "249999.99"]),
        pick.one(&["DE", "IR", "FR", "US"]),
        pick.one(&["5", "29", "30", "400"]),
        pick.one(&["-1", "0", "1", "2", "3", "7"]),
        pick.one(&["DE", "US", "IR", "AF", "FR", "VE"]),
        pick.one(&[
            "DE89370400440532013000",
            "FR1420041010050500013M02606",
            "XX",
            "de89370400440532013000",
            "US12345678901234567"
        ]),
    )
}

#[test]
fn native_gives_the_interpreters_bytes() {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    let bundle = frontend::compile(TRANSFER_CONTRACT).expect("the reference contract compiles");
    let contract = engine.load(bundle).expect("it loads");
    let native = Native::new();
    let mut pick = Pick(7);
    let lines: Vec<String> = TRANSFER_REQUESTS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .chain((0..3000).map(|_| variant(&mut pick)))
        .collect();
    let mut checked = 0;
    let mut seen = String::new();
    for line in &lines {
        let mut expected = Vec::new();
        contract.evaluate_json(line, &mut expected);
        let transfer = Transfer::from_json(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let got = native.evaluate(&transfer).to_json();
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected), "request: {line}");
        checked += 1;
        seen.push_str(&String::from_utf8_lossy(&expected));
    }
    assert_eq!(checked, lines.len());
    // The variants reach every outcome of the contract.
    for rule in [
        "positive_amount",
        "cent_precision",
        "single_limit",
        "daily_limit",
        "sanctioned_destination",
        "sanctioned_source",
        "iban_format",
        "kyc_cross_border",
        "iban_country",
        "high_risk_destination",
        "cross_border_review",
        "new_account_large",
    ] {
        assert!(seen.contains(&format!(r#""rule":"{rule}""#)), "no variant fires {rule}");
    }
    for effect in [r#""fee":"#, r#""hold_hours":48"#, r#""hold_hours":24"#, r#""step_up":true"#] {
        assert!(seen.contains(effect), "no variant sets {effect}");
    }
}
