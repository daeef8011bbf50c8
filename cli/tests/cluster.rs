//! `rulec cluster` as processes (INTERFACES.md, Ballista cluster): a
//! scheduler and two executors on loopback ports, a folder of Parquet
//! files queried through `rulec sql --cluster`. Every row is what
//! in-process `rulec sql` and `rulec eval --input` give for the same
//! records; both executors ran tasks; and an executor restarted with
//! another revision of the contract makes the query fail, naming the
//! contract, both hashes and that executor.

mod support;

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{python_can_import, root, rulec, run_python};

const TRANSFER: &str = "examples/contracts/acme.payments.transfer.yaml";
const WRITER: &str = "cli/tests/data/write_formats.py";
const RECORD: &str = "named_struct('amount', amount, 'currency', currency, 'daily_total', daily_total, \
    'source', source, 'destination', destination, 'purpose', purpose, 'tags', tags)";
/// Files, so the query has as many partitions.
const PARTS: usize = 8;
const RECORDS: usize = 1600;

/// A `rulec cluster` process and its log (stderr), read as it comes.
struct Process {
    name: String,
    child: Child,
    log: Arc<Mutex<String>>,
}

impl Process {
    fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }
}

/// Every process of the cluster; dropping it stops and waits for each.
#[derive(Default)]
struct Cluster {
    processes: Vec<Process>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for process in &mut self.processes {
            let _ = process.child.kill();
            let _ = process.child.wait();
        }
    }
}

impl Cluster {
    /// Starts `rulec cluster ARGS`, its log collected.
    fn start(&mut self, name: &str, args: &[String]) -> usize {
        let mut child = rulec()
            .arg("cluster")
            .args(args)
            .env("RUST_LOG", "warn,ballista_scheduler=info,ballista_executor=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rulec cluster starts");
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("stderr");
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut log = sink.lock().unwrap_or_else(|p| p.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        self.processes.push(Process { name: name.to_string(), child, log });
        self.processes.len() - 1
    }

    /// Waits until `port` accepts connections while process `index` runs.
    fn wait_for_port(&mut self, index: usize, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return;
            }
            let process = &mut self.processes[index];
            assert!(!process.exited(), "{} exited: {}", process.name, process.log());
            assert!(
                Instant::now() < deadline,
                "{} never listened on {port}: {}",
                process.name,
                process.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops process `index` (SIGTERM, then SIGKILL after 10 s).
    fn stop(&mut self, index: usize) {
        let process = &mut self.processes[index];
        let _ = std::process::Command::new("kill").arg(process.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !process.exited() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = process.child.kill();
        let _ = process.child.wait();
    }
}

/// A port nobody listens on (bound, then let go).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("a port").local_addr().expect("its address").port()
}

/// `count` transfer records with an `id`, varied from the examples.
fn records(count: usize) -> Vec<String> {
    let examples =
        std::fs::read_to_string(root().join("cli/tests/data/records.ndjson")).expect("the examples");
    let examples: Vec<serde_json::Value> =
        examples.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    let countries = ["DE", "FR", "US", "IR", "AF", "CH"];
    let currencies = ["EUR", "USD", "GBP", "CHF", "JPY"];
    (0..count)
        .map(|i| {
            let mut record = examples[i % examples.len()].clone();
            record["id"] = serde_json::json!(i);
            record["amount"] = serde_json::json!(format!("{}.{:02}", (i * 37) % 20_000, i % 100));
            record["currency"] = serde_json::json!(currencies[(i / 7) % currencies.len()]);
            record["source"]["kyc_level"] = serde_json::json!(i % 4);
            record["destination"]["country"] = serde_json::json!(countries[(i / 3) % countries.len()]);
            serde_json::to_string(&record).expect("JSON")
        })
        .collect()
}

/// `parts/`: the records as Parquet files; `expected/`: what `rulec eval
/// --input --keep id` gives for each, as Arrow.
fn write_files(dir: &Path) {
    for sub in ["parts", "expected", "ndjson"] {
        std::fs::create_dir(dir.join(sub)).expect("a folder");
    }
    let records = records(RECORDS);
    for (k, part) in records.chunks(RECORDS / PARTS).enumerate() {
        let ndjson = dir.join(format!("ndjson/part-{k}.ndjson"));
        std::fs::write(&ndjson, part.join("\n") + "\n").expect("written");
        let parquet = dir.join(format!("parts/part-{k}.parquet"));
        let args = ["parquet".as_ref(), "numbered".as_ref(), ndjson.as_os_str(), parquet.as_os_str()];
        run_python(
            "pyarrow writes Parquet",
            WRITER,
            args.into_iter().chain(["snappy".as_ref(), "50".as_ref()]),
        );
        let expected = dir.join(format!("expected/part-{k}.arrow"));
        let eval = rulec()
            .args(["eval", TRANSFER, "--channel", "batch", "--keep", "id", "--input"])
            .arg(&parquet)
            .arg("--output")
            .arg(&expected)
            .output()
            .expect("rulec eval runs");
        assert!(matches!(eval.status.code(), Some(0 | 1)) && expected.exists(), "rulec eval: {eval:?}");
    }
}

/// `rulec sql --contracts TRANSFER --format ndjson FLAGS QUERY`.
fn sql(flags: &[&str], query: &str) -> Output {
    rulec()
        .args(["sql", "--contracts", TRANSFER, "--format", "ndjson", "--threads", "4"])
        .args(flags)
        .arg(query)
        .output()
        .expect("rulec sql runs")
}

/// The sorted lines of a run that must succeed.
fn lines(what: &str, out: &Output) -> Vec<String> {
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    lines
}

/// `rulec(...)`'s parts and `rulec_decision(...)` of every record in `table`.
fn query(table: &str) -> String {
    format!(
        "SELECT id, r['decision'] AS decision, r['reasons'] AS reasons, r['findings'] AS findings, \
         r['effects'] AS effects, r['errors'] AS errors, r['error'] AS error, d \
         FROM (SELECT id, rulec('acme.payments.transfer', 'batch', {RECORD}) AS r, \
         rulec_decision('acme.payments.transfer', 'batch', {RECORD}) AS d FROM '{table}')"
    )
}

fn executor_args(scheduler: u16, port: u16, grpc: u16, contracts: &str, work: &Path) -> Vec<String> {
    let args = ["executor", "--scheduler", &format!("127.0.0.1:{scheduler}"), "--contracts", contracts];
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args.extend(["--port".into(), port.to_string(), "--grpc-port".into(), grpc.to_string()]);
    args.extend(["--concurrency".into(), "1".into(), "--work-dir".into(), work.display().to_string()]);
    args
}

#[test]
fn a_cluster_gives_every_row_in_process_sql_and_eval_give_and_refuses_another_revision() {
    if !python_can_import("pyarrow") {
        return;
    }
    let dir = tempfile::tempdir().expect("a folder");
    write_files(dir.path());
    let parts = format!("{}/", dir.path().join("parts").display());
    let mut cluster = Cluster::default();
    let scheduler = free_port();
    let bind = format!("127.0.0.1:{scheduler}");
    let s = cluster.start(
        "the scheduler",
        &["scheduler".into(), "--bind".into(), bind, "--contracts".into(), TRANSFER.into()],
    );
    cluster.wait_for_port(s, scheduler);
    let mut executors = Vec::new();
    for k in 0..2 {
        let (port, grpc) = (free_port(), free_port());
        let work = dir.path().join(format!("work-{k}"));
        std::fs::create_dir(&work).expect("a folder");
        let e =
            cluster.start(&format!("executor {k}"), &executor_args(scheduler, port, grpc, TRANSFER, &work));
        cluster.wait_for_port(e, grpc);
        executors.push(e);
    }
    let url = format!("df://127.0.0.1:{scheduler}");

    // What in-process SQL and `rulec eval --input` give.
    let in_process = lines("rulec sql", &sql(&[], &query(&parts)));
    assert_eq!(in_process.len(), RECORDS);
    let expected = lines(
        "rulec eval's results",
        &sql(
            &[],
            &format!(
                "SELECT id, decision, reasons, findings, effects, errors, error, arrow_cast(decision, 'Utf8') AS d \
                 FROM '{}/'",
                dir.path().join("expected").display()
            ),
        ),
    );
    assert_eq!(in_process, expected, "in-process SQL and rulec eval");

    // On the cluster, until both executors have run tasks (at most 3 runs).
    for run in 0.. {
        let got = lines("rulec sql --cluster", &sql(&["--cluster", &url], &query(&parts)));
        assert_eq!(got, in_process, "rulec sql --cluster and in process, run {run}");
        let ran = executors.iter().filter(|&&e| cluster.processes[e].log().contains("Finished task")).count();
        if ran == 2 {
            break;
        }
        assert!(run < 2, "not every executor ran tasks: {}", cluster.processes[executors[0]].log());
    }

    // One executor restarted with another revision of the contract.
    cluster.stop(executors[1]);
    let changed = dir.path().join("changed.yaml");
    let text = std::fs::read_to_string(root().join(TRANSFER)).expect("the contract");
    std::fs::write(&changed, text.replacen("version: 1.0.0", "version: 1.0.1", 1)).expect("written");
    let (port, grpc) = (free_port(), free_port());
    let work = dir.path().join("work-changed");
    std::fs::create_dir(&work).expect("a folder");
    let changed = changed.display().to_string();
    let e = cluster.start("the changed executor", &executor_args(scheduler, port, grpc, &changed, &work));
    cluster.wait_for_port(e, grpc);
    let hash = |path: &str| {
        let out = tempfile::tempdir().expect("a folder");
        let compiled =
            rulec().args(["compile", path, "-o"]).arg(out.path()).output().expect("rulec compile runs");
        assert!(compiled.status.success(), "{compiled:?}");
        let bundle =
            std::fs::read(out.path().join("acme.payments.transfer.bundle.json")).expect("the bundle");
        let bundle: serde_json::Value = serde_json::from_slice(&bundle).expect("a bundle");
        bundle["hash"].as_str().expect("its hash").to_string()
    };
    let (old, new) = (hash(TRANSFER), hash(&changed));
    assert_ne!(old, new);
    let message = format!(
        "contract `acme.payments.transfer`: the query was planned against {old} but executor 127.0.0.1:{port} holds {new}"
    );
    // Tasks go to either executor: the query fails once one reaches the changed one.
    for run in 0.. {
        let out = sql(&["--cluster", &url], &query(&parts));
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            assert!(stderr.contains(&message), "{message}\nnot in: {stderr}");
            assert_eq!(out.status.code(), Some(1), "{stderr}");
            break;
        }
        assert!(run < 5, "the changed executor never refused: {}", cluster.processes[e].log());
    }
}

#[test]
fn a_bad_address_or_no_scheduler_is_a_usage_error() {
    let bad = sql(&["--cluster", "127.0.0.1:50050"], "SELECT 1");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected df://HOST:PORT"));
    let started = Instant::now();
    let none = sql(&["--cluster", &format!("df://127.0.0.1:{}", free_port())], "SELECT 1");
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("cannot reach the scheduler"), "{none:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
}
