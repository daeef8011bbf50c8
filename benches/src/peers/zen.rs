//! The `zen` peer: the contract as a GoRules zen-engine decision graph,
//! request → `derive` (an expression node: the tables as literals, the
//! lets, which components apply) → `rules` (an expression node: one
//! boolean per rule, then the fired ids, the decision and the combined
//! effects) → result. zen computes in rust_decimal, so amounts are exact.
//! Its `evaluate` is async and builds the graph's walker per call; it is
//! driven by `pollster::block_on` on this thread.

use std::sync::Arc;

use serde_json::json;
use zen_engine::model::{DecisionContent, GraphContent};
use zen_engine::{Decision, DecisionEngine, Variable};

use super::{Number, Outcome, Peer};
use crate::harness::Target;
use crate::native::Transfer;

/// The `derive` node: the contract's tables and lets (`$` is the node's
/// own earlier results) and which components apply.
const DERIVE_NODE: &[(&str, &str)] = &[
    ("fx_to_eur", "{EUR: 1, USD: 0.92, GBP: 1.17, CHF: 1.04}"),
    (
        "limits_by_level",
        "[{single: 250, daily: 500}, {single: 1000, daily: 2500}, {single: 10000, daily: 25000}, \
         {single: 100000, daily: 250000}]",
    ),
    ("amount_eur", "round(input.amount * $.fx_to_eur[input.currency], 2)"),
    ("limit", "$.limits_by_level[min([max([input.source.kyc_level, 0]), 3])]"),
    ("cross_border", "input.source.country != input.destination.country"),
    ("new_account", "input.source.account_age_days < 30"),
    ("limits", "component == null or component == 'limits'"),
    ("sanctions", "component == null or component == 'sanctions'"),
    ("kyc", "component == null or component == 'kyc'"),
    ("fees", "component == null or component == 'fees'"),
    ("unscoped", "component == null"),
];

/// The `rules` node: each rule's outcome (`$` is the node's own earlier
/// results), then the result.
const RULES_NODE: &[(&str, &str)] = &[
    ("positive_amount", "v.limits and input.amount <= 0"),
    ("cent_precision", "v.limits and input.amount != round(input.amount, 2)"),
    ("single_limit", "v.limits and v.amount_eur > v.limit.single"),
    ("daily_limit", "v.limits and input.daily_total + v.amount_eur > v.limit.daily"),
    ("sanctioned_destination", "v.sanctions and input.destination.country in ['IR', 'KP', 'SY', 'CU']"),
    ("sanctioned_source", "v.sanctions and input.source.country in ['IR', 'KP', 'SY', 'CU']"),
    ("iban_format", "v.kyc and not matches(input.destination.iban, '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$')"),
    ("kyc_cross_border", "v.kyc and v.cross_border and input.source.kyc_level < 2"),
    ("iban_country", "v.kyc and not startsWith(input.destination.iban, input.destination.country)"),
    ("high_risk_destination", "v.sanctions and input.destination.country in ['AF', 'MM', 'YE', 'VE']"),
    ("cross_border_review", "v.unscoped and v.cross_border and v.amount_eur > 1000"),
    ("new_account_large", "v.kyc and v.new_account and v.amount_eur > 500"),
    ("transfer_fee", "v.fees and v.cross_border"),
    (
        "mobile_step_up",
        "channel == 'mobile' and v.unscoped and v.amount_eur > 200 and not $.new_account_large",
    ),
    (
        "deny",
        "filter([$.positive_amount ? 'positive_amount' : null, $.cent_precision ? 'cent_precision' : null, \
         $.single_limit ? 'single_limit' : null, $.daily_limit ? 'daily_limit' : null, \
         $.sanctioned_destination ? 'sanctioned_destination' : null, \
         $.sanctioned_source ? 'sanctioned_source' : null, $.iban_format ? 'iban_format' : null, \
         $.kyc_cross_border ? 'kyc_cross_border' : null], # != null)",
    ),
    (
        "findings",
        "filter([$.iban_country ? 'iban_country' : null, \
         $.high_risk_destination ? 'high_risk_destination' : null, \
         $.cross_border_review ? 'cross_border_review' : null, \
         $.new_account_large ? 'new_account_large' : null], # != null)",
    ),
    ("decision", "len($.deny) > 0 ? 'deny' : 'allow'"),
    ("fee", "$.transfer_fee ? max([round(v.amount_eur * 0.015, 2), 2.50]) : null"),
    ("hold", "filter([$.high_risk_destination ? 48 : null, $.cross_border_review ? 24 : null], # != null)"),
    ("hold_hours", "len($.hold) > 0 ? max($.hold) : null"),
    ("step_up", "($.new_account_large or $.mobile_step_up) ? true : null"),
];

/// The graph, compiled once, and the requests as zen variables.
pub struct Zen {
    decision: Decision,
    contexts: Vec<Variable>,
}

impl std::fmt::Debug for Zen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zen").field("requests", &self.contexts.len()).finish_non_exhaustive()
    }
}

fn expressions(node: &str, list: &[(&str, &str)]) -> serde_json::Value {
    list.iter()
        .map(|(key, value)| json!({"id": format!("{node}.{key}"), "key": key, "value": value}))
        .collect()
}

/// The decision graph (JDM).
fn graph() -> serde_json::Value {
    json!({
        "nodes": [
            {"id": "request", "name": "request", "type": "inputNode"},
            {
                "id": "derive",
                "name": "derive",
                "type": "expressionNode",
                "content": {"expressions": expressions("derive", DERIVE_NODE), "passThrough": true, "outputPath": "v"}
            },
            {
                "id": "rules",
                "name": "rules",
                "type": "expressionNode",
                "content": {"expressions": expressions("rules", RULES_NODE)}
            },
            {"id": "result", "name": "result", "type": "outputNode"}
        ],
        "edges": [
            {"id": "e1", "sourceId": "request", "targetId": "derive"},
            {"id": "e2", "sourceId": "derive", "targetId": "rules"},
            {"id": "e3", "sourceId": "rules", "targetId": "result"}
        ]
    })
}

/// A request as the graph reads it: `channel`, `component` and `input`,
/// with the decimals as zen numbers.
fn context(t: &Transfer) -> Variable {
    let value = json!({
        "channel": super::channel_name(t.channel),
        "component": super::component_name(t.component),
        "input": {
            "currency": t.currency,
            "source": {
                "country": t.source_country,
                "account_age_days": t.source_account_age_days,
                "kyc_level": t.source_kyc_level,
            },
            "destination": {"country": t.destination_country, "iban": t.destination_iban},
        },
    });
    let context = Variable::from(value);
    context.dot_insert("input.amount", Variable::Number(t.amount));
    context.dot_insert("input.daily_total", Variable::Number(t.daily_total));
    context
}

impl Zen {
    pub fn new(requests: &[Transfer]) -> Result<Zen, String> {
        let graph: GraphContent = serde_json::from_value(graph()).map_err(|e| e.to_string())?;
        let mut decision = DecisionEngine::default()
            .create_decision(Arc::new(DecisionContent::from(graph)))
            .map_err(|e| e.to_string())?;
        decision.validate().map_err(|e| e.to_string())?;
        decision.compile();
        Ok(Zen { decision, contexts: requests.iter().map(context).collect() })
    }
}

/// An error and its sources, `: `-separated (zen's node errors say which
/// expression failed, their sources why).
fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Marks the rules named in the list at `key` of the result as fired.
fn fire_all(outcome: &mut Outcome, result: &Variable, key: &str) -> Result<(), String> {
    let list = result.dot(key).and_then(|v| v.as_array()).ok_or_else(|| format!("no list `{key}`"))?;
    for id in list.borrow().iter() {
        outcome.fire(id.as_str().ok_or_else(|| format!("`{key}` holds a non-string"))?)?;
    }
    Ok(())
}

impl Peer for Zen {
    fn notes(&self) -> &'static str {
        "exact decimals (rust_decimal); messages not rendered; the IBAN regex is recompiled on \
         every call (zen's `matches`); each evaluation is async and rebuilds the graph walker."
    }

    fn evaluate(&mut self, i: usize) -> Result<Outcome, String> {
        let response = pollster::block_on(self.decision.evaluate(self.contexts[i].clone()))
            .map_err(|e| with_sources(&*e))?;
        let result = &response.result;
        let mut outcome = Outcome::default();
        fire_all(&mut outcome, result, "deny")?;
        fire_all(&mut outcome, result, "findings")?;
        for (i, rule) in super::RULES.iter().enumerate() {
            if rule.kind == super::Kind::Effects
                && result.dot(rule.id).and_then(|v| v.as_bool()) == Some(true)
            {
                outcome.fired |= 1 << i;
            }
        }
        outcome.deny = result.dot("decision").as_ref().and_then(Variable::as_str) == Some("deny");
        outcome.fee = result.dot("fee").and_then(|v| v.as_number()).map(Number::Decimal);
        outcome.hold_hours = result
            .dot("hold_hours")
            .and_then(|v| v.as_number())
            .map(|h| i64::try_from(h).unwrap_or(i64::MAX));
        outcome.step_up = result.dot("step_up").and_then(|v| v.as_bool());
        Ok(outcome)
    }
}

impl Target for Zen {
    fn name(&self) -> &str {
        "zen"
    }

    fn run(&mut self, i: usize) -> usize {
        self.evaluate(i).map_or(0, |o| o.score())
    }
}
