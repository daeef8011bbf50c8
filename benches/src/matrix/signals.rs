//! The signals rows of the batch matrix (SIGNALS.md): four contracts over
//! the same flat transfers, each adding one signal to the same base rules
//! so that its row, set beside the `windowless` row, shows what the
//! signal costs:
//!
//! - `windowless`: the base rules alone;
//! - `windows`: one window of three aggregates (`count`, `sum`, `max`)
//!   per account over the last hour, read by two more rules;
//! - `model`: a 4-feature logistic regression (ONNX, written beside the
//!   contract by [`model_files`]) scored once per chunk, read by a rule;
//! - `vectors`: the cosine and L2 distance of a 16-float embedding to a
//!   reference one, read by a rule.
//!
//! Transfers are 100 ms apart, in time order, from 50,000 accounts.

use serde_json::{Value, json};

use crate::generate::Rng;

/// A signals contract of the matrix.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Signal {
    Windowless,
    Windows,
    Model,
    Vectors,
}

impl Signal {
    pub const ALL: [Signal; 4] = [Signal::Windowless, Signal::Windows, Signal::Model, Signal::Vectors];

    pub fn name(self) -> &'static str {
        match self {
            Signal::Windowless => "windowless",
            Signal::Windows => "windows",
            Signal::Model => "model",
            Signal::Vectors => "vectors",
        }
    }

    pub fn parse(name: &str) -> Option<Signal> {
        Signal::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The contract's text.
    pub fn source(self) -> String {
        let (declarations, rules) = match self {
            Signal::Windowless => ("", ""),
            Signal::Windows => (WINDOWS, WINDOW_RULES),
            Signal::Model => (MODEL, MODEL_RULES),
            Signal::Vectors => (VECTORS, VECTOR_RULES),
        };
        format!(
            "# Written by `rulec bench --batch`: the `{}` signals contract.\n\
             contract: bench.signals.{}\n{BASE}{declarations}{BASE_RULES}{rules}",
            self.name(),
            self.name()
        )
    }
}

/// The channel of every record.
pub const CHANNEL: &str = "batch";

/// The model files the contracts name, by file name, to write beside
/// them: `sigmoid(0.0004 amount - 0.01 age_days - 0.5 kyc_level + 2
/// night - 2)`.
pub fn model_files() -> Vec<(&'static str, Vec<u8>)> {
    vec![("bench-fraud.onnx", models::testing::logistic(&[0.0004, -0.01, -0.5, 2.0], -2.0))]
}

const BASE: &str = r#"version: 1.0.0
channels: [batch]
decision: deny-overrides
default: allow
on_error: deny

input:
  at: timestamp
  account: string
  amount: decimal
  age_days: int
  kyc_level: int
  night: bool
  embedding: list<float>

effects:
  review: { type: bool, combine: any }
"#;

const BASE_RULES: &str = r#"
rules:
  - id: over_limit
    when: amount > 4900
    deny: "Transfer of {amount} from {account} is over the limit."
  - id: new_account
    when: age_days < 30 && amount > 1000
    finding: { code: NEW_ACCOUNT, severity: warning, message: "Account {account} is {age_days} days old." }
  - id: low_kyc
    when: kyc_level == 1 && amount > 2500
    effects: { review: true }
"#;

const WINDOWS: &str = r#"
windows:
  by_account:
    key: account
    time: at
    span: 1h
    aggregates:
      transfers: count()
      total: sum(amount)
      largest: max(amount)
"#;

const WINDOW_RULES: &str = r#"  - id: burst
    when: windows.by_account.transfers > 3
    deny: "{windows.by_account.transfers} transfers from {account} within an hour."
  - id: hourly_volume
    when: windows.by_account.total > 6000 && windows.by_account.largest > amount
    finding: { code: VOLUME, severity: warning, message: "{windows.by_account.total} from {account} within an hour." }
"#;

const MODEL: &str = r#"
models:
  fraud:
    onnx: bench-fraud.onnx
    features: 4
    output: probability

let:
  risk: "score(fraud, [float(amount), age_days, kyc_level, night ? 1 : 0])"
"#;

const MODEL_RULES: &str = r#"  - id: model_risk
    when: risk > 0.8
    deny: "The fraud model scores this transfer {round(risk, 2)}."
"#;

const VECTORS: &str = r#"
tables:
  profiles:
    key: string
    value: list<float>
    rows:
      emulator: [0.9, -0.1, 0.4, 0.0, 0.3, -0.7, 0.2, 0.1, -0.5, 0.6, 0.0, 0.8, -0.2, 0.3, 0.1, -0.4]

let:
  similarity: cosine(embedding, profiles["emulator"])
  distance: l2(embedding, profiles["emulator"])
"#;

const VECTOR_RULES: &str = r#"  - id: emulator
    when: similarity > 0.6 || distance < 1.0
    finding: { code: EMULATOR, severity: warning, message: "Device looks like an emulator (cosine {round(similarity, 3)})." }
"#;

/// Transfer number `seed`: 100 ms after the one before it.
pub fn record(seed: u64) -> Value {
    let mut rng = Rng::new(seed);
    let millis = seed * 100;
    let (seconds, ms) = (millis / 1000, millis % 1000);
    let (day, hour, minute, second) =
        (1 + seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    let embedding: Vec<f64> = (0..16).map(|_| (rng.below(2001) as f64 - 1000.0) / 1000.0).collect();
    // Months of 28 days keep the dates valid and in order.
    let (month, day) = (1 + (day - 1) / 28, 1 + (day - 1) % 28);
    json!({
        "at": format!("2026-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{ms:03}Z"),
        "account": format!("A-{}", rng.below(50_000)),
        "amount": rng.money(1, 5000),
        "age_days": rng.below(2000),
        "kyc_level": 1 + rng.below(3),
        "night": rng.below(4) == 0,
        "embedding": embedding,
    })
}
