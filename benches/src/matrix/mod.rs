//! The batch matrix behind `rulec bench --batch`: every input format ×
//! contract × record shape × count × mode, each cell one `rulec eval
//! --input` child process (the CLI's batch pipeline, measured from
//! outside: wall time and its own peak RSS) or one batch posted to a
//! `rulec serve` child over loopback HTTP, results written to a file and
//! compared across formats and modes; the DuckDB peer beside the
//! reference contract.
//!
//! - [`shapes`]: the contracts, the shapes and their records;
//!   [`signals`]: the contracts and records of the signals rows;
//! - [`writers`]: input files in each format ([`arrow`]: record batches,
//!   as Arrow IPC and Parquet, [`avro`]: Avro, [`protobuf`]: Protobuf);
//! - [`child`]: a measured child process;
//! - [`http`]: a cell over loopback HTTP (`rulec serve`);
//! - [`sql`]: a cell as one SQL query (`rulec sql`);
//! - [`check`]: the cross-format check;
//! - [`duckdb`]: the DuckDB peer;
//! - [`report`]: the rows, as a table or JSON.
//!
//! Cells run one at a time, so they do not compete for the cores. Input
//! files are generated into a temporary folder (deleted as soon as their
//! cells ran) or into `--data DIR` (kept, and reused by the next run).

pub mod arrow;
pub mod avro;
pub mod check;
pub mod child;
pub mod duckdb;
pub mod http;
pub mod protobuf;
pub mod report;
pub mod shapes;
pub mod signals;
pub mod sink;
pub mod sql;
pub mod writers;

use std::path::{Path, PathBuf};
use std::process::Command;

use batch::InputFormat;

pub use report::{Matrix, Row};
pub use shapes::{ContractChoice, Family, Shape};

/// The count of the full tier (`--full`, the 6-rule contract only).
pub const FULL_RECORDS: usize = 10_000_000;

/// How cells are run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// `rulec eval --input FILE --output FILE`: the batch crate's pipeline
    /// in a process of its own.
    InProcess,
    /// The same with `--fields decision`: the cheapest results, beside
    /// [`Mode::SqlDecision`].
    Decision,
    /// `rulec serve` and one `POST /evaluations` over loopback ([`http`]).
    Http,
    /// `rulec sql` with `rulec(...)` over the file ([`sql`]).
    Sql,
    /// `rulec sql` with `rulec_decision(...)` over the file ([`sql`]).
    SqlDecision,
    /// [`Mode::Sql`]'s query on a local cluster of one executor
    /// (`rulec sql --cluster`, [`crate::cluster`]).
    ClusterOne,
    /// The same on two executors.
    ClusterTwo,
}

/// What a cell's results are, so what they are compared with: the full
/// results in input order (`rulec eval`, HTTP), the decisions alone (in
/// any order: `--fields decision` and `rulec_decision`), or `rulec(...)`'s
/// struct (in any order).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ResultsKind {
    Full,
    Decisions,
    Sql,
}

impl Mode {
    pub const ALL: [Mode; 7] = [
        Mode::InProcess,
        Mode::Decision,
        Mode::Http,
        Mode::Sql,
        Mode::SqlDecision,
        Mode::ClusterOne,
        Mode::ClusterTwo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::InProcess => "in-process",
            Mode::Decision => "decision",
            Mode::Http => "http",
            Mode::Sql => "sql",
            Mode::SqlDecision => "sql-decision",
            Mode::ClusterOne => "cluster-1",
            Mode::ClusterTwo => "cluster-2",
        }
    }

    pub fn parse(name: &str) -> Result<Mode, String> {
        Mode::ALL.into_iter().find(|m| m.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
            format!("unknown mode `{name}` (modes: {})", names.join(", "))
        })
    }

    /// What the cell's results are.
    pub fn results(self) -> ResultsKind {
        match self {
            Mode::InProcess | Mode::Http => ResultsKind::Full,
            Mode::Decision | Mode::SqlDecision => ResultsKind::Decisions,
            Mode::Sql | Mode::ClusterOne | Mode::ClusterTwo => ResultsKind::Sql,
        }
    }

    /// Whether the mode runs `rulec sql`.
    pub fn is_sql(self) -> bool {
        matches!(self, Mode::Sql | Mode::SqlDecision) || self.executors().is_some()
    }

    /// The row a row of this mode is measured against: the batch row with
    /// the same results for a SQL row, in-process SQL for a cluster row.
    pub fn twin(self) -> Option<Mode> {
        match self {
            Mode::Sql => Some(Mode::InProcess),
            Mode::SqlDecision => Some(Mode::Decision),
            Mode::ClusterOne | Mode::ClusterTwo => Some(Mode::Sql),
            _ => None,
        }
    }

    /// The executors of a cluster mode's cluster.
    pub fn executors(self) -> Option<usize> {
        match self {
            Mode::ClusterOne => Some(1),
            Mode::ClusterTwo => Some(2),
            _ => None,
        }
    }

    /// Why this mode has no row for `format`, if it has none.
    fn refuses(self, format: &str) -> Option<&'static str> {
        match self {
            Mode::Http => (!http::FORMATS.contains(&format)).then_some(http::NOT_TAKEN),
            Mode::Decision | Mode::Sql | Mode::SqlDecision => (!sql::reads(format)).then_some(sql::NOT_READ),
            Mode::ClusterOne | Mode::ClusterTwo => (format != "parquet").then_some(sql::CLUSTER_READS),
            Mode::InProcess => None,
        }
    }

    /// Evaluates the cell's input into `output` (NDJSON results); what it
    /// took, or why it failed.
    fn run(
        self,
        plan: &Plan,
        cell: &Cell<'_>,
        output: &Path,
        errors: &Path,
    ) -> Result<child::Measured, String> {
        match self {
            Mode::InProcess => eval(plan, cell, output, errors, &[]),
            Mode::Decision => eval(plan, cell, output, errors, &["--fields", "decision"]),
            Mode::Sql | Mode::SqlDecision | Mode::ClusterOne | Mode::ClusterTwo => {
                sql::run(self, plan, cell, output, errors)
            }
            Mode::Http => http::run(&http::HttpCell {
                rulec: &plan.rulec,
                contract_file: cell.contract_file,
                contract: &cell.bundle.contract().name,
                channel: cell.family.channel(),
                body: cell.http_body.ok_or("internal: no body for HTTP")?,
                format: cell.format.name(),
                threads: plan.threads,
                output,
                errors,
                work: cell.work,
            }),
        }
    }
}

/// `rulec eval --input` on the cell's file, with `more` flags.
fn eval(
    plan: &Plan,
    cell: &Cell<'_>,
    output: &Path,
    errors: &Path,
    more: &[&str],
) -> Result<child::Measured, String> {
    let mut command = Command::new(&plan.rulec);
    command
        .arg("eval")
        .arg(cell.contract_file)
        .arg("--input")
        .arg(cell.input)
        .args(["--input-format", cell.format.name(), "--channel", cell.family.channel()])
        .arg("--output")
        .arg(output)
        .args(["--threads", &plan.threads.to_string()])
        .args(cell.eval_args)
        .args(more);
    child::run_cell(&mut command, errors)
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// In process, over HTTP, or both (each format's rows in this order).
    pub modes: Vec<Mode>,
    pub formats: Vec<InputFormat>,
    pub contracts: Vec<ContractChoice>,
    pub shapes: Vec<Shape>,
    /// Records per cell.
    pub records: usize,
    /// Also the 10M tier of the 6-rule contract.
    pub full: bool,
    pub threads: usize,
    /// Where input files are kept between runs (default: a temporary folder).
    pub data: Option<PathBuf>,
    /// The `rulec` binary that runs the cells.
    pub rulec: PathBuf,
    /// Run the DuckDB peer beside the reference contract, if it can run.
    pub duckdb: bool,
}

/// One cell about to run.
struct Cell<'a> {
    family: Family,
    format: InputFormat,
    input: &'a Path,
    /// The input as the HTTP endpoint takes it (an Arrow IPC stream for
    /// an Arrow file), for [`Mode::Http`].
    http_body: Option<&'a Path>,
    contract_file: &'a Path,
    /// The contract, compiled.
    bundle: &'a ir::Bundle,
    work: &'a Path,
    /// The writer's more flags for `rulec eval` ([`sink::FormatWriter::eval_args`]).
    eval_args: &'a [String],
}

/// Runs every cell of `plan`, telling `log` what it does.
pub fn run(plan: &Plan, log: &mut dyn FnMut(&str)) -> Result<Matrix, String> {
    let temporary;
    let work: &Path = match &plan.data {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            dir
        }
        None => {
            temporary = tempfile::Builder::new()
                .prefix("rulec-bench-batch-")
                .tempdir()
                .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
            temporary.path()
        }
    };
    let mut matrix = Matrix::new(plan);
    let available = Available::find(plan, work, &mut matrix.notes);
    for &shape in &plan.shapes {
        for family in families(&plan.contracts) {
            for (records, members) in tiers(plan, family) {
                let group = Group { family, shape, records, members: &members };
                run_group(plan, &group, work, &available, &mut matrix, log)?;
            }
        }
    }
    matrix.check();
    Ok(matrix)
}

/// What this machine and this `rulec` can run beyond `rulec eval`.
struct Available {
    /// The DuckDB peer, when it runs beside the reference contract.
    duckdb: Option<duckdb::Peer>,
    /// Whether `rulec sql` is built, when a SQL mode runs.
    sql: bool,
    /// Whether `rulec cluster` is built, when a cluster mode runs.
    cluster: bool,
}

impl Available {
    /// What can run, with a note in `notes` for each part that cannot.
    fn find(plan: &Plan, work: &Path, notes: &mut Vec<String>) -> Available {
        let duckdb = if plan.duckdb && plan.contracts.contains(&ContractChoice::Reference) {
            duckdb::Peer::find(work).map_err(|why| notes.push(why)).ok()
        } else {
            None
        };
        let sql = plan.modes.iter().any(|m| m.is_sql()) && sql::built(&plan.rulec);
        if plan.modes.iter().any(|m| m.is_sql()) && !sql {
            notes.push(format!("SQL rows skipped: {}.", sql::NOT_BUILT));
        }
        let clustered = plan.modes.iter().any(|m| m.executors().is_some());
        let cluster = clustered && sql::cluster_built(&plan.rulec);
        if clustered && !cluster {
            notes.push(format!("Cluster rows skipped: {}.", sql::CLUSTER_NOT_BUILT));
        }
        Available { duckdb, sql, cluster }
    }
}

/// The families of `contracts`, in order, once each.
fn families(contracts: &[ContractChoice]) -> Vec<Family> {
    let mut families: Vec<Family> = contracts.iter().map(|c| c.family()).collect();
    families.sort();
    families.dedup();
    families
}

/// The counts `family`'s contracts run at, each with the contracts that
/// run at it: `plan.records` for all, and [`FULL_RECORDS`] for the 6-rule
/// contract with `--full`.
fn tiers(plan: &Plan, family: Family) -> Vec<(usize, Vec<ContractChoice>)> {
    let members: Vec<ContractChoice> =
        plan.contracts.iter().copied().filter(|c| c.family() == family).collect();
    let mut tiers = vec![(plan.records, members.clone())];
    if plan.full && members.contains(&shapes::FULL_TIER) && plan.records != FULL_RECORDS {
        tiers.push((FULL_RECORDS, vec![shapes::FULL_TIER]));
    }
    tiers
}

/// Contracts of one family evaluating the same records.
struct Group<'a> {
    family: Family,
    shape: Shape,
    records: usize,
    members: &'a [ContractChoice],
}

impl Group<'_> {
    fn row(&self, mode: Mode, format: &str, contract: ContractChoice) -> Row {
        Row::new(mode.name(), format, &contract.name(), self.shape.name(), self.records)
    }

    /// A skipped row for each mode and contract of `format`.
    fn skipped(&self, plan: &Plan, format: &str, why: &str, matrix: &mut Matrix) {
        for &mode in &plan.modes {
            for &contract in self.members {
                let why = mode.refuses(format).unwrap_or(why);
                matrix.rows.push(self.row(mode, format, contract).skipped(why));
            }
        }
    }
}

/// Runs one group's cells, a format at a time: its input file written
/// (or found in `--data`), every contract run on it, the file deleted
/// unless kept.
fn run_group(
    plan: &Plan,
    group: &Group<'_>,
    work: &Path,
    available: &Available,
    matrix: &mut Matrix,
    log: &mut dyn FnMut(&str),
) -> Result<(), String> {
    if let Some(why) = group.family.unfit(group.shape) {
        for format in &plan.formats {
            group.skipped(plan, format.name(), why, matrix);
        }
        return Ok(());
    }
    let contracts = contract_files(group, work)?;
    for &format in &plan.formats {
        let Some(writer) = writers::writer(format.name()) else {
            group.skipped(plan, format.name(), "not built", matrix);
            continue;
        };
        let name = format!(
            "{}-{}-{}.{}",
            group.family.name(),
            group.shape.name(),
            group.records,
            writer.extension()
        );
        let input = work.join(name);
        if !input.exists() {
            if let Some(why) = too_big(group, work) {
                group.skipped(plan, format.name(), &why, matrix);
                continue;
            }
            log(&format!("writing {} ...", input.display()));
            write_input(&*writer, group, &contracts[0].1, &input)?;
        }
        let files =
            Files { eval_args: writer.eval_args(&input), http_body: http_body(plan, format, &input)?, input };
        run_format(plan, group, format, &contracts, &files, work, available, matrix, log);
        if plan.data.is_none() {
            let _ = std::fs::remove_file(&files.input);
            if let Some(body) = files.http_body.filter(|b| b != &files.input) {
                let _ = std::fs::remove_file(body);
            }
        }
    }
    Ok(())
}

/// One format's input for a group.
struct Files {
    input: PathBuf,
    /// The writer's more flags for `rulec eval` ([`sink::FormatWriter::eval_args`]).
    eval_args: Vec<String>,
    /// What an HTTP cell posts, when HTTP runs and takes the format.
    http_body: Option<PathBuf>,
}

/// The body the HTTP cells of `format` post: the input itself (NDJSON),
/// its Arrow IPC stream (Arrow), or none (no HTTP cell runs).
fn http_body(plan: &Plan, format: InputFormat, input: &Path) -> Result<Option<PathBuf>, String> {
    if !plan.modes.contains(&Mode::Http) || Mode::Http.refuses(format.name()).is_some() {
        return Ok(None);
    }
    match format {
        InputFormat::Arrow => http::arrow_stream(input).map(Some),
        _ => Ok(Some(input.to_path_buf())),
    }
}

/// Runs every mode and contract of the group on one format's input, and
/// the DuckDB peer on the reference contract's Arrow and Parquet files.
#[allow(clippy::too_many_arguments)]
fn run_format(
    plan: &Plan,
    group: &Group<'_>,
    format: InputFormat,
    contracts: &[(ContractChoice, ir::Bundle)],
    files: &Files,
    work: &Path,
    available: &Available,
    matrix: &mut Matrix,
    log: &mut dyn FnMut(&str),
) {
    // The peer runs on the reference contract's Arrow and Parquet files,
    // and its results are compared with rulec's (in process), kept until
    // then.
    let peer =
        available.duckdb.as_ref().filter(|_| sql::reads(format.name()) && group.family == Family::Reference);
    let kept = work.join("rulec-reference-results.ndjson");
    for &mode in &plan.modes {
        for (contract, bundle) in contracts {
            let row = group.row(mode, format.name(), *contract);
            if let Some(why) = mode.refuses(format.name()).or_else(|| unfit(mode, bundle, available)) {
                matrix.rows.push(row.skipped(why));
                continue;
            }
            // What the cell reads: the file, or the body posted.
            let read = match mode {
                Mode::Http => files.http_body.as_deref().unwrap_or(&files.input),
                _ => &files.input,
            };
            let row = match std::fs::metadata(read) {
                Ok(metadata) => row.with_input(metadata.len()),
                Err(e) => {
                    matrix.rows.push(row.failed(format!("cannot read {}: {e}", read.display())));
                    continue;
                }
            };
            let file = work.join(contract_file_name(*contract, group.shape));
            let cell = Cell {
                family: group.family,
                format,
                input: &files.input,
                http_body: files.http_body.as_deref(),
                contract_file: &file,
                bundle,
                work,
                eval_args: &files.eval_args,
            };
            let (shape, records) = (group.shape.name(), group.records);
            log(&format!(
                "running {} {} {} {shape} {records} ...",
                mode.name(),
                format.name(),
                contract.name()
            ));
            let keep = (peer.is_some() && mode == Mode::InProcess && *contract == ContractChoice::Reference)
                .then_some(kept.as_path());
            matrix.rows.push(run_cell(plan, mode, &cell, work, row, keep));
        }
    }
    if let Some(peer) = peer {
        log(&format!("running duckdb {} {} ...", group.shape.name(), group.records));
        let row = group.row(Mode::InProcess, format.name(), ContractChoice::Reference);
        let row = match std::fs::metadata(&files.input) {
            Ok(metadata) => row.with_input(metadata.len()),
            Err(_) => row,
        };
        let compared = kept.exists().then_some(kept.as_path());
        matrix.rows.push(peer.run(&files.input, work, plan.threads, row, compared));
        let _ = std::fs::remove_file(&kept);
    }
}

/// Why a SQL mode has no row for `bundle`'s contract, if it has none.
fn unfit(mode: Mode, bundle: &ir::Bundle, available: &Available) -> Option<&'static str> {
    if !mode.is_sql() {
        None
    } else if !available.sql {
        Some(sql::NOT_BUILT)
    } else if mode.executors().is_some() && !available.cluster {
        Some(sql::CLUSTER_NOT_BUILT)
    } else if !bundle.contract().windows.is_empty() {
        Some(sql::WINDOWS)
    } else {
        None
    }
}

fn contract_file_name(contract: ContractChoice, shape: Shape) -> String {
    format!("contract-{}-{}.yaml", contract.name(), shape.name())
}

/// Writes (and compiles, to check them and for the input's types) the
/// group's contracts.
fn contract_files(group: &Group<'_>, work: &Path) -> Result<Vec<(ContractChoice, ir::Bundle)>, String> {
    group
        .members
        .iter()
        .map(|&contract| {
            let source = contract.source(group.shape);
            let write = |path: &Path, bytes: &[u8]| {
                std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
            };
            if contract.family() == Family::Signals {
                for (name, bytes) in signals::model_files() {
                    write(&work.join(name), &bytes)?;
                }
            }
            let name = contract_file_name(contract, group.shape);
            let compiled = frontend::compile_in(work, &name, &source);
            let bundle = compiled.bundle.ok_or_else(|| {
                let why = compiled.diagnostics.render(false);
                format!("internal: contract {} does not compile: {why}", contract.name())
            })?;
            write(&work.join(&name), source.as_bytes())?;
            Ok((contract, bundle))
        })
        .collect()
}

/// Writes the group's records to `path` (through a `.part` file, so an
/// interrupted run leaves no input to reuse).
fn write_input(
    writer: &dyn sink::FormatWriter,
    group: &Group<'_>,
    bundle: &ir::Bundle,
    path: &Path,
) -> Result<(), String> {
    let part = path.with_extension(format!("{}.part", writer.extension()));
    let mut sink = writer.create(&part, bundle.contract())?;
    for seed in 1..=group.records as u64 {
        sink.write(&group.family.record(group.shape, seed))?;
    }
    sink.finish()?;
    std::fs::rename(&part, path).map_err(|e| format!("cannot rename {}: {e}", part.display()))
}

/// Why the group's input file would not fit on the disk, if it would not:
/// its size guessed from its first records as NDJSON (other formats are
/// about as large or smaller), with room for the results.
fn too_big(group: &Group<'_>, work: &Path) -> Option<String> {
    const SAMPLE: u64 = 200;
    let sample: usize =
        (1..=SAMPLE).map(|seed| group.family.record(group.shape, seed).to_string().len() + 1).sum();
    let needed = (sample as f64 / SAMPLE as f64 * group.records as f64 * 1.2) as u64;
    let free = free_bytes(work)?;
    let gib = |bytes: u64| bytes as f64 / (1u64 << 30) as f64;
    (needed > free).then(|| format!("needs about {:.1} GiB of disk, {:.1} GiB free", gib(needed), gib(free)))
}

/// The bytes free to an unprivileged user on `dir`'s file system.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero `statvfs` is a valid value of the plain C struct.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `stat` is valid for writes.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// Runs one cell and fills its row: time, memory and the results' digest,
/// or why it failed. The results are deleted, or moved to `keep`.
fn run_cell(plan: &Plan, mode: Mode, cell: &Cell<'_>, work: &Path, row: Row, keep: Option<&Path>) -> Row {
    let output = work.join("results.ndjson");
    let errors = work.join("stderr.txt");
    // Only `rulec eval`'s full results come in input order.
    let digest = if mode.results() == ResultsKind::Full { check::digest } else { check::digest_unordered };
    let row = match mode.run(plan, cell, &output, &errors) {
        Ok(measured) => match digest(&output) {
            Ok((_, lines)) if lines != row.records => {
                let why = format!("{lines} results for {} records", row.records);
                row.failed(why)
            }
            Ok((sha256, _)) => row.measured(&measured, sha256),
            Err(e) => row.failed(e),
        },
        Err(e) => row.failed(e),
    };
    match keep {
        Some(path) if row.failed.is_none() => {
            if let Err(e) = std::fs::rename(&output, path) {
                return row.failed(format!("cannot keep {}: {e}", output.display()));
            }
        }
        _ => {
            let _ = std::fs::remove_file(&output);
        }
    }
    row
}

/// The last line a child wrote to its stderr file.
pub(crate) fn last_line(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no message").trim().to_string()
}
