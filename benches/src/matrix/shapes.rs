//! What the batch matrix evaluates: the contracts (the reference contract,
//! generated ones of several sizes and the signals ones), the record
//! shapes, and the records of each contract in each shape.
//!
//! A generated contract's input follows the shape ([`Layout`]): flat
//! records for the flat shape, nested ones otherwise, with 200 more
//! declared fields for the wide shape. The reference contract's input is
//! fixed (nested): its array-heavy records carry many `tags` (declared,
//! never read), its wide records 200 fields it does not declare (ignored,
//! as unknown fields are), and no flat record fits it.

use serde_json::{Value, json};

use super::signals::Signal;
use crate::generate::{self, Layout, Rng};
use crate::workload::TRANSFER_CONTRACT;

/// A record shape, by its size and structure.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    /// Scalar fields only, about 200 bytes as JSON.
    Flat,
    /// Nested records and short lists, about 300-400 bytes.
    Nested,
    /// Long lists: about 2 KB.
    ArrayHeavy,
    /// Hundreds of fields: about 10 KB.
    Wide,
}

impl Shape {
    pub const ALL: [Shape; 4] = [Shape::Flat, Shape::Nested, Shape::ArrayHeavy, Shape::Wide];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Flat => "flat",
            Shape::Nested => "nested",
            Shape::ArrayHeavy => "array-heavy",
            Shape::Wide => "wide",
        }
    }

    pub fn parse(name: &str) -> Result<Shape, String> {
        Shape::ALL.into_iter().find(|s| s.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Shape::ALL.iter().map(|s| s.name()).collect();
            format!("unknown shape `{name}` (shapes: {})", names.join(", "))
        })
    }
}

/// A contract of the matrix.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ContractChoice {
    /// The reference workload's contract (`acme.payments.transfer`).
    Reference,
    /// A generated contract with this many rules.
    Generated(usize),
    /// A signals contract ([`super::signals`]).
    Signals(Signal),
}

/// The contracts of a default run, in report order.
pub const CONTRACTS: [ContractChoice; 9] = [
    ContractChoice::Reference,
    ContractChoice::Generated(6),
    ContractChoice::Generated(24),
    ContractChoice::Generated(96),
    ContractChoice::Generated(504),
    ContractChoice::Signals(Signal::Windowless),
    ContractChoice::Signals(Signal::Windows),
    ContractChoice::Signals(Signal::Model),
    ContractChoice::Signals(Signal::Vectors),
];

/// The contract the 10M-record tier runs (`--full`).
pub const FULL_TIER: ContractChoice = ContractChoice::Generated(6);

/// Contracts whose records are the same (the same input schema in every
/// shape): one set of input files serves them all.
#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub enum Family {
    Reference,
    Generated,
    Signals,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Reference => "reference",
            Family::Generated => "generated",
            Family::Signals => "signals",
        }
    }

    /// The channel every record comes from: one under which every rule
    /// of the family's contracts applies but the reference contract's
    /// `mobile_step_up`.
    pub fn channel(self) -> &'static str {
        match self {
            Family::Reference => "batch",
            Family::Generated => "app",
            Family::Signals => super::signals::CHANNEL,
        }
    }

    /// Why no record of this family fits `shape`, if none does.
    pub fn unfit(self, shape: Shape) -> Option<&'static str> {
        (self == Family::Reference && shape == Shape::Flat)
            .then_some("the reference contract's input is nested: no flat record fits it")
            .or((self == Family::Signals && shape != Shape::Flat)
                .then_some("the signals contracts read flat transfers only"))
    }

    /// Record number `seed` of this family in `shape`.
    pub fn record(self, shape: Shape, seed: u64) -> Value {
        match (self, shape) {
            (Family::Generated, Shape::Flat) => generate::record(seed, Layout::Flat, 0),
            (Family::Generated, Shape::Nested) => generate::record(seed, Layout::Nested, 1),
            (Family::Generated, Shape::ArrayHeavy) => generate::record(seed, Layout::Nested, 32),
            (Family::Generated, Shape::Wide) => generate::record(seed, Layout::Wide, 1),
            (Family::Reference, shape) => transfer(seed, shape),
            (Family::Signals, _) => super::signals::record(seed),
        }
    }
}

impl ContractChoice {
    /// `reference` or the number of rules.
    pub fn name(self) -> String {
        match self {
            ContractChoice::Reference => "reference".into(),
            ContractChoice::Generated(rules) => rules.to_string(),
            ContractChoice::Signals(signal) => signal.name().into(),
        }
    }

    pub fn parse(name: &str) -> Result<ContractChoice, String> {
        if name == "reference" {
            return Ok(ContractChoice::Reference);
        }
        if let Some(signal) = Signal::parse(name) {
            return Ok(ContractChoice::Signals(signal));
        }
        match name.parse::<usize>() {
            Ok(rules) if rules > 0 => Ok(ContractChoice::Generated(rules)),
            _ => Err(format!(
                "unknown contract `{name}` (contracts: reference, windowless, windows, model, vectors, or a number of generated rules)"
            )),
        }
    }

    pub fn family(self) -> Family {
        match self {
            ContractChoice::Reference => Family::Reference,
            ContractChoice::Generated(_) => Family::Generated,
            ContractChoice::Signals(_) => Family::Signals,
        }
    }

    /// The contract's text for records of `shape`.
    pub fn source(self, shape: Shape) -> String {
        match self {
            ContractChoice::Reference => TRANSFER_CONTRACT.to_string(),
            ContractChoice::Generated(rules) => generate::contract_with(rules, layout(shape)),
            ContractChoice::Signals(signal) => signal.source(),
        }
    }
}

/// The layout a generated contract has for `shape`.
fn layout(shape: Shape) -> Layout {
    match shape {
        Shape::Flat => Layout::Flat,
        Shape::Nested | Shape::ArrayHeavy => Layout::Nested,
        Shape::Wide => Layout::Wide,
    }
}

/// The extra fields of the reference contract's wide records.
const TRANSFER_WIDE_FIELDS: usize = 200;

/// A transfer for the reference contract: most are allowed, some break
/// limits, go to sanctioned or high-risk countries, or have a malformed
/// IBAN. Array-heavy ones carry 150 tags, wide ones 200 undeclared fields.
fn transfer(seed: u64, shape: Shape) -> Value {
    let mut rng = Rng::new(seed);
    let countries = ["DE", "FR", "GB", "US", "NL", "CH", "IR", "AF"];
    let destinations = ["DE", "FR", "GB", "US", "NL", "CH", "IR", "YE", "VE", "KP"];
    let amount = match rng.below(50) {
        0 => "0.00".to_string(),
        1..=5 => rng.money(1_000, 30_000),
        _ => rng.money(1, 900),
    };
    let source_country = rng.pick(&countries);
    let destination = rng.pick(&destinations);
    let iban = match rng.below(20) {
        0 => format!("{}-{}", destination.to_lowercase(), rng.below(1000)),
        1 | 2 => format!("{}{:02}{:016}", rng.pick(&countries), rng.below(100), rng.below(1 << 40)),
        _ => format!("{destination}{:02}{:016}", rng.below(100), rng.below(1 << 40)),
    };
    let tags: Vec<String> = match shape {
        Shape::ArrayHeavy => (0..150).map(|k| format!("tag-{k}-{}", rng.below(100))).collect(),
        _ => (0..rng.below(3)).map(|k| format!("tag-{k}")).collect(),
    };
    let mut record = json!({
        "amount": amount,
        "currency": rng.pick(&["EUR", "USD", "GBP", "CHF"]),
        "daily_total": rng.money(0, 2_000),
        "source": {
            "account": format!("A-{seed}"),
            "country": source_country,
            "account_age_days": rng.below(1000),
            "kyc_level": 1 + rng.below(3),
        },
        "destination": { "country": destination, "iban": iban, "name": format!("Payee {}", rng.below(10_000)) },
        "tags": tags,
    });
    let Some(fields) = record.as_object_mut() else { return record };
    if rng.below(3) == 0 {
        fields.insert("purpose".into(), Value::String(format!("invoice {}", rng.below(1000))));
    }
    if shape == Shape::Wide {
        for k in 0..TRANSFER_WIDE_FIELDS {
            fields.insert(
                format!("note_{k:03}"),
                Value::String(format!("note {k} of transfer {seed}: {}, kept as sent", rng.below(1000))),
            );
        }
    }
    record
}
