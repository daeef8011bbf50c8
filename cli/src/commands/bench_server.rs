//! `rulec bench --server`: the load test of `rulec serve`. For each engine
//! (interpreter, JIT) it starts this very binary as a server on a free
//! loopback port, serving the reference contract with its request log on,
//! and drives it with the load generator of `benches::load`: once below
//! saturation, once far above it with a short queue, where the excess must
//! be answered 503 at once rather than time out.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use benches::load::{self, LoadReport, LoadSettings};
use bytes::Bytes;

use crate::Failure;

/// The runs: label, connections, the server's queue length (`None`: its
/// default).
const RUNS: [(&str, usize, Option<usize>); 2] = [("below saturation", 16, None), ("overload", 512, Some(64))];

/// A `rulec serve` child, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port (bound, then released for the server).
fn free_addr() -> Result<SocketAddr, Failure> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| Failure::Usage(format!("no free port: {e}")))?;
    listener.local_addr().map_err(|e| Failure::Usage(e.to_string()))
}

fn start_server(
    rules: &std::path::Path,
    engine: &str,
    queue: Option<usize>,
) -> Result<(Server, SocketAddr), Failure> {
    let addr = free_addr()?;
    let exe = std::env::current_exe().map_err(|e| Failure::Usage(format!("cannot find rulec: {e}")))?;
    let mut command = Command::new(exe);
    command
        .args(["serve", "--no-auth", "--engine", engine, "--addr", &addr.to_string()])
        .arg("--rules")
        .arg(rules)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(queue) = queue {
        command.args(["--queue", &queue.to_string()]);
    }
    let server =
        Server(command.spawn().map_err(|e| Failure::Usage(format!("cannot start rulec serve: {e}")))?);
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).is_err() {
        if Instant::now() > deadline {
            return Err(Failure::Usage("rulec serve did not start listening".into()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((server, addr))
}

/// Runs the load test; returns the report as markdown.
pub fn run(warmup: Duration, seconds: Duration) -> Result<(String, Vec<LoadReport>), Failure> {
    let rules = std::env::temp_dir().join(format!("rulec-bench-server-{}", std::process::id()));
    std::fs::create_dir_all(&rules).map_err(|e| Failure::Usage(format!("{}: {e}", rules.display())))?;
    std::fs::write(rules.join("acme.payments.transfer.yaml"), benches::workload::TRANSFER_CONTRACT)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let bodies: Vec<Bytes> = benches::workload::TRANSFER_REQUESTS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Bytes::from(l.to_string()))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let mut reports = Vec::new();
    for engine in ["interp", "jit"] {
        for (label, connections, queue) in RUNS {
            anstream::eprintln!("load: {engine}, {label} ({connections} connections) ...");
            let (server, addr) = start_server(&rules, engine, queue)?;
            let settings =
                LoadSettings { addr, token: None, connections, warmup, seconds, bodies: bodies.clone() };
            let report = runtime.block_on(load::run(&format!("{engine}, {label}"), &settings));
            drop(server);
            reports.push(report);
        }
    }
    let _ = std::fs::remove_dir_all(&rules);
    Ok((load::markdown(&reports), reports))
}
