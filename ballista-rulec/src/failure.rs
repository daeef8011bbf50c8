//! A failed cluster query, said in a sentence: Ballista hands the client
//! its errors as the Debug text of nested values
//! (`DataFusionError(Shared(External(DataFusionError(Plan("...")))))`,
//! `Status { code: ..., message: "...", metadata: MetadataMap {...} }`),
//! and the scheduler's loss as `h2 protocol error`. The client shows the
//! innermost message, with the job it failed in, and a lost connection
//! as such.

/// The error variants whose text is the message (`Plan("...")`).
const MESSAGES: &[&str] =
    &["Plan(\"", "Execution(\"", "Internal(\"", "Configuration(\"", "NotImplemented(\"", "message: \""];

/// What the words of a transport failure start with.
const TRANSPORT: &[&str] =
    &["h2 protocol error", "transport error", "error trying to connect", "broken pipe"];

/// `message` (a cluster query's error) as the client says it; `url` is
/// the scheduler's.
pub fn readable(message: &str, url: &str) -> String {
    let lower = message.to_ascii_lowercase();
    if let Some(start) = TRANSPORT.iter().filter_map(|w| lower.find(w)).min() {
        let detail = first_clause(&message[start..]);
        return format!("lost the connection to the scheduler at {url} while the query ran: {detail}");
    }
    let Some(inner) = innermost(message) else { return message.to_string() };
    match job(message) {
        Some(job) => format!("the query failed on the cluster (job {job}): {inner}"),
        None => inner,
    }
}

/// The last message of a known variant in `text`, unescaped.
fn innermost(text: &str) -> Option<String> {
    let (at, prefix) =
        MESSAGES.iter().filter_map(|p| text.rfind(p).map(|at| (at, p))).max_by_key(|(at, _)| *at)?;
    debug_string(&text[at + prefix.len()..])
}

/// A Debug-escaped string's text, up to its closing quote.
fn debug_string(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// The job a message names (`Job 038JJSDMMG000 failed`).
fn job(message: &str) -> Option<&str> {
    let rest = &message[message.find("Job ")? + 4..];
    rest.split_whitespace().next()
}

/// `text` up to its first comma or quote.
fn first_clause(text: &str) -> String {
    text.split([',', '"']).next().unwrap_or(text).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn messages_are_unwrapped() {
        let cases = [
            (
                r#"Execution error: Job 038JJSDMMG000 failed: Job failed due to stage 0 failed: Task failed due to runtime execution error: DataFusionError(Shared(External(DataFusionError(Plan("contract `t`: planned against \"a\" but holds b")))))"#,
                "the query failed on the cluster (job 038JJSDMMG000): contract `t`: planned against \"a\" but holds b",
            ),
            (
                r#"Execution error: code: 'Unknown error', message: "h2 protocol error: error reading a body from connection", source: hyper::Error(Body)"#,
                "lost the connection to the scheduler at df://h:1 while the query ran: h2 protocol error: error reading a body from connection",
            ),
            (
                r#"Status { code: Internal, message: "the query writes files (COPY), and a cluster only reads", metadata: MetadataMap { headers: {} } }"#,
                "the query writes files (COPY), and a cluster only reads",
            ),
            ("Error during planning: no such table", "Error during planning: no such table"),
        ];
        for (message, said) in cases {
            assert_eq!(readable(message, "df://h:1"), said, "{message}");
        }
    }
}
