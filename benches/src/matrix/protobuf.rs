//! Records as length-delimited Protobuf messages (a varint length, then
//! the message, as `writeDelimitedTo` writes them), with the `.proto`
//! schema they follow written beside the data (`NAME.proto` for
//! `NAME.pb`), derived from the contract's input type, and
//! `--proto NAME.proto --message rulec.bench.Record` for `rulec eval`.
//!
//! The schema (docs/decisions.md, "Protobuf input", says how the batch
//! crate reads it back): a record is a message (every message at the top
//! level, a nested record's named after its field), `int` is
//! `int64`, `float` `double`, `bool` `bool`; `decimal`, `string`,
//! `timestamp` and `duration` are `string` (a decimal's text kept exactly,
//! a timestamp's as sent); an `enum` is a Protobuf enum (wrapped in a
//! message of its own, so that two enums may share a value's name) when
//! its values are identifiers, else `string`; a list is `repeated`; every
//! scalar field is `optional` (it has presence, so an absent field stays
//! absent, not a zero), which is also how a `T?` field is written. The
//! top-level string fields a contract does not declare (the reference
//! contract's wide records) are `optional string` fields too, found in the
//! first record. Lists of lists, optional lists and lists of optionals
//! have no such form: a contract with one has no Protobuf input here.
//!
//! Each record's JSON is read into a message by the proto3 JSON mapping
//! (prost-reflect), against the schema compiled as `rulec eval` compiles
//! it (`batch::source::protobuf::load_schema`), and encoded.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use ir::{TypeId, TypeKind, TypeTable};
use prost::Message;
use prost_reflect::{DeserializeOptions, DynamicMessage, MessageDescriptor};
use serde_json::Value;

use super::sink::{FormatWriter, RecordSink};

/// The package of the derived schema.
const PACKAGE: &str = "rulec.bench";
/// The records' message, fully qualified.
pub const MESSAGE: &str = "rulec.bench.Record";

/// The Protobuf writer.
#[derive(Debug)]
pub struct ProtobufFormat;

impl FormatWriter for ProtobufFormat {
    fn extension(&self) -> &'static str {
        "pb"
    }

    fn create(&self, path: &Path, contract: &ir::Contract) -> Result<Box<dyn RecordSink>, String> {
        let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(Box::new(ProtobufSink {
            out: BufWriter::with_capacity(1 << 20, file),
            path: path.display().to_string(),
            schema: schema_path(path),
            contract: contract.clone(),
            message: None,
            buffer: Vec::new(),
            records: 0,
        }))
    }

    fn eval_args(&self, path: &Path) -> Vec<String> {
        let schema = schema_path(path).display().to_string();
        vec!["--proto".into(), schema, "--message".into(), MESSAGE.into()]
    }
}

/// The schema's path beside the data at `data` (which may be the
/// `.part` file it is written as): `NAME.proto` for `NAME.pb[.part]`.
fn schema_path(data: &Path) -> PathBuf {
    let data = match data.extension() {
        Some(e) if e == "part" => data.with_extension(""),
        _ => data.to_path_buf(),
    };
    data.with_extension("proto")
}

struct ProtobufSink {
    out: BufWriter<File>,
    path: String,
    schema: PathBuf,
    contract: ir::Contract,
    /// The records' message, once the schema is written (at the first
    /// record, which says what the undeclared fields are).
    message: Option<MessageDescriptor>,
    /// One message's bytes.
    buffer: Vec<u8>,
    records: u64,
}

impl std::fmt::Debug for ProtobufSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtobufSink").field("path", &self.path).finish_non_exhaustive()
    }
}

impl ProtobufSink {
    fn failed(&self, e: impl std::fmt::Display) -> String {
        format!("cannot write {}: {e}", self.path)
    }

    /// Writes the schema, with `extras` as more string fields, and
    /// compiles it.
    fn write_schema(&mut self, extras: &[&str]) -> Result<MessageDescriptor, String> {
        let text = proto_schema(&self.contract, extras)?;
        std::fs::write(&self.schema, text)
            .map_err(|e| format!("cannot write {}: {e}", self.schema.display()))?;
        batch::source::protobuf::load_schema(&self.schema, Some(MESSAGE))
            .map_err(|e| format!("internal: the derived schema does not compile: {e}"))
    }
}

impl RecordSink for ProtobufSink {
    fn write(&mut self, record: &Value) -> Result<(), String> {
        let Value::Object(fields) = record else { return Err("a record is not a JSON object".into()) };
        let message = match &self.message {
            Some(message) => message.clone(),
            None => {
                let extras = undeclared(&self.contract, fields)?;
                let message = self.write_schema(&extras)?;
                self.message = Some(message.clone());
                message
            }
        };
        self.records += 1;
        let options = DeserializeOptions::new().deny_unknown_fields(true);
        let encoded = DynamicMessage::deserialize_with_options(message, record, &options)
            .map_err(|e| format!("record {} has no `{MESSAGE}` message: {e}", self.records))?;
        self.buffer.clear();
        encoded.encode_length_delimited(&mut self.buffer).map_err(|e| format!("internal: {e}"))?;
        let ProtobufSink { out, buffer, .. } = self;
        out.write_all(buffer).map_err(|e| self.failed(e))
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        if self.message.is_none() {
            self.write_schema(&[])?;
        }
        self.out.flush().map_err(|e| self.failed(e))
    }
}

/// The top-level fields of `record` that `contract`'s input does not
/// declare (strings, as the Arrow writer takes them).
fn undeclared<'r>(
    contract: &ir::Contract,
    record: &'r serde_json::Map<String, Value>,
) -> Result<Vec<&'r str>, String> {
    let TypeKind::Record(declared) = contract.types.kind(contract.input) else {
        return Err("the contract's input is not a record".into());
    };
    let mut extras = Vec::new();
    for (name, value) in record {
        if declared.iter().any(|f| &f.name == name) {
            continue;
        }
        if !value.is_string() {
            return Err(format!("the undeclared field `{name}` is not a string: it has no Protobuf field"));
        }
        extras.push(name.as_str());
    }
    Ok(extras)
}

/// The `.proto` text for `contract`'s input, with `extras` as more
/// top-level `optional string` fields.
pub fn proto_schema(contract: &ir::Contract, extras: &[&str]) -> Result<String, String> {
    let mut schema = Schema {
        types: &contract.types,
        names: HashMap::new(),
        taken: vec!["Record".into()],
        declared: Vec::new(),
    };
    schema.message(contract.input, "Record", extras)?;
    Ok(format!(
        "// Written by `rulec bench --batch` for the input of {}.\nsyntax = \"proto3\";\npackage {PACKAGE};\n\n{}",
        contract.name,
        schema.declared.join("\n")
    ))
}

/// Declares the messages of one schema, all at the top level (named
/// once each, so no name hides another).
struct Schema<'t> {
    types: &'t TypeTable,
    /// The messages and enum wrappers declared so far, by type.
    names: HashMap<TypeId, String>,
    /// Every name given so far.
    taken: Vec<String>,
    /// The declarations, the records' message first.
    declared: Vec<String>,
}

impl Schema<'_> {
    /// Declares record type `ty` as message `name` (and the messages its
    /// fields need after it).
    fn message(&mut self, ty: TypeId, name: &str, extras: &[&str]) -> Result<(), String> {
        let TypeKind::Record(fields) = self.types.kind(ty) else {
            return Err(format!("internal: `{name}` is not a record"));
        };
        self.names.insert(ty, name.to_string());
        let at = self.declared.len();
        self.declared.push(String::new());
        let mut lines = Vec::new();
        for field in fields {
            let declared = self.field(&field.name, field.ty)?;
            lines.push(format!("  {declared} {} = {};", field.name, lines.len() + 1));
        }
        for extra in extras {
            lines.push(format!("  optional string {extra} = {};", lines.len() + 1));
        }
        self.declared[at] = format!("message {name} {{\n{}\n}}\n", lines.join("\n"));
        Ok(())
    }

    /// The label and type of field `field` of type `ty`.
    fn field(&mut self, field: &str, ty: TypeId) -> Result<String, String> {
        let no_form = |what: &str| format!("`{field}` is {what}: it has no Protobuf field here");
        match self.types.kind(ty) {
            TypeKind::Optional(inner) => match self.types.kind(*inner) {
                TypeKind::List(_) => Err(no_form("an optional list")),
                _ => self.field(field, *inner),
            },
            TypeKind::List(item) => match self.types.kind(*item) {
                TypeKind::List(_) => Err(no_form("a list of lists")),
                TypeKind::Optional(_) => Err(no_form("a list of optionals")),
                _ => Ok(format!("repeated {}", self.single(field, *item)?.0)),
            },
            _ => {
                let (name, is_message) = self.single(field, ty)?;
                Ok(if is_message { name } else { format!("optional {name}") })
            }
        }
    }

    /// The type of one value of `ty`, and whether it is a message.
    fn single(&mut self, field: &str, ty: TypeId) -> Result<(String, bool), String> {
        let scalar = |name: &str| Ok((name.to_string(), false));
        let kind = self.types.kind(ty);
        if let Some(name) = self.names.get(&ty) {
            return Ok(match kind {
                TypeKind::Record(_) => (name.clone(), true),
                _ => (format!("{name}.E"), false),
            });
        }
        match kind {
            TypeKind::Bool => scalar("bool"),
            TypeKind::Int => scalar("int64"),
            TypeKind::Float => scalar("double"),
            TypeKind::Decimal | TypeKind::String | TypeKind::Timestamp | TypeKind::Duration => {
                scalar("string")
            }
            TypeKind::Record(_) => {
                let name = self.fresh(field);
                self.message(ty, &name, &[])?;
                Ok((name, true))
            }
            TypeKind::Enum(values) => {
                let identifier = |v: &String| {
                    v.starts_with(|c: char| c.is_ascii_alphabetic())
                        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && v != "E"
                };
                if !values.iter().all(identifier) {
                    return scalar("string");
                }
                let name = self.fresh(&format!("{field}_enum"));
                self.names.insert(ty, name.clone());
                let values: Vec<String> =
                    values.iter().enumerate().map(|(n, v)| format!("    {v} = {n};")).collect();
                self.declared
                    .push(format!("message {name} {{\n  enum E {{\n{}\n  }}\n}}\n", values.join("\n")));
                Ok((format!("{name}.E"), false))
            }
            TypeKind::List(_) | TypeKind::Optional(_) => Err(format!(
                "`{field}`: a list or optional inside a list or optional has no Protobuf field here"
            )),
        }
    }

    /// A message name after `field` (`shipping` → `Shipping`), numbered
    /// when taken.
    fn fresh(&mut self, field: &str) -> String {
        let base: String = field
            .split('_')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let mut chars = p.chars();
                chars.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(chars).collect::<String>()
            })
            .collect();
        let base =
            if base.starts_with(|c: char| c.is_ascii_alphabetic()) { base } else { format!("M{base}") };
        let (mut name, mut n) = (base.clone(), 1);
        while self.taken.contains(&name) {
            n += 1;
            name = format!("{base}{n}");
        }
        self.taken.push(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(input: &str) -> ir::Contract {
        let source = format!(
            "contract: t.p\nversion: 1.0.0\ndecision: deny-overrides\ndefault: allow\ninput:\n{input}\nrules:\n  - id: r\n    when: true\n    deny: \"no\"\n"
        );
        let bundle = frontend::compile(&source).unwrap_or_else(|d| panic!("{}", d.render(false)));
        bundle.contract().clone()
    }

    #[test]
    fn the_schema_follows_the_input_type() {
        let contract = contract(
            "  total: decimal\n  n: int\n  coupon: string?\n  tier: { enum: [basic, gold] }\n  customer:\n    id: string\n    tier: { enum: [basic, gold] }\n  items: 'list<{ sku: string, price: decimal }>'\n  scores: list<float>",
        );
        insta::assert_snapshot!(proto_schema(&contract, &["note_000"]).expect("a schema"));
    }

    #[test]
    fn inputs_without_a_protobuf_form_are_named() {
        for (input, expected) in [
            ("  tags: list<string>?", "`tags` is an optional list"),
            ("  grid: list<list<int>>", "`grid` is a list of lists"),
        ] {
            let error = proto_schema(&contract(input), &[]).expect_err(input);
            assert!(error.contains(expected), "{input}: {error}");
        }
    }
}
