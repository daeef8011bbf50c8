//! The batch matrix's SQL cells: one `rulec sql` process over the cell's
//! file, writing NDJSON, with the cell's contract called as
//! `rulec(contract, channel, named_struct(...every input field...))`
//! ([`Mode::Sql`]) or as `rulec_decision(...)` beside the contract's name
//! and version ([`Mode::SqlDecision`]: the lines `rulec eval --input
//! --fields decision` writes, so the two are compared record for record).
//! Both run over the files DataFusion reads by path: Parquet and Arrow.
//! The cluster modes run [`Mode::Sql`]'s query with `--cluster` on a
//! [`LocalCluster`] started for the cell (not timed), over Parquet.

use std::path::Path;
use std::process::{Command, Stdio};

use super::{Cell, Mode, Plan, child};
use crate::cluster::LocalCluster;

/// Why a contract with windows has no SQL row.
pub const WINDOWS: &str = "a contract with windows is not callable from SQL (no input order)";

/// Why the SQL modes and the decision-only batch row beside them have no
/// row for a format.
pub const NOT_READ: &str = "SQL rows (and the decision-only rows beside them) run over Parquet and Arrow";

/// Why the SQL rows did not run when `rulec` has no `sql` command.
pub const NOT_BUILT: &str = "this rulec is built without its `sql` feature";

/// Why a cluster mode has no row for a format.
pub const CLUSTER_READS: &str = "cluster rows run over Parquet";

/// Why the cluster rows did not run when `rulec` has no `cluster` command.
pub const CLUSTER_NOT_BUILT: &str = "this rulec is built without its `cluster` feature";

/// Whether the SQL modes (and [`Mode::Decision`]) have a row for `format`.
pub fn reads(format: &str) -> bool {
    matches!(format, "parquet" | "arrow")
}

/// Whether `rulec` has the `sql` command.
pub fn built(rulec: &Path) -> bool {
    has(rulec, "sql")
}

/// Whether `rulec` has the `cluster` command.
pub fn cluster_built(rulec: &Path) -> bool {
    has(rulec, "cluster")
}

fn has(rulec: &Path, command: &str) -> bool {
    Command::new(rulec)
        .args([command, "--help"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The query of `cell` in `mode`.
pub(super) fn query(mode: Mode, cell: &Cell<'_>) -> String {
    let contract = cell.bundle.contract();
    let fields = contract.types.record_fields(contract.input).unwrap_or(&[]);
    let record: Vec<String> = fields.iter().map(|f| format!("'{0}', \"{0}\"", f.name)).collect();
    let call = format!(
        "('{}', '{}', named_struct({}))",
        literal(&contract.name),
        literal(cell.family.channel()),
        record.join(", ")
    );
    let file = literal(&cell.input.display().to_string());
    match mode {
        Mode::SqlDecision => format!(
            "SELECT '{}' AS contract, '{}' AS version, rulec_decision{call} AS decision FROM '{file}'",
            literal(&contract.name),
            literal(&contract.version),
        ),
        _ => format!("SELECT rulec{call} AS result FROM '{file}'"),
    }
}

/// `text` inside a SQL string literal.
fn literal(text: &str) -> String {
    text.replace('\'', "''")
}

/// Runs one SQL cell into `output`; what it took, or why it failed.
pub(super) fn run(
    mode: Mode,
    plan: &Plan,
    cell: &Cell<'_>,
    output: &Path,
    errors: &Path,
) -> Result<child::Measured, String> {
    let cluster = match mode.executors() {
        Some(executors) => Some(start_cluster(plan, cell, executors)?),
        None => None,
    };
    let mut command = Command::new(&plan.rulec);
    command
        .arg("sql")
        .arg("--contracts")
        .arg(cell.contract_file)
        .args(["--format", "ndjson", "--threads", &plan.threads.to_string()])
        .arg("--output")
        .arg(output);
    if let Some(cluster) = &cluster {
        command.args(["--cluster", &cluster.url()]);
    }
    command.arg(query(mode, cell));
    child::run_cell(&mut command, errors)
}

/// A scheduler and `executors` executors over the cell's contract, the
/// plan's threads shared among the executors.
fn start_cluster(plan: &Plan, cell: &Cell<'_>, executors: usize) -> Result<LocalCluster, String> {
    let mut cluster = LocalCluster::scheduler(&plan.rulec, cell.work, cell.contract_file)?;
    for k in 0..executors {
        let work = cell.work.join(format!("executor-{k}"));
        std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
        cluster.executor(cell.work, cell.contract_file, (plan.threads / executors).max(1), &work)?;
    }
    Ok(cluster)
}
