//! The `datalogic` peer: the contract in JSONLogic, run by datalogic-rs.
//! Each let and each rule's condition is a compiled logic; the lets are
//! evaluated once per request and handed to the conditions next to the
//! request's `input` (an object built in the evaluation's arena), and the
//! shared host loop ([`super::host_outcome`]) applies channels and
//! components and combines the effects. JSONLogic has no tables (`if`
//! chains instead), no rounding and no regex: `round` and `matches` are
//! custom operators, `matches` with the contract's pattern compiled once.

use datalogic_rs::bumpalo::Bump;
use datalogic_rs::operator::EvalContext;
use datalogic_rs::{ArenaExt, CustomOperator, DataValue, Engine, Logic, ParsedData};
use serde_json::json;

use super::{Number, Outcome, Peer};
use crate::harness::Target;
use crate::native::{Channel, Component, Transfer};

/// `{"var": path}`.
fn var(path: &str) -> serde_json::Value {
    json!({ "var": path })
}

/// The lets, in the order they are bound.
fn lets() -> Vec<(&'static str, serde_json::Value)> {
    let currency = var("input.currency");
    let fx = json!({"if": [
        {"==": [currency, "USD"]}, 0.92,
        {"==": [currency, "GBP"]}, 1.17,
        {"==": [currency, "CHF"]}, 1.04,
        1
    ]});
    let level = var("input.source.kyc_level");
    let by_level = |values: [i64; 4]| {
        json!({"if": [
            {"<=": [level, 0]}, values[0],
            {"==": [level, 1]}, values[1],
            {"==": [level, 2]}, values[2],
            values[3]
        ]})
    };
    vec![
        ("amount_eur", json!({"round": [{"*": [var("input.amount"), fx]}, 2]})),
        ("single", by_level([250, 1000, 10000, 100000])),
        ("daily", by_level([500, 2500, 25000, 250000])),
        ("cross_border", json!({"!=": [var("input.source.country"), var("input.destination.country")]})),
        ("new_account", json!({"<": [var("input.source.account_age_days"), 30]})),
    ]
}

/// Each rule's condition, in the order of [`super::RULES`].
fn when() -> [serde_json::Value; 14] {
    let amount_eur = var("amount_eur");
    let new_account_large = json!({"and": [var("new_account"), {">": [amount_eur, 500]}]});
    [
        json!({"<=": [var("input.amount"), 0]}),
        json!({"!=": [var("input.amount"), {"round": [var("input.amount"), 2]}]}),
        json!({">": [amount_eur, var("single")]}),
        json!({">": [{"+": [var("input.daily_total"), amount_eur]}, var("daily")]}),
        json!({"in": [var("input.destination.country"), ["IR", "KP", "SY", "CU"]]}),
        json!({"in": [var("input.source.country"), ["IR", "KP", "SY", "CU"]]}),
        json!({"!": {"matches": [var("input.destination.iban"), super::IBAN]}}),
        json!({"and": [var("cross_border"), {"<": [var("input.source.kyc_level"), 2]}]}),
        json!({"!": {"starts_with": [var("input.destination.iban"), var("input.destination.country")]}}),
        json!({"in": [var("input.destination.country"), ["AF", "MM", "YE", "VE"]]}),
        json!({"and": [var("cross_border"), {">": [amount_eur, 1000]}]}),
        new_account_large.clone(),
        var("cross_border"),
        json!({"and": [{">": [amount_eur, 200]}, {"!": new_account_large}]}),
    ]
}

/// `{"round": [x, places]}`: half away from zero, on doubles.
#[derive(Debug)]
struct Round;

impl CustomOperator for Round {
    fn evaluate<'a>(
        &self,
        args: &[&'a DataValue<'a>],
        _ctx: &mut EvalContext<'_, 'a>,
        arena: &'a Bump,
    ) -> datalogic_rs::Result<&'a DataValue<'a>> {
        let x = args.first().and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
        let places = args.get(1).and_then(|v| v.as_i64()).unwrap_or(0).clamp(0, 15);
        let scale = 10f64.powi(places as i32);
        Ok(arena.f64((x * scale).round() / scale))
    }
}

/// `{"matches": [text, pattern]}`, with the patterns the contract uses
/// compiled once (any other is compiled when used).
#[derive(Debug)]
struct Matches {
    compiled: Vec<(&'static str, regex::Regex)>,
}

impl CustomOperator for Matches {
    fn evaluate<'a>(
        &self,
        args: &[&'a DataValue<'a>],
        _ctx: &mut EvalContext<'_, 'a>,
        arena: &'a Bump,
    ) -> datalogic_rs::Result<&'a DataValue<'a>> {
        let text = args.first().and_then(|v| v.as_str()).unwrap_or("");
        let pattern = args.get(1).and_then(|v| v.as_str()).unwrap_or("");
        let matched = match self.compiled.iter().find(|(p, _)| *p == pattern) {
            Some((_, regex)) => regex.is_match(text),
            None => regex::Regex::new(pattern).is_ok_and(|r| r.is_match(text)),
        };
        Ok(arena.bool(matched))
    }
}

/// The engine, the logics compiled once, each request parsed once, and
/// an arena reset after every evaluation.
pub struct DataLogic {
    engine: Engine,
    lets: Vec<(&'static str, Logic)>,
    when: Vec<Logic>,
    fee: Logic,
    requests: Vec<(Option<Channel>, Option<Component>, ParsedData)>,
    arena: Bump,
}

impl std::fmt::Debug for DataLogic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataLogic").field("requests", &self.requests.len()).finish_non_exhaustive()
    }
}

/// A request's `input` as JSON, the decimals as numbers.
fn data(t: &Transfer) -> Result<String, String> {
    let number = |d: rust_decimal::Decimal| {
        serde_json::from_str::<serde_json::Number>(&d.to_string()).map_err(|e| format!("{d}: {e}"))
    };
    let value = json!({"input": {
        "amount": number(t.amount)?,
        "currency": t.currency,
        "daily_total": number(t.daily_total)?,
        "source": {
            "country": t.source_country,
            "account_age_days": t.source_account_age_days,
            "kyc_level": t.source_kyc_level,
        },
        "destination": {"country": t.destination_country, "iban": t.destination_iban},
    }});
    Ok(value.to_string())
}

impl DataLogic {
    pub fn new(requests: &[Transfer]) -> Result<DataLogic, String> {
        let iban = regex::Regex::new(super::IBAN).map_err(|e| e.to_string())?;
        let engine = Engine::builder()
            .add_operator("round", Round)
            .add_operator("matches", Matches { compiled: vec![(super::IBAN, iban)] })
            .build();
        let compile = |logic: &serde_json::Value| {
            engine.compile(&logic.to_string()).map_err(|e| format!("{logic}: {e}"))
        };
        let lets =
            lets().into_iter().map(|(name, l)| Ok((name, compile(&l)?))).collect::<Result<_, String>>()?;
        let when = when().iter().map(compile).collect::<Result<_, _>>()?;
        let fee = compile(&json!({"max": [{"round": [{"*": [var("amount_eur"), 0.015]}, 2]}, 2.5]}))?;
        let requests = requests
            .iter()
            .map(|t| {
                let parsed = ParsedData::from_json(&data(t)?).map_err(|e| e.to_string())?;
                Ok((t.channel, t.component, parsed))
            })
            .collect::<Result<_, String>>()?;
        Ok(DataLogic { engine, lets, when, fee, requests, arena: Bump::new() })
    }
}

impl Peer for DataLogic {
    fn notes(&self) -> &'static str {
        "doubles instead of decimals; messages not rendered; `round` and `matches` (the regex \
         compiled once) are custom operators, the tables `if` chains; a host loop applies channels \
         and components and combines effects."
    }

    fn evaluate(&mut self, i: usize) -> Result<Outcome, String> {
        self.arena.reset();
        let (engine, arena) = (&self.engine, &self.arena);
        let (channel, component, parsed) = &self.requests[i];
        let input = parsed.value();
        let request = *input.get("input").ok_or("the request has no input")?;
        let mut pairs = [("input", request); 6];
        for (slot, (name, logic)) in pairs[1..].iter_mut().zip(&self.lets) {
            let value = engine.evaluate(logic, input, arena).map_err(|e| format!("let {name}: {e}"))?;
            *slot = (*name, *value);
        }
        let scope = arena.object(&pairs);
        super::host_outcome(
            *channel,
            *component,
            |rule| {
                let value = engine
                    .evaluate(&self.when[rule], scope, arena)
                    .map_err(|e| format!("{}: {e}", super::RULES[rule].id))?;
                Ok(engine.truthy(value))
            },
            || {
                let fee = engine.evaluate(&self.fee, scope, arena).map_err(|e| format!("fee: {e}"))?;
                fee.as_f64().map(Number::Float).ok_or_else(|| format!("fee: not a number: {fee:?}"))
            },
        )
    }
}

impl Target for DataLogic {
    fn name(&self) -> &str {
        "datalogic"
    }

    fn run(&mut self, i: usize) -> usize {
        self.evaluate(i).map_or(0, |o| o.score())
    }
}
