//! The verifier, one case per invariant of `src/verify.rs`'s module doc.
//!
//! `verify/base.bundle.json` is a valid bundle (compiled by `rulec
//! compile` from `verify/base.yaml`: `ir` cannot depend on the frontend).
//! Each case `verify/NN_<invariant>_<what>.json` is a list of edits to it,
//! `[{"at": "/contract/channels/1", "set": "web"}]`, that break invariant
//! NN and only it: `at` is a JSON pointer, `set` the new value, and a last
//! segment `-` appends to an array (the value is inserted as the case
//! writes it, keys in its order). The test applies the edits to the
//! bundle's text, loads it with [`ir::Bundle::from_json`] and snapshots
//! the error, which must be the verifier's.
//!
//! The hash: an edited bundle no longer matches its stored hash. The
//! loader happens to verify before it compares hashes, but a case should
//! not rely on that order, so the test reseals each edited bundle: the
//! hash is the sha256 of the canonical form (the document, compact, with
//! an empty `hash`), which for a bundle laid out as the compiler writes
//! it is the text without the whitespace outside strings. The base
//! checks that this gives the hash the compiler wrote.
//!
//! Every numbered invariant of the module doc must have a case, and every
//! case must name an invariant of the doc, under the doc's title.

use std::path::Path;

use sha2::{Digest, Sha256};

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/verify"))
}

fn base() -> String {
    std::fs::read_to_string(dir().join("base.bundle.json")).expect("the base bundle is readable")
}

/// The invariants of the verifier's module doc: number and file-name
/// form of the title (`10. **Lets and rules**` gives `10_lets_and_rules`).
fn invariants() -> Vec<String> {
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/verify/mod.rs")).unwrap();
    let mut out = Vec::new();
    for line in source.lines().map_while(|l| l.strip_prefix("//!")) {
        let Some((number, rest)) = line.trim_start().split_once(". **") else { continue };
        let (Ok(number), Some((title, _))) = (number.parse::<u32>(), rest.split_once("**")) else { continue };
        out.push(format!("{number:02}_{}", title.to_lowercase().replace(' ', "_")));
    }
    out
}

#[test]
fn the_base_is_valid_and_the_test_reseals_it_as_the_compiler_sealed_it() {
    let text = base();
    let bundle = ir::Bundle::from_json(text.as_bytes()).expect("the base bundle loads");
    assert_eq!(content_hash(&text), bundle.hash(), "the reseal's hash is the compiler's");
}

/// Edits that keep the contract valid (a replaced and an appended value)
/// load once resealed, and are refused for their hash when not: so the
/// cases reach the verifier with a right hash.
#[test]
fn a_valid_edit_loads_once_resealed() {
    let text = set(&base(), "/contract/tests/0/name", "\"renamed\"");
    let text = set(&text, "/contract/channels/-", "\"pos\"");
    let stale = ir::Bundle::from_json(text.as_bytes()).expect_err("the stored hash is stale");
    assert!(stale.message.contains("does not match its hash"), "{stale}");
    let resealed = set(&text, "/hash", &serde_json::to_string(&content_hash(&text)).unwrap());
    let bundle = ir::Bundle::from_json(resealed.as_bytes()).expect("the resealed bundle loads");
    assert_eq!(bundle.contract().channels, ["web", "app", "pos"]);
}

#[test]
fn every_invariant_has_a_case() {
    let invariants = invariants();
    assert!(invariants.len() >= 12, "the module doc lists the invariants: {invariants:?}");
    let cases: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && n != "base.bundle.json")
        .collect();
    for invariant in &invariants {
        assert!(
            cases.iter().any(|c| c.starts_with(&format!("{invariant}_"))),
            "invariant {invariant} has no case `verify/{invariant}_<what>.json`"
        );
    }
    for case in &cases {
        assert!(
            invariants.iter().any(|i| case.starts_with(&format!("{i}_"))),
            "{case} names no invariant of the verifier's doc ({invariants:?})"
        );
    }
}

#[test]
fn each_case_breaks_its_invariant() {
    insta::glob!("verify/[0-9]*.json", |path| {
        let shown = check(path);
        insta::assert_snapshot!(shown);
    });
}

/// Applies a case's edits to the base, reseals it and loads it; returns
/// the edits and the error, as the snapshot shows them.
fn check(path: &Path) -> String {
    let case = std::fs::read_to_string(path).unwrap();
    let edits: Vec<serde_json::Value> = serde_json::from_str(&case).expect("a case is a list of edits");
    let mut text = base();
    let mut shown = String::new();
    for (n, edit) in edits.iter().enumerate() {
        let (Some(at), Some(_)) = (edit["at"].as_str(), edit.get("set")) else {
            panic!("{}: an edit is {{\"at\": pointer, \"set\": value}}", path.display())
        };
        // The value as the case writes it, so its keys keep their order.
        let (range, _) = locate(&case, &format!("/{n}/set"));
        let value = &case[range];
        text = set(&text, at, value);
        shown.push_str(&format!("set {at} = {value}\n"));
    }
    let hash = content_hash(&text);
    let text = set(&text, "/hash", &serde_json::to_string(&hash).unwrap());
    let error = match ir::Bundle::from_json(text.as_bytes()) {
        Ok(_) => panic!("{}: the edited bundle loads", path.display()),
        Err(e) => e.message,
    };
    assert!(
        error.starts_with("the contract fails verification: "),
        "{}: refused before the verifier: {error}",
        path.display()
    );
    shown.push_str(&error);
    shown.push('\n');
    shown
}

/// `sha256:<hex>` of the canonical form of a bundle's text.
fn content_hash(text: &str) -> String {
    let canonical = set(&compact(text), "/hash", "\"\"");
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The JSON text without whitespace outside strings.
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c.is_ascii_whitespace() {
            continue;
        } else {
            in_string = c == '"';
        }
        out.push(c);
    }
    out
}

/// `text` with the value at JSON pointer `at` replaced by `value` (JSON
/// text), or `value` appended to the array when the last segment is `-`.
fn set(text: &str, at: &str, value: &str) -> String {
    let (range, separator) = locate(text, at);
    let separator = separator.replace("{key}", at.rsplit('/').next().unwrap_or_default());
    format!("{}{separator}{value}{}", &text[..range.start], &text[range.end..])
}

/// Where the value at JSON pointer `at` is in `text`; for a last segment
/// `-`, the empty range after an array's last element, and the separator
/// an appended element needs; for a last segment an object lacks (a
/// section a bundle leaves out when empty), the empty range before its
/// `}` and the separator with the member's `{key}`.
fn locate(text: &str, at: &str) -> (std::ops::Range<usize>, &'static str) {
    let bytes = text.as_bytes();
    let mut start = skip_space(bytes, 0);
    let segments: Vec<&str> = at.split('/').skip(1).collect();
    for (n, segment) in segments.iter().enumerate() {
        match bytes[start] {
            b'{' => {
                let mut i = skip_space(bytes, start + 1);
                loop {
                    assert_eq!(bytes[i], b'"', "{at}: no member `{segment}`");
                    let key_end = value_end(bytes, i);
                    let key: String = serde_json::from_str(&text[i..key_end]).unwrap();
                    i = skip_space(bytes, key_end);
                    assert_eq!(bytes[i], b':');
                    i = skip_space(bytes, i + 1);
                    if key == segment.replace("~1", "/").replace("~0", "~") {
                        break;
                    }
                    i = skip_space(bytes, value_end(bytes, i));
                    if bytes[i] == b'}' && n + 1 == segments.len() {
                        return (i..i, ", \"{key}\": ");
                    }
                    assert_eq!(bytes[i], b',', "{at}: no member `{segment}`");
                    i = skip_space(bytes, i + 1);
                }
                start = i;
            }
            b'[' if *segment == "-" && n + 1 == segments.len() => {
                let inside = text[start + 1..value_end(bytes, start) - 1].trim_end();
                let end = start + 1 + inside.len();
                return (end..end, if inside.trim().is_empty() { "" } else { ", " });
            }
            b'[' => {
                let index: usize =
                    segment.parse().unwrap_or_else(|_| panic!("{at}: `{segment}` is no index"));
                let mut i = skip_space(bytes, start + 1);
                for _ in 0..index {
                    assert_ne!(bytes[i], b']', "{at}: index {index} is past the end");
                    i = skip_space(bytes, value_end(bytes, i));
                    assert_eq!(bytes[i], b',', "{at}: index {index} is past the end");
                    i = skip_space(bytes, i + 1);
                }
                assert_ne!(bytes[i], b']', "{at}: index {index} is past the end");
                start = i;
            }
            _ => panic!("{at}: `{segment}` is inside a scalar"),
        }
    }
    (start..value_end(bytes, start), "")
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The end of the JSON value that starts at `start`.
fn value_end(bytes: &[u8], start: usize) -> usize {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                if depth == 0 {
                    return i + 1;
                }
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b',' | b'}' | b']' if depth == 0 => return i,
            c if depth == 0 && c.is_ascii_whitespace() => return i,
            _ => {}
        }
    }
    bytes.len()
}
