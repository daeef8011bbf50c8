//! The base protocol: `Content-Length` framed JSON-RPC messages. Read here
//! rather than by `lsp_server::Message::read`, which allocates whatever
//! length a header claims and ends the session at a body that is not
//! UTF-8: a frame that is too large is skipped, invalid UTF-8 becomes
//! U+FFFD, and a body that is not a message is answered as a parse error.
//! Only the end of the input (or a header that cannot be framed) ends it.

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
    let mut body = Vec::with_capacity(length.min(1 << 20));
    input.take(length as u64).read_to_end(&mut body)?;
    if body.len() < length {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&body);
    Ok(Some(match serde_json::from_str::<Message>(&text) {
        Ok(message) => Frame::Message(message),
        Err(e) => Frame::Malformed(format!("not a JSON-RPC message: {e}")),
    }))
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
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
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
    fn a_huge_length_is_skipped_not_allocated() {
        let mut input = b"Content-Length: 1001\r\n\r\n".to_vec();
        input.extend(std::iter::repeat_n(b' ', 1001));
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"after"}"#));
        assert_eq!(frames(&input), ["malformed: a message of 1001 bytes; the limit is 1000", "after"]);
        let truncated = b"Content-Length: 99999999999\r\n\r\n{}";
        assert!(frames(truncated).is_empty(), "the end of the input ends it");
    }
}
