//! Protobuf input: length-delimited messages (a varint length, then the
//! message's bytes, as `writeDelimitedTo` writes them) of one message
//! type, from a schema given as a `.proto` file (compiled at run time) or
//! a descriptor set.
//!
//! The reader only checks the framing and passes chunks of whole frames
//! ([`Chunk::Messages`]); the worker evaluating a chunk decodes each
//! message by its descriptor and writes it as one JSON object line, and
//! the lines go down the NDJSON path, so the records are validated, and
//! refused, exactly as the same records written as NDJSON would be. The mapping (docs/decisions.md, "Protobuf input") is
//! prost-reflect's JSON mapping with proto field names, 64-bit integers
//! as numbers, and fields without presence written with their default.
//!
//! A damaged file (a cut length prefix or message, a length past the end
//! or over [`MAX_MESSAGE`], bytes that are not a message of the type) is
//! an error naming the record and its byte offset; it never panics.

use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::path::Path;
use std::sync::Arc;

use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, SerializeOptions};

use super::{Chunk, Source};
use runtime::contained::contained;

/// About the message bytes per chunk (their JSON is two to four times
/// larger).
const BLOCK: usize = 1 << 20;
/// The longest message a record may be.
pub const MAX_MESSAGE: u64 = 64 << 20;
/// How many known messages an unknown `--message` error lists.
const LISTED: usize = 8;

/// The JSON mapping: proto field names, 64-bit integers as JSON numbers,
/// enums by name, and every field without presence written (a proto3
/// `int64 n = 1;` left at 0 is `"n":0`, not missing).
const JSON: SerializeOptions = SerializeOptions::new()
    .use_proto_field_name(true)
    .stringify_64_bit_integers(false)
    .use_enum_numbers(false)
    .skip_default_fields(false);

/// The message type `message` (fully qualified; `None` for the one
/// top-level message the schema declares) of the schema at `path`: a
/// `.proto` file, compiled with its folder as the include path, or a
/// descriptor set (`FileDescriptorSet` bytes, any other name).
pub fn load_schema(path: &Path, message: Option<&str>) -> Result<MessageDescriptor, String> {
    let is_proto = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("proto"));
    let pool = if is_proto { compile(path)? } else { decode_set(path)? };
    find_message(&pool, message, &path.display().to_string())
}

/// Compiles a `.proto` file (and its imports: from its folder, and
/// Google's well-known types) with protox.
fn compile(path: &Path) -> Result<DescriptorPool, String> {
    let name = path.display().to_string();
    if let Err(e) = std::fs::metadata(path) {
        return Err(format!("cannot read {name}: {e}"));
    }
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file = path.file_name().ok_or_else(|| format!("{name} is not a file"))?;
    let mut compiler = protox::Compiler::new([folder]).map_err(|e| format!("{name}: {e}"))?;
    compiler.include_imports(true);
    match compiler.open_file(file) {
        Ok(_) => Ok(compiler.descriptor_pool()),
        Err(e) => Err(compile_error(&e, folder)),
    }
}

/// protox's error, with the file, line and column it points at.
fn compile_error(error: &protox::Error, folder: &Path) -> String {
    use miette::Diagnostic;
    let file = error.file().unwrap_or("");
    let offset = error.labels().and_then(|mut labels| labels.next()).map(|label| label.offset());
    let place = match offset {
        Some(offset) => {
            let text = std::fs::read_to_string(folder.join(file)).unwrap_or_default();
            let (line, column) = line_column(&text, offset);
            format!("{}:{line}:{column}", folder.join(file).display())
        }
        None if !file.is_empty() => folder.join(file).display().to_string(),
        None => folder.display().to_string(),
    };
    let help = error.help().map(|h| format!(" ({h})")).unwrap_or_default();
    format!("{place}: {error}{help}")
}

/// The 1-based line and column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A `FileDescriptorSet` (what `protoc --descriptor_set_out
/// --include_imports` and `buf build -o` write).
fn decode_set(path: &Path) -> Result<DescriptorPool, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    contained(&format!("{name}: not a readable descriptor set"), || {
        DescriptorPool::decode(bytes.as_slice())
            .map_err(|e| format!("{name} is not a readable descriptor set (FileDescriptorSet): {e}"))
    })
}

/// The message `wanted` names, or the schema's one top-level message.
fn find_message(
    pool: &DescriptorPool,
    wanted: Option<&str>,
    schema: &str,
) -> Result<MessageDescriptor, String> {
    let top_level: Vec<MessageDescriptor> = pool
        .all_messages()
        .filter(|m| m.parent_message().is_none() && m.package_name() != "google.protobuf")
        .collect();
    let Some(wanted) = wanted else {
        return match top_level.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(format!("{schema} declares no message")),
            many => Err(format!(
                "{schema} declares {} messages: name one with --message ({})",
                many.len(),
                listed(many.iter().map(|m| m.full_name()))
            )),
        };
    };
    let wanted = wanted.strip_prefix('.').unwrap_or(wanted);
    if let Some(message) = pool.get_message_by_name(wanted) {
        return Ok(message);
    }
    let same_short_name: Vec<MessageDescriptor> =
        pool.all_messages().filter(|m| m.name() == wanted).collect();
    if let [one] = same_short_name.as_slice() {
        return Err(format!(
            "{schema} has no message `{wanted}`; --message takes the fully qualified name: `{}`",
            one.full_name()
        ));
    }
    let known: Vec<MessageDescriptor> =
        pool.all_messages().filter(|m| m.package_name() != "google.protobuf").collect();
    Err(format!(
        "{schema} has no message `{wanted}`; it declares {}",
        listed(known.iter().map(|m| m.full_name()))
    ))
}

/// Up to [`LISTED`] names, and how many more.
fn listed<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let count = names.len();
    if count == 0 {
        return "none".into();
    }
    let mut text = names.take(LISTED).map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    if count > LISTED {
        text.push_str(&format!(" and {} more", count - LISTED));
    }
    text
}

/// Length-delimited messages of one type, read into chunks of whole
/// frames ([`Messages`]); the workers decode them.
pub struct ProtobufReader {
    input: BufReader<Box<dyn Read + Send>>,
    decoder: Arc<Decoder>,
    /// Bytes read so far: the offset of the next record.
    offset: u64,
    /// Records read so far.
    records: u64,
    done: bool,
}

impl std::fmt::Debug for ProtobufReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProtobufReader")
    }
}

/// What decodes a chunk's messages: their type, and the file's name for
/// errors.
#[derive(Debug)]
struct Decoder {
    message: MessageDescriptor,
    name: String,
}

/// A chunk of whole length-delimited messages, as read (their framing
/// checked), to be decoded into JSON lines by the worker that evaluates
/// them ([`Messages::write_lines`]), so decoding runs on every core.
#[derive(Debug)]
pub struct Messages {
    frames: Vec<u8>,
    decoder: Arc<Decoder>,
    /// Records before this chunk's first, and the first's byte offset.
    first: u64,
    offset: u64,
}

impl Messages {
    /// Each message as one JSON object line, appended to `out`; the first
    /// that does not decode is an error naming its record and offset.
    pub fn write_lines(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let what = format!("{}, record {} onwards", self.decoder.name, self.first + 1);
        contained(&what, || {
            let mut rest = self.frames.as_slice();
            let mut record = self.first;
            while !rest.is_empty() {
                record += 1;
                let at = self.offset + (self.frames.len() - rest.len()) as u64;
                let (length, prefix) =
                    varint(rest).ok_or_else(|| format!("internal: record {record}'s frame is not whole"))?;
                let end = prefix + length as usize;
                let message = rest.get(prefix..end).ok_or("internal: a frame past the chunk's end")?;
                self.write_line(message, out).map_err(|e| {
                    format!(
                        "{}, record {record} (message at byte {}): {e}",
                        self.decoder.name,
                        at + prefix as u64
                    )
                })?;
                rest = &rest[end..];
            }
            Ok(())
        })
    }

    fn write_line(&self, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let descriptor = &self.decoder.message;
        let message = DynamicMessage::decode(descriptor.clone(), bytes)
            .map_err(|e| format!("not a valid `{}` message: {e}", descriptor.full_name()))?;
        let start = out.len();
        let mut serializer = serde_json::Serializer::new(&mut *out);
        if let Err(e) = message.serialize_with_options(&mut serializer, &JSON) {
            out.truncate(start);
            return Err(e.to_string());
        }
        out.push(b'\n');
        Ok(())
    }

    /// The bytes of the chunk's frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The frames' buffer, for reuse.
    pub fn into_frames(self) -> Vec<u8> {
        self.frames
    }
}

/// A varint at the start of `bytes` and its length in bytes.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    for (index, byte) in bytes.iter().take(10).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            return Some((value, index + 1));
        }
    }
    None
}

impl ProtobufReader {
    pub fn open(path: &Path, message: MessageDescriptor) -> Result<ProtobufReader, String> {
        let file = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(ProtobufReader::new(Box::new(file), message, path.display().to_string()))
    }

    /// Messages of type `message` from `input`, called `name` in errors.
    pub fn new(input: Box<dyn Read + Send>, message: MessageDescriptor, name: String) -> ProtobufReader {
        ProtobufReader {
            input: BufReader::with_capacity(1 << 20, input),
            decoder: Arc::new(Decoder { message, name }),
            offset: 0,
            records: 0,
            done: false,
        }
    }

    /// Where the next record is, for errors.
    fn here(&self) -> String {
        format!("{}, record {} (at byte {})", self.decoder.name, self.records + 1, self.offset)
    }

    /// The next message's frame (its prefix and bytes) appended to
    /// `frames`; `false` at the end.
    fn next_frame(&mut self, frames: &mut Vec<u8>) -> Result<bool, String> {
        let start = frames.len();
        let Some(length) = self.length(frames)? else {
            return Ok(false);
        };
        let prefix = (frames.len() - start) as u64;
        if length > MAX_MESSAGE {
            return Err(format!(
                "{}: the length prefix says {length} bytes, over the {} MiB a message may have (a damaged file?)",
                self.here(),
                MAX_MESSAGE >> 20
            ));
        }
        // Read as the bytes come: a length is never trusted for an allocation.
        let body = frames.len();
        loop {
            match (&mut self.input).take(length).read_to_end(frames) {
                Ok(_) => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => frames.truncate(body),
                Err(e) => return Err(format!("cannot read {}: {e}", self.decoder.name)),
            }
        }
        let read = (frames.len() - body) as u64;
        if read < length {
            return Err(format!(
                "{}: the file ends inside the message: its length prefix says {length} bytes, {read} remain",
                self.here()
            ));
        }
        self.offset += prefix + length;
        self.records += 1;
        Ok(true)
    }

    /// A varint length prefix, its bytes appended to `frames`; `None` at
    /// the end of the input (before a prefix's first byte).
    fn length(&mut self, frames: &mut Vec<u8>) -> Result<Option<u64>, String> {
        let mut value: u64 = 0;
        for index in 0..10u32 {
            let mut byte = [0u8; 1];
            match read_byte(&mut self.input, &mut byte) {
                Ok(true) => {}
                Ok(false) if index == 0 => return Ok(None),
                Ok(false) => return Err(format!("{}: the file ends inside a length prefix", self.here())),
                Err(e) => return Err(format!("cannot read {}: {e}", self.decoder.name)),
            }
            if index == 9 && byte[0] > 1 {
                break;
            }
            frames.push(byte[0]);
            value |= u64::from(byte[0] & 0x7f) << (7 * index);
            if byte[0] & 0x80 == 0 {
                return Ok(Some(value));
            }
        }
        Err(format!("{}: the length prefix is not a valid varint (a damaged file?)", self.here()))
    }
}

/// One byte, `false` at the end; retried when interrupted.
fn read_byte(input: &mut impl Read, byte: &mut [u8; 1]) -> std::io::Result<bool> {
    loop {
        match input.read(byte) {
            Ok(0) => return Ok(false),
            Ok(_) => return Ok(true),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

impl Source for ProtobufReader {
    fn next_chunk(&mut self) -> Result<Option<Chunk>, String> {
        if self.done {
            return Ok(None);
        }
        let mut frames = crate::buffers::take(BLOCK + (64 << 10));
        let (first, offset) = (self.records, self.offset);
        while frames.len() < BLOCK {
            match self.next_frame(&mut frames) {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Err(e) => {
                    self.done = true;
                    crate::buffers::give(frames);
                    return Err(e);
                }
            }
        }
        if frames.is_empty() {
            crate::buffers::give(frames);
            return Ok(None);
        }
        Ok(Some(Chunk::Messages(Messages { frames, decoder: self.decoder.clone(), first, offset })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"
        syntax = "proto3";
        package t;
        import "google/protobuf/timestamp.proto";
        import "google/protobuf/duration.proto";
        import "google/protobuf/wrappers.proto";
        message Odd {
          google.protobuf.Duration wait = 1;
          google.protobuf.Int64Value limit = 2;
          bytes blob = 3;
          optional double ratio = 4;
          Order.Kind kind = 5;
          map<int32, bool> flags = 6;
          oneof choice { string text = 7; int32 number = 8; }
        }
        message Item { string sku = 1; int64 qty = 2; }
        message Order {
          enum Kind { STANDARD = 0; EXPRESS = 1; }
          string id = 1;
          optional string note = 2;
          repeated Item items = 3;
          Kind kind = 4;
          google.protobuf.Timestamp at = 5;
          uint64 big = 6;
          map<string, int32> counts = 7;
          Item first = 8;
        }
    "#;

    fn order() -> MessageDescriptor {
        message_named("t.Order")
    }

    /// The schema's message `name`, from a folder of its own: tests run
    /// on several threads, and one writing a shared file while another
    /// reads it would read a torn schema.
    fn message_named(name: &str) -> MessageDescriptor {
        let dir = tempfile::tempdir().expect("a folder");
        let path = dir.path().join("order.proto");
        std::fs::write(&path, SCHEMA).expect("write");
        load_schema(&path, Some(name)).expect("compiles")
    }

    fn delimited(messages: &[&str], descriptor: &MessageDescriptor) -> Vec<u8> {
        use prost::Message;
        let mut out = Vec::new();
        for json in messages {
            let mut de = serde_json::Deserializer::from_str(json);
            let message = DynamicMessage::deserialize(descriptor.clone(), &mut de).expect("fits the schema");
            message.encode_length_delimited(&mut out).expect("encodes");
        }
        out
    }

    fn lines(bytes: Vec<u8>, descriptor: MessageDescriptor) -> Result<String, String> {
        let mut reader =
            ProtobufReader::new(Box::new(std::io::Cursor::new(bytes)), descriptor, "test.pb".into());
        let mut out = Vec::new();
        while let Some(Chunk::Messages(messages)) = reader.next_chunk()? {
            messages.write_lines(&mut out)?;
        }
        Ok(String::from_utf8(out).expect("UTF-8"))
    }

    #[test]
    fn messages_become_json_lines_of_the_mapping() {
        let order = order();
        let bytes = delimited(
            &[
                r#"{"id":"o-1","items":[{"sku":"a","qty":"9007199254740993"}],"kind":"EXPRESS","at":"2026-03-02T10:00:00.5Z","big":"18446744073709551615","first":{"sku":"b"}}"#,
                r#"{}"#,
            ],
            &order,
        );
        let got = lines(bytes, order).expect("reads");
        assert_eq!(
            got,
            concat!(
                r#"{"id":"o-1","items":[{"sku":"a","qty":9007199254740993}],"kind":"EXPRESS","at":"2026-03-02T10:00:00.500Z","big":18446744073709551615,"counts":{},"first":{"sku":"b","qty":0}}"#,
                "\n",
                r#"{"id":"","items":[],"kind":"STANDARD","big":0,"counts":{}}"#,
                "\n"
            )
        );
    }

    /// Each case: a message as proto JSON, and the line it becomes.
    #[test]
    fn well_known_types_and_odd_values_map_as_documented() {
        let odd = message_named("t.Odd");
        let cases = [
            (r#"{}"#, r#"{"blob":"","kind":"STANDARD","flags":{}}"#),
            (
                r#"{"wait":"-1.5s","limit":"7","blob":"AAH/","ratio":"NaN","kind":7,"flags":{"3":true},"text":"x"}"#,
                r#"{"wait":"-1.500s","limit":7,"blob":"AAH/","ratio":"NaN","kind":7,"flags":{"3":true},"text":"x"}"#,
            ),
            (
                r#"{"wait":"5400s","ratio":0.1,"number":0}"#,
                r#"{"wait":"5400s","blob":"","ratio":0.1,"kind":"STANDARD","flags":{},"number":0}"#,
            ),
        ];
        for (json, expected) in cases {
            let got = lines(delimited(&[json], &odd), odd.clone()).expect("reads");
            assert_eq!(got, format!("{expected}\n"), "{json}");
        }
    }

    #[test]
    fn damaged_input_names_the_record_and_offset() {
        let order = order();
        let good = delimited(&[r#"{"id":"a"}"#, r#"{"id":"b"}"#], &order);
        let cases: [(Vec<u8>, &str); 4] = [
            (good[..good.len() - 1].to_vec(), "record 2 (at byte 4): the file ends inside the message"),
            ([&good[..], &[0x80][..]].concat(), "record 3 (at byte 8): the file ends inside a length prefix"),
            ([&good[..], &[0xff, 0xff, 0xff, 0xff, 0x7f][..]].concat(), "over the 64 MiB"),
            (
                [&good[..], &[0x02, 0x0a, 0x05][..]].concat(),
                "record 3 (message at byte 9): not a valid `t.Order`",
            ),
        ];
        for (bytes, expected) in cases {
            let got = lines(bytes, order.clone()).expect_err("refused");
            assert!(got.contains(expected), "{got}");
        }
        let eleven = [&[0xff; 10][..], &[0x01][..]].concat();
        assert!(lines(eleven, order).expect_err("refused").contains("not a valid varint"));
    }

    #[test]
    fn line_and_column_count_from_one() {
        assert_eq!(line_column("ab\ncd\n", 4), (2, 2));
        assert_eq!(line_column("ab", 0), (1, 1));
    }
}
