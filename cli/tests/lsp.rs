//! `rulec lsp` as an editor runs it: a process spoken to in JSON-RPC over
//! its stdio. Diagnostics on open and change are `rulec check`'s (codes,
//! messages, ranges); hover, definition, completion and formatting answer;
//! bad frames, early and unknown requests are answered, not fatal; a
//! seeded fuzz of edits (half-typed text, a huge file, invalid UTF-8)
//! leaves it answering; `shutdown` then `exit` ends it with code 0.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};
use support::root;

/// An editor's side of the session.
struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
    /// Notifications that arrived while waiting for a response.
    held: Vec<Value>,
}

const URI: &str = "file:///contracts/transfer.yaml";
const WAIT: Duration = Duration::from_secs(60);

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rulec"))
            .arg("lsp")
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("rulec lsp starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            while let Some(message) = read_frame(&mut stdout) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        Client { child, stdin, messages, next_id: 1, held: Vec::new() }
    }

    fn send_bytes(&mut self, body: &[u8]) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send_bytes(
            json!({ "jsonrpc": "2.0", "method": method, "params": params }).to_string().as_bytes(),
        );
    }

    /// Sends a request and waits for its response (result or error).
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_bytes(body.to_string().as_bytes());
        self.response(json!(id))
    }

    fn response(&mut self, id: Value) -> Value {
        loop {
            let message = self.messages.recv_timeout(WAIT).expect("the server answers");
            if message.get("method").is_some() {
                self.held.push(message);
            } else if message["id"] == id {
                return message;
            }
        }
    }

    fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// The next diagnostics published for `uri` at `version`.
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let matches = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        };
        if let Some(at) = self.held.iter().position(matches) {
            return self.held.remove(at)["params"]["diagnostics"].as_array().unwrap().clone();
        }
        loop {
            let message = self.messages.recv_timeout(WAIT).expect("diagnostics are published");
            if matches(&message) {
                return message["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    fn initialize(&mut self) -> Value {
        self.initialize_with(json!({}))
    }

    fn initialize_with(&mut self, capabilities: Value) -> Value {
        let params = json!({ "processId": null, "rootUri": null, "capabilities": capabilities });
        let result = self.result("initialize", params);
        self.notify("initialized", json!({}));
        result
    }

    fn open(&mut self, uri: &str, text: &str) {
        let document = json!({ "uri": uri, "languageId": "yaml", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": document }));
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) {
        let params = json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] });
        self.notify("textDocument/didChange", params);
    }

    /// `shutdown`, `exit`, and the process's exit code.
    fn stop(mut self) -> Option<i32> {
        assert_eq!(self.result("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        wait(&mut self.child)
    }
}

fn wait(child: &mut Child) -> Option<i32> {
    for _ in 0..600 {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    panic!("rulec lsp did not exit");
}

fn read_frame(input: &mut impl BufRead) -> Option<Value> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn transfer() -> String {
    std::fs::read_to_string(root().join("examples/contracts/acme.payments.transfer.yaml")).unwrap()
}

/// The position (0-based line, UTF-16 column) of the `nth` occurrence of
/// `needle` in `text`, plus `delta` columns.
fn position(text: &str, needle: &str, nth: usize, delta: usize) -> Value {
    position_in(text, needle, nth, delta, utf16)
}

/// As [`position`], the column counted in `units` of the line before it.
fn position_in(text: &str, needle: &str, nth: usize, delta: usize, units: fn(&str) -> usize) -> Value {
    let at = text.match_indices(needle).nth(nth).unwrap_or_else(|| panic!("{needle} #{nth}")).0;
    let line = text[..at].matches('\n').count();
    let column = units(&text[text[..at].rfind('\n').map_or(0, |n| n + 1)..at]) + delta;
    json!({ "line": line, "character": column })
}

fn utf16(text: &str) -> usize {
    text.encode_utf16().count()
}

fn at(text: &str, needle: &str, nth: usize) -> Value {
    json!({ "textDocument": { "uri": URI }, "position": position(text, needle, nth, 1) })
}

/// `rulec check --format json`'s diagnostics for `text`, as (code,
/// message, range) the protocol's way (0-based lines and columns).
fn checked(text: &str) -> Vec<(String, String, Value)> {
    let folder = std::env::temp_dir().join(format!("rulec-lsp-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("transfer.yaml");
    std::fs::write(&file, text).unwrap();
    let out = support::rulec().args(["check", "--format", "json"]).arg(&file).output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let d: Value = serde_json::from_str(line).unwrap();
            let point = |l: &Value, c: &Value| json!({ "line": l.as_u64().unwrap() - 1, "character": c.as_u64().unwrap() - 1 });
            let range = json!({ "start": point(&d["line"], &d["column"]), "end": point(&d["end_line"], &d["end_column"]) });
            (d["code"].as_str().unwrap().to_string(), d["message"].as_str().unwrap().to_string(), range)
        })
        .collect()
}

#[test]
fn a_session_as_an_editor_has_it() {
    let mut client = Client::start();
    let capabilities = client.initialize()["capabilities"].clone();
    assert_eq!(capabilities["textDocumentSync"], 1, "full sync");
    for provider in [
        "hoverProvider",
        "definitionProvider",
        "completionProvider",
        "documentFormattingProvider",
        "documentSymbolProvider",
        "referencesProvider",
        "renameProvider",
        "codeActionProvider",
        "semanticTokensProvider",
        "signatureHelpProvider",
        "documentHighlightProvider",
        "inlayHintProvider",
    ] {
        assert!(!capabilities[provider].is_null(), "{provider}: {capabilities}");
    }

    // Open with two errors: the diagnostics are `rulec check`'s, all at once.
    let good = transfer();
    let broken = good
        .replacen("when: amount_eur > limit.single", "when: amount_eurr > limit.single", 1)
        .replacen("severity: warning", "severity: severe", 1);
    client.open(URI, &broken);
    let published = client.diagnostics(URI, 1);
    let expected = checked(&broken);
    assert_eq!(expected.len(), 2, "{expected:?}");
    let got: Vec<(String, String, Value)> = published
        .iter()
        .map(|d| {
            (d["code"].as_str().unwrap().into(), d["message"].as_str().unwrap().into(), d["range"].clone())
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(published[0]["source"], "rulec");

    // The fix clears them.
    client.change(URI, 2, &good);
    assert_eq!(client.diagnostics(URI, 2), Vec::<Value>::new());

    // Hover: an input field, a nested one, a let, a table, a built-in.
    let mut hover = |needle: &str, delta: usize, shows: &str| {
        let place = json!({ "textDocument": { "uri": URI }, "position": position(&good, needle, 0, delta) });
        let shown = client.result("textDocument/hover", place)["contents"]["value"].clone();
        assert!(shown.as_str().unwrap_or_default().contains(shows), "{needle}: {shown}");
    };
    hover("amount * fx", 1, "amount: decimal");
    hover("country != destination", 1, "source.country: string");
    hover("amount_eur > limit.single", 1, "amount_eur: decimal = round(");
    hover("amount_eur > limit.single", 20, "limit.single: decimal");
    hover("fx_to_eur[", 1, "fx_to_eur: string -> decimal (4 rows)");
    hover("round(", 1, "round(x, places)");
    hover("  amount_eur: round", 3, "amount_eur: decimal");

    // Definition: a let's use goes to its declaration.
    let location = client.result("textDocument/definition", at(&good, "amount_eur > limit.single", 0));
    assert_eq!(location["uri"], URI);
    assert_eq!(location["range"]["start"], position(&good, "amount_eur: round", 0, 0));

    // Completion: the fields of a record after `.`, names, keys.
    let labels = |v: Value| -> Vec<String> {
        v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect()
    };
    let typing = good.replacen("cross_border: source.country", "cross_border: source.", 1);
    client.change(URI, 3, &typing);
    let after_dot = json!({ "textDocument": { "uri": URI }, "position": position(&typing, "source.", 2, 7) });
    let fields = labels(client.result("textDocument/completion", after_dot));
    assert_eq!(fields, ["account", "country", "account_age_days", "kyc_level"]);
    let names = labels(client.result("textDocument/completion", at(&good, "amount * fx", 0)));
    for name in ["amount", "amount_eur", "fx_to_eur", "round", "any"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }
    let new_key = good.replacen("    component: limits\n", "    component: limits\n    wh\n", 1);
    client.change(URI, 4, &new_key);
    let keys = json!({ "textDocument": { "uri": URI }, "position": position(&new_key, "    wh\n", 0, 6) });
    assert!(labels(client.result("textDocument/completion", keys)).contains(&"when".to_string()));

    // Formatting: `rulec fmt`'s text, as one edit.
    client.change(URI, 5, "contract: acme.x\nversion: 1.0.0\ninput:\n    amount: decimal\nrules: []\n");
    let edits = client.result(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": URI }, "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    assert_eq!(
        edits[0]["newText"],
        "contract: acme.x\nversion: 1.0.0\n\ninput:\n  amount: decimal\n\nrules: []\n"
    );

    // A column of a table's rows, looked up directly.
    let column = good.replacen(
        "when: amount_eur > limit.single",
        "when: amount_eur > limits[source.kyc_level].single",
        1,
    );
    client.change(URI, 6, &column);
    assert_eq!(client.diagnostics(URI, 6), Vec::<Value>::new());
    let place = json!({ "textDocument": { "uri": URI }, "position": position(&column, "].single", 0, 3) });
    let shown = client.result("textDocument/hover", place)["contents"]["value"].clone();
    assert!(shown.as_str().unwrap().contains("limits[…].single: decimal"), "{shown}");
    assert_eq!(client.stop(), Some(0));
}

/// Columns are counted in UTF-8 when the client offers it, else UTF-32,
/// else UTF-16, in both directions: diagnostics and hover ranges it sends,
/// positions it is sent. The line holds characters of 2, 3 and 4 bytes
/// (one and two UTF-16 units) before the names looked at.
#[test]
fn columns_are_counted_in_the_encoding_the_client_asks_for() {
    let text = transfer().replacen(
        "when: amount_eur > limit.single",
        "when: source.country != \"é€😀\" && amount_eurr > limit.single",
        1,
    );
    let bytes: fn(&str) -> usize = str::len;
    let chars: fn(&str) -> usize = |s| s.chars().count();
    for (offered, chosen, units) in [
        (json!(["utf-16", "utf-8"]), "utf-8", bytes),
        (json!(["ebcdic", "utf-32"]), "utf-32", chars),
        (json!(["ebcdic"]), "utf-16", utf16),
        (json!("utf-8"), "utf-16", utf16),
    ] {
        let mut client = Client::start();
        let general = json!({ "general": { "positionEncodings": offered } });
        let result = client.initialize_with(general);
        assert_eq!(result["capabilities"]["positionEncoding"], chosen, "{offered}");
        client.open(URI, &text);
        let diagnostics = client.diagnostics(URI, 1);
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(
            diagnostics[0]["range"]["start"],
            position_in(&text, "amount_eurr", 0, 0, units),
            "{chosen}"
        );
        assert_eq!(
            diagnostics[0]["range"]["end"],
            position_in(&text, " > limit.single", 0, 0, units),
            "{chosen}"
        );
        let place = json!({ "textDocument": { "uri": URI }, "position": position_in(&text, "limit.single", 0, 8, units) });
        let hover = client.result("textDocument/hover", place);
        assert!(hover["contents"]["value"].as_str().unwrap().contains("limit.single"), "{chosen}: {hover}");
        // The field's name, to the end of the line.
        let range = json!({ "start": position_in(&text, "limit.single", 0, 6, units), "end": position_in(&text, "\n", 70, 0, units) });
        assert_eq!(hover["range"], range, "{chosen}: {hover}");
        assert_eq!(client.stop(), Some(0));
    }
}

/// The ranges of every whole-word `name` in `text`.
fn words(text: &str, name: &str) -> Vec<Value> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let at = text
        .match_indices(name)
        .filter(|(i, _)| !text[..*i].ends_with(word) && !text[i + name.len()..].starts_with(word));
    at.map(|(i, _)| {
        let nth = text[..i].matches(name).count();
        json!({ "start": position(text, name, nth, 0), "end": position(text, name, nth, name.len()) })
    })
    .collect()
}

/// `text` with `edits` (a rename's, of one document) applied.
fn apply(text: &str, edits: &Value) -> String {
    let offset = |p: &Value| {
        let line = p["line"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        start
            + text[start..]
                .chars()
                .take(p["character"].as_u64().unwrap() as usize)
                .map(char::len_utf8)
                .sum::<usize>()
    };
    let mut edits: Vec<(usize, usize, String)> = edits
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut text = text.to_string();
    for (start, end, new) in edits {
        text.replace_range(start..end, &new);
    }
    text
}

/// References and rename, as the checker resolves names: a let's uses in
/// conditions, messages and effects; a rule's id in an expression and in
/// tests' `reasons`; a lambda's parameter is not the input field it
/// shadows. The renamed contract compiles; a rename that cannot be done
/// says why.
#[test]
fn references_and_rename_follow_the_names() {
    let mut client = Client::start();
    client.initialize();
    let text = transfer().replacen(
        "when: cross_border && amount_eur > 1000",
        "when: cross_border && amount_eur > 1000 && !any(tags, amount => amount == \"x\")",
        1,
    );
    client.open(URI, &text);
    assert_eq!(client.diagnostics(URI, 1), Vec::<Value>::new());
    let at = |needle: &str, nth: usize, delta: usize| json!({ "textDocument": { "uri": URI }, "position": position(&text, needle, nth, delta) });
    let with = |place: Value, more: Value| {
        let mut place = place;
        place.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
        place
    };
    let ranges =
        |v: Value| -> Vec<Value> { v.as_array().unwrap().iter().map(|l| l["range"].clone()).collect() };

    // A let: every use, and its declaration when asked for.
    let uses =
        with(at("amount_eur > limit.single", 0, 2), json!({ "context": { "includeDeclaration": true } }));
    let found = ranges(client.result("textDocument/references", uses));
    assert_eq!(found, words(&text, "amount_eur"));
    assert_eq!(found.len(), 11);
    let without =
        with(at("amount_eur > limit.single", 0, 2), json!({ "context": { "includeDeclaration": false } }));
    assert_eq!(ranges(client.result("textDocument/references", without)), words(&text, "amount_eur")[1..]);

    // An input field: not the lambda's parameter of the same name, nor
    // the tests' inputs (data, not names).
    let field = with(at("amount: decimal", 0, 1), json!({ "context": { "includeDeclaration": true } }));
    let found = ranges(client.result("textDocument/references", field));
    let lambda = position(&text, "amount => amount", 0, 0)["line"].clone();
    let tests = position(&text, "\ntests:", 0, 0)["line"].as_u64().unwrap();
    let expected: Vec<Value> = words(&text, "amount")
        .into_iter()
        .filter(|r| r["start"]["line"] != lambda && r["start"]["line"].as_u64().unwrap() < tests)
        .collect();
    assert_eq!(found, expected);
    assert_eq!(found.len(), 7);

    // Rename a let: the edits are every use; the renamed text compiles.
    assert_eq!(
        client.result("textDocument/prepareRename", at("amount_eur > limit.single", 0, 2)),
        words(&text, "amount_eur")[1]
    );
    let renamed = client.result(
        "textDocument/rename",
        with(at("amount_eur > limit.single", 0, 2), json!({ "newName": "amount_in_eur" })),
    );
    let edits = renamed["changes"][URI].clone();
    assert_eq!(edits.as_array().unwrap().len(), 11);
    let new_text = apply(&text, &edits);
    assert_eq!(new_text, text.replace("amount_eur", "amount_in_eur"));
    client.change(URI, 2, &new_text);
    assert_eq!(client.diagnostics(URI, 2), Vec::<Value>::new());

    // A rule read by another rule's condition.
    let rule = with(at("id: new_account_large", 0, 5), json!({ "newName": "young_account_large" }));
    let edits = client.result("textDocument/rename", rule)["changes"][URI].clone();
    assert_eq!(apply(&new_text, &edits), new_text.replace("new_account_large", "young_account_large"));
    assert_eq!(edits.as_array().unwrap().len(), 2);

    // What cannot be renamed, or to what, is refused with the reason.
    let mut refused = |place: Value, says: &str| {
        let error = client.call("textDocument/rename", place)["error"].clone();
        assert_eq!(error["code"], -32803, "{error}");
        assert!(error["message"].as_str().unwrap().contains(says), "{error}");
    };
    let field = |name: &str| with(at("amount: decimal", 0, 1), json!({ "newName": name }));
    refused(field("total"), "requests");
    let a_let = |name: &str| json!({ "textDocument": { "uri": URI }, "position": position(&new_text, "cross_border:", 0, 1), "newName": name });
    refused(a_let("Cross"), "not a valid name");
    refused(a_let("rules"), "reserved");
    refused(a_let("true"), "reserved");
    refused(a_let("limit"), "taken: a let");
    refused(a_let("tags"), "taken: an input field");
    refused(
        json!({ "textDocument": { "uri": URI }, "position": { "line": 0, "character": 2 }, "newName": "x" }),
        "no name here",
    );
    let same = client.result("textDocument/rename", a_let("cross_border"));
    assert_eq!(apply(&new_text, &same["changes"][URI]), new_text, "the same name: the same text");
    assert_eq!(client.stop(), Some(0));
}

/// Hover on a key the language defines shows the description `rulec
/// schema` gives it, at the root, in a rule's finding and in an effect;
/// also while the YAML does not read.
#[test]
fn hover_on_a_key_describes_it() {
    let out = support::rulec().arg("schema").output().unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = transfer();
    let mut client = Client::start();
    client.initialize();
    client.open(URI, &text);
    let check = |client: &mut Client, text: &str, needle: &str, described: &Value| {
        let place = json!({ "textDocument": { "uri": URI }, "position": position(text, needle, 0, 1) });
        let hover = client.result("textDocument/hover", place);
        let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_string();
        assert!(shown.contains(described.as_str().unwrap()), "{needle}: {hover}");
        assert_eq!(hover["range"]["start"], position(text, needle, 0, 0), "{needle}");
    };
    check(&mut client, &text, "decision: deny-overrides", &schema["properties"]["decision"]["description"]);
    check(
        &mut client,
        &text,
        "severity:",
        &schema["definitions"]["finding"]["properties"]["severity"]["description"],
    );
    check(
        &mut client,
        &text,
        "combine: max",
        &schema["definitions"]["effect"]["anyOf"][0]["properties"]["combine"]["description"],
    );
    check(&mut client, &text, "on_error:", &schema["properties"]["on_error"]["description"]);
    let broken = format!("{text}\n  - [unclosed\n");
    client.change(URI, 2, &broken);
    check(&mut client, &broken, "decision: deny-overrides", &schema["properties"]["decision"]["description"]);
    assert_eq!(client.stop(), Some(0));
}

/// Signature help on a half-typed call: the innermost call's signature
/// and the argument the cursor is in; an extern's as declared.
#[test]
fn signature_help_follows_the_call_being_typed() {
    let good = transfer();
    let typing = good.replacen(
        "fee: max(round(amount_eur * 0.015, 2), 2.50)",
        "fee: max(round(amount_eur * 0.015, ",
        1,
    );
    let mut client = Client::start();
    let capabilities = client.initialize()["capabilities"].clone();
    assert_eq!(capabilities["signatureHelpProvider"]["triggerCharacters"], json!(["(", ","]));
    client.open(URI, &typing);
    let mut help = |text: &str, needle: &str, delta: usize| {
        let place = json!({ "textDocument": { "uri": URI }, "position": position(text, needle, 0, delta) });
        client.result("textDocument/signatureHelp", place)
    };
    let shown = help(&typing, "0.015, ", 7);
    assert_eq!(shown["signatures"][0]["label"], "round(x, places): decimal or float, int places");
    assert_eq!(shown["activeParameter"], 1);
    assert_eq!(shown["signatures"][0]["parameters"][1]["label"], json!([9, 15]));
    let shown = help(&typing, "max(round", 4);
    assert_eq!(shown["signatures"][0]["label"], "max(a, b, ...): values of one ordered type");
    assert_eq!(shown["activeParameter"], 0);
    assert_eq!(help(&typing, "fee: max", 4), Value::Null, "not in a call");
    assert_eq!(client.stop(), Some(0));
}

/// A "did you mean" becomes a quick fix: a misspelled let and a
/// misspelled key, fixed by their code actions, leave no diagnostics.
#[test]
fn did_you_mean_is_a_quick_fix() {
    let good = transfer();
    let text = good
        .replacen("when: amount_eur > limit.single", "when: amount_eurr > limit.single", 1)
        .replacen("    when: daily_total + amount_eur", "    whn: daily_total + amount_eur", 1);
    let mut client = Client::start();
    client.initialize();
    client.open(URI, &text);
    let published = client.diagnostics(URI, 1);
    assert_eq!(published.len(), 3, "{published:?}");
    let everything =
        json!({ "start": { "line": 0, "character": 0 }, "end": position(&text, "\ntests:", 0, 0) });
    let ask = |range: Value| json!({ "textDocument": { "uri": URI }, "range": range, "context": { "diagnostics": [] } });
    let actions = client.result("textDocument/codeAction", ask(everything));
    let titles: Vec<&str> =
        actions.as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Change to `amount_eur`", "Change to `when`"]);
    for action in actions.as_array().unwrap() {
        assert_eq!(action["kind"], "quickfix");
        assert_eq!(action["diagnostics"].as_array().unwrap().len(), 1);
    }
    let edits: Vec<Value> = actions
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["edit"]["changes"][URI].as_array().unwrap().clone())
        .collect();
    let fixed = apply(&text, &Value::Array(edits));
    assert_eq!(fixed, good);
    // Only the fixes whose diagnostic the range touches.
    let one = client.result(
        "textDocument/codeAction",
        ask(json!({ "start": position(&text, "whn", 0, 1), "end": position(&text, "whn", 0, 1) })),
    );
    assert_eq!(one.as_array().unwrap().len(), 1, "{one}");
    let none = client.result(
        "textDocument/codeAction",
        ask(json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 3 } })),
    );
    assert_eq!(none, json!([]));
    client.change(URI, 2, &fixed);
    assert_eq!(client.diagnostics(URI, 2), Vec::<Value>::new());
    assert_eq!(client.stop(), Some(0));
}

/// Semantic tokens: what each name in an expression is, from the legend
/// the server announced; a name that resolves to nothing has none.
#[test]
fn names_in_expressions_are_coloured_by_what_they_are() {
    let text = transfer().replacen("when: amount_eur > limit.single", "when: amount_eurr > limit.single", 1);
    let mut client = Client::start();
    let capabilities = client.initialize()["capabilities"]["semanticTokensProvider"].clone();
    let legend = |key: &str| -> Vec<String> {
        capabilities["legend"][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    let (types, modifiers) = (legend("tokenTypes"), legend("tokenModifiers"));
    client.open(URI, &text);
    let data =
        client.result("textDocument/semanticTokens/full", json!({ "textDocument": { "uri": URI } }))["data"]
            .clone();
    let data: Vec<u64> = data.as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect();
    assert_eq!(data.len() % 5, 0);
    // Decoded: (line, column, length) -> "type+modifier+...".
    let mut tokens = std::collections::HashMap::new();
    let (mut line, mut column) = (0, 0);
    for token in data.chunks(5) {
        line += token[0];
        column = if token[0] == 0 { column + token[1] } else { token[1] };
        let mut name = types[token[3] as usize].clone();
        for (bit, modifier) in modifiers.iter().enumerate() {
            if token[4] & (1 << bit) != 0 {
                name = format!("{name}+{modifier}");
            }
        }
        tokens.insert((line, column, token[2]), name);
    }
    let token = |needle: &str, nth: usize, delta: usize, length: u64| {
        let at = position(&text, needle, nth, delta);
        tokens.get(&(at["line"].as_u64().unwrap(), at["character"].as_u64().unwrap(), length)).cloned()
    };
    assert_eq!(token("amount_eurr > limit", 0, 0, 11), None, "an unknown name");
    assert_eq!(token("limit.single", 0, 0, 5).as_deref(), Some("variable+readonly"));
    assert_eq!(token("limit.single", 0, 6, 6).as_deref(), Some("property"), "a field of a let's record");
    assert_eq!(token("round(amount", 0, 0, 5).as_deref(), Some("function+defaultLibrary"));
    assert_eq!(token("amount * fx", 0, 0, 6).as_deref(), Some("parameter"));
    assert_eq!(token("fx_to_eur[currency]", 0, 0, 9).as_deref(), Some("struct"));
    assert_eq!(token("source.country !=", 0, 0, 6).as_deref(), Some("parameter"));
    assert_eq!(token("source.country !=", 0, 7, 7).as_deref(), Some("property"));
    assert_eq!(
        token("{amount_eur} EUR exceeds", 0, 1, 10).as_deref(),
        Some("variable+readonly"),
        "in a message"
    );
    assert_eq!(token("rules.new_account_large", 0, 0, 5).as_deref(), Some("namespace"));
    assert_eq!(token("rules.new_account_large", 0, 6, 17).as_deref(), Some("event"));
    assert_eq!(client.stop(), Some(0));
}

/// Inlay hints: each let's type after its value, from the text as it
/// is; highlights: a let's declaration written, its uses read.
#[test]
fn lets_show_their_types_and_uses() {
    let text = transfer();
    let mut client = Client::start();
    client.initialize();
    client.open(URI, &text);
    let whole = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 9999, "character": 0 } });
    let hints =
        client.result("textDocument/inlayHint", json!({ "textDocument": { "uri": URI }, "range": whole }));
    let shown: Vec<(Value, String)> = hints
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["position"].clone(), h["label"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(shown.len(), 4, "{hints}");
    assert_eq!(shown[0], (position(&text, "\n  limit:", 0, 0), "→ decimal".to_string()));
    assert_eq!(shown[2], (position(&text, "\n  new_account:", 0, 0), "→ bool".to_string()));
    assert!(shown[1].1.contains("single: decimal"), "{shown:?}");
    // A range holding one let's value: its hint only.
    let one = json!({ "start": position(&text, "cross_border:", 0, 0), "end": position(&text, "new_account:", 0, 0) });
    let hints =
        client.result("textDocument/inlayHint", json!({ "textDocument": { "uri": URI }, "range": one }));
    assert_eq!(hints.as_array().unwrap().len(), 1, "{hints}");
    // While the text does not compile: no types of an older version.
    let broken = text.replacen("amount_eur: round(", "amount_eur: rnd(", 1);
    client.change(URI, 2, &broken);
    let hints =
        client.result("textDocument/inlayHint", json!({ "textDocument": { "uri": URI }, "range": whole }));
    assert_eq!(hints, Value::Null);
    client.change(URI, 3, &text);
    let place =
        json!({ "textDocument": { "uri": URI }, "position": position(&text, "amount_eur > limit", 0, 1) });
    let highlights = client.result("textDocument/documentHighlight", place);
    let kinds: Vec<u64> =
        highlights.as_array().unwrap().iter().map(|h| h["kind"].as_u64().unwrap()).collect();
    assert_eq!(kinds.len(), 11);
    assert_eq!(kinds.iter().filter(|k| **k == 3).count(), 1, "one declaration: {highlights}");
    assert_eq!(highlights[0]["range"]["start"], position(&text, "amount_eur: round", 0, 0));
    assert_eq!(client.stop(), Some(0));
}

/// A rule's id in tests' `reasons` is renamed with it.
#[test]
fn a_rule_renamed_is_renamed_in_its_tests() {
    let text = std::fs::read_to_string(root().join("examples/contracts/acme.access.documents.yaml")).unwrap();
    let mut client = Client::start();
    client.initialize();
    client.open(URI, &text);
    assert_eq!(client.diagnostics(URI, 1), Vec::<Value>::new());
    let place = json!({ "textDocument": { "uri": URI }, "position": position(&text, "[department_rights]", 0, 3), "newName": "department_grants" });
    let edits = client.result("textDocument/rename", place)["changes"][URI].clone();
    let new_text = apply(&text, &edits);
    assert_eq!(new_text, text.replace("department_rights", "department_grants"));
    client.change(URI, 2, &new_text);
    assert_eq!(client.diagnostics(URI, 2), Vec::<Value>::new());
    assert_eq!(client.stop(), Some(0));
}

/// `text` with every whole-word `name` replaced by `new_name`.
fn replace_word(text: &str, name: &str, new_name: &str) -> String {
    let mut out = text.to_string();
    for range in words(text, name).iter().rev() {
        let edit = json!([{ "range": range, "newText": new_name }]);
        out = apply(&out, &edit);
    }
    out
}

/// A rename the server accepts leaves the contract compiling and its
/// tests passing (`rulec test` on the renamed file): effects are renamed
/// in tests' `expect.effects`, lets in `expect.errors`. A rename that
/// would change what a name means (a lambda's parameter taking over a
/// let's or a table's place) is refused with the reason.
#[test]
fn a_rename_keeps_the_contract_and_its_tests() {
    let text = std::fs::read_to_string(root().join("cli/tests/data/lsp/rename.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start();
    client.initialize();
    client.open(URI, &text);
    assert_eq!(client.diagnostics(URI, 1), Vec::<Value>::new());
    let at = |needle: &str, new_name: &str| json!({ "textDocument": { "uri": URI }, "position": position(&text, needle, 0, 1), "newName": new_name });
    let accepted = [("hold_hours: {", "hold_hours", "hours_held"), ("ratio: amount", "ratio", "share")];
    for (needle, name, new_name) in accepted {
        let edits = client.result("textDocument/rename", at(needle, new_name))["changes"][URI].clone();
        let new_text = apply(&text, &edits);
        assert_eq!(new_text, replace_word(&text, name, new_name), "{name} to {new_name}");
        let file = dir.path().join(format!("{new_name}.yaml"));
        std::fs::write(&file, &new_text).unwrap();
        let tested = support::rulec().arg("test").arg(&file).output().unwrap();
        assert!(tested.status.success(), "{name} to {new_name}: {}", String::from_utf8_lossy(&tested.stdout));
        let references = json!({ "textDocument": { "uri": URI }, "position": position(&text, needle, 0, 1), "context": { "includeDeclaration": true } });
        let found = client.result("textDocument/references", references);
        assert_eq!(
            found.as_array().unwrap().len(),
            words(&text, name).len(),
            "{name}: every place is a reference"
        );
    }
    let refused = [
        ("banned: '", "t", "would name something else at line 18"),
        ("bad:\n", "t", "would break the contract: `in` needs a list or a table"),
    ];
    for (needle, new_name, says) in refused {
        let error = client.call("textDocument/rename", at(needle, new_name))["error"].clone();
        assert_eq!(error["code"], -32803, "{needle}: {error}");
        assert!(error["message"].as_str().unwrap().contains(says), "{needle}: {error}");
    }
    assert_eq!(client.stop(), Some(0));
}

/// The outline: the contract's sections in the language's order, each
/// with its declarations in the file's; a declaration's name is its
/// selection.
#[test]
fn the_outline_lists_every_declaration() {
    let mut client = Client::start();
    client.initialize();
    let text = transfer();
    client.open(URI, &text);
    let outline = client.result("textDocument/documentSymbol", json!({ "textDocument": { "uri": URI } }));
    let names = |v: &Value| -> Vec<String> {
        v.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(names(&outline), ["input", "tables", "effects", "let", "rules", "tests"]);
    let section =
        |name: &str| outline.as_array().unwrap().iter().find(|s| s["name"] == name).unwrap().clone();
    assert_eq!(names(&section("let")["children"]), ["amount_eur", "limit", "cross_border", "new_account"]);
    assert_eq!(names(&section("tables")["children"]), ["fx_to_eur", "sanctioned", "high_risk", "limits"]);
    let rules = section("rules")["children"].clone();
    assert_eq!(rules.as_array().unwrap().len(), 14);
    assert_eq!(rules[2]["name"], "single_limit");
    assert_eq!(rules[2]["selectionRange"]["start"], position(&text, "single_limit", 0, 0));
    let source =
        section("input")["children"].as_array().unwrap().iter().find(|f| f["name"] == "source").cloned();
    assert_eq!(names(&source.unwrap()["children"]), ["account", "country", "account_age_days", "kyc_level"]);
    // Every symbol's selection lies inside its range, every child inside its parent.
    fn inside(inner: &Value, outer: &Value) -> bool {
        let at = |p: &Value| (p["line"].as_u64().unwrap(), p["character"].as_u64().unwrap());
        at(&outer["start"]) <= at(&inner["start"]) && at(&inner["end"]) <= at(&outer["end"])
    }
    fn check(symbol: &Value) {
        assert!(inside(&symbol["selectionRange"], &symbol["range"]), "{symbol}");
        for child in symbol["children"].as_array().unwrap() {
            assert!(inside(&child["range"], &symbol["range"]), "{child} in {symbol}");
            check(child);
        }
    }
    outline.as_array().unwrap().iter().for_each(check);
    // While the YAML does not read, no outline rather than a stale one.
    client.change(URI, 2, "input: [\n");
    assert_eq!(
        client.result("textDocument/documentSymbol", json!({ "textDocument": { "uri": URI } })),
        Value::Null
    );
    assert_eq!(client.stop(), Some(0));
}

#[test]
fn what_an_editor_should_not_send_is_answered_not_fatal() {
    let mut client = Client::start();
    let early = client.call("textDocument/hover", at("x", "x", 0));
    assert_eq!(early["error"]["code"], -32002, "before initialize: {early}");
    client.initialize();
    client.send_bytes(b"{ this is not json");
    let parse_error = client.response(Value::Null);
    assert_eq!(parse_error["error"]["code"], -32700);
    let unknown = client.call("textDocument/codeLens", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let bad = client.call("textDocument/hover", json!({ "textDocument": 7 }));
    assert_eq!(bad["error"]["code"], -32602);
    assert_eq!(client.result("textDocument/hover", at("x", "x", 0)), Value::Null, "a document never opened");
    // A change before the open, and invalid UTF-8 in a text.
    client.change(URI, 3, "contract: a.b\n");
    client.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{\"textDocument\":{\"uri\":\"file:///contracts/transfer.yaml\",\"version\":4},\"contentChanges\":[{\"text\":\"contract: \xff\xfe\\n\"}]}}",
    );
    let published = client.diagnostics(URI, 4);
    assert!(!published.is_empty());
    // A second `initialize` is refused as such; ids LSP does not take are
    // answered with the id as sent.
    let again = client.call("initialize", json!({ "processId": null, "rootUri": null, "capabilities": {} }));
    assert!(again["error"]["message"].as_str().is_some_and(|m| m.contains("already initialized")), "{again}");
    for id in ["4294967296", "1.5", "null"] {
        client.send_bytes(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"textDocument/hover","params":{{}}}}"#)
                .as_bytes(),
        );
        let answer = client.response(serde_json::from_str(id).unwrap());
        assert_eq!(answer["error"]["code"], -32600, "{id}: {answer}");
    }
    // A frame whose Content-Length is larger, then smaller, than its body:
    // the requests after each are answered.
    for (extra, cut) in [(40, 0), (0, 12)] {
        let hover = json!({ "jsonrpc": "2.0", "id": 900 + extra, "method": "textDocument/hover", "params": at("x", "x", 0) });
        let body = hover.to_string();
        write!(client.stdin, "Content-Length: {}\r\n\r\n{body}", body.len() + extra - cut).unwrap();
        client.stdin.flush().unwrap();
        if extra > 0 {
            let answer = client.response(json!(900 + extra));
            assert!(answer.get("result").is_some(), "a length too large: {answer}");
        } else {
            assert_eq!(client.response(Value::Null)["error"]["code"], -32700, "a length too small");
        }
        let next = client.call("textDocument/hover", at("x", "x", 0));
        assert!(next.get("result").is_some(), "the next request: {next}");
    }
    assert_eq!(client.stop(), Some(0));
}

/// xorshift64*: seeded, so that a failure names its seed.
fn next(state: &mut u64) -> usize {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize
}

#[test]
fn a_seeded_fuzz_of_edits_leaves_it_answering() {
    let mut client = Client::start();
    client.initialize();
    let original = transfer();
    client.open(URI, &original);
    let pieces = [
        "#",
        ": ",
        "- ",
        "{",
        "[",
        "'",
        "\"",
        "\n",
        "  ",
        "when: ",
        "amount.",
        "windows.",
        "é",
        "\u{1F600}",
        "|\n",
    ];
    let mut text = original.clone();
    let mut state = 0x5eed_u64;
    for version in 2..302 {
        let mut at = next(&mut state) % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        match next(&mut state) % 4 {
            0 => text.insert_str(at, pieces[next(&mut state) % pieces.len()]),
            1 => {
                let mut end = (at + next(&mut state) % 40).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                text.replace_range(at..end, "");
            }
            2 => text = original.clone(),
            _ => text.truncate(at),
        }
        client.change(URI, version, &text);
        if version % 25 == 0 {
            // Requests anywhere in the half-typed text get answers.
            let line = next(&mut state) % 200;
            let place = json!({ "textDocument": { "uri": URI }, "position": { "line": line, "character": next(&mut state) % 90 } });
            let code_action = json!({ "textDocument": { "uri": URI }, "range": { "start": place["position"], "end": place["position"] }, "context": { "diagnostics": [] } });
            let mut references = place.clone();
            references["context"] = json!({ "includeDeclaration": true });
            for (method, params) in [
                ("textDocument/hover", place.clone()),
                ("textDocument/definition", place.clone()),
                ("textDocument/completion", place.clone()),
                ("textDocument/references", references),
                ("textDocument/documentSymbol", place.clone()),
                ("textDocument/codeAction", code_action.clone()),
                ("textDocument/semanticTokens/full", place.clone()),
                ("textDocument/signatureHelp", place.clone()),
                ("textDocument/documentHighlight", place.clone()),
                ("textDocument/inlayHint", code_action.clone()),
            ] {
                let response = client.call(method, params);
                assert!(response.get("error").is_none(), "version {version}, {method}: {response}");
            }
            // A rename is done or refused with its reason, nothing else.
            let mut rename = place.clone();
            rename["newName"] = json!("renamed");
            let response = client.call("textDocument/rename", rename);
            let code = &response["error"]["code"];
            assert!(code.is_null() || *code == -32803, "version {version}, rename: {response}");
        }
    }
    client.diagnostics(URI, 301);
    // A huge file: over the compiler's limit, reported, not fatal.
    let huge = format!("contract: a.b\n# {}\n", "x".repeat(65 << 20));
    client.change(URI, 302, &huge);
    let published = client.diagnostics(URI, 302);
    assert_eq!(published[0]["code"], "E0008", "{:?}", published.first());
    client.change(URI, 303, &original);
    assert_eq!(client.diagnostics(URI, 303), Vec::<Value>::new());
    assert_eq!(client.stop(), Some(0));
}

/// docs/EDITORS.md's setup for Neovim 0.7 to 0.10, run by a real Neovim
/// (Debian's 0.7 in CI): a contract's buffer gets rulec's diagnostic.
#[test]
fn neovim_with_the_documented_setup_shows_diagnostics() {
    let Some(nvim) = support::installed("nvim", "Debian's neovim") else { return };
    let editors = std::fs::read_to_string(root().join("docs/EDITORS.md")).expect("EDITORS.md");
    let section = editors.split("**Neovim** (0.7 to 0.10").nth(1).expect("the Neovim 0.7 section");
    let setup =
        section.split("```lua\n").nth(1).and_then(|block| block.split("```").next()).expect("its block");
    let dir = tempfile::tempdir().expect("a folder");
    std::fs::write(dir.path().join("init.lua"), setup).expect("written");
    std::fs::write(
        dir.path().join("c.yaml"),
        "contract: a.b\nversion: 1.0.0\ninput:\n  amount: int\nrules:\n  - id: big\n    when: amunt > 10\n    deny: \"big\"\n",
    )
    .expect("written");
    let check = "vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 100)\n\
        local d = vim.diagnostic.get(0)\n\
        io.stdout:write(#d .. ' diagnostics: ' .. (d[1] and d[1].message or 'none') .. '\\n')\n\
        vim.cmd('qa!')\n";
    std::fs::write(dir.path().join("check.lua"), check).expect("written");
    let rulec_dir = Path::new(env!("CARGO_BIN_EXE_rulec")).parent().expect("its folder").to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(rulec_dir)
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("a PATH");
    let mut child = Command::new(nvim)
        .args(["--headless", "-u", "init.lua", "c.yaml", "-c", "luafile check.lua"])
        .current_dir(dir.path())
        .env("PATH", path)
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nvim starts");
    assert!(wait(&mut child).is_some(), "nvim did not finish");
    let output = child.wait_with_output().expect("its output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("1 diagnostics: unknown name `amunt`"),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
