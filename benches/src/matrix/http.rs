//! The batch matrix over loopback HTTP: a cell is one `rulec serve`
//! child serving the cell's contract alone, and one
//! `POST /evaluations?contract=NAME&channel=C` whose body is the input
//! file (an Arrow IPC stream or NDJSON records), streamed from the file,
//! and whose NDJSON results are streamed into the output file, where the
//! cross-format check reads them as it reads `rulec eval`'s.
//!
//! The wall time is the request's, from its first byte sent to the last
//! byte of its results (the server is started and its contract compiled
//! before); the peak RSS is the server's (`VmHWM`, read once the results
//! are in, before it is killed). The client (this process) shares the
//! machine's cores with the server, as a loopback client does.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::Request;
use hyper::body::{Frame, SizeHint};
use hyper::header;
use hyper_util::rt::TokioIo;
use tokio::sync::mpsc;

use super::child::{self, Measured};

/// The formats the batch endpoint takes.
pub const FORMATS: [&str; 2] = ["arrow", "ndjson"];

/// Why a format has no HTTP row.
pub const NOT_TAKEN: &str = "HTTP takes Arrow IPC streams and NDJSON";

/// How long a server may take to start listening (it compiles the
/// contract first).
const START: Duration = Duration::from_secs(120);

/// The body's pieces, read from the file.
const PIECE: usize = 256 << 10;

/// The server's evaluation timeout: a record, and a chunk waiting for a
/// worker, get this long (the default second is for single requests; a
/// loaded machine running a debug build would shed a batch's chunks).
const EVALUATION_TIMEOUT_MS: &str = "60000";

/// One HTTP cell.
#[derive(Debug)]
pub struct HttpCell<'a> {
    pub rulec: &'a Path,
    /// The contract's file, served alone.
    pub contract_file: &'a Path,
    pub contract: &'a str,
    pub channel: &'a str,
    /// The body (an Arrow IPC stream or NDJSON) and its format's name.
    pub body: &'a Path,
    pub format: &'a str,
    pub threads: usize,
    pub output: &'a Path,
    /// Where the server's log goes.
    pub errors: &'a Path,
    /// A folder for the server's rules.
    pub work: &'a Path,
}

/// A `rulec serve` child, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Serves the contract, posts the body, writes the results; what it took.
pub fn run(cell: &HttpCell<'_>) -> Result<Measured, String> {
    let rules = cell.work.join("serve-rules");
    let _ = std::fs::remove_dir_all(&rules);
    std::fs::create_dir_all(&rules).map_err(|e| format!("cannot create {}: {e}", rules.display()))?;
    let served = rules.join(cell.contract_file.file_name().unwrap_or_default());
    std::fs::copy(cell.contract_file, &served).map_err(|e| format!("cannot copy the contract: {e}"))?;
    let measured = serve_and_post(cell, &rules);
    let _ = std::fs::remove_dir_all(&rules);
    measured
}

fn serve_and_post(cell: &HttpCell<'_>, rules: &Path) -> Result<Measured, String> {
    let bytes =
        std::fs::metadata(cell.body).map_err(|e| format!("cannot read {}: {e}", cell.body.display()))?.len();
    let (mut server, addr) = start(cell, rules, bytes)?;
    let started = Instant::now();
    let posted = post(addr, cell, bytes);
    let wall = started.elapsed();
    let peak = child::high_water_mark(server.0.id());
    if let Ok(Some(status)) = server.0.try_wait() {
        return Err(format!("rulec serve stopped ({status}): {}", super::last_line(cell.errors)));
    }
    posted?;
    let peak_rss_bytes = peak.ok_or("cannot read the server's peak RSS (/proc/PID/status)")?;
    Ok(Measured { wall, peak_rss_bytes })
}

/// A free loopback port (bound, then released for the server).
fn free_addr() -> Result<SocketAddr, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free loopback port: {e}"))?;
    listener.local_addr().map_err(|e| e.to_string())
}

/// Starts `rulec serve` on the rules in `rules`, taking a body of `bytes`,
/// and waits until it listens (its rules are compiled by then).
fn start(cell: &HttpCell<'_>, rules: &Path, bytes: u64) -> Result<(Server, SocketAddr), String> {
    let addr = free_addr()?;
    let log =
        File::create(cell.errors).map_err(|e| format!("cannot create {}: {e}", cell.errors.display()))?;
    let mut command = Command::new(cell.rulec);
    command
        .args(["serve", "--no-auth", "--no-watch", "--log-level", "warn", "--addr", &addr.to_string()])
        .arg("--rules")
        .arg(rules)
        .args(["--workers", &cell.threads.to_string()])
        .args(["--max-batch-body", &bytes.saturating_add(1).to_string()])
        // A body is read as fast as the records are evaluated: a slow
        // cell is not a slow client.
        .args(["--min-body-rate", "0", "--body-timeout", "3600"])
        .env("RULEC_EVALUATION_TIMEOUT_MS", EVALUATION_TIMEOUT_MS)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    let mut server = Server(command.spawn().map_err(|e| format!("cannot start rulec serve: {e}"))?);
    let deadline = Instant::now() + START;
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(status)) = server.0.try_wait() {
            return Err(format!("rulec serve stopped ({status}): {}", super::last_line(cell.errors)));
        }
        if Instant::now() > deadline {
            return Err(format!("rulec serve did not listen on {addr} within {} s", START.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok((server, addr))
}

/// The request's media type for a body of `format`.
fn content_type(format: &str) -> &'static str {
    match format {
        "arrow" => "application/vnd.apache.arrow.stream",
        _ => "application/x-ndjson",
    }
}

/// Posts the body (`bytes` long) and writes the NDJSON results to the
/// output file; a status other than 200 is an error with the answer's
/// message.
fn post(addr: SocketAddr, cell: &HttpCell<'_>, bytes: u64) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
    let file = File::open(cell.body).map_err(|e| format!("cannot read {}: {e}", cell.body.display()))?;
    let output =
        File::create(cell.output).map_err(|e| format!("cannot create {}: {e}", cell.output.display()))?;
    let query = form_query(&[("contract", cell.contract), ("channel", cell.channel)]);
    runtime.block_on(async {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("HTTP to {addr}: {e}"))?;
        let driver = tokio::spawn(connection);
        let request = Request::post(format!("/evaluations?{query}"))
            .header(header::HOST, addr.to_string())
            .header(header::CONTENT_TYPE, content_type(cell.format))
            .header(header::ACCEPT, "application/x-ndjson")
            .body(FileBody::new(file, bytes))
            .map_err(|e| format!("internal: {e}"))?;
        let response = sender.send_request(request).await.map_err(|e| format!("POST /evaluations: {e}"))?;
        let status = response.status();
        let mut body = response.into_body();
        let mut out = BufWriter::with_capacity(1 << 20, output);
        let mut answer = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("reading the results: {e}"))?;
            let Ok(data) = frame.into_data() else { continue };
            if status.is_success() {
                out.write_all(&data).map_err(|e| format!("cannot write {}: {e}", cell.output.display()))?;
            } else {
                answer.extend_from_slice(&data);
            }
        }
        out.flush().map_err(|e| format!("cannot write {}: {e}", cell.output.display()))?;
        driver.abort();
        if !status.is_success() {
            return Err(format!("{status}: {}", String::from_utf8_lossy(&answer).trim()));
        }
        Ok(())
    })
}

/// `key=value&...`, each percent-encoded.
fn form_query(pairs: &[(&str, &str)]) -> String {
    let encode = |text: &str| {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    pairs.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect::<Vec<_>>().join("&")
}

/// A request body read from a file by a thread of its own, a piece at a
/// time through a short channel (so never held whole).
struct FileBody {
    pieces: mpsc::Receiver<std::io::Result<Bytes>>,
    bytes: u64,
}

impl FileBody {
    fn new(mut file: File, bytes: u64) -> FileBody {
        let (sender, pieces) = mpsc::channel(8);
        std::thread::spawn(move || {
            loop {
                let mut piece = vec![0; PIECE];
                let read = match file.read(&mut piece) {
                    Ok(0) => return,
                    Ok(n) => n,
                    Err(e) => {
                        let _ = sender.blocking_send(Err(e));
                        return;
                    }
                };
                piece.truncate(read);
                if sender.blocking_send(Ok(Bytes::from(piece))).is_err() {
                    return;
                }
            }
        });
        FileBody { pieces, bytes }
    }
}

impl hyper::body::Body for FileBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.pieces.poll_recv(cx).map(|piece| piece.map(|p| p.map(Frame::data)))
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.bytes)
    }
}

/// The Arrow IPC stream of the Arrow IPC file at `file`, written once
/// beside it (`NAME.arrows`) and reused: the endpoint takes streams.
pub fn arrow_stream(file: &Path) -> Result<PathBuf, String> {
    let stream = file.with_extension("arrows");
    if stream.exists() {
        return Ok(stream);
    }
    let failed =
        |e: &dyn std::fmt::Display| format!("cannot write {} from {}: {e}", stream.display(), file.display());
    let input = File::open(file).map_err(|e| failed(&e))?;
    let reader = arrow_ipc::reader::FileReader::try_new(std::io::BufReader::new(input), None)
        .map_err(|e| failed(&e))?;
    let part = stream.with_extension("arrows.part");
    let out = BufWriter::with_capacity(1 << 20, File::create(&part).map_err(|e| failed(&e))?);
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(out, &reader.schema()).map_err(|e| failed(&e))?;
    for batch in reader {
        writer.write(&batch.map_err(|e| failed(&e))?).map_err(|e| failed(&e))?;
    }
    writer.finish().map_err(|e| failed(&e))?;
    writer.into_inner().map_err(|e| failed(&e))?.flush().map_err(|e| failed(&e))?;
    std::fs::rename(&part, &stream).map_err(|e| failed(&e))?;
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_percent_encoded() {
        assert_eq!(
            form_query(&[("contract", "acme.payments.transfer"), ("channel", "a b&c")]),
            "contract=acme.payments.transfer&channel=a%20b%26c"
        );
    }
}
