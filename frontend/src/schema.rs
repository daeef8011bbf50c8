//! The JSON Schema of a contract file (`rulec schema`), for editors with
//! yaml-language-server and any other JSON Schema tool: key completion
//! with a description of each key, and structural mistakes flagged as
//! they are typed (an unknown key, a list where a mapping belongs, a rule
//! without an outcome, a severity that does not exist).
//!
//! It describes the shape `syntax::contract` reads, from the same key
//! lists (`syntax::keys`) and the IR's own lists of settings; what only
//! type checking can tell (an unknown name, a wrong type, an expression
//! that does not parse) is `rulec check`'s. Draft-07, the draft every
//! validator supports.

use serde_json::{Map, Value, json};

use crate::syntax::keys;

/// The schema, as pretty-printed JSON with a final newline.
pub fn text() -> String {
    let mut out = serde_json::to_string_pretty(&schema()).expect("a schema is JSON");
    out.push('\n');
    out
}

/// The schema of a contract file.
pub fn schema() -> Value {
    let mut root = object(keys::CONTRACT, &["contract", "version", "input", "rules"], contract_key);
    root["$schema"] = json!("http://json-schema.org/draft-07/schema#");
    root["title"] = json!("rulec contract");
    root["description"] =
        json!("A rulec contract: a typed input, reference tables, derived values, rules and their tests.");
    root["definitions"] = definitions();
    root
}

/// A mapping with exactly `keys` (each described by `property`), of which
/// `required` must be present.
fn object(keys: &[&str], required: &[&str], property: fn(&str) -> Value) -> Value {
    let properties: Map<String, Value> = keys.iter().map(|k| (k.to_string(), property(k))).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/definitions/{name}") })
}

/// `schema` with a description (beside a `$ref`, which draft-07 says
/// hides its siblings, through `allOf`).
fn described(mut schema: Value, description: &str) -> Value {
    if schema.get("$ref").is_some() {
        return json!({ "allOf": [schema], "description": description });
    }
    schema["description"] = json!(description);
    schema
}

/// A mapping from names to `value`.
fn named(value: Value, description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "propertyNames": reference("name"),
        "additionalProperties": value,
    })
}

fn names_of<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Value {
    json!(all.iter().map(|&x| name(x)).collect::<Vec<_>>())
}

fn contract_key(key: &str) -> Value {
    match key {
        "contract" => json!({
            "type": "string",
            "pattern": "^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$",
            "description": "The contract's name: dot-separated lower-case identifiers, e.g. `acme.payments.transfer`.",
        }),
        "version" => json!({
            "type": "string",
            "pattern": "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$",
            "description": "The contract's semantic version, e.g. `1.0.0`.",
        }),
        "description" => described(reference("text"), "What the contract decides, for people."),
        "channels" => {
            described(reference("names"), "Where requests come from; a rule may be limited to some.")
        }
        "components" => described(reference("names"), "Groups of rules; a request may ask for one."),
        "decision" => json!({
            "enum": names_of(&ir::DecisionMode::ALL, ir::DecisionMode::name),
            "description": "How rules decide: `deny-overrides` (the default: any deny wins) or `first-match` (the first rule that fires with a verdict).",
        }),
        "default" => json!({
            "enum": names_of(&ir::Verdict::ALL, ir::Verdict::name),
            "description": "The decision when no rule with `deny` or `allow` fires.",
        }),
        "on_error" => json!({
            "enum": names_of(&ir::OnError::ALL, ir::OnError::name),
            "description": "What a rule whose evaluation fails does: `deny` (the default: fail closed) or `skip`.",
        }),
        "input" => named(reference("type"), "The request's schema: field names and their types."),
        "tables" => named(reference("table"), "Reference data, fixed at compile time: maps and sets."),
        "effects" => named(
            reference("effect"),
            "The outputs rules may set, with their types and how values of several rules combine.",
        ),
        "extern" => named(
            json!({ "type": "string", "description": "A signature: `(string, int) -> decimal`." }),
            "Functions the host provides (a runtime without them refuses the contract).",
        ),
        "windows" => {
            named(reference("window"), "Per-key aggregates over the records that came before, by event time.")
        }
        "models" => named(reference("model"), "ONNX models that `score(model, features)` runs."),
        "let" => named(reference("expression"), "Derived values, each computed at most once per request."),
        "rules" => json!({
            "type": "array",
            "items": reference("rule"),
            "description": "The rules, in order (the order `first-match` decides by).",
        }),
        "tests" => json!({
            "type": "array",
            "items": reference("test"),
            "description": "Examples with their expected results, run by `rulec test` on both engines.",
        }),
        _ => unreachable!("every contract key is described: {key}"),
    }
}

fn rule_key(key: &str) -> Value {
    match key {
        "id" => described(reference("name"), "The rule's id: `[a-z][a-z0-9_]*`, unique in the contract."),
        "description" => described(reference("text"), "What the rule checks, for people."),
        "component" => {
            described(reference("name"), "The component the rule belongs to (declared under `components`).")
        }
        "channels" => {
            described(reference("names"), "The channels the rule applies to (default: every channel).")
        }
        "when" => described(reference("expression"), "The condition: the rule fires when it is true."),
        "deny" => described(
            reference("text"),
            "Deny, with this message template (`{expression}` is replaced by its value).",
        ),
        "allow" => described(reference("text"), "Allow, with this message template."),
        "finding" => reference("finding"),
        "effects" => {
            named(reference("expression"), "Effects the rule sets when it fires: effect name to expression.")
        }
        _ => unreachable!("every rule key is described: {key}"),
    }
}

fn finding_key(key: &str) -> Value {
    match key {
        "code" => json!({
            "type": "string",
            "pattern": "^[A-Z][A-Z0-9_]*$",
            "description": "The finding's code: `[A-Z][A-Z0-9_]*`.",
        }),
        "severity" => json!({
            "enum": names_of(&ir::Severity::ALL, ir::Severity::name),
            "description": "How severe the finding is.",
        }),
        "message" => described(reference("text"), "The finding's message template."),
        _ => unreachable!("every finding key is described: {key}"),
    }
}

fn table_key(key: &str) -> Value {
    match key {
        "key" => described(reference("type"), "A map's key type."),
        "value" => described(reference("type"), "A map's value type."),
        "set" => described(reference("type"), "A set's element type."),
        "rows" => json!({
            "type": ["object", "array"],
            "description": "A map's rows (key: value) or a set's elements (a list).",
        }),
        _ => unreachable!("every table key is described: {key}"),
    }
}

fn effect_key(key: &str) -> Value {
    match key {
        "type" => described(reference("type"), "The effect's type."),
        "combine" => json!({
            "enum": names_of(&ir::Combine::ALL, ir::Combine::name),
            "description": "How the values of several rules combine: `last` (the default), `max`, `min`, `sum`, `any`, `all`.",
        }),
        _ => unreachable!("every effect key is described: {key}"),
    }
}

fn window_key(key: &str) -> Value {
    match key {
        "key" => described(
            reference("expression"),
            "What records are grouped by: a string, int or enum expression over the input.",
        ),
        "time" => described(
            reference("expression"),
            "The record's event time: a timestamp expression over the input.",
        ),
        "span" => described(reference("text"), "How far back the window reaches: a duration such as `10m`."),
        "grace" => described(reference("text"), "How late a record may arrive (default `0s`)."),
        "aggregates" => named(
            reference("expression"),
            "Name to aggregate: `count()`, `sum(x)`, `min(x)`, `max(x)`, `distinct(x)`.",
        ),
        _ => unreachable!("every window key is described: {key}"),
    }
}

fn model_key(key: &str) -> Value {
    match key {
        "onnx" => json!({ "type": "string", "description": "The ONNX file, relative to the contract." }),
        "features" => {
            json!({ "type": "integer", "minimum": 1, "description": "How many floats the model reads." })
        }
        "output" => json!({
            "enum": names_of(&ir::ModelOutput::ALL, ir::ModelOutput::name),
            "description": "`probability` (of class 1) or `value`.",
        }),
        _ => unreachable!("every model key is described: {key}"),
    }
}

fn test_key(key: &str) -> Value {
    match key {
        "name" => described(reference("text"), "What the test shows."),
        "channel" => described(reference("name"), "The request's channel."),
        "component" => described(reference("name"), "Evaluate only this component's rules."),
        "now" => described(reference("text"), "The evaluation time, RFC 3339."),
        "history" => json!({
            "type": "array",
            "items": { "type": "object" },
            "description": "Inputs evaluated before this one, for windows.",
        }),
        "input" => json!({ "type": "object", "description": "The request's input." }),
        "expect" => reference("expect"),
        _ => unreachable!("every test key is described: {key}"),
    }
}

fn expect_key(key: &str) -> Value {
    match key {
        "decision" => {
            json!({ "enum": names_of(&ir::Verdict::ALL, ir::Verdict::name), "description": "The expected decision." })
        }
        "reasons" => described(reference("names"), "The ids of the rules that decided."),
        "findings" => {
            json!({ "type": "array", "items": { "type": "string" }, "description": "The finding codes." })
        }
        "effects" => json!({ "type": ["object", "null"], "description": "The whole map of effects." }),
        "errors" => described(reference("names"), "The ids of the rules whose evaluation failed."),
        _ => unreachable!("every expect key is described: {key}"),
    }
}

fn definitions() -> Value {
    let rule = object(keys::RULE, &["id", "when"], rule_key);
    let outcome: Vec<Value> =
        ["deny", "allow", "finding", "effects"].iter().map(|k| json!({ "required": [k] })).collect();
    let mut rule = rule;
    rule["anyOf"] = json!(outcome);
    rule["description"] =
        json!("A rule: an id, a `when`, and at least one of `deny`, `allow`, `finding`, `effects`.");
    let mut table = object(keys::TABLE, &["rows"], table_key);
    table["anyOf"] = json!([{ "required": ["set"] }, { "required": ["key", "value"] }]);
    table["description"] = json!("A map (`key`, `value`, `rows`) or a set (`set`, `rows`).");
    json!({
        "name": { "type": "string", "pattern": "^[a-z][a-z0-9_]*$" },
        "names": { "type": "array", "items": reference("name") },
        "text": { "type": ["string", "number", "boolean"] },
        "expression": described(reference("text"), "An expression (LANGUAGE.md, Expressions)."),
        "type": {
            "description": "A type: `bool`, `int`, `decimal`, `float`, `string`, `timestamp`, `duration`, `list<T>`, `T?`, `{ enum: [...] }`, or a record (field: type).",
            "anyOf": [
                {
                    "type": "string",
                    "examples": ["string", "decimal", "int", "bool", "float", "timestamp", "duration", "list<string>", "string?"],
                },
                {
                    "type": "object",
                    "properties": { "enum": { "type": "array", "items": reference("text"), "minItems": 1 } },
                    "required": ["enum"],
                    "additionalProperties": false,
                },
                { "type": "object", "additionalProperties": reference("type") },
            ],
        },
        "table": table,
        "effect": {
            "description": "An effect: a type, or `{ type: T, combine: POLICY }`.",
            "anyOf": [object(keys::EFFECT, &["type"], effect_key), reference("type")],
        },
        "window": object(keys::WINDOW, &["key", "time", "span", "aggregates"], window_key),
        "model": object(keys::MODEL, &["onnx", "features", "output"], model_key),
        "rule": rule,
        "finding": described(object(keys::FINDING, &["code", "severity", "message"], finding_key), "A finding the rule reports when it fires."),
        "test": object(keys::TEST, &["name", "input", "expect"], test_key),
        "expect": described(object(keys::EXPECT, &[], expect_key), "What the test expects; a key left out is not checked."),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_the_reader_knows_is_in_the_schema() {
        let schema = schema();
        let listed = |v: &Value, keys: &[&str]| {
            let mut listed: Vec<String> = v["properties"].as_object().unwrap().keys().cloned().collect();
            let mut keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
            listed.sort();
            keys.sort();
            assert_eq!(listed, keys);
        };
        let definitions = &schema["definitions"];
        listed(&schema, keys::CONTRACT);
        listed(&definitions["rule"], keys::RULE);
        listed(&definitions["finding"], keys::FINDING);
        listed(&definitions["table"], keys::TABLE);
        listed(&definitions["effect"]["anyOf"][0], keys::EFFECT);
        listed(&definitions["window"], keys::WINDOW);
        listed(&definitions["model"], keys::MODEL);
        listed(&definitions["test"], keys::TEST);
        listed(&definitions["expect"], keys::EXPECT);
    }
}
