//! The `rhai` peer: the contract as one rhai script (with rhai's `decimal`
//! feature, so amounts are exact rust_decimal values) that applies
//! channels and components, evaluates every rule, combines the effects and
//! returns the decision in a map. The tables and decimal constants are
//! constants of the scope (rhai's float literals are `f64`, and `f64` and
//! decimals do not mix); rhai has no regex, so `matches` is a registered
//! Rust function with the contract's pattern compiled once.

use rhai::{AST, Array, Dynamic, Engine, ImmutableString, Map, Scope};
use rust_decimal::Decimal;

use super::{Number, Outcome, Peer};
use crate::harness::Target;
use crate::native::Transfer;

const SCRIPT: &str = r#"
let unscoped = component == ();
let limits = unscoped || component == "limits";
let sanctions = unscoped || component == "sanctions";
let kyc = unscoped || component == "kyc";
let fees = unscoped || component == "fees";

let amount_eur = round_half_up(input.amount * FX[input.currency], 2);
let limit = LIMITS[min(max(input.source.kyc_level, 0), 3)];
let cross_border = input.source.country != input.destination.country;
let new_account = input.source.account_age_days < 30;

let deny = [];
let findings = [];
let applied = [];
let fee = ();
let hold_hours = ();
let step_up = ();

if limits && input.amount <= 0 { deny.push("positive_amount"); }
if limits && input.amount != round_half_up(input.amount, 2) { deny.push("cent_precision"); }
if limits && amount_eur > limit.single { deny.push("single_limit"); }
if limits && input.daily_total + amount_eur > limit.daily { deny.push("daily_limit"); }
if sanctions && input.destination.country in SANCTIONED { deny.push("sanctioned_destination"); }
if sanctions && input.source.country in SANCTIONED { deny.push("sanctioned_source"); }
if kyc && !matches(input.destination.iban, "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$") {
    deny.push("iban_format");
}
if kyc && cross_border && input.source.kyc_level < 2 { deny.push("kyc_cross_border"); }
if kyc && !input.destination.iban.starts_with(input.destination.country) {
    findings.push("iban_country");
}
if sanctions && input.destination.country in HIGH_RISK {
    findings.push("high_risk_destination");
    hold_hours = if hold_hours == () { 48 } else { max(hold_hours, 48) };
}
if unscoped && cross_border && amount_eur > 1000 {
    findings.push("cross_border_review");
    hold_hours = if hold_hours == () { 24 } else { max(hold_hours, 24) };
}
let new_account_large = kyc && new_account && amount_eur > 500;
if new_account_large {
    findings.push("new_account_large");
    step_up = true;
}
if fees && cross_border {
    applied.push("transfer_fee");
    fee = max(round_half_up(amount_eur * FEE_RATE, 2), MIN_FEE);
}
if channel == "mobile" && unscoped && amount_eur > 200 && !new_account_large {
    applied.push("mobile_step_up");
    step_up = true;
}

#{
    decision: if deny.is_empty() { "allow" } else { "deny" },
    deny: deny,
    findings: findings,
    applied: applied,
    fee: fee,
    hold_hours: hold_hours,
    step_up: step_up,
}
"#;

/// The engine, the script compiled once, and one scope per request (the
/// constants, then `channel`, `component` and `input`), rewound after
/// every evaluation.
pub struct Rhai {
    engine: Engine,
    ast: AST,
    scopes: Vec<(Scope<'static>, usize)>,
}

impl std::fmt::Debug for Rhai {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rhai").field("requests", &self.scopes.len()).finish_non_exhaustive()
    }
}

fn map(entries: Vec<(&str, Dynamic)>) -> Dynamic {
    Dynamic::from_map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect::<Map>())
}

fn strings(items: &[&str]) -> Array {
    items.iter().map(|s| Dynamic::from(ImmutableString::from(*s))).collect()
}

/// The contract's tables and decimal constants.
fn constants() -> Scope<'static> {
    let decimal = |units: i64, scale: u32| Dynamic::from_decimal(Decimal::new(units, scale));
    let limit =
        |single: i64, daily: i64| map(vec![("single", decimal(single, 0)), ("daily", decimal(daily, 0))]);
    let mut scope = Scope::new();
    scope
        .push_constant_dynamic(
            "FX",
            map(vec![
                ("EUR", decimal(1, 0)),
                ("USD", decimal(92, 2)),
                ("GBP", decimal(117, 2)),
                ("CHF", decimal(104, 2)),
            ]),
        )
        .push_constant(
            "LIMITS",
            vec![limit(250, 500), limit(1000, 2500), limit(10000, 25000), limit(100000, 250000)],
        )
        .push_constant("SANCTIONED", strings(&["IR", "KP", "SY", "CU"]))
        .push_constant("HIGH_RISK", strings(&["AF", "MM", "YE", "VE"]))
        .push_constant("FEE_RATE", Decimal::new(15, 3))
        .push_constant("MIN_FEE", Decimal::new(250, 2));
    scope
}

/// A request's scope: the constants, then `channel`, `component` and
/// `input` (decimals as rhai decimals).
fn scope(t: &Transfer) -> (Scope<'static>, usize) {
    let text = |s: &str| Dynamic::from(ImmutableString::from(s));
    let optional = |s: Option<&str>| s.map_or(Dynamic::UNIT, text);
    let mut scope = constants();
    scope.push_dynamic("channel", optional(super::channel_name(t.channel)));
    scope.push_dynamic("component", optional(super::component_name(t.component)));
    scope.push_dynamic(
        "input",
        map(vec![
            ("amount", Dynamic::from_decimal(t.amount)),
            ("currency", text(&t.currency)),
            ("daily_total", Dynamic::from_decimal(t.daily_total)),
            (
                "source",
                map(vec![
                    ("country", text(&t.source_country)),
                    ("account_age_days", Dynamic::from_int(t.source_account_age_days)),
                    ("kyc_level", Dynamic::from_int(t.source_kyc_level)),
                ]),
            ),
            (
                "destination",
                map(vec![("country", text(&t.destination_country)), ("iban", text(&t.destination_iban))]),
            ),
        ]),
    );
    let len = scope.len();
    (scope, len)
}

impl Rhai {
    pub fn new(requests: &[Transfer]) -> Result<Rhai, String> {
        let iban = regex::Regex::new(super::IBAN).map_err(|e| e.to_string())?;
        let mut engine = Engine::new();
        engine.register_fn("matches", move |text: &str, pattern: &str| {
            if pattern == super::IBAN {
                iban.is_match(text)
            } else {
                regex::Regex::new(pattern).is_ok_and(|r| r.is_match(text))
            }
        });
        let ast = engine.compile_with_scope(&constants(), SCRIPT).map_err(|e| e.to_string())?;
        Ok(Rhai { engine, ast, scopes: requests.iter().map(scope).collect() })
    }
}

/// Marks the rules named in the list at `key` of the result as fired.
fn fire_all(outcome: &mut Outcome, result: &Map, key: &str) -> Result<(), String> {
    let list =
        result.get(key).and_then(|v| v.read_lock::<Array>()).ok_or_else(|| format!("no list `{key}`"))?;
    for id in list.iter() {
        let id = id.read_lock::<ImmutableString>().ok_or_else(|| format!("`{key}` holds a non-string"))?;
        outcome.fire(id.as_str())?;
    }
    Ok(())
}

impl Peer for Rhai {
    fn notes(&self) -> &'static str {
        "exact decimals (rhai's `decimal` feature, tables and constants from the scope); messages not \
         rendered; rhai has no regex: `matches` is a registered Rust function with the pattern \
         compiled once."
    }

    fn evaluate(&mut self, i: usize) -> Result<Outcome, String> {
        let (scope, len) = &mut self.scopes[i];
        let result = self.engine.eval_ast_with_scope::<Map>(scope, &self.ast);
        scope.rewind(*len);
        let result = result.map_err(|e| e.to_string())?;
        let mut outcome = Outcome::default();
        for key in ["deny", "findings", "applied"] {
            fire_all(&mut outcome, &result, key)?;
        }
        let field = |key: &str| result.get(key).filter(|v| !v.is_unit());
        outcome.deny = field("decision")
            .and_then(|v| v.read_lock::<ImmutableString>().map(|s| s.as_str() == "deny"))
            == Some(true);
        outcome.fee = field("fee").map(|v| v.as_decimal().map(Number::Decimal)).transpose()?;
        outcome.hold_hours = field("hold_hours").map(Dynamic::as_int).transpose()?;
        outcome.step_up = field("step_up").map(Dynamic::as_bool).transpose()?;
        Ok(outcome)
    }
}

impl Target for Rhai {
    fn name(&self) -> &str {
        "rhai"
    }

    fn run(&mut self, i: usize) -> usize {
        self.evaluate(i).map_or(0, |o| o.score())
    }
}
