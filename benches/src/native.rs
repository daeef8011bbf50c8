//! The `native` target: the reference workload's contract
//! (`acme.payments.transfer`) written by hand in Rust, the way a careful
//! Rust developer would: typed input, rust_decimal, a precompiled regex,
//! `match` for the tables. It builds the same result structure as rulec
//! (messages rendered, effects combined) and is the limit rulec's code
//! generation is measured against. `tests/native.rs` checks that it gives
//! the interpreter's bytes on the benchmark requests and many variants.
//!
//! It implements the error-free path only: with these tables and the
//! clamped KYC level, the contract cannot hit an evaluation error short of
//! a decimal overflow, which the benchmark inputs do not reach.

use std::str::FromStr;

use ir::Verdict;
use runtime::result::{EffectResult, Evaluation, FindingResult, Reason};
use runtime::value::Owned;
use rust_decimal::{Decimal, RoundingStrategy};

/// The request's channel.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Channel {
    Server,
    Mobile,
    Batch,
}

/// The rule groups of the contract.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Component {
    Limits,
    Sanctions,
    Kyc,
    Fees,
}

/// A validated transfer request.
#[derive(Clone, Debug)]
pub struct Transfer {
    pub channel: Option<Channel>,
    pub component: Option<Component>,
    pub amount: Decimal,
    pub currency: String,
    pub daily_total: Decimal,
    pub source_country: String,
    pub source_account_age_days: i64,
    pub source_kyc_level: i64,
    pub destination_country: String,
    pub destination_iban: String,
}

impl Transfer {
    /// Reads a request line (untimed: the benchmark gives every target
    /// pre-validated input).
    pub fn from_json(line: &str) -> Result<Transfer, String> {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let input = &v["input"];
        let text = |value: &serde_json::Value, what: &str| -> Result<String, String> {
            value.as_str().map(str::to_string).ok_or_else(|| format!("{what}: expected a string"))
        };
        let decimal = |value: &serde_json::Value, what: &str| -> Result<Decimal, String> {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Decimal::from_str(&text).map_err(|e| format!("{what}: {e}"))
        };
        let int = |value: &serde_json::Value, what: &str| {
            value.as_i64().ok_or_else(|| format!("{what}: expected an int"))
        };
        let channel = match v["channel"].as_str() {
            None => None,
            Some("server") => Some(Channel::Server),
            Some("mobile") => Some(Channel::Mobile),
            Some("batch") => Some(Channel::Batch),
            Some(other) => return Err(format!("unknown channel {other}")),
        };
        let component = match v["component"].as_str() {
            None => None,
            Some("limits") => Some(Component::Limits),
            Some("sanctions") => Some(Component::Sanctions),
            Some("kyc") => Some(Component::Kyc),
            Some("fees") => Some(Component::Fees),
            Some(other) => return Err(format!("unknown component {other}")),
        };
        Ok(Transfer {
            channel,
            component,
            amount: decimal(&input["amount"], "amount")?,
            currency: text(&input["currency"], "currency")?,
            daily_total: decimal(&input["daily_total"], "daily_total")?,
            source_country: text(&input["source"]["country"], "source.country")?,
            source_account_age_days: int(&input["source"]["account_age_days"], "source.account_age_days")?,
            source_kyc_level: int(&input["source"]["kyc_level"], "source.kyc_level")?,
            destination_country: text(&input["destination"]["country"], "destination.country")?,
            destination_iban: text(&input["destination"]["iban"], "destination.iban")?,
        })
    }
}

/// What the contract needs prepared once: the IBAN regex.
#[derive(Debug)]
pub struct Native {
    iban: regex::Regex,
}

impl Default for Native {
    fn default() -> Self {
        Native::new()
    }
}

/// Rounds half away from zero to `places`, keeping exactly that scale.
fn round(x: Decimal, places: u32) -> Decimal {
    let mut rounded = x.round_dp_with_strategy(places, RoundingStrategy::MidpointAwayFromZero);
    if rounded.scale() < places {
        rounded.rescale(places);
    }
    rounded
}

/// A decimal as rulec shows it: with its scale, never a negative zero.
fn show(d: Decimal) -> String {
    if d.is_zero() { d.abs().to_string() } else { d.to_string() }
}

fn fx_to_eur(currency: &str) -> Decimal {
    match currency {
        "USD" => Decimal::new(92, 2),
        "GBP" => Decimal::new(117, 2),
        "CHF" => Decimal::new(104, 2),
        _ => Decimal::ONE,
    }
}

/// `(single, daily)` limits by KYC level (clamped to 0..=3).
fn limits(level: i64) -> (Decimal, Decimal) {
    match level {
        0 => (Decimal::from(250), Decimal::from(500)),
        1 => (Decimal::from(1000), Decimal::from(2500)),
        2 => (Decimal::from(10000), Decimal::from(25000)),
        _ => (Decimal::from(100000), Decimal::from(250000)),
    }
}

fn sanctioned(country: &str) -> bool {
    matches!(country, "IR" | "KP" | "SY" | "CU")
}

fn high_risk(country: &str) -> bool {
    matches!(country, "AF" | "MM" | "YE" | "VE")
}

impl Native {
    pub fn new() -> Native {
        Native { iban: regex::Regex::new("^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$").expect("a valid pattern") }
    }

    /// Evaluates the transfer contract on `t`.
    pub fn evaluate(&self, t: &Transfer) -> Evaluation<'static> {
        let applies = |channels: Option<&[Channel]>, component: Option<Component>| {
            let channel_ok = match (channels, t.channel) {
                (None, _) => true,
                (Some(list), Some(c)) => list.contains(&c),
                (Some(_), None) => false,
            };
            channel_ok && t.component.is_none_or(|c| component == Some(c))
        };
        let amount_eur = round(t.amount * fx_to_eur(&t.currency), 2);
        let (single, daily) = limits(t.source_kyc_level.clamp(0, 3));
        let cross_border = t.source_country != t.destination_country;
        let new_account = t.source_account_age_days < 30;
        let new_account_large = new_account && amount_eur > Decimal::from(500);

        let mut deny = Vec::new();
        let mut findings = Vec::new();
        let (mut fee, mut hold_hours, mut step_up): (Option<Decimal>, Option<i64>, Option<bool>) =
            (None, None, None);
        let mut reason = |rule: &'static str, message: String| {
            deny.push(Reason { rule, outcome: Verdict::Deny, message });
        };
        let limits_rule = Some(Component::Limits);
        if applies(None, limits_rule) && t.amount <= Decimal::ZERO {
            reason(
                "positive_amount",
                format!("Amount must be positive, got {} {}.", show(t.amount), t.currency),
            );
        }
        if applies(None, limits_rule) && t.amount != round(t.amount, 2) {
            reason("cent_precision", format!("Amount {} has more than two decimal places.", show(t.amount)));
        }
        if applies(None, limits_rule) && amount_eur > single {
            reason(
                "single_limit",
                format!(
                    "Transfer of {} EUR exceeds the single-transfer limit of {} EUR for KYC level {}.",
                    show(amount_eur),
                    show(single),
                    t.source_kyc_level
                ),
            );
        }
        if applies(None, limits_rule) && t.daily_total + amount_eur > daily {
            reason(
                "daily_limit",
                format!(
                    "Daily total would reach {} EUR, above the daily limit of {} EUR.",
                    show(t.daily_total + amount_eur),
                    show(daily)
                ),
            );
        }
        let sanctions = Some(Component::Sanctions);
        if applies(None, sanctions) && sanctioned(&t.destination_country) {
            reason(
                "sanctioned_destination",
                format!("Transfers to {} are not permitted.", t.destination_country),
            );
        }
        if applies(None, sanctions) && sanctioned(&t.source_country) {
            reason("sanctioned_source", format!("Transfers from {} are not permitted.", t.source_country));
        }
        let kyc = Some(Component::Kyc);
        if applies(None, kyc) && !self.iban.is_match(&t.destination_iban) {
            reason("iban_format", format!("IBAN {} is malformed.", t.destination_iban));
        }
        if applies(None, kyc) && cross_border && t.source_kyc_level < 2 {
            reason(
                "kyc_cross_border",
                format!(
                    "Cross-border transfers need KYC level 2; the account has level {}.",
                    t.source_kyc_level
                ),
            );
        }
        let mut finding =
            |rule: &'static str, code: &'static str, severity: &'static str, message: String| {
                findings.push(FindingResult { rule, code, severity, message });
            };
        if applies(None, kyc) && !t.destination_iban.starts_with(t.destination_country.as_str()) {
            finding(
                "iban_country",
                "IBAN_COUNTRY_MISMATCH",
                "warning",
                format!("IBAN {} is not from {}.", t.destination_iban, t.destination_country),
            );
        }
        if applies(None, sanctions) && high_risk(&t.destination_country) {
            finding(
                "high_risk_destination",
                "HIGH_RISK_COUNTRY",
                "high",
                format!("{} is a high-risk destination.", t.destination_country),
            );
            hold_hours = Some(hold_hours.map_or(48, |h| h.max(48)));
        }
        if applies(None, None) && cross_border && amount_eur > Decimal::from(1000) {
            finding(
                "cross_border_review",
                "CROSS_BORDER",
                "warning",
                format!("Cross-border transfer of {} EUR to {}.", show(amount_eur), t.destination_country),
            );
            hold_hours = Some(hold_hours.map_or(24, |h| h.max(24)));
        }
        if applies(None, kyc) && new_account_large {
            finding(
                "new_account_large",
                "NEW_ACCOUNT",
                "warning",
                format!(
                    "Account is {} days old and sends {} EUR.",
                    t.source_account_age_days,
                    show(amount_eur)
                ),
            );
            step_up = Some(true);
        }
        if applies(None, Some(Component::Fees)) && cross_border {
            let computed = round(amount_eur * Decimal::new(15, 3), 2);
            let minimum = Decimal::new(250, 2);
            fee = Some(if minimum > computed { minimum } else { computed });
        }
        if applies(Some(&[Channel::Mobile]), None) && amount_eur > Decimal::from(200) && !new_account_large {
            step_up = Some(true);
        }

        let mut effects = Vec::with_capacity(3);
        if let Some(fee) = fee {
            effects.push(EffectResult { name: "fee", value: Owned::Decimal(fee) });
        }
        if let Some(hours) = hold_hours {
            effects.push(EffectResult { name: "hold_hours", value: Owned::Int(hours) });
        }
        if let Some(step_up) = step_up {
            effects.push(EffectResult { name: "step_up", value: Owned::Bool(step_up) });
        }
        let decision = if deny.is_empty() { Verdict::Allow } else { Verdict::Deny };
        Evaluation {
            contract: "acme.payments.transfer",
            version: "1.0.0",
            decision,
            reasons: deny,
            findings,
            effects,
            errors: Vec::new(),
        }
    }
}
