//! A compiled contract: the whole IR of one YAML contract.
//!
//! Everything is addressed by dense ids ([`crate::ids`]); names are kept
//! for messages, results and the printer. The compiler builds a
//! [`Contract`]; the verifier ([`crate::verify`]) checks it; the bundle
//! ([`crate::bundle`]) writes and reads it; engines evaluate it.

use serde_json::Value as Json;

use crate::expr::{Expr, ExprKind};
use crate::ids::{
    ChannelId, ComponentId, EffectId, ExprId, LetId, ModelId, RuleId, TableId, TypeId, WindowId,
};
use crate::signals::{Model, Window};
use crate::types::TypeTable;
use crate::value::Const;

/// The IR of one contract.
#[derive(Clone, Debug)]
pub struct Contract {
    /// Dotted lower-case name, e.g. `acme.payments.transfer`.
    pub name: String,
    /// Semantic version.
    pub version: String,
    pub description: Option<String>,
    pub decision: DecisionMode,
    /// The decision when no deny or allow rule fires.
    pub default: Verdict,
    pub on_error: OnError,
    pub channels: Vec<String>,
    pub components: Vec<String>,
    pub types: TypeTable,
    /// The record type of a request's `input`.
    pub input: TypeId,
    pub tables: Vec<Table>,
    pub effects: Vec<Effect>,
    pub externs: Vec<Extern>,
    /// Regex patterns used by `matches`, validated at compile time.
    pub regexes: Vec<String>,
    /// The type of each lambda parameter, by [`LocalId`](crate::LocalId).
    pub locals: Vec<TypeId>,
    /// The expression arena: children before parents.
    pub exprs: Vec<Expr>,
    pub lets: Vec<Let>,
    /// Rules in file order.
    pub rules: Vec<Rule>,
    pub tests: Vec<TestCase>,
    /// Per-key aggregates over event time (SIGNALS.md).
    pub windows: Vec<Window>,
    /// ONNX models `score` runs (SIGNALS.md).
    pub models: Vec<Model>,
}

impl Contract {
    /// The node `id` of the expression arena.
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.index()]
    }

    /// Calls `f` on every root expression id, with who owns it: per
    /// window its key, time and aggregate arguments (`Owner::Window`),
    /// lets' values (`Owner::Let`), then per rule its condition, its
    /// message parts and its effect values (`Owner::Rule`).
    pub fn for_each_root_mut(&mut self, mut f: impl FnMut(Owner, &mut ExprId)) {
        for (i, w) in self.windows.iter_mut().enumerate() {
            f(Owner::Window(i), &mut w.key);
            f(Owner::Window(i), &mut w.time);
            for aggregate in &mut w.aggregates {
                if let Some(arg) = &mut aggregate.arg {
                    f(Owner::Window(i), arg);
                }
            }
        }
        for (i, l) in self.lets.iter_mut().enumerate() {
            f(Owner::Let(i), &mut l.value);
        }
        for (i, rule) in self.rules.iter_mut().enumerate() {
            f(Owner::Rule(i), &mut rule.when);
            let templates = rule
                .verdict
                .iter_mut()
                .map(|v| &mut v.message)
                .chain(rule.finding.iter_mut().map(|f| &mut f.message));
            for template in templates {
                for part in &mut template.parts {
                    if let TemplatePart::Expr(id) = part {
                        f(Owner::Rule(i), id);
                    }
                }
            }
            for assign in &mut rule.effects {
                f(Owner::Rule(i), &mut assign.value);
            }
        }
    }

    /// Which rules some expression refers to (`rules.<id>`): engines
    /// compute those on demand, once; the others only at their turn.
    pub fn referenced_rules(&self) -> Vec<bool> {
        let mut referenced = vec![false; self.rules.len()];
        for expr in &self.exprs {
            if let ExprKind::RuleFired(rule) = expr.kind {
                referenced[rule.index()] = true;
            }
        }
        referenced
    }

    pub fn rule_by_name(&self, name: &str) -> Option<RuleId> {
        self.rules.iter().position(|r| r.name == name).map(RuleId::from_index)
    }

    pub fn let_by_name(&self, name: &str) -> Option<LetId> {
        self.lets.iter().position(|l| l.name == name).map(LetId::from_index)
    }

    pub fn table_by_name(&self, name: &str) -> Option<TableId> {
        self.tables.iter().position(|t| t.name == name).map(TableId::from_index)
    }

    pub fn window_by_name(&self, name: &str) -> Option<WindowId> {
        self.windows.iter().position(|w| w.name == name).map(WindowId::from_index)
    }

    pub fn model_by_name(&self, name: &str) -> Option<ModelId> {
        self.models.iter().position(|m| m.name == name).map(ModelId::from_index)
    }

    pub fn effect_by_name(&self, name: &str) -> Option<EffectId> {
        self.effects.iter().position(|e| e.name == name).map(EffectId::from_index)
    }

    pub fn channel_by_name(&self, name: &str) -> Option<ChannelId> {
        self.channels.iter().position(|c| c == name).map(ChannelId::from_index)
    }

    pub fn component_by_name(&self, name: &str) -> Option<ComponentId> {
        self.components.iter().position(|c| c == name).map(ComponentId::from_index)
    }
}

/// How rules combine into a decision.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DecisionMode {
    /// Every applying rule runs; any fired deny wins, then any fired allow.
    DenyOverrides,
    /// Rules run in order; the first fired deny or allow decides.
    FirstMatch,
}

impl DecisionMode {
    pub const ALL: [DecisionMode; 2] = [DecisionMode::DenyOverrides, DecisionMode::FirstMatch];

    pub fn name(self) -> &'static str {
        match self {
            DecisionMode::DenyOverrides => "deny-overrides",
            DecisionMode::FirstMatch => "first-match",
        }
    }
}

/// A decision.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Verdict {
    Allow,
    Deny,
}

impl Verdict {
    pub const ALL: [Verdict; 2] = [Verdict::Allow, Verdict::Deny];

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Deny => "deny",
        }
    }
}

/// What an evaluation error in a rule or let does to the decision.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum OnError {
    /// Fail closed: the decision is `deny`.
    Deny,
    /// The rule counts as not fired.
    Skip,
}

impl OnError {
    pub const ALL: [OnError; 2] = [OnError::Deny, OnError::Skip];

    pub fn name(self) -> &'static str {
        match self {
            OnError::Deny => "deny",
            OnError::Skip => "skip",
        }
    }
}

/// A reference table, fixed at compile time.
#[derive(Clone, PartialEq, Debug)]
pub struct Table {
    pub name: String,
    pub kind: TableKind,
}

#[derive(Clone, PartialEq, Debug)]
pub enum TableKind {
    /// `{ key: K, value: V, rows: {k: v} }`, rows in file order.
    Map { key: TypeId, value: TypeId, rows: Vec<(Const, Const)> },
    /// `{ set: T, rows: [..] }`, rows in file order.
    Set { element: TypeId, rows: Vec<Const> },
}

impl TableKind {
    /// The type a key (or set element) must have.
    pub fn key_type(&self) -> TypeId {
        match self {
            TableKind::Map { key, .. } => *key,
            TableKind::Set { element, .. } => *element,
        }
    }
}

/// An output rules may set.
#[derive(Clone, PartialEq, Debug)]
pub struct Effect {
    pub name: String,
    pub ty: TypeId,
    pub combine: Combine,
}

/// How the values of an effect set by several rules combine.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Combine {
    /// The value of the last fired rule, in file order.
    Last,
    Max,
    Min,
    Sum,
    /// Logical or.
    Any,
    /// Logical and.
    All,
}

impl Combine {
    pub const ALL: [Combine; 6] =
        [Combine::Last, Combine::Max, Combine::Min, Combine::Sum, Combine::Any, Combine::All];

    pub fn name(self) -> &'static str {
        match self {
            Combine::Last => "last",
            Combine::Max => "max",
            Combine::Min => "min",
            Combine::Sum => "sum",
            Combine::Any => "any",
            Combine::All => "all",
        }
    }

    /// Whether this policy can combine values of `ty`.
    pub fn fits(self, types: &TypeTable, ty: TypeId) -> bool {
        use crate::types::TypeKind;
        let kind = types.get(ty);
        match self {
            Combine::Last => kind.is_some(),
            Combine::Max | Combine::Min => kind.is_some() && types.is_ordered(ty) && !types.is_stringy(ty),
            Combine::Sum => {
                matches!(kind, Some(TypeKind::Int | TypeKind::Decimal | TypeKind::Float | TypeKind::Duration))
            }
            Combine::Any | Combine::All => matches!(kind, Some(TypeKind::Bool)),
        }
    }
}

/// A host function the contract needs: `name: "(string) -> decimal"`.
#[derive(Clone, PartialEq, Debug)]
pub struct Extern {
    pub name: String,
    pub params: Vec<TypeId>,
    pub ret: TypeId,
}

/// A derived value, computed at most once per evaluation, when first used.
#[derive(Clone, PartialEq, Debug)]
pub struct Let {
    pub name: String,
    pub ty: TypeId,
    pub value: ExprId,
}

/// What a root expression belongs to: a window, a let or a rule (by
/// index).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Owner {
    Window(usize),
    Let(usize),
    Rule(usize),
}

/// A rule: a condition and what happens when it holds.
#[derive(Clone, PartialEq, Debug)]
pub struct Rule {
    pub name: String,
    pub component: Option<ComponentId>,
    /// The channels the rule applies to; `None` is every channel.
    pub channels: Option<Vec<ChannelId>>,
    pub when: ExprId,
    pub verdict: Option<RuleVerdict>,
    pub finding: Option<Finding>,
    pub effects: Vec<EffectAssign>,
}

/// `deny: "message"` or `allow: "message"`.
#[derive(Clone, PartialEq, Debug)]
pub struct RuleVerdict {
    pub verdict: Verdict,
    pub message: Template,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Finding {
    /// `[A-Z][A-Z0-9_]*`.
    pub code: String,
    pub severity: Severity,
    pub message: Template,
}

/// How serious a finding is, least first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Severity {
    Info,
    Low,
    Warning,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub const ALL: [Severity; 6] = [
        Severity::Info,
        Severity::Low,
        Severity::Warning,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Warning => "warning",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    pub fn from_name(name: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// One `effects:` entry of a rule.
#[derive(Clone, PartialEq, Debug)]
pub struct EffectAssign {
    pub effect: EffectId,
    pub value: ExprId,
}

/// A message template: text with interpolated expressions.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Template {
    pub parts: Vec<TemplatePart>,
}

impl Template {
    /// How many expressions the template interpolates.
    pub fn expr_count(&self) -> usize {
        self.parts.iter().filter(|part| matches!(part, TemplatePart::Expr(_))).count()
    }

    /// Bytes to reserve for a rendered message: the text, and room for a
    /// typical value per interpolation, so rendering rarely reallocates.
    pub fn capacity_hint(&self) -> usize {
        self.parts
            .iter()
            .map(|part| match part {
                TemplatePart::Text(text) => text.len(),
                TemplatePart::Expr(_) => 24,
            })
            .sum()
    }
}

#[derive(Clone, PartialEq, Debug)]
pub enum TemplatePart {
    Text(String),
    Expr(ExprId),
}

/// A `tests:` entry, kept in the bundle so `rulec test` runs on bundles.
#[derive(Clone, PartialEq, Debug)]
pub struct TestCase {
    pub name: String,
    pub channel: Option<String>,
    pub component: Option<String>,
    /// The time `now()` returns, in nanoseconds since the epoch.
    pub now: Option<i64>,
    /// Earlier inputs, evaluated first in order (their results are not
    /// checked): what the windows have seen before `input`.
    pub history: Vec<Json>,
    /// The request's input in its JSON form (decimals as strings).
    pub input: Json,
    pub expect: TestExpect,
}

/// What a test checks; a `None` is not checked.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct TestExpect {
    pub decision: Option<Verdict>,
    /// Rule ids of the reasons, in order.
    pub reasons: Option<Vec<String>>,
    /// Finding codes, in order.
    pub findings: Option<Vec<String>>,
    /// The whole effects object, in its JSON form.
    pub effects: Option<Json>,
    /// Rule (or let) ids of the errors, in order.
    pub errors: Option<Vec<String>>,
}

impl Template {
    /// The expressions the template interpolates.
    pub fn exprs(&self) -> impl Iterator<Item = ExprId> + '_ {
        self.parts.iter().filter_map(|part| match part {
            TemplatePart::Expr(id) => Some(*id),
            TemplatePart::Text(_) => None,
        })
    }
}
