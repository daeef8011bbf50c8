//! A local Ballista cluster of `rulec cluster` processes on loopback
//! ports: one scheduler and its executors, each a child process whose
//! log (stderr) is collected as it comes. Dropping the cluster kills and
//! waits for every process, whatever happened, so no process outlives
//! the bench cell or the test that started it.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a process has to start listening.
const START: Duration = Duration::from_secs(60);

/// The log filter of every process: Ballista's task lines, what each
/// process serves (rulec's start line), warnings from the rest.
const LOG: &str = "warn,ballista_scheduler=info,ballista_executor=info,ballista_rulec=info";

/// One `rulec cluster` process.
#[derive(Debug)]
pub struct Process {
    name: String,
    /// The scheduler's port, or the executor's Arrow Flight port (the
    /// one that names it in messages).
    port: u16,
    child: Child,
    log: Arc<Mutex<String>>,
}

impl Process {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// What the process logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }
}

/// A scheduler and executors (`processes[0]` is the scheduler).
#[derive(Debug)]
pub struct LocalCluster {
    rulec: std::path::PathBuf,
    processes: Vec<Process>,
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        for process in &mut self.processes {
            let _ = process.child.kill();
            let _ = process.child.wait();
        }
    }
}

impl LocalCluster {
    /// Starts a scheduler over `contracts` with `rulec` (run in `dir`,
    /// where relative paths resolve), and waits until it listens.
    pub fn scheduler(rulec: &Path, dir: &Path, contracts: &Path) -> Result<LocalCluster, String> {
        let mut cluster = LocalCluster { rulec: rulec.to_path_buf(), processes: Vec::new() };
        let port = free_port()?;
        let mut command = cluster.command(dir, "scheduler", contracts);
        command.args(["--bind", &format!("127.0.0.1:{port}")]);
        cluster.start("the scheduler", port, port, command)?;
        Ok(cluster)
    }

    /// Starts an executor over `contracts` running `concurrency` tasks at
    /// once, its shuffle files in `work`, and waits until it listens; its
    /// index among the processes.
    pub fn executor(
        &mut self,
        dir: &Path,
        contracts: &Path,
        concurrency: usize,
        work: &Path,
    ) -> Result<usize, String> {
        let (port, grpc) = (free_port()?, free_port()?);
        let mut command = self.command(dir, "executor", contracts);
        command
            .args(["--scheduler", &format!("127.0.0.1:{}", self.processes[0].port)])
            .args(["--port", &port.to_string(), "--grpc-port", &grpc.to_string()])
            .args(["--concurrency", &concurrency.to_string()])
            .arg("--work-dir")
            .arg(work);
        let name = format!("executor 127.0.0.1:{port}");
        self.start(&name, port, grpc, command)
    }

    /// The URL `rulec sql --cluster` takes.
    pub fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.processes[0].port)
    }

    pub fn process(&self, index: usize) -> &Process {
        &self.processes[index]
    }

    /// Stops process `index` (SIGTERM, then SIGKILL after 10 s).
    pub fn stop(&mut self, index: usize) {
        let process = &mut self.processes[index];
        let _ = Command::new("kill").arg(process.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !process.exited() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = process.child.kill();
        let _ = process.child.wait();
    }

    /// Kills process `index` at once (SIGKILL), as a crashed machine
    /// would go: no goodbye to the scheduler.
    pub fn kill(&mut self, index: usize) {
        let process = &mut self.processes[index];
        let _ = process.child.kill();
        let _ = process.child.wait();
    }

    fn command(&self, dir: &Path, role: &str, contracts: &Path) -> Command {
        let mut command = Command::new(&self.rulec);
        command.current_dir(dir).args(["cluster", role, "--contracts"]).arg(contracts);
        command
    }

    /// Spawns `command` as process `name`, then waits until `listen`
    /// accepts connections; the process's index.
    fn start(&mut self, name: &str, port: u16, listen: u16, mut command: Command) -> Result<usize, String> {
        let mut child = command
            .env("RUST_LOG", LOG)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let log = Arc::new(Mutex::new(String::new()));
        if let Some(stderr) = child.stderr.take() {
            collect(stderr, log.clone());
        }
        self.processes.push(Process { name: name.to_string(), port, child, log });
        let index = self.processes.len() - 1;
        self.wait_for(index, listen)?;
        Ok(index)
    }

    /// Waits until `port` accepts connections while process `index` runs.
    fn wait_for(&mut self, index: usize, port: u16) -> Result<(), String> {
        let deadline = Instant::now() + START;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            let process = &mut self.processes[index];
            if process.exited() {
                return Err(format!("{} exited: {}", process.name, process.log()));
            }
            if Instant::now() > deadline {
                return Err(format!("{} never listened on {port}: {}", process.name, process.log()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }
}

/// Appends every line `stderr` gives to `log`, on a thread of its own.
fn collect(stderr: std::process::ChildStderr, log: Arc<Mutex<String>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
            log.push_str(&line);
            log.push('\n');
        }
    });
}

/// A loopback port nobody listens on (bound, then let go).
pub fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("no free port: {e}"))
}
