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

/// Copies folder `from` into `to`, with its subfolders (the examples'
/// model files).
fn copy_folder(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("the examples") {
        let path = entry.expect("an entry").path();
        let target = to.join(path.file_name().expect("a name"));
        if path.is_dir() {
            std::fs::create_dir(&target).expect("a folder");
            copy_folder(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copied");
        }
    }
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
        copy_folder(&root().join("examples/contracts"), dir.path());
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

/// What the interpreter writes for `line`, a request for `contract`
/// (`Contract::evaluate_json`, in-process; `cli/tests/serve.rs` checks
/// the served bytes against the `rulec eval` process).
pub fn expected(contract: &str, line: &str) -> Vec<u8> {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    let path = root().join("examples/contracts").join(format!("{contract}.yaml"));
    let source = std::fs::read_to_string(path).expect("the contract");
    let loaded = engine.load(frontend::compile(&source).expect("compiles")).expect("loads");
    let mut out = Vec::new();
    loaded.evaluate_json(line, &mut out);
    out
}

/// Starts a chunked `POST` to `path` whose answer is read as it streams
/// back: the sending half can move to another thread, so the client reads
/// while it sends, as a streaming server needs.
pub fn upload(addr: SocketAddr, path: &str, content_type: &str) -> (Upload, Answer) {
    let stream = TcpStream::connect(addr).expect("connected");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("a timeout");
    let mut sender = stream.try_clone().expect("a second handle");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    sender.write_all(head.as_bytes()).expect("the head sent");
    let reader = std::io::BufReader::new(stream);
    (Upload { stream: sender }, Answer { reader: Some(reader), status: 0, headers: Vec::new(), body: None })
}

/// The sending half of an [`upload`].
pub struct Upload {
    stream: TcpStream,
}

impl Upload {
    /// Sends `bytes` as one chunk (an error once the server has closed).
    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.stream.write_all(format!("{:x}\r\n", bytes.len()).as_bytes())?;
        self.stream.write_all(bytes)?;
        self.stream.write_all(b"\r\n")
    }

    /// Ends the body.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.stream.write_all(b"0\r\n\r\n")
    }
}

/// The answer to an [`upload`], read as it arrives.
pub struct Answer {
    reader: Option<std::io::BufReader<TcpStream>>,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    body: Option<std::io::BufReader<Dechunked>>,
}

impl Answer {
    /// Waits for the status line and the headers.
    pub fn head(&mut self) -> u16 {
        use std::io::BufRead;
        let Some(mut reader) = self.reader.take() else { return self.status };
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        self.status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                self.headers.push((name.trim().to_string(), value.trim().to_string()));
            }
        }
        let chunked = self
            .headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
        self.body = Some(std::io::BufReader::new(Dechunked { reader, chunked, left: 0, done: false }));
        self.status
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The next line of the body, without its newline; `None` at its end.
    pub fn next_line(&mut self) -> Option<String> {
        use std::io::BufRead;
        self.head();
        let mut line = String::new();
        match self.body.as_mut()?.read_line(&mut line) {
            Ok(n) if n > 0 => Some(line.trim_end_matches('\n').to_string()),
            _ => None,
        }
    }

    /// The body as it arrives (after the head), to read with a streaming
    /// reader (an Arrow IPC stream).
    pub fn body(&mut self) -> &mut dyn Read {
        self.head();
        match self.body.as_mut() {
            Some(body) => body,
            None => panic!("no body"),
        }
    }

    /// The rest of the body's lines.
    pub fn rest(&mut self) -> Vec<String> {
        std::iter::from_fn(|| self.next_line()).collect()
    }
}

/// A response body with its chunked framing taken off.
struct Dechunked {
    reader: std::io::BufReader<TcpStream>,
    chunked: bool,
    /// Bytes left in the current chunk.
    left: usize,
    done: bool,
}

impl Read for Dechunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::BufRead;
        if !self.chunked {
            return self.reader.read(buf);
        }
        if self.done {
            return Ok(0);
        }
        if self.left == 0 {
            // The CRLF after the last chunk's data, if any, then the size.
            let mut line = String::new();
            while line.trim().is_empty() {
                line.clear();
                if self.reader.read_line(&mut line)? == 0 {
                    return Ok(0);
                }
            }
            self.left = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
            if self.left == 0 {
                self.done = true;
                return Ok(0);
            }
        }
        let n = buf.len().min(self.left);
        let read = self.reader.read(&mut buf[..n])?;
        self.left -= read;
        Ok(read)
    }
}
