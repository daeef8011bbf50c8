//! `rulec cluster` as processes (INTERFACES.md, Ballista cluster): a
//! scheduler and two executors on loopback ports, a folder of Parquet
//! files queried through `rulec sql --cluster`. Every row is what
//! in-process `rulec sql` and `rulec eval --input` give for the same
//! records; both executors ran tasks; and an executor restarted with
//! another revision of the contract makes the query fail, naming the
//! contract, both hashes and that executor. `rulec bench --batch`'s
//! cluster rows give the `sql` row's results.

mod support;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use benches::cluster::{LocalCluster, free_port};
use support::{python_can_import, root, rulec, run_python};

const TRANSFER: &str = "examples/contracts/acme.payments.transfer.yaml";
const WRITER: &str = "cli/tests/data/write_formats.py";
const RECORD: &str = "named_struct('amount', amount, 'currency', currency, 'daily_total', daily_total, \
    'source', source, 'destination', destination, 'purpose', purpose, 'tags', tags)";
/// Files, so the query has as many partitions.
const PARTS: usize = 8;
const RECORDS: usize = 1600;

/// `parts/`: the records as Parquet files; `expected/`: what `rulec eval
/// --input --keep id` gives for each, as Arrow.
fn write_files(dir: &Path) {
    for sub in ["parts", "expected", "ndjson"] {
        std::fs::create_dir(dir.join(sub)).expect("a folder");
    }
    let records = support::transfer_records(RECORDS);
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

/// A scheduler over the transfer contract and two executors running a
/// task at a time, their shuffle files under `dir`; the executors'
/// indexes.
fn two_executors(dir: &Path) -> (LocalCluster, Vec<usize>) {
    let rulec_binary = Path::new(env!("CARGO_BIN_EXE_rulec"));
    let contracts = Path::new(TRANSFER);
    let mut cluster = LocalCluster::scheduler(rulec_binary, &root(), contracts).expect("a scheduler");
    let mut executors = Vec::new();
    for k in 0..2 {
        let work = dir.join(format!("work-{k}"));
        std::fs::create_dir(&work).expect("a folder");
        executors.push(cluster.executor(&root(), contracts, 1, &work).expect("an executor"));
    }
    (cluster, executors)
}

/// `rulec sql --cluster URL QUERY` started, its output piped.
fn spawned_sql(url: &str, query: &str) -> std::process::Child {
    rulec()
        .args(["sql", "--contracts", TRANSFER, "--format", "ndjson", "--cluster", url, query])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rulec sql runs")
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

#[test]
fn a_cluster_gives_every_row_in_process_sql_and_eval_give_and_refuses_another_revision() {
    if !python_can_import("pyarrow") {
        return;
    }
    let dir = tempfile::tempdir().expect("a folder");
    write_files(dir.path());
    let parts = format!("{}/", dir.path().join("parts").display());
    let (mut cluster, executors) = two_executors(dir.path());
    let url = cluster.url();

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
        let ran = executors.iter().filter(|&&e| cluster.process(e).log().contains("Finished task")).count();
        if ran == 2 {
            break;
        }
        assert!(run < 2, "not every executor ran tasks: {}", cluster.process(executors[0]).log());
    }

    // One executor restarted with another revision of the contract.
    cluster.stop(executors[1]);
    let changed = dir.path().join("changed.yaml");
    let text = std::fs::read_to_string(root().join(TRANSFER)).expect("the contract");
    std::fs::write(&changed, text.replacen("version: 1.0.0", "version: 1.0.1", 1)).expect("written");
    let work = dir.path().join("work-changed");
    std::fs::create_dir(&work).expect("a folder");
    let e = cluster.executor(&root(), &changed, 1, &work).expect("the changed executor");
    let changed = changed.display().to_string();
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
    // Each process says what it serves at start.
    let serves = |index: usize, hash: &str| {
        let log = cluster.process(index).log();
        assert!(
            log.contains(" serves revision ") && log.contains(&format!("acme.payments.transfer {hash}")),
            "{log}"
        );
    };
    serves(0, &old);
    serves(e, &new);
    let message = format!(
        "contract `acme.payments.transfer`: the query was planned against {old} but {} holds {new}",
        cluster.process(e).name()
    );
    // Tasks go to either executor: the query fails once one reaches the changed one.
    for run in 0.. {
        let out = sql(&["--cluster", &url], &query(&parts));
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            assert!(stderr.contains(&message), "{message}\nnot in: {stderr}");
            assert!(stderr.starts_with("error: the query failed on the cluster (job "), "{stderr}");
            assert!(!stderr.contains("DataFusionError("), "{stderr}");
            assert_eq!(out.status.code(), Some(1), "{stderr}");
            break;
        }
        assert!(run < 5, "the changed executor never refused: {}", cluster.process(e).log());
    }
}

/// A client's query nested thousands deep aborted the shared scheduler:
/// it is refused with a message, and the scheduler serves the next query.
/// A query that would write files on the executors (`COPY ... TO`) is
/// refused: a cluster only reads.
#[test]
fn a_query_nested_too_deep_or_writing_is_refused_and_the_scheduler_stays_up() {
    let dir = tempfile::tempdir().expect("a folder");
    let rulec_binary = Path::new(env!("CARGO_BIN_EXE_rulec"));
    let contracts = Path::new(TRANSFER);
    let mut cluster = LocalCluster::scheduler(rulec_binary, &root(), contracts).expect("a scheduler");
    let executor = cluster.executor(&root(), contracts, 1, dir.path()).expect("an executor");
    let url = cluster.url();
    let table = "FROM 'cli/tests/data/records.ndjson'";
    let deep = format!("SELECT max({}) AS m {table}", vec!["length(currency)"; 1900].join(" + "));
    let out = sql(&["--cluster", &url], &deep);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("nests more than 1000 deep"), "{stderr}");
    let written = dir.path().join("written.csv");
    let copy = format!("COPY (SELECT 1 AS n) TO '{}'", written.display());
    let out = sql(&["--cluster", &url], &copy);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a cluster only reads"), "{stderr}");
    assert!(!written.exists());
    let count =
        lines("a query after it", &sql(&["--cluster", &url], &format!("SELECT count(*) AS n {table}")));
    assert_eq!(count.len(), 1, "{count:?}");
    // Its log, written to a file, is text without colour codes.
    let log = cluster.process(executor).log();
    assert!(log.contains("Finished task") && !log.contains('\u{1b}'), "{log}");
}

/// A scheduler bound to every address cannot tell executors where to call
/// back: it needs --external-host (queries hung when it said 0.0.0.0).
#[test]
fn a_scheduler_on_every_address_needs_an_external_host() {
    let out = rulec()
        .args(["cluster", "scheduler", "--contracts", TRANSFER, "--bind", "0.0.0.0:0"])
        .output()
        .expect("rulec runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("give --external-host HOST"), "{stderr}");
    let out = rulec()
        .args([
            "cluster",
            "executor",
            "--contracts",
            TRANSFER,
            "--scheduler",
            "127.0.0.1:1",
            "--bind-host",
            "0.0.0.0",
        ])
        .output()
        .expect("rulec runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--bind-host 0.0.0.0 listens on every address"), "{stderr}");
}

#[test]
fn a_bad_address_or_no_scheduler_is_a_usage_error() {
    let bad = sql(&["--cluster", "127.0.0.1:50050"], "SELECT 1");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected df://HOST:PORT"));
    let started = Instant::now();
    let none = sql(&["--cluster", &format!("df://127.0.0.1:{}", free_port().expect("a port"))], "SELECT 1");
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("cannot reach the scheduler"), "{none:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// `rulec bench --batch`'s cluster rows: the query of the `sql` row on a
/// local cluster of one and of two executors gives the same results (the
/// cross-format check), and each row is measured against the `sql` row.
#[test]
fn the_bench_cluster_rows_give_the_sql_rows_results() {
    let dir = tempfile::tempdir().expect("a folder");
    let json = dir.path().join("matrix.json");
    let args = ["bench", "--batch", "--records", "3000", "--contracts", "6", "--shapes", "nested"];
    let more = ["--formats", "parquet,ndjson", "--modes", "sql,cluster-1,cluster-2", "--threads", "2"];
    let out = rulec().args(args).args(more).arg("--json").arg(&json).output().expect("rulec bench runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("cross-format check: ok"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the rows")).expect("JSON");
    let rows = report["rows"].as_array().expect("rows");
    let row = |mode: &str, format: &str| {
        rows.iter().find(|r| r["mode"] == mode && r["format"] == format).unwrap_or_else(|| panic!("{report}"))
    };
    for mode in ["cluster-1", "cluster-2"] {
        let cell = row(mode, "parquet");
        assert!(cell["failed"].is_null() && cell["skipped"].is_null(), "{cell}");
        assert_eq!(cell["results_sha256"], row("sql", "parquet")["results_sha256"], "{cell}");
        assert!(cell["over_twin"].as_f64().unwrap_or(0.0) > 0.0, "{cell}");
        assert!(
            row(mode, "ndjson")["skipped"].as_str().is_some_and(|why| why.contains("Parquet")),
            "{report}"
        );
    }
    assert!(stdout.contains("x the wall time of in-process `rulec sql`"), "{stdout}");
}

/// A scheduler without executors holds a query until one comes: with
/// `--timeout`, the client gives up (exit 1) and says so.
#[test]
fn a_query_no_executor_takes_ends_at_its_timeout() {
    let rulec_binary = Path::new(env!("CARGO_BIN_EXE_rulec"));
    let cluster = LocalCluster::scheduler(rulec_binary, &root(), Path::new(TRANSFER)).expect("a scheduler");
    let started = Instant::now();
    let out = sql(
        &["--cluster", &cluster.url(), "--timeout", "3"],
        "SELECT count(*) AS n FROM 'cli/tests/data/records.ndjson'",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the query did not finish within 3 s (--timeout)"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// An executor killed while it runs a task: the scheduler takes it as
/// dead after `--executor-timeout` (15 s) and runs its tasks on the other
/// executor, so the query ends with every row, not after Ballista's three
/// minutes. Then the scheduler killed while a query runs: the client
/// says so.
#[test]
fn a_query_goes_on_when_an_executor_is_killed_mid_task() {
    if !python_can_import("pyarrow") {
        return;
    }
    let dir = tempfile::tempdir().expect("a folder");
    let parts = dir.path().join("parts");
    std::fs::create_dir(&parts).expect("a folder");
    // Tasks of about half a second each: 120,000 records a file.
    let ndjson = dir.path().join("records.ndjson");
    let records = support::transfer_records(1_200);
    let text: String = (0..100).flat_map(|_| records.iter().map(|r| format!("{r}\n"))).collect();
    std::fs::write(&ndjson, text).expect("written");
    let first = parts.join("part-0.parquet");
    let args = ["parquet".as_ref(), "numbered".as_ref(), ndjson.as_os_str(), first.as_os_str()];
    run_python(
        "pyarrow writes Parquet",
        WRITER,
        args.into_iter().chain(["snappy".as_ref(), "10000".as_ref()]),
    );
    for k in 1..4 {
        std::fs::copy(&first, parts.join(format!("part-{k}.parquet"))).expect("copied");
    }
    let count = format!(
        "SELECT count(*) AS n FROM '{}/' WHERE rulec_decision('acme.payments.transfer', 'batch', {RECORD}) = 'deny'",
        parts.display()
    );
    let expected = lines("in process", &sql(&[], &count));

    let (mut cluster, executors) = two_executors(dir.path());
    let started = Instant::now();
    let client = spawned_sql(&cluster.url(), &count);
    // Killed as soon as it runs a task.
    while !cluster.process(executors[1]).log().contains("Execute task") {
        assert!(started.elapsed() < Duration::from_secs(60), "{}", cluster.process(executors[1]).log());
        std::thread::sleep(Duration::from_millis(10));
    }
    cluster.kill(executors[1]);
    let out = client.wait_with_output().expect("rulec sql ends");
    assert_eq!(lines("rulec sql --cluster", &out), expected);
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(90), "the query took {elapsed:?}");
    let scheduler = cluster.process(0).log();
    assert!(
        scheduler.contains("on lost Executor"),
        "no task was taken from the killed executor: {scheduler}"
    );
    // The scheduler killed while a query runs: the client says it lost
    // the scheduler (it read "h2 protocol error").
    let tasks = |cluster: &LocalCluster| cluster.process(executors[0]).log().matches("Execute task").count();
    let before = tasks(&cluster);
    let client = spawned_sql(&cluster.url(), &count);
    while tasks(&cluster) == before {
        assert!(started.elapsed() < Duration::from_secs(120), "{}", cluster.process(executors[0]).log());
        std::thread::sleep(Duration::from_millis(10));
    }
    cluster.kill(0);
    let out = client.wait_with_output().expect("rulec sql ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lost = format!("lost the connection to the scheduler at {} while the query ran", cluster.url());
    assert!(stderr.contains(&lost), "{stderr}");
}
