//! The base protocol: `Content-Length` framed JSON-RPC messages. Read here
//! rather than by `lsp_server::Message::read`, which allocates whatever
//! length a header claims and ends the session at a body that is not
//! UTF-8: a frame that is too large is skipped, invalid UTF-8 becomes
//! U+FFFD, and a body that is not a message is answered as a parse error.
//! Only the end of the input ends it.
//!
//! A `Content-Length` that is not the body's length loses no later
//! message: a body ends where its JSON value ends, even before the length
//! said (so a length too large neither swallows the next message nor
//! waits for bytes that never come), and a header is found wherever its
//! line starts, after the cut-off rest of a body whose length was too
//! small.

use std::io::{self, BufRead, Read, Write};

use lsp_server::Message;

/// The largest message read: a contract may be up to 64 MiB, JSON
/// escaping can double it.
pub const MAX_MESSAGE_BYTES: usize = 160 << 20;
/// The longest header line.
const MAX_HEADER_BYTES: u64 = 8 << 10;

/// What one frame held.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// A frame that is not a JSON-RPC message, and why.
    Malformed(String),
    /// A request whose id `lsp_server` cannot hold (a number past 32
    /// bits, a fraction, `null`): the id as sent, to answer it.
    UnreadableId(serde_json::Value),
}

/// The next frame, or `None` at the end of the input.
pub fn read(input: &mut impl BufRead) -> io::Result<Option<Frame>> {
    read_limited(input, MAX_MESSAGE_BYTES)
}

fn read_limited(input: &mut impl BufRead, limit: usize) -> io::Result<Option<Frame>> {
    let Some(length) = headers(input)? else { return Ok(None) };
    let Some(length) = length else {
        return Ok(Some(Frame::Malformed("a message without a Content-Length header".into())));
    };
    if length > limit {
        let skipped = io::copy(&mut input.take(length as u64), &mut io::sink())?;
        if skipped < length as u64 {
            return Ok(None);
        }
        return Ok(Some(Frame::Malformed(format!("a message of {length} bytes; the limit is {limit}"))));
    }
    let Some(body) = body(input, length)? else { return Ok(None) };
    let text = String::from_utf8_lossy(&body);
    Ok(Some(match serde_json::from_str::<Message>(&text) {
        // A request whose id `lsp_server` cannot hold reads as a
        // notification (its id ignored): it must be answered.
        Ok(Message::Notification(_)) if let Some(id) = unreadable_id(&text) => Frame::UnreadableId(id),
        Ok(message) => Frame::Message(message),
        Err(e) => match unreadable_id(&text) {
            Some(id) => Frame::UnreadableId(id),
            None => Frame::Malformed(format!("not a JSON-RPC message: {e}")),
        },
    }))
}

/// The id of a request (an object with a `method` and an `id`) that did
/// not read as a message, when its id is what failed: not a string nor
/// an integer of 32 bits.
fn unreadable_id(text: &str) -> Option<serde_json::Value> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let (method, id) = (value.get("method")?, value.get("id")?);
    let readable = id.is_string() || id.as_i64().is_some_and(|n| i32::try_from(n).is_ok());
    (method.is_string() && !readable).then(|| id.clone())
}

/// The body of a frame of `length` bytes: up to `length` bytes, or fewer
/// where a JSON value ends first (module doc); `None` at the end of the
/// input.
fn body(input: &mut impl BufRead, length: usize) -> io::Result<Option<Vec<u8>>> {
    let mut body = Vec::with_capacity(length.min(1 << 20));
    let mut end = ValueEnd::default();
    while body.len() < length {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(None);
        }
        let wanted = &available[..available.len().min(length - body.len())];
        let (taken, ended) = match wanted.iter().position(|byte| end.ends_with(*byte)) {
            Some(last) => (last + 1, true),
            None => (wanted.len(), false),
        };
        body.extend_from_slice(&wanted[..taken]);
        input.consume(taken);
        if ended {
            break;
        }
    }
    Ok(Some(body))
}

/// Where a JSON object or array ends, byte by byte: its brackets counted
/// outside strings. Anything else never ends early.
#[derive(Default)]
struct ValueEnd {
    depth: usize,
    started: bool,
    /// Not an object or array: read to the length given.
    other: bool,
    in_string: bool,
    escaped: bool,
}

impl ValueEnd {
    /// Takes the next byte; whether it closes the value.
    fn ends_with(&mut self, byte: u8) -> bool {
        if self.other {
            return false;
        }
        if self.in_string {
            match (self.escaped, byte) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return false;
        }
        match byte {
            b'{' | b'[' => {
                self.started = true;
                self.depth += 1;
            }
            b'}' | b']' if self.depth > 0 => {
                self.depth -= 1;
                return self.depth == 0;
            }
            b'"' if self.started => self.in_string = true,
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ if !self.started => self.other = true,
            _ => {}
        }
        false
    }
}

/// Reads the header lines up to the blank one: `None` at the end of the
/// input, else the `Content-Length` if one was given.
fn headers(input: &mut impl BufRead) -> io::Result<Option<Option<usize>>> {
    let mut length = None;
    let mut seen = false;
    loop {
        let mut line = Vec::new();
        let read = input.take(MAX_HEADER_BYTES).read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(None);
        }
        if !line.ends_with(b"\n") && read as u64 == MAX_HEADER_BYTES {
            // A header too long to be one: drop the rest of its line.
            input.read_until(b'\n', &mut Vec::new())?;
            continue;
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if seen {
                return Ok(Some(length));
            }
            continue;
        }
        seen = true;
        // A header may follow the cut-off rest of a body on its line.
        let lower = line.to_ascii_lowercase();
        if let Some(at) = lower.rfind("content-length:") {
            length = line[at + "content-length:".len()..].trim().parse().ok();
        }
    }
}

/// Writes one message and flushes it.
pub fn write(output: &mut impl Write, message: Message) -> io::Result<()> {
    message.write(output)?;
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(bytes: &[u8]) -> Vec<String> {
        let mut input = io::BufReader::new(bytes);
        let mut out = Vec::new();
        while let Some(frame) = read_limited(&mut input, 1000).unwrap() {
            out.push(match frame {
                Frame::Message(Message::Notification(n)) => n.method,
                Frame::Message(other) => format!("{other:?}"),
                Frame::Malformed(why) => format!("malformed: {}", why.split(':').next().unwrap()),
                Frame::UnreadableId(id) => format!("id {id}"),
            });
        }
        out
    }

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn bad_frames_are_reported_and_reading_goes_on() {
        let mut input = frame(br#"{"jsonrpc":"2.0","method":"a"}"#);
        input.extend(frame(b"{not json"));
        input.extend(frame(b"{\"jsonrpc\":\"2.0\",\"method\":\"b\xff\"}"));
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"c"}"#));
        assert_eq!(frames(&input), ["a", "malformed: not a JSON-RPC message", "b\u{fffd}", "c"]);
    }

    #[test]
    fn a_wrong_length_loses_no_later_message() {
        let a = br#"{"jsonrpc":"2.0","method":"a","params":{"text":"} ] \" {"}}"#;
        let b = br#"{"jsonrpc":"2.0","method":"b"}"#;
        // Too large: the body ends with its value, the next frame is read.
        let mut input = format!("Content-Length: {}\r\n\r\n", a.len() + 40).into_bytes();
        input.extend_from_slice(a);
        input.extend(frame(b));
        assert_eq!(frames(&input), ["a", "b"]);
        // Too small: the cut body is malformed, the next header is found
        // after its rest.
        let mut input = format!("Content-Length: {}\r\n\r\n", a.len() - 9).into_bytes();
        input.extend_from_slice(a);
        input.extend(frame(b));
        assert_eq!(frames(&input), ["malformed: not a JSON-RPC message", "b"]);
    }

    #[test]
    fn a_request_whose_id_is_not_an_lsp_id_keeps_its_id() {
        let mut input = Vec::new();
        for id in ["4294967296", "1.5", "null"] {
            input.extend(frame(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"shutdown"}}"#).as_bytes()));
        }
        let mut reader = io::BufReader::new(&input[..]);
        let mut ids = Vec::new();
        while let Some(frame) = read(&mut reader).unwrap() {
            match frame {
                Frame::UnreadableId(id) => ids.push(id.to_string()),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(ids, ["4294967296", "1.5", "null"]);
    }

    #[test]
    fn a_huge_length_is_skipped_not_allocated() {
        let mut input = b"Content-Length: 1001\r\n\r\n".to_vec();
        input.extend(std::iter::repeat_n(b' ', 1001));
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"after"}"#));
        assert_eq!(frames(&input), ["malformed: a message of 1001 bytes; the limit is 1000", "after"]);
        let truncated = b"Content-Length: 99999999999\r\n\r\n{}";
        assert!(frames(truncated).is_empty(), "the end of the input ends it");
    }
}
