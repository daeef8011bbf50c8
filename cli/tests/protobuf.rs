//! Batch input as Protobuf: `rulec eval --input records.pb --proto SCHEMA
//! --message NAME` gives, byte for byte, what the same records give as
//! NDJSON:
//!
//! - messages written by Google's Python `protobuf` (fixtures in
//!   `cli/tests/data/protobuf`, with the script that wrote them), read
//!   with the schema as a `.proto` file and as a descriptor set;
//! - every conformance case and example contract: a `.proto` derived from
//!   the contract's input type, each request's input encoded with
//!   prost-reflect (the records a schema can carry faithfully);
//!
//! and a damaged file or a bad schema is a clear error (exit 2), never a
//! crash.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use ir::{TypeId, TypeKind, TypeTable};
use prost::Message;
use prost_reflect::{DeserializeOptions, DynamicMessage};
use serde_json::value::RawValue;
use support::{root, rulec};

const ACCESS: &str = "examples/contracts/acme.access.documents.yaml";
const ACCESS_REQUESTS: &str = "examples/requests/acme.access.documents.ndjson";
const FIXTURES: &str = "cli/tests/data/protobuf";
const ACCESS_MESSAGE: &str = "acme.access.AccessRequest";

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rulec-protobuf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

fn fixture(name: &str) -> PathBuf {
    root().join(FIXTURES).join(name)
}

/// `rulec eval CONTRACT --input INPUT --engine interp --threads 2 EXTRA...`.
fn batch(contract: &str, input: &Path, extra: &[&str]) -> Output {
    rulec()
        .args(["eval", contract, "--input"])
        .arg(input)
        .args(["--engine", "interp", "--threads", "2"])
        .args(extra)
        .output()
        .expect("rulec runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts two runs answered the same, byte for byte.
/// The channel and the raw input text of each request of an NDJSON file.
fn requests(path: &Path) -> Vec<(Option<String>, String)> {
    let text = std::fs::read_to_string(path).expect("requests");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|line| {
            let fields: HashMap<String, Box<RawValue>> = serde_json::from_str(line).ok()?;
            let channel = fields.get("channel").and_then(|c| serde_json::from_str::<String>(c.get()).ok());
            Some((channel, fields.get("input")?.get().to_string()))
        })
        .collect()
}

fn write_lines(path: &Path, lines: &[&str]) {
    std::fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).expect("write");
}

#[test]
fn python_written_messages_give_the_ndjson_results() {
    let inputs: Vec<String> = requests(&root().join(ACCESS_REQUESTS)).into_iter().map(|(_, i)| i).collect();
    let ndjson = temp("access.ndjson");
    write_lines(&ndjson, &inputs.iter().map(String::as_str).collect::<Vec<_>>());
    let expected = batch(ACCESS, &ndjson, &["--channel", "web"]);
    assert_eq!(expected.status.code(), Some(0), "{}", stderr(&expected));
    assert_eq!(String::from_utf8_lossy(&expected.stdout).lines().count(), inputs.len());
    let pb = fixture("access.pb");
    for schema in ["access.proto", "access.desc"] {
        let schema = fixture(schema);
        let schema = schema.to_str().expect("a UTF-8 path");
        let got = batch(ACCESS, &pb, &["--channel", "web", "--proto", schema, "--message", ACCESS_MESSAGE]);
        support::assert_same_output(schema, &got, &expected);
    }
    // The format named, whatever the file's name.
    let renamed = temp("access.bin");
    std::fs::copy(&pb, &renamed).expect("copy");
    let proto = fixture("access.proto");
    let got = batch(
        ACCESS,
        &renamed,
        &[
            "--channel",
            "web",
            "--input-format",
            "protobuf",
            "--message",
            ACCESS_MESSAGE,
            "--proto",
            proto.to_str().unwrap(),
        ],
    );
    support::assert_same_output("--input-format protobuf", &got, &expected);
}

/// The committed fixtures are what `make_fixtures.py` writes with the
/// Python `protobuf` package (pinned in `.ci/run`).
#[test]
fn the_fixtures_are_what_the_python_script_writes() {
    if !support::python_can_import("google.protobuf") {
        return;
    }
    let out = temp("fixtures");
    std::fs::create_dir_all(&out).expect("dir");
    support::run_python("make_fixtures.py", fixture("make_fixtures.py"), [&out]);
    for name in ["access.pb", "access.desc"] {
        let written = std::fs::read(out.join(name)).expect("written");
        assert!(
            written == std::fs::read(fixture(name)).expect("committed"),
            "{name} differs: rerun the script"
        );
    }
}

/// A schema with one top-level message needs no `--message`.
#[test]
fn one_message_needs_no_name() {
    let contract = "cli/tests/data/no_channels.yaml";
    let schema = temp("one.proto");
    std::fs::write(
        &schema,
        "syntax = \"proto3\";\nmessage Rec { int64 amount = 1; optional string note = 2; }\n",
    )
    .expect("write");
    let records = [r#"{"amount": 50}"#, r#"{"amount": 150, "note": "big"}"#, r#"{"amount": 0}"#];
    let ndjson = temp("one.ndjson");
    write_lines(&ndjson, &records);
    let descriptor = prost_reflect::DescriptorPool::decode(
        protox::compile([&schema], [schema.parent().unwrap()]).expect("compiles").encode_to_vec().as_slice(),
    )
    .expect("a pool")
    .get_message_by_name("Rec")
    .expect("Rec");
    let pb = temp("one.pb");
    std::fs::write(&pb, encode(&descriptor, &records)).expect("write");
    let expected = batch(contract, &ndjson, &[]);
    let got = batch(contract, &pb, &["--proto", schema.to_str().unwrap()]);
    support::assert_same_output("one message", &got, &expected);
    assert!(String::from_utf8_lossy(&got.stdout).contains("150 is over 100."));
}

/// Length-delimited messages of `descriptor`, from their proto JSON.
fn encode(descriptor: &prost_reflect::MessageDescriptor, records: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for record in records {
        message(descriptor, record)
            .expect("the record fits the schema")
            .encode_length_delimited(&mut out)
            .expect("encodes");
    }
    out
}

fn message(descriptor: &prost_reflect::MessageDescriptor, json: &str) -> Option<DynamicMessage> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let message = DynamicMessage::deserialize_with_options(
        descriptor.clone(),
        &mut deserializer,
        &DeserializeOptions::new().deny_unknown_fields(true),
    )
    .ok()?;
    deserializer.end().ok()?;
    Some(message)
}

#[test]
fn damaged_files_are_errors_naming_the_record() {
    let bytes = std::fs::read(fixture("access.pb")).expect("fixture");
    let proto = fixture("access.proto");
    let args = ["--channel", "web", "--proto", proto.to_str().unwrap(), "--message", ACCESS_MESSAGE];
    let mut cases: Vec<(String, Vec<u8>, &str)> = [1, 30, bytes.len() / 2, bytes.len() - 1]
        .into_iter()
        .map(|cut| (format!("cut at {cut}"), bytes[..cut].to_vec(), "the file ends inside the message"))
        .collect();
    cases.push((
        "a cut prefix".into(),
        [&bytes[..], &[0x85][..]].concat(),
        "the file ends inside a length prefix",
    ));
    cases.push((
        "a huge length".into(),
        [&bytes[..], &[0xff, 0xff, 0xff, 0xff, 0x0f][..]].concat(),
        "over the 64 MiB",
    ));
    cases.push(("not a varint".into(), [&bytes[..], &[0xff; 11][..]].concat(), "not a valid varint"));
    cases.push((
        "not a message".into(),
        [&bytes[..], &[0x03, 0x0a, 0x09, 0x00][..]].concat(),
        "record 9 (message at byte 548): not a valid `acme.access.AccessRequest` message",
    ));
    for (what, damaged, expected) in cases {
        let path = temp("damaged.pb");
        std::fs::write(&path, &damaged).expect("write");
        let got = batch(ACCESS, &path, &args);
        let message = stderr(&got);
        assert_eq!(got.status.code(), Some(2), "{what}: {message}");
        assert!(message.contains(expected) && message.contains("damaged.pb, record"), "{what}: {message}");
        assert!(!message.contains("panicked"), "{what}: {message}");
    }
}

/// Every damaged copy of a good file is read (its records valid or not)
/// or refused with a message: never a crash or a hang.
#[test]
fn flipped_bytes_never_crash_rulec() {
    let bytes = std::fs::read(fixture("access.pb")).expect("fixture");
    let proto = fixture("access.proto");
    let args = ["--channel", "web", "--proto", proto.to_str().unwrap(), "--message", ACCESS_MESSAGE];
    let damaged = temp("flipped.pb");
    for at in (0..bytes.len()).step_by(7) {
        for value in [0x00, 0xff, bytes[at] ^ 0x80] {
            let mut edited = bytes.clone();
            edited[at] = value;
            std::fs::write(&damaged, &edited).expect("write");
            let got = batch(ACCESS, &damaged, &args);
            let message = stderr(&got);
            assert!(matches!(got.status.code(), Some(0..=2)), "byte {at} = {value}: {message}");
            assert!(!message.contains("panicked"), "byte {at} = {value}: {message}");
        }
    }
}

#[test]
fn bad_schemas_and_flags_are_clear_errors() {
    let pb = fixture("access.pb");
    let proto = fixture("access.proto");
    let proto = proto.to_str().unwrap();
    let write = |name: &str, text: &[u8]| {
        let path = temp(name);
        std::fs::write(&path, text).expect("write");
        path.to_str().expect("UTF-8").to_string()
    };
    let syntax = write("syntax.proto", b"syntax = \"proto3\";\nmessage A {\n  string x = ;\n}\n");
    let import = write("import.proto", b"syntax = \"proto3\";\n\nimport \"elsewhere.proto\";\n");
    let garbage = write("garbage.desc", b"\xff\xff\xff");
    let ndjson = write("records.ndjson", b"{}\n");
    let missing = temp("missing.proto").to_str().unwrap().to_string();
    let cases: [(&str, &Path, Vec<&str>, &str); 9] = [
        ("missing schema", &pb, vec!["--proto", &missing, "--message", "a.B"], "--proto: cannot read"),
        ("syntax error", &pb, vec!["--proto", &syntax, "--message", "A"], "syntax.proto:3:14: "),
        (
            "missing import",
            &pb,
            vec!["--proto", &import],
            "import.proto:3:1: import 'elsewhere.proto' not found",
        ),
        (
            "unknown message",
            &pb,
            vec!["--proto", proto, "--message", "acme.access.Nope"],
            "has no message `acme.access.Nope`; it declares `acme.access.User`, `acme.access.Document`, `acme.access.AccessRequest`",
        ),
        (
            "a short name",
            &pb,
            vec!["--proto", proto, "--message", "AccessRequest"],
            "--message takes the fully qualified name: `acme.access.AccessRequest`",
        ),
        ("several messages", &pb, vec!["--proto", proto], "declares 3 messages: name one with --message"),
        (
            "not a descriptor set",
            &pb,
            vec!["--proto", &garbage, "--message", "a.B"],
            "is not a readable descriptor set",
        ),
        ("no schema", &pb, vec![], "Protobuf input needs its schema: --proto FILE"),
        (
            "not protobuf",
            Path::new(&ndjson),
            vec!["--proto", proto],
            "--proto and --message are for Protobuf input",
        ),
    ];
    for (what, input, extra, expected) in cases {
        let mut args = vec!["--channel", "web"];
        args.extend(extra);
        let got = batch(ACCESS, input, &args);
        let message = stderr(&got);
        assert_eq!(got.status.code(), Some(2), "{what}: {message}");
        assert!(message.contains(expected), "{what}: {message}");
        assert!(got.stdout.is_empty(), "{what}");
    }
}

/// For every conformance case and example: a `.proto` of the contract's
/// input, each request's input encoded as its message, and the results
/// compared with the same inputs' as NDJSON, channel by channel.
#[test]
fn every_contract_gives_the_ndjson_results_from_protobuf() {
    type Records = Vec<(Option<String>, String)>;
    let mut cases: Vec<(String, PathBuf, Records)> = Vec::new();
    let conformance = root().join("conformance/cases");
    for entry in std::fs::read_dir(&conformance).expect("cases") {
        let dir = entry.expect("entry").path();
        if dir.join("requests.ndjson").exists() {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            cases.push((name, dir.join("contract.yaml"), requests(&dir.join("requests.ndjson"))));
        }
    }
    for name in
        ["acme.access.documents", "acme.payments.transfer", "acme.payments.velocity", "shop.orders.check"]
    {
        let root = root();
        cases.push((
            name.into(),
            root.join(format!("examples/contracts/{name}.yaml")),
            requests(&root.join(format!("examples/requests/{name}.ndjson"))),
        ));
    }
    // The bare records the Arrow tests use, from the batch channel.
    let records = std::fs::read_to_string(root().join("cli/tests/data/records.ndjson")).expect("records");
    let records = records.lines().filter(|l| !l.trim().is_empty());
    cases.push((
        "batch records".into(),
        root().join("examples/contracts/acme.payments.transfer.yaml"),
        records.map(|r| (Some("batch".to_string()), r.to_string())).collect(),
    ));
    cases.sort();
    let (mut compared, mut contracts, mut left_out) = (0, 0, Vec::new());
    for (name, contract, records) in &cases {
        let source = std::fs::read_to_string(contract).expect("contract");
        let Ok(bundle) = frontend::compile(&source) else { continue };
        if source.contains("now()") {
            // Batch records have no `now`: both runs would read the clock.
            left_out.push(format!("{name} (reads the clock)"));
            continue;
        }
        let Some(schema) = proto_schema(bundle.contract()) else {
            left_out.push(format!("{name} (its input has no Protobuf form here)"));
            continue;
        };
        let schema_path = temp(&format!("{name}.proto"));
        std::fs::write(&schema_path, &schema).expect("write");
        let pool = protox::compile([&schema_path], [schema_path.parent().unwrap()])
            .unwrap_or_else(|e| panic!("{name}: the derived schema does not compile: {e:?}\n{schema}"));
        let pool = prost_reflect::DescriptorPool::decode(pool.encode_to_vec().as_slice()).expect("a pool");
        let descriptor = pool.get_message_by_name("t.Input").expect("t.Input");
        let types = &bundle.contract().types;
        let mut by_channel: Vec<(Option<String>, Vec<String>, Vec<u8>)> = Vec::new();
        let mut skipped = 0;
        for (channel, input) in records.iter().cloned() {
            let encoded =
                proto_json(types, bundle.contract().input, &input).and_then(|j| message(&descriptor, &j));
            let Some(encoded) = encoded else {
                skipped += 1;
                continue;
            };
            let group = match by_channel.iter().position(|(c, ..)| *c == channel) {
                Some(at) => at,
                None => {
                    by_channel.push((channel.clone(), Vec::new(), Vec::new()));
                    by_channel.len() - 1
                }
            };
            by_channel[group].1.push(input);
            encoded.encode_length_delimited(&mut by_channel[group].2).expect("encodes");
        }
        if skipped > 0 {
            left_out.push(format!("{skipped} request(s) of {name}"));
        }
        contracts += usize::from(!by_channel.is_empty());
        for (index, (channel, inputs, encoded)) in by_channel.iter().enumerate() {
            let ndjson = temp(&format!("{name}.{index}.ndjson"));
            write_lines(&ndjson, &inputs.iter().map(String::as_str).collect::<Vec<_>>());
            let pb = temp(&format!("{name}.{index}.pb"));
            std::fs::write(&pb, encoded).expect("write");
            let mut extra = Vec::new();
            if let Some(channel) = channel {
                extra.extend(["--channel", channel.as_str()]);
            }
            let contract = contract.to_str().unwrap();
            let expected = batch(contract, &ndjson, &extra);
            extra.extend(["--proto", schema_path.to_str().unwrap(), "--message", "t.Input"]);
            let got = batch(contract, &pb, &extra);
            support::assert_same_output(&format!("{name}, channel {channel:?}\n{schema}"), &got, &expected);
            compared += inputs.len();
        }
    }
    println!("compared {compared} records of {contracts} contracts; left out: {}", left_out.join(", "));
    assert!(contracts >= 30 && compared >= 150, "{contracts} contracts, {compared} records");
}

/// A `.proto` (package `t`, message `Input`) carrying a contract's input:
/// records as messages, lists as repeated fields, every other field
/// `optional` (so an absent field stays absent), decimals and durations
/// as strings, timestamps as `google.protobuf.Timestamp`, enums as enums
/// when their values are identifiers. `None` when a type has no such
/// form (a list of lists, an optional list).
fn proto_schema(contract: &ir::Contract) -> Option<String> {
    let mut schema = Schema { types: &contract.types, messages: Vec::new(), names: HashMap::new(), count: 0 };
    let input = schema.message(contract.input, "Input")?;
    debug_assert_eq!(input, "Input");
    let body = schema.messages.join("\n");
    Some(format!("syntax = \"proto3\";\npackage t;\nimport \"google/protobuf/timestamp.proto\";\n\n{body}"))
}

struct Schema<'t> {
    types: &'t TypeTable,
    messages: Vec<String>,
    names: HashMap<TypeId, String>,
    /// Messages named so far (numbers the next name).
    count: usize,
}

impl Schema<'_> {
    /// The message of a record type, declared once.
    fn message(&mut self, ty: TypeId, name: &str) -> Option<String> {
        if let Some(name) = self.names.get(&ty) {
            return Some(name.clone());
        }
        let TypeKind::Record(fields) = self.types.kind(ty) else { return None };
        self.names.insert(ty, name.to_string());
        let mut lines = Vec::new();
        for (number, field) in fields.iter().enumerate() {
            let declared = self.field(field.ty)?;
            lines.push(format!("  {declared} {} = {};", field.name, number + 1));
        }
        self.messages.push(format!("message {name} {{\n{}\n}}\n", lines.join("\n")));
        Some(name.to_string())
    }

    /// A field's label and type.
    fn field(&mut self, ty: TypeId) -> Option<String> {
        match self.types.kind(ty).clone() {
            TypeKind::Optional(inner) => match self.types.kind(inner) {
                TypeKind::List(_) | TypeKind::Optional(_) => None,
                _ => self.field(inner),
            },
            TypeKind::List(item) => {
                let item = match self.types.kind(item) {
                    TypeKind::Optional(inner) => *inner,
                    _ => item,
                };
                match self.types.kind(item) {
                    TypeKind::List(_) | TypeKind::Optional(_) => None,
                    _ => Some(format!("repeated {}", self.single(item)?.0)),
                }
            }
            _ => {
                let (name, is_message) = self.single(ty)?;
                Some(if is_message { name } else { format!("optional {name}") })
            }
        }
    }

    /// The type of a single value, and whether it is a message.
    fn single(&mut self, ty: TypeId) -> Option<(String, bool)> {
        let scalar = |name: &str| Some((name.to_string(), false));
        match self.types.kind(ty).clone() {
            TypeKind::Bool => scalar("bool"),
            TypeKind::Int => scalar("int64"),
            TypeKind::Float => scalar("double"),
            TypeKind::Decimal | TypeKind::String | TypeKind::Duration => scalar("string"),
            TypeKind::Timestamp => Some(("google.protobuf.Timestamp".into(), true)),
            TypeKind::Record(_) => {
                self.count += 1;
                Some((self.message(ty, &format!("R{}", self.count))?, true))
            }
            TypeKind::Enum(values) => {
                let identifier = |v: &String| {
                    v.starts_with(|c: char| c.is_ascii_alphabetic())
                        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                };
                if !values.iter().all(identifier) || values.iter().any(|v| v == "E") {
                    return scalar("string");
                }
                self.count += 1;
                let name = format!("Enum{}", self.count);
                let values: Vec<String> =
                    values.iter().enumerate().map(|(n, v)| format!("    {v} = {n};")).collect();
                self.messages
                    .push(format!("message {name} {{\n  enum E {{\n{}\n  }}\n}}\n", values.join("\n")));
                scalar(&format!("{name}.E"))
            }
            TypeKind::List(_) | TypeKind::Optional(_) => None,
        }
    }
}

/// A request's input as the proto JSON mapping reads it into the derived
/// schema, or `None` when the record has no faithful Protobuf form: a
/// null or a missing list where the contract wants a value, a number the
/// mapping would read otherwise than the contract (an int as a string,
/// a decimal with an exponent, an enum as a number), a timestamp the
/// contract refuses (its error would quote the text, which a
/// `Timestamp` normalizes). Decimal numbers become strings (the contract
/// reads both the same); unknown fields are dropped (the contract
/// ignores them).
fn proto_json(types: &TypeTable, ty: TypeId, raw: &str) -> Option<String> {
    let is_string = raw.starts_with('"');
    let is_number = raw.starts_with(|c: char| c == '-' || c.is_ascii_digit());
    match types.kind(ty) {
        TypeKind::Optional(_) if raw == "null" => Some(raw.into()),
        TypeKind::Optional(inner) => proto_json(types, *inner, raw),
        _ if raw == "null" => None,
        TypeKind::Record(fields) => {
            let map: HashMap<String, Box<RawValue>> = serde_json::from_str(raw).ok()?;
            let mut out = Vec::new();
            for field in fields {
                match map.get(&field.name) {
                    Some(value) => {
                        let value = proto_json(types, field.ty, value.get())?;
                        out.push(format!("{}:{value}", serde_json::to_string(&field.name).unwrap()));
                    }
                    None if matches!(types.kind(field.ty), TypeKind::List(_)) => return None,
                    None => {}
                }
            }
            Some(format!("{{{}}}", out.join(",")))
        }
        TypeKind::List(item) => {
            let items: Vec<Box<RawValue>> = serde_json::from_str(raw).ok()?;
            let items: Option<Vec<String>> = items
                .iter()
                .map(|i| if i.get() == "null" { None } else { proto_json(types, *item, i.get()) })
                .collect();
            Some(format!("[{}]", items?.join(",")))
        }
        TypeKind::Decimal if is_number && !raw.contains(['e', 'E']) => Some(format!("\"{raw}\"")),
        TypeKind::Decimal if is_string => Some(raw.into()),
        TypeKind::Int if is_number && raw.parse::<i64>().is_ok() => Some(raw.into()),
        TypeKind::Float if is_number && raw.parse::<f64>().is_ok_and(f64::is_finite) => Some(raw.into()),
        TypeKind::Bool if raw == "true" || raw == "false" => Some(raw.into()),
        TypeKind::String | TypeKind::Duration | TypeKind::Enum(_) if is_string => Some(raw.into()),
        TypeKind::Timestamp if is_string => {
            let text: String = serde_json::from_str(raw).ok()?;
            ir::time::parse_timestamp(&text).ok().map(|_| raw.into())
        }
        _ => None,
    }
}
