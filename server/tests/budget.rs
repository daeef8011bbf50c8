//! An evaluation that passes its timeout stops, on either engine: the
//! request is answered 503 with `Retry-After` at the deadline, and the
//! worker that ran it is free again right after (a probe found them busy
//! for seconds to minutes, every request 503 meanwhile, while `/readyz`
//! said ready).

mod common;

use std::time::{Duration, Instant};

use common::{TOKEN, TestServer};
use server::EngineChoice;

const QUADRATIC: &str = r#"contract: probe.quadratic
version: 1.0.0
input:
  xs: list<int>
rules:
  - id: slow
    when: "count(xs, a => count(xs, b => a < b) > 0) > 0"
    deny: "slow"
"#;

const TIMEOUT: Duration = Duration::from_millis(400);

fn server(engine: EngineChoice) -> TestServer {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("quadratic.yaml"), QUADRATIC).expect("written");
    TestServer::start_in(dir, |config| {
        config.engine = engine;
        config.evaluation_timeout = TIMEOUT;
        config.max_body = 4 << 20;
    })
}

fn body(n: usize) -> String {
    let xs: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    format!(r#"{{"input":{{"xs":[{}]}}}}"#, xs.join(","))
}

fn post(addr: std::net::SocketAddr, body: &str) -> common::Response {
    let raw = format!(
        "POST /evaluations HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    common::send(addr, raw.as_bytes())
}

#[test]
fn evaluations_past_their_deadline_stop_and_free_their_workers() {
    for engine in [EngineChoice::Interp, EngineChoice::Jit] {
        let server = server(engine);
        let app = server.running.as_ref().expect("running").app.clone();
        let heavy = body(100_000);
        let started = Instant::now();
        let answers: Vec<common::Response> = std::thread::scope(|scope| {
            let calls: Vec<_> = (0..2).map(|_| scope.spawn(|| post(server.addr, &heavy))).collect();
            calls.into_iter().map(|c| c.join().expect("answered")).collect()
        });
        for answer in &answers {
            assert_eq!(answer.status, 503, "{engine:?}: {}", answer.text());
            assert_eq!(answer.header("retry-after"), Some("1"), "{engine:?}");
            assert!(answer.text().contains("\"kind\":\"timeout\""), "{engine:?}: {}", answer.text());
        }
        // Both workers ran a heavy evaluation; they must be idle within
        // 100 ms of the deadline.
        let deadline = started + TIMEOUT;
        while app.pool.busy() > 0 && Instant::now() < deadline + Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let freed = Instant::now().saturating_duration_since(deadline);
        assert_eq!(app.pool.busy(), 0, "{engine:?}: workers still busy after 5 s");
        assert!(
            freed < Duration::from_millis(100),
            "{engine:?}: the workers were free {freed:?} after the deadline"
        );
        // And the next request is evaluated.
        let small = post(server.addr, &body(10));
        assert_eq!(small.status, 200, "{engine:?}: {}", small.text());
        assert_eq!(server.get("/readyz").status, 200);
    }
}
