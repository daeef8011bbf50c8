//! The peer engines of `rulec bench` (feature `peers`): the reference
//! contract (`acme.payments.transfer`) written for GoRules zen-engine (a
//! decision graph of expression nodes), CEL (`cel`), JSONLogic
//! (`datalogic-rs`) and rhai, each as closely as the engine allows, one
//! file per engine.
//!
//! Every peer gets what the `interp` and `native` targets get: everything
//! compiled once (expressions, graphs, ASTs) and each request converted
//! beforehand into the engine's own input form, with only the fields the
//! rules read. One evaluation is one call of [`Peer::evaluate`], which
//! answers with an [`Outcome`]: the rules that fired, the decision and the
//! effects. No peer renders messages: findings and denials are rule ids.
//!
//! zen and rhai evaluate the whole contract (channels and components,
//! deny-overrides, combining effects) inside the engine. CEL and JSONLogic
//! are expression languages with no notion of a rule: as their users do,
//! a small host loop here ([`host_outcome`]) skips the rules that do not
//! apply to the request's channel and component, evaluates each remaining
//! rule's condition as one expression (the lets first, once, as
//! expressions of their own) and combines the effects.

use std::panic::AssertUnwindSafe;

use crate::harness::Target;
use crate::native::{Channel, Component, Transfer};
use crate::targets::Workload;

mod cel;
mod datalogic;
mod rhai;
mod zen;

/// A peer engine set up on the reference workload.
pub trait Peer: Target {
    /// How the peer's semantics differ from rulec's, in a sentence or two.
    fn notes(&self) -> &'static str;
    /// Evaluates request `i`.
    fn evaluate(&mut self, i: usize) -> Result<Outcome, String>;
}

/// Sets up peer `name` (one of [`crate::PEERS`]) on `workload`, the
/// reference workload, and evaluates every request once, so a peer that
/// cannot run says so here rather than while measured. A panic while
/// setting up becomes the error.
pub fn build(name: &str, workload: &Workload) -> Result<Box<dyn Peer>, String> {
    let set_up = || -> Result<Box<dyn Peer>, String> {
        let requests =
            workload.lines.iter().map(|l| Transfer::from_json(l)).collect::<Result<Vec<_>, _>>()?;
        let mut peer: Box<dyn Peer> = match name {
            "zen" => Box::new(zen::Zen::new(&requests)?),
            "cel" => Box::new(cel::Cel::new(&requests)?),
            "datalogic" => Box::new(datalogic::DataLogic::new(&requests)?),
            "rhai" => Box::new(rhai::Rhai::new(&requests)?),
            other => return Err(format!("no peer is called `{other}`")),
        };
        for i in 0..requests.len() {
            peer.evaluate(i).map_err(|e| format!("evaluating request {} failed: {e}", i + 1))?;
        }
        Ok(peer)
    };
    std::panic::catch_unwind(AssertUnwindSafe(set_up))
        .unwrap_or_else(|panic| Err(format!("it panicked while set up: {}", panic_message(&*panic))))
}

/// The text of a panic's payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// What a rule produces when it fires.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Deny,
    Finding,
    /// Effects only.
    Effects,
}

/// A rule of the reference contract, as the hosts of CEL and JSONLogic
/// need to know it.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub id: &'static str,
    pub component: Option<Component>,
    /// The rule applies on the mobile channel only (`channels: [mobile]`).
    pub mobile_only: bool,
    pub kind: Kind,
}

const fn rule(id: &'static str, component: Option<Component>, kind: Kind) -> Rule {
    Rule { id, component, mobile_only: false, kind }
}

/// The contract's rules in its order; bit `i` of [`Outcome::fired`] is
/// `RULES[i]`.
pub const RULES: [Rule; 14] = [
    rule("positive_amount", Some(Component::Limits), Kind::Deny),
    rule("cent_precision", Some(Component::Limits), Kind::Deny),
    rule("single_limit", Some(Component::Limits), Kind::Deny),
    rule("daily_limit", Some(Component::Limits), Kind::Deny),
    rule("sanctioned_destination", Some(Component::Sanctions), Kind::Deny),
    rule("sanctioned_source", Some(Component::Sanctions), Kind::Deny),
    rule("iban_format", Some(Component::Kyc), Kind::Deny),
    rule("kyc_cross_border", Some(Component::Kyc), Kind::Deny),
    rule("iban_country", Some(Component::Kyc), Kind::Finding),
    rule("high_risk_destination", Some(Component::Sanctions), Kind::Finding),
    rule("cross_border_review", None, Kind::Finding),
    rule("new_account_large", Some(Component::Kyc), Kind::Finding),
    rule("transfer_fee", Some(Component::Fees), Kind::Effects),
    Rule { id: "mobile_step_up", component: None, mobile_only: true, kind: Kind::Effects },
];

/// Indices into [`RULES`] of the rules with effects.
const TRANSFER_FEE: usize = 12;
const HIGH_RISK_DESTINATION: usize = 9;
const CROSS_BORDER_REVIEW: usize = 10;
const NEW_ACCOUNT_LARGE: usize = 11;
const MOBILE_STEP_UP: usize = 13;

impl Rule {
    /// Whether the rule applies to a request on `channel` for `component`:
    /// a request for a component runs that component's rules only.
    pub fn applies(&self, channel: Option<Channel>, component: Option<Component>) -> bool {
        (!self.mobile_only || channel == Some(Channel::Mobile))
            && component.is_none_or(|c| self.component == Some(c))
    }

    /// The index in [`RULES`] of the rule called `id`.
    pub fn index(id: &str) -> Option<usize> {
        RULES.iter().position(|r| r.id == id)
    }
}

/// A number as the peer computed it: exactly, or as a binary float.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Number {
    Decimal(rust_decimal::Decimal),
    Float(f64),
}

/// What a peer decided on one request.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Outcome {
    /// The decision, as the peer computed it (deny-overrides).
    pub deny: bool,
    /// The rules that fired: bit `i` is [`RULES`]`[i]`.
    pub fired: u16,
    pub fee: Option<Number>,
    pub hold_hours: Option<i64>,
    pub step_up: Option<bool>,
}

impl Outcome {
    /// The ids of the fired rules of `kind`, in contract order.
    pub fn ids(&self, kind: Kind) -> Vec<&'static str> {
        RULES
            .iter()
            .enumerate()
            .filter(|(i, r)| r.kind == kind && self.fired & (1 << i) != 0)
            .map(|(_, r)| r.id)
            .collect()
    }

    /// What `run` returns: fired rules and effects, so the work stays alive.
    pub fn score(&self) -> usize {
        self.fired.count_ones() as usize
            + usize::from(self.fee.is_some())
            + usize::from(self.hold_hours.is_some())
            + usize::from(self.step_up.is_some())
    }

    /// Marks the rule called `id` as fired.
    fn fire(&mut self, id: &str) -> Result<(), String> {
        let i = Rule::index(id).ok_or_else(|| format!("the engine named an unknown rule `{id}`"))?;
        self.fired |= 1 << i;
        Ok(())
    }
}

/// The host loop of the expression-language peers (CEL, JSONLogic): for
/// each rule that applies to the request, `when(i)` evaluates its
/// condition; `fee()` evaluates the fee when `transfer_fee` fired. Deny
/// overrides, `hold_hours` combines with max and `step_up` with any, as the
/// contract declares.
pub(crate) fn host_outcome(
    channel: Option<Channel>,
    component: Option<Component>,
    mut when: impl FnMut(usize) -> Result<bool, String>,
    fee: impl FnOnce() -> Result<Number, String>,
) -> Result<Outcome, String> {
    let mut outcome = Outcome::default();
    for (i, rule) in RULES.iter().enumerate() {
        if rule.applies(channel, component) && when(i)? {
            outcome.fired |= 1 << i;
        }
    }
    let fired = |i: usize| outcome.fired & (1 << i) != 0;
    outcome.deny = RULES.iter().enumerate().any(|(i, r)| r.kind == Kind::Deny && fired(i));
    let hold = [(HIGH_RISK_DESTINATION, 48), (CROSS_BORDER_REVIEW, 24)];
    outcome.hold_hours = hold.iter().filter(|(i, _)| fired(*i)).map(|(_, h)| *h).max();
    outcome.step_up = (fired(NEW_ACCOUNT_LARGE) || fired(MOBILE_STEP_UP)).then_some(true);
    if fired(TRANSFER_FEE) {
        outcome.fee = Some(fee()?);
    }
    Ok(outcome)
}

/// A channel's name in the request.
pub(crate) fn channel_name(channel: Option<Channel>) -> Option<&'static str> {
    channel.map(|c| match c {
        Channel::Server => "server",
        Channel::Mobile => "mobile",
        Channel::Batch => "batch",
    })
}

/// A component's name in the request.
pub(crate) fn component_name(component: Option<Component>) -> Option<&'static str> {
    component.map(|c| match c {
        Component::Limits => "limits",
        Component::Sanctions => "sanctions",
        Component::Kyc => "kyc",
        Component::Fees => "fees",
    })
}

/// The IBAN pattern of rule `iban_format`.
pub(crate) const IBAN: &str = "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$";
