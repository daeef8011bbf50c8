//! The HTTP API over loopback: every status code, results byte-identical
//! to what the interpreter writes in-process (`rulec eval` as a process is
//! compared with `rulec serve` in `cli/tests/serve.rs`, where the binary
//! is built), NDJSON streaming, and hostile bodies.

mod common;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use common::{TOKEN, TestServer, example_requests, expected, upload};
use server::BodyPace;

/// One request and the status it must get.
struct Case {
    name: &'static str,
    raw: Vec<u8>,
    status: u16,
}

fn raw(method: &str, path: &str, headers: &str, body: &[u8]) -> Vec<u8> {
    let mut raw =
        format!("{method} {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n{headers}\r\n").into_bytes();
    raw.extend_from_slice(body);
    raw
}

fn authed(method: &str, path: &str, body: &[u8]) -> Vec<u8> {
    raw(method, path, &format!("Authorization: Bearer {TOKEN}\r\nContent-Length: {}\r\n", body.len()), body)
}

/// A valid request for the payments contract.
fn transfer() -> String {
    example_requests("acme.payments.transfer").remove(0)
}

fn cases() -> Vec<Case> {
    let nested = format!(
        "{{\"contract\":\"acme.payments.transfer\",\"input\":{}{}}}",
        "[".repeat(30_000),
        "]".repeat(30_000)
    );
    let big = format!("{{\"x\":\"{}\"}}", "a".repeat(70_000));
    vec![
        Case { name: "health needs no token", raw: raw("GET", "/healthz", "", b""), status: 200 },
        Case { name: "no token", raw: raw("GET", "/contracts", "", b""), status: 401 },
        Case {
            name: "a wrong token",
            raw: raw("GET", "/contracts", "Authorization: Bearer test-token-0123456788\r\n", b""),
            status: 401,
        },
        Case {
            name: "a token of another length",
            raw: raw("GET", "/contracts", "Authorization: Bearer x\r\n", b""),
            status: 401,
        },
        Case {
            name: "not a bearer token",
            raw: raw("GET", "/contracts", &format!("Authorization: Basic {TOKEN}\r\n"), b""),
            status: 401,
        },
        Case { name: "contracts", raw: authed("GET", "/contracts", b""), status: 200 },
        Case { name: "ready", raw: authed("GET", "/readyz", b""), status: 200 },
        Case { name: "metrics", raw: authed("GET", "/metrics", b""), status: 200 },
        Case { name: "an unknown endpoint", raw: authed("GET", "/nope", b""), status: 404 },
        Case { name: "a wrong method", raw: authed("GET", "/evaluations", b""), status: 405 },
        Case { name: "health takes GET only", raw: raw("POST", "/healthz", "", b""), status: 405 },
        Case { name: "HEAD of health", raw: raw("HEAD", "/healthz", "", b""), status: 200 },
        Case {
            name: "HTTP/1.1 without Host",
            raw: b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n".to_vec(),
            status: 400,
        },
        Case {
            name: "HTTP/1.1 without Host, with a token",
            raw: format!(
                "GET /contracts HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
            )
            .into_bytes(),
            status: 400,
        },
        Case {
            name: "HTTP/1.1 with two Host lines",
            raw: raw("GET", "/healthz", "Host: u\r\n", b""),
            status: 400,
        },
        Case {
            name: "HTTP/1.1 with an invalid Host",
            raw: b"GET /healthz HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n".to_vec(),
            status: 400,
        },
        Case { name: "HTTP/1.0 needs no Host", raw: b"GET /healthz HTTP/1.0\r\n\r\n".to_vec(), status: 200 },
        Case {
            name: "a valid request",
            raw: authed("POST", "/evaluations", transfer().as_bytes()),
            status: 200,
        },
        Case { name: "malformed JSON", raw: authed("POST", "/evaluations", b"{\"contract\":"), status: 400 },
        Case { name: "not JSON at all", raw: authed("POST", "/evaluations", b"hello"), status: 400 },
        Case { name: "an empty body", raw: authed("POST", "/evaluations", b""), status: 400 },
        Case {
            name: "not UTF-8",
            raw: authed("POST", "/evaluations", b"{\"contract\":\"\xff\xfe\"}"),
            status: 400,
        },
        Case { name: "deeply nested", raw: authed("POST", "/evaluations", nested.as_bytes()), status: 400 },
        Case {
            name: "an unknown contract",
            raw: authed("POST", "/evaluations", br#"{"contract":"nope","input":{}}"#),
            status: 404,
        },
        Case {
            name: "no contract named while several are served",
            raw: authed("POST", "/evaluations", br#"{"channel":"web","input":{}}"#),
            status: 400,
        },
        Case {
            name: "invalid input",
            raw: authed(
                "POST",
                "/evaluations",
                br#"{"contract":"acme.payments.transfer","channel":"server","input":{"amount":1}}"#,
            ),
            status: 400,
        },
        Case {
            name: "over the body limit",
            raw: authed("POST", "/evaluations", big.as_bytes()),
            status: 413,
        },
        Case {
            name: "a Content-Length that lies low",
            raw: raw(
                "POST",
                "/evaluations",
                &format!("Authorization: Bearer {TOKEN}\r\nContent-Length: 10\r\n"),
                big.as_bytes(),
            ),
            status: 400,
        },
        Case {
            name: "a Content-Length over the limit, body not sent",
            raw: raw(
                "POST",
                "/evaluations",
                &format!("Authorization: Bearer {TOKEN}\r\nContent-Length: 999999999\r\n"),
                b"",
            ),
            status: 413,
        },
        Case {
            name: "chunked over the limit",
            raw: raw(
                "POST",
                "/evaluations",
                &format!("Authorization: Bearer {TOKEN}\r\nTransfer-Encoding: chunked\r\n"),
                format!("{:x}\r\n{big}\r\n0\r\n\r\n", big.len()).as_bytes(),
            ),
            status: 413,
        },
        Case {
            name: "a truncated body",
            raw: raw(
                "POST",
                "/evaluations",
                &format!("Authorization: Bearer {TOKEN}\r\nContent-Length: 500\r\n"),
                &transfer().as_bytes()[..40],
            ),
            status: 400,
        },
    ]
}

#[test]
fn every_status_code() {
    let server = TestServer::start(|config| config.max_body = 64 * 1024);
    let mut wrong = Vec::new();
    for case in cases() {
        let response = server.request(&case.raw);
        if response.status != case.status {
            wrong.push(format!(
                "{}: expected {}, got {}: {}",
                case.name,
                case.status,
                response.status,
                response.text()
            ));
        }
        if response.status == 401 && response.header("www-authenticate").is_none() {
            wrong.push(format!("{}: 401 without WWW-Authenticate", case.name));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn results_are_the_bytes_the_interpreter_writes() {
    let server = TestServer::start(|_| {});
    let listing: serde_json::Value = serde_json::from_slice(&server.get("/contracts").body).expect("JSON");
    let revision = listing["revision"].as_str().expect("a revision").to_string();
    for contract in ["acme.payments.transfer", "shop.orders.check", "acme.access.documents"] {
        for line in example_requests(contract) {
            let response = server.post(&line);
            let want = expected(contract, &line);
            assert_eq!(response.text(), String::from_utf8_lossy(&want), "{line}");
            let status = if want.starts_with(b"{\"error\"") { 400 } else { 200 };
            assert_eq!(response.status, status, "{line}");
            assert_eq!(response.header("x-rulec-revision"), Some(revision.as_str()));
        }
    }
}

#[test]
fn ndjson_is_answered_line_for_line_in_order() {
    let server = TestServer::start(|_| {});
    let lines = example_requests("shop.orders.check");
    // Enough lines for several jobs, with a bad line in the middle.
    let mut body = String::new();
    for k in 0..300 {
        let line = if k == 150 { "{not json" } else { lines[k % lines.len()].as_str() };
        body.push_str(line);
        body.push('\n');
    }
    let response = server.call("POST", "/evaluations", "application/x-ndjson", body.as_bytes());
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/x-ndjson"));
    let got: Vec<String> = response.text().lines().map(String::from).collect();
    assert_eq!(got.len(), 300, "one result line per request line");
    for (k, line) in got.iter().enumerate() {
        if k == 150 {
            assert!(line.starts_with("{\"error\""), "line {k}: {line}");
        } else {
            let want =
                String::from_utf8(expected("shop.orders.check", &lines[k % lines.len()])).expect("UTF-8");
            assert_eq!(line, &want, "line {k}");
        }
    }
}

#[test]
fn a_timed_out_evaluation_is_a_503_with_retry_after() {
    let server = TestServer::start(|config| config.evaluation_timeout = std::time::Duration::ZERO);
    let response = server.post(&transfer());
    assert_eq!(response.status, 503, "{}", response.text());
    assert_eq!(response.header("retry-after"), Some("1"));
}

#[test]
fn a_full_queue_is_a_503_with_retry_after() {
    let server = TestServer::start(|config| {
        config.workers = 1;
        config.queue = 1;
    });
    let app = server.running.as_ref().expect("running").app.clone();
    // Occupy the only worker and the only queue place.
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let wait = std::sync::Arc::new(std::sync::Mutex::new(wait));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    for k in 0..2 {
        let wait = wait.clone();
        app.pool
            .submit(deadline, move || {
                let _ = wait.lock().map(|w| w.recv());
            })
            .expect("queued");
        while k == 0 && app.pool.busy() == 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    let response = server.post(&transfer());
    assert_eq!(response.status, 503, "{}", response.text());
    assert_eq!(response.header("retry-after"), Some("1"));
    let _ = release.send(());
    let _ = release.send(());
}

#[test]
fn metrics_count_requests_and_decisions() {
    let server = TestServer::start(|_| {});
    assert_eq!(server.post(&transfer()).status, 200);
    let text = server.get("/metrics").text();
    for needle in [
        "rulec_requests_total{status=\"200\"} 1",
        "rulec_decisions_total{contract=\"acme.payments.transfer\",decision=",
        "rulec_request_duration_seconds_bucket{le=\"+Inf\"} 1",
        "rulec_queue_depth 0",
        "rulec_generation 1",
        "rulec_rule_set_info{revision=\"sha256:",
        "rulec_contract_engine{contract=\"shop.orders.check\",engine=\"interp\"} 1",
        "rulec_reload_failures_total 0",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
}

#[test]
fn contracts_lists_what_is_served() {
    let server = TestServer::start(|_| {});
    let response = server.get("/contracts");
    let listing: serde_json::Value = serde_json::from_slice(&response.body).expect("JSON");
    let names: Vec<&str> =
        listing["contracts"].as_array().expect("a list").iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(
        names,
        ["acme.access.documents", "acme.payments.transfer", "acme.payments.velocity", "shop.orders.check"]
    );
    assert_eq!(listing["generation"], 1);
    // The revision is named by the contracts' content (every replica
    // serving these files reports it): `sha256:` and 16 hex digits.
    let revision = listing["revision"].as_str().expect("a revision");
    assert!(revision.starts_with("sha256:") && revision.len() == 23, "{revision}");
    assert_eq!(response.header("x-rulec-revision"), Some(revision));
    assert!(listing["contracts"][0]["hash"].as_str().is_some_and(|h| h.len() > 16));
    assert_eq!(listing["contracts"][0]["engine"], "interp");
    assert!(listing["last_reload_error"].is_null());
}

#[test]
fn a_client_that_dribbles_its_headers_is_cut_off() {
    use std::io::{Read, Write};
    let server = TestServer::start(|config| config.header_timeout = std::time::Duration::from_millis(300));
    let mut stream = std::net::TcpStream::connect(server.addr).expect("connected");
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: t").expect("sent");
    std::thread::sleep(std::time::Duration::from_millis(900));
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).expect("a timeout");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    assert!(!text.contains("200 OK"), "the slow request was served: {text}");
}

#[test]
fn shutdown_lets_in_flight_requests_finish() {
    let mut server = TestServer::start(|_| {});
    let lines = example_requests("shop.orders.check");
    let body: String = (0..3000).map(|k| format!("{}\n", lines[k % lines.len()])).collect();
    let addr = server.addr;
    let client = std::thread::spawn(move || {
        let raw = format!(
            "POST /evaluations HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\nContent-Type: application/x-ndjson\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        common::send(addr, raw.as_bytes())
    });
    // Shut down while the request is (very likely) still streaming.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let running = server.running.take().expect("running");
    server.runtime.block_on(running.shutdown());
    let response = client.join().expect("the client");
    assert_eq!(response.status, 200);
    assert_eq!(response.text().lines().count(), 3000, "every line answered before the server stopped");
    // And nothing is accepted any more.
    assert!(std::net::TcpStream::connect(addr).is_err(), "still accepting after shutdown");
}

#[test]
fn every_wrong_method_is_a_405_naming_the_allowed_ones() {
    let server = TestServer::start(|_| {});
    let routes = [
        ("/healthz", "GET, HEAD"),
        ("/readyz", "GET, HEAD"),
        ("/contracts", "GET, HEAD"),
        ("/metrics", "GET, HEAD"),
        ("/evaluations", "POST"),
    ];
    let mut wrong = Vec::new();
    for (path, allow) in routes {
        for method in ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
            let response = server.call(method, path, "application/json", b"");
            let allowed = allow.split(", ").any(|m| m == method);
            let status_ok = if allowed { response.status != 405 } else { response.status == 405 };
            if !status_ok {
                wrong.push(format!("{method} {path}: {}", response.status));
            }
            if !allowed && response.header("allow") != Some(allow) {
                wrong.push(format!("{method} {path}: Allow is {:?}, not {allow}", response.header("allow")));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What a slow client sends, given the time since it sent the head.
type Dribble = fn(Duration) -> &'static [u8];

/// A request whose body is announced long and then sent by `dribble`
/// (called every 20 ms with the time since the head was sent), and what
/// came back within `limit`: the bytes, and whether the server closed.
fn slow_body(server: &TestServer, dribble: Dribble, limit: Duration) -> (Vec<u8>, bool) {
    let mut stream = std::net::TcpStream::connect(server.addr).expect("connected");
    let head = format!(
        "POST /evaluations HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).expect("the head sent");
    stream.set_read_timeout(Some(Duration::from_millis(20))).expect("a timeout");
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while started.elapsed() < limit {
        let _ = stream.write_all(dribble(started.elapsed()));
        match stream.read(&mut buffer) {
            Ok(0) => return (answer, true),
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(_) => {}
        }
    }
    (answer, false)
}

#[test]
fn a_body_that_stalls_or_dribbles_is_a_408_and_the_connection_closes() {
    let pace = BodyPace { window: Duration::from_millis(300), min_rate: 1024 };
    let server = TestServer::start(|config| config.body_pace = pace);
    let cases: [(&str, Dribble); 3] = [
        ("sends nothing", |_| b""),
        ("stalls after a few bytes", |t| if t < Duration::from_millis(100) { b"{\"in" } else { b"" }),
        // A byte every 20 ms: never idle for a window, far below the rate.
        ("dribbles a byte at a time", |_| b" "),
    ];
    for (name, dribble) in cases {
        let started = Instant::now();
        let (answer, closed) = slow_body(&server, dribble, Duration::from_secs(5));
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 408"), "{name}: no 408 in {:?}: {text}", started.elapsed());
        assert!(text.contains("\"kind\":\"body_timeout\""), "{name}: {text}");
        assert!(closed, "{name}: the connection stayed open");
        assert!(started.elapsed() < Duration::from_secs(2), "{name}: took {:?}", started.elapsed());
    }
}

#[test]
fn a_body_that_keeps_pace_is_served() {
    // Above the rate (a 64-byte piece every 20 ms is 3,200 bytes a
    // second) and longer than a window in all.
    let pace = BodyPace { window: Duration::from_millis(300), min_rate: 1024 };
    let server = TestServer::start(|config| config.body_pace = pace);
    let lines = example_requests("shop.orders.check");
    let (mut sender, mut answer) = upload(server.addr, "/evaluations", "application/x-ndjson");
    let body: String = (0..40).map(|k| format!("{}\n", lines[k % lines.len()])).collect();
    for piece in body.as_bytes().chunks(64) {
        sender.send(piece).expect("sent");
        std::thread::sleep(Duration::from_millis(20));
    }
    sender.finish().expect("finished");
    assert_eq!(answer.head(), 200);
    let got = answer.rest();
    assert_eq!(got.len(), 40, "{got:?}");
    for (k, line) in got.iter().enumerate() {
        let want = String::from_utf8(expected("shop.orders.check", &lines[k % lines.len()])).expect("UTF-8");
        assert_eq!(line, &want, "line {k}");
    }
}

#[test]
fn ndjson_results_stream_back_while_the_body_is_still_arriving() {
    let server = TestServer::start(|_| {});
    let lines = example_requests("shop.orders.check");
    let (mut sender, mut answer) = upload(server.addr, "/evaluations", "application/x-ndjson");
    for k in 0..5 {
        sender.send(format!("{}\n", lines[k % lines.len()]).as_bytes()).expect("sent");
        // Each line is answered before the next is sent.
        let line = answer.next_line().expect("a result line before the body ends");
        let want = String::from_utf8(expected("shop.orders.check", &lines[k % lines.len()])).expect("UTF-8");
        assert_eq!(line, want, "line {k}");
    }
    sender.finish().expect("finished");
    assert_eq!(answer.status, 200);
    assert!(answer.rest().is_empty());
}

#[test]
fn an_ndjson_body_that_stalls_midway_ends_with_a_timeout_line() {
    let pace = BodyPace { window: Duration::from_millis(300), min_rate: 0 };
    let server = TestServer::start(|config| config.body_pace = pace);
    let lines = example_requests("shop.orders.check");
    let (mut sender, mut answer) = upload(server.addr, "/evaluations", "application/x-ndjson");
    let body: String = (0..3).map(|k| format!("{}\n", lines[k])).collect();
    sender.send(body.as_bytes()).expect("sent");
    sender.send(b"{\"contract\":").expect("sent");
    assert_eq!(answer.head(), 200);
    let got = answer.rest();
    assert_eq!(got.len(), 4, "three results and the timeout: {got:?}");
    assert!(got[3].contains("\"kind\":\"body_timeout\""), "{}", got[3]);
}

#[test]
fn an_ndjson_line_over_the_line_limit_is_an_error_line_and_the_rest_go_on() {
    let server = TestServer::start(|config| config.max_line = 1000);
    let lines = example_requests("shop.orders.check");
    let long = format!("{{\"contract\":\"shop.orders.check\",\"x\":\"{}\"}}", "a".repeat(5000));
    let body = format!("{}\n{long}\n{}\n{long}", lines[0], lines[1]);
    let response = server.call("POST", "/evaluations", "application/x-ndjson", body.as_bytes());
    assert_eq!(response.status, 200, "{}", response.text());
    let got: Vec<String> = response.text().lines().map(String::from).collect();
    assert_eq!(got.len(), 4, "{got:?}");
    for (k, line) in [(0, &lines[0]), (2, &lines[1])] {
        let want = String::from_utf8(expected("shop.orders.check", line)).expect("UTF-8");
        assert_eq!(got[k], want, "line {k}");
    }
    for k in [1, 3] {
        assert!(got[k].contains("\"kind\":\"payload_too_large\""), "line {k}: {}", got[k]);
        assert!(got[k].contains("1000 bytes"), "line {k}: {}", got[k]);
    }
}

#[test]
fn an_ndjson_body_that_grows_over_the_limit_midway_ends_with_an_error_line() {
    let server = TestServer::start(|config| config.max_body = 4096);
    let lines = example_requests("shop.orders.check");
    let (mut sender, mut answer) = upload(server.addr, "/evaluations", "application/x-ndjson");
    sender.send(format!("{}\n", lines[0]).as_bytes()).expect("sent");
    let first = answer.next_line().expect("the first result");
    assert_eq!(first, String::from_utf8(expected("shop.orders.check", &lines[0])).expect("UTF-8"));
    let more: String = (0..100).map(|k| format!("{}\n", lines[k % lines.len()])).collect();
    let _ = sender.send(more.as_bytes());
    let rest = answer.rest();
    let last = rest.last().expect("an error line");
    assert!(last.contains("\"kind\":\"payload_too_large\""), "{last}");
    assert!(rest.len() < 100, "the lines past the limit are not evaluated");
}
