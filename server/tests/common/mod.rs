//! Test support: a server on a random loopback port, serving a temporary
//! copy of the example contracts, and a small HTTP/1.1 client over a raw
//! socket (so tests can send what a well-behaved client would not: lying
//! lengths, broken chunks, non-UTF-8).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use server::{Config, EngineChoice, Running};

pub const TOKEN: &str = "test-token-0123456789";

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// A running server and its runtime, stopped when dropped.
pub struct TestServer {
    pub runtime: tokio::runtime::Runtime,
    pub running: Option<Running>,
    pub addr: SocketAddr,
    pub dir: tempfile::TempDir,
}

impl TestServer {
    /// Serves a copy of `examples/contracts/` with `adjust` applied to the
    /// default test configuration.
    pub fn start(adjust: impl FnOnce(&mut Config)) -> TestServer {
        let dir = tempfile::tempdir().expect("a temporary folder");
        for entry in std::fs::read_dir(root().join("examples/contracts")).expect("the examples") {
            let path = entry.expect("an entry").path();
            std::fs::copy(&path, dir.path().join(path.file_name().expect("a name"))).expect("copied");
        }
        TestServer::start_in(dir, adjust)
    }

    /// Serves `dir` as it is.
    pub fn start_in(dir: tempfile::TempDir, adjust: impl FnOnce(&mut Config)) -> TestServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let mut config = Config::new(dir.path().to_path_buf(), "127.0.0.1:0".parse().expect("an address"));
        config.token = Some(TOKEN.to_string());
        config.workers = 2;
        config.engine = EngineChoice::Interp;
        adjust(&mut config);
        let running = runtime.block_on(server::start(config)).expect("the server starts");
        let addr = running.addr;
        TestServer { runtime, running: Some(running), addr, dir }
    }

    pub fn request(&self, raw: &[u8]) -> Response {
        send(self.addr, raw)
    }

    /// A request with the token, `Connection: close`, and a body.
    pub fn call(&self, method: &str, path: &str, content_type: &str, body: &[u8]) -> Response {
        let mut raw = format!(
            "{method} {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        raw.extend_from_slice(body);
        self.request(&raw)
    }

    pub fn post(&self, body: &str) -> Response {
        self.call("POST", "/evaluations", "application/json", body.as_bytes())
    }

    pub fn get(&self, path: &str) -> Response {
        self.call("GET", path, "text/plain", b"")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            self.runtime.block_on(running.shutdown());
        }
    }
}

/// A parsed response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `raw` and reads the response until the server closes.
pub fn send(addr: SocketAddr, raw: &[u8]) -> Response {
    let mut stream = TcpStream::connect(addr).expect("connected");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("a timeout");
    // The server may answer (413) and close before reading everything.
    let _ = stream.write_all(raw);
    // Half-close: a request that promised more body than it sent is
    // truncated, not left waiting.
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse(&bytes)
}

/// Parses one HTTP/1.1 response (`Content-Length`, chunked, or to EOF).
pub fn parse(bytes: &[u8]) -> Response {
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| {
        panic!("no response head in {:?}", String::from_utf8_lossy(bytes));
    });
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or("");
    let status = status_line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':').map(|(n, v)| (n.trim().to_string(), v.trim().to_string())))
        .collect();
    let rest = &bytes[split + 4..];
    let chunked =
        headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked { dechunk(rest) } else { rest.to_vec() };
    Response { status, headers, body }
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let Some(end) = rest.windows(2).position(|w| w == b"\r\n") else { return body };
        let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            return body;
        }
        let start = end + 2;
        body.extend_from_slice(&rest[start..(start + size).min(rest.len())]);
        rest = &rest[(start + size + 2).min(rest.len())..];
    }
}

/// `line` naming `contract` (the example requests of a folder with one
/// contract leave it out).
pub fn named(contract: &str, line: &str) -> String {
    if line.contains("\"contract\"") {
        line.to_string()
    } else {
        line.replacen('{', &format!("{{\"contract\":\"{contract}\","), 1)
    }
}

/// The example requests of `contract`, each naming it.
pub fn example_requests(contract: &str) -> Vec<String> {
    std::fs::read_to_string(root().join(format!("examples/requests/{contract}.ndjson")))
        .expect("the example requests")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| named(contract, l))
        .collect()
}

/// What `rulec eval` prints for `line`, a request for `contract` (the same
/// engine code, in-process).
pub fn expected(contract: &str, line: &str) -> Vec<u8> {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    let path = root().join("examples/contracts").join(format!("{contract}.yaml"));
    let source = std::fs::read_to_string(path).expect("the contract");
    let loaded = engine.load(frontend::compile(&source).expect("compiles")).expect("loads");
    let mut out = Vec::new();
    loaded.evaluate_json(line, &mut out);
    out
}
