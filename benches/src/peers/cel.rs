//! The `cel` peer: the contract in the Common Expression Language (the
//! `cel` crate, formerly `cel-interpreter`), the way CEL is used for
//! policies: each let and each rule's condition is a compiled program; the
//! lets are evaluated once per request into a child scope the conditions
//! read, and the shared host loop ([`super::host_outcome`]) applies
//! channels and components and combines the effects. CEL has doubles,
//! not decimals, and no `round(x, places)`: amounts are `double`s and
//! rounding is `math.round(x * 100.0) / 100.0` (the math extension).

use std::collections::HashMap;
use std::sync::Arc;

use ::cel::{Context, Env, Program, Value};

use super::{Number, Outcome, Peer};
use crate::harness::Target;
use crate::native::{Channel, Component, Transfer};

/// The lets, in the order they are bound.
const LETS: [(&str, &str); 4] = [
    (
        "amount_eur",
        r#"math.round(input.amount * {"EUR": 1.0, "USD": 0.92, "GBP": 1.17, "CHF": 1.04}[input.currency] * 100.0) / 100.0"#,
    ),
    (
        "limit",
        r#"[{"single": 250.0, "daily": 500.0}, {"single": 1000.0, "daily": 2500.0},
            {"single": 10000.0, "daily": 25000.0}, {"single": 100000.0, "daily": 250000.0}]
           [math.least(math.greatest(input.source.kyc_level, 0), 3)]"#,
    ),
    ("cross_border", "input.source.country != input.destination.country"),
    ("new_account", "input.source.account_age_days < 30"),
];

/// Each rule's condition, in the order of [`super::RULES`].
const WHEN: [&str; 14] = [
    "input.amount <= 0.0",
    "input.amount != math.round(input.amount * 100.0) / 100.0",
    "amount_eur > limit.single",
    "input.daily_total + amount_eur > limit.daily",
    r#"input.destination.country in ["IR", "KP", "SY", "CU"]"#,
    r#"input.source.country in ["IR", "KP", "SY", "CU"]"#,
    r#"!input.destination.iban.matches("^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$")"#,
    "cross_border && input.source.kyc_level < 2",
    "!input.destination.iban.startsWith(input.destination.country)",
    r#"input.destination.country in ["AF", "MM", "YE", "VE"]"#,
    "cross_border && amount_eur > 1000.0",
    "new_account && amount_eur > 500.0",
    "cross_border",
    "amount_eur > 200.0 && !(new_account && amount_eur > 500.0)",
];

/// The effect of `transfer_fee`.
const FEE: &str = "math.greatest(math.round(amount_eur * 0.015 * 100.0) / 100.0, 2.5)";

/// The programs, compiled once, and one context per request holding its
/// `input`.
pub struct Cel {
    lets: Vec<Program>,
    when: Vec<Program>,
    fee: Program,
    requests: Vec<(Option<Channel>, Option<Component>, Context<'static, 'static>)>,
}

impl std::fmt::Debug for Cel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cel").field("requests", &self.requests.len()).finish_non_exhaustive()
    }
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::from(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<HashMap<String, Value>>())
}

fn float(d: rust_decimal::Decimal) -> Result<f64, String> {
    use rust_decimal::prelude::ToPrimitive;
    d.to_f64().ok_or_else(|| format!("{d} is not a double"))
}

/// A request's `input` as a CEL map, the decimals as doubles.
fn input(t: &Transfer) -> Result<Value, String> {
    let text = |s: &str| Value::String(Arc::new(s.to_string()));
    Ok(map(vec![
        ("amount", Value::Float(float(t.amount)?)),
        ("currency", text(&t.currency)),
        ("daily_total", Value::Float(float(t.daily_total)?)),
        (
            "source",
            map(vec![
                ("country", text(&t.source_country)),
                ("account_age_days", Value::Int(t.source_account_age_days)),
                ("kyc_level", Value::Int(t.source_kyc_level)),
            ]),
        ),
        (
            "destination",
            map(vec![("country", text(&t.destination_country)), ("iban", text(&t.destination_iban))]),
        ),
    ]))
}

impl Cel {
    pub fn new(requests: &[Transfer]) -> Result<Cel, String> {
        let mut env = Env::stdlib();
        env.add_extension(::cel::extensions::math).map_err(|e| e.to_string())?;
        let compile = |source: &str| env.compile(source).map_err(|e| format!("{source}: {e}"));
        let lets = LETS.iter().map(|(_, source)| compile(source)).collect::<Result<_, _>>()?;
        let when = WHEN.iter().map(|source| compile(source)).collect::<Result<_, _>>()?;
        let fee = compile(FEE)?;
        let env = Arc::new(env);
        let requests = requests
            .iter()
            .map(|t| {
                let mut context = Context::with_env(Arc::clone(&env));
                context.add_variable_from_value("input", input(t)?);
                Ok((t.channel, t.component, context))
            })
            .collect::<Result<_, String>>()?;
        Ok(Cel { lets, when, fee, requests })
    }
}

impl Peer for Cel {
    fn notes(&self) -> &'static str {
        "doubles instead of decimals (rounding with `math.round(x * 100.0) / 100.0`); messages not \
         rendered; the IBAN regex is recompiled on every call (`matches`); a host loop applies \
         channels and components and combines effects."
    }

    fn evaluate(&mut self, i: usize) -> Result<Outcome, String> {
        let (channel, component, context) = &self.requests[i];
        let mut scope = context.new_inner_scope();
        for ((name, _), program) in LETS.iter().zip(&self.lets) {
            let value = program.execute(&scope).map_err(|e| format!("let {name}: {e}"))?;
            scope.add_variable_from_value(*name, value);
        }
        super::host_outcome(
            *channel,
            *component,
            |rule| match self.when[rule].execute(&scope) {
                Ok(Value::Bool(b)) => Ok(b),
                Ok(other) => Err(format!("{}: not a bool: {other:?}", super::RULES[rule].id)),
                Err(e) => Err(format!("{}: {e}", super::RULES[rule].id)),
            },
            || match self.fee.execute(&scope) {
                Ok(Value::Float(fee)) => Ok(Number::Float(fee)),
                Ok(other) => Err(format!("fee: not a double: {other:?}")),
                Err(e) => Err(format!("fee: {e}")),
            },
        )
    }
}

impl Target for Cel {
    fn name(&self) -> &str {
        "cel"
    }

    fn run(&mut self, i: usize) -> usize {
        self.evaluate(i).map_or(0, |o| o.score())
    }
}
