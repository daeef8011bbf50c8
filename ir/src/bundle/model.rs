//! The bundle's JSON shapes, kept apart from the in-memory IR so that
//! either can change without silently changing the other.
//!
//! Ids are positions in the arrays of the same document. Constants
//! (`value`, table rows, test data) are JSON whose meaning comes from the
//! type beside them: decimals are strings, so they stay exact.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// The whole bundle file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BundleDoc {
    pub format: String,
    pub format_version: u32,
    pub compiler: String,
    /// `sha256:<hex>` of the canonical form (this document, compact, with
    /// an empty hash).
    pub hash: String,
    pub contract: ContractDoc,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContractDoc {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub decision: String,
    pub default: String,
    pub on_error: String,
    pub channels: Vec<String>,
    pub components: Vec<String>,
    pub types: Vec<TypeDoc>,
    pub input: u32,
    pub tables: Vec<TableDoc>,
    pub effects: Vec<EffectDoc>,
    pub externs: Vec<ExternDoc>,
    pub regexes: Vec<String>,
    pub locals: Vec<u32>,
    pub exprs: Vec<ExprDoc>,
    pub lets: Vec<LetDoc>,
    pub rules: Vec<RuleDoc>,
    pub tests: Vec<TestDoc>,
    /// Left out when empty, so a contract without signals has the bundle
    /// (and the hash) it had before windows existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<WindowDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelDoc>,
}

/// A window; `span` and `grace` in the duration text form (`10m`).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WindowDoc {
    pub name: String,
    pub key: u32,
    pub time: u32,
    pub span: String,
    pub grace: String,
    pub aggregates: Vec<AggregateDoc>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AggregateDoc {
    pub name: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg: Option<u32>,
    #[serde(rename = "type")]
    pub ty: u32,
}

/// A model with its file's bytes in base64 (standard alphabet, padded).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModelDoc {
    pub name: String,
    pub features: u32,
    pub output: String,
    pub sha256: String,
    pub onnx: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub(crate) enum TypeDoc {
    Bool,
    Int,
    Decimal,
    Float,
    String,
    Timestamp,
    Duration,
    List(u32),
    Optional(u32),
    Record(Vec<FieldDoc>),
    Enum(Vec<String>),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FieldDoc {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: u32,
}

/// A keyed table has `key` and `value` and rows `[[k, v], ...]`; a set has
/// `set` and rows `[k, ...]`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TableDoc {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<u32>,
    pub rows: Vec<Json>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EffectDoc {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: u32,
    pub combine: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExternDoc {
    pub name: String,
    pub params: Vec<u32>,
    pub ret: u32,
}

/// One expression node: `op` names the operation (the IR printer's names,
/// builtins as `fn.<name>`); `index` is the one id an op may carry (field
/// position, let, rule, local, table, regex, extern, lambda parameter,
/// window or model); `value` is a constant's JSON form, or a window
/// aggregate's position in its window.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExprDoc {
    pub op: String,
    pub ty: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Json>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LetDoc {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: u32,
    pub value: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleDoc {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Vec<u32>>,
    pub when: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<VerdictDoc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<FindingDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<EffectAssignDoc>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerdictDoc {
    pub verdict: String,
    pub message: Vec<PartDoc>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FindingDoc {
    pub code: String,
    pub severity: String,
    pub message: Vec<PartDoc>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub(crate) enum PartDoc {
    Text(String),
    Expr(u32),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EffectAssignDoc {
    pub effect: u32,
    pub value: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestDoc {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Json>,
    pub input: Json,
    pub expect: ExpectDoc,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpectDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasons: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
}
