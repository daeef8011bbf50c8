//! Timestamp literals are read by the one strict RFC 3339 parser every
//! stage shares: each case of `ir/tests/timestamps.tsv` as a
//! `timestamp("...")` call on a literal and as a table value, both
//! checked at compile time and located at the literal.

#[path = "../../ir/tests/common/timestamp_cases.rs"]
mod timestamp_cases;
use timestamp_cases::cases;

fn contract(text: &str) -> String {
    format!(
        "contract: a.b\nversion: 1.0.0\ninput: {{ at: timestamp }}\ntables:\n  due: {{ key: string, value: timestamp, rows: {{ a: \"{text}\" }} }}\nrules:\n  - id: r\n    when: 'at > timestamp(\"{text}\") && at > due[\"a\"]'\n    deny: no\n"
    )
}

#[test]
fn timestamp_literals_read_the_cases() {
    for (text, expected) in cases() {
        let compiled = frontend::compile_file("timestamps.yaml", &contract(&text));
        let shown = compiled.diagnostics.render(false);
        match expected {
            Ok(utc) => {
                let bundle = compiled.bundle.unwrap_or_else(|| panic!("{text}: {shown}"));
                let printed = ir::print::print(bundle.contract());
                let literal = format!("timestamp({utc:?})");
                assert_eq!(printed.matches(&literal).count(), 2, "{text}: {printed}");
            }
            Err(part) => {
                // A table value that does not read as its type is E0201,
                // with the reason under the value; a literal's is E0302.
                let message = format!("timestamp {text:?}: {part}");
                let codes: Vec<&str> = compiled.diagnostics.items.iter().map(|d| d.code.id()).collect();
                assert_eq!(codes, ["E0201", "E0302"], "{text}: {shown}");
                assert_eq!(shown.matches(&message).count(), 2, "{text}: {shown}");
                assert!(
                    shown.contains("timestamps.yaml:5:") && shown.contains("timestamps.yaml:8:"),
                    "{shown}"
                );
            }
        }
    }
}
