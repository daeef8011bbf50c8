//! The keys of each mapping the language defines, in the order
//! LANGUAGE.md presents them: the contract reader refuses others and
//! `rulec fmt` orders a mapping's keys by them.

/// A contract file's top-level keys.
pub const CONTRACT: &[&str] = &[
    "contract",
    "version",
    "description",
    "channels",
    "components",
    "decision",
    "default",
    "on_error",
    "input",
    "tables",
    "effects",
    "extern",
    "windows",
    "models",
    "let",
    "rules",
    "tests",
];
/// One entry of `rules`.
pub const RULE: &[&str] =
    &["id", "description", "component", "channels", "when", "deny", "allow", "finding", "effects"];
/// A rule's `finding`.
pub const FINDING: &[&str] = &["code", "severity", "message"];
/// One table of `tables`, written as a mapping.
pub const TABLE: &[&str] = &["key", "value", "set", "rows"];
/// One effect of `effects`, written as a mapping.
pub const EFFECT: &[&str] = &["type", "combine"];
/// One entry of `tests`.
pub const TEST: &[&str] = &["name", "channel", "component", "now", "history", "input", "expect"];
/// One window of `windows`.
pub const WINDOW: &[&str] = &["key", "time", "span", "grace", "aggregates"];
/// One model of `models`.
pub const MODEL: &[&str] = &["onnx", "features", "output"];
/// A test's `expect`.
pub const EXPECT: &[&str] = &["decision", "reasons", "findings", "effects", "errors"];
