//! The batch matrix's rows, and its report: a markdown table, or JSON.

use std::fmt::Write;

use serde::Serialize;

use super::check::{self, Results, Verdict};
use super::child::Measured;
use super::{Mode, Plan, ResultsKind};
use crate::machine::Machine;

/// One cell: an engine on one format, contract, shape and count.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Row {
    /// `rulec`, or `duckdb` (the peer).
    pub engine: &'static str,
    /// The mode's name ([`Mode::name`]; the DuckDB peer: `in-process`).
    pub mode: &'static str,
    pub format: String,
    /// `reference`, or the generated contract's number of rules.
    pub contract: String,
    pub shape: &'static str,
    pub records: usize,
    /// The input file's size.
    pub input_bytes: Option<u64>,
    pub wall_s: Option<f64>,
    pub records_per_s: Option<f64>,
    /// Input MiB per second of wall time.
    pub mib_per_s: Option<f64>,
    /// The peak resident set of the process that evaluated: the `rulec
    /// eval` child, or the `rulec serve` child over HTTP.
    pub peak_rss_mib: Option<f64>,
    /// The NDJSON results' SHA-256 (rulec's rows).
    pub results_sha256: Option<String>,
    /// rulec's records/s over the peer's, on the same file (the peer's rows).
    pub rulec_over_duckdb: Option<f64>,
    /// A row's wall time over its twin's, on the same file ([`Mode::twin`]):
    /// a SQL row's over the batch row's with the same results (`rulec eval
    /// --input`; `--fields decision` for `rulec_decision`), a cluster
    /// row's over in-process `rulec sql`'s.
    pub over_twin: Option<f64>,
    /// Whether the peer's results say what rulec's do, record for record.
    pub agrees_with_rulec: Option<bool>,
    /// Why the cell did not run.
    pub skipped: Option<String>,
    /// Why it did not finish.
    pub failed: Option<String>,
}

impl Row {
    pub fn new(mode: &'static str, format: &str, contract: &str, shape: &'static str, records: usize) -> Row {
        Row {
            engine: "rulec",
            mode,
            format: format.to_string(),
            contract: contract.to_string(),
            shape,
            records,
            input_bytes: None,
            wall_s: None,
            records_per_s: None,
            mib_per_s: None,
            peak_rss_mib: None,
            results_sha256: None,
            rulec_over_duckdb: None,
            over_twin: None,
            agrees_with_rulec: None,
            skipped: None,
            failed: None,
        }
    }

    pub fn skipped(self, why: &str) -> Row {
        Row { skipped: Some(why.to_string()), ..self }
    }

    pub fn failed(self, why: String) -> Row {
        Row { failed: Some(why), ..self }
    }

    pub fn with_input(self, bytes: u64) -> Row {
        Row { input_bytes: Some(bytes), ..self }
    }

    /// The row with a run's numbers.
    pub fn measured(self, measured: &Measured, sha256: String) -> Row {
        let seconds = measured.wall.as_secs_f64().max(1e-9);
        Row {
            wall_s: Some(seconds),
            records_per_s: Some(self.records as f64 / seconds),
            mib_per_s: self.input_bytes.map(|b| b as f64 / (1024.0 * 1024.0) / seconds),
            peak_rss_mib: Some(measured.peak_rss_bytes as f64 / (1024.0 * 1024.0)),
            results_sha256: Some(sha256),
            ..self
        }
    }

    /// What must agree across formats: the same contract, shape and
    /// count, and the same kind of results.
    fn cell(&self) -> String {
        let results = match Mode::parse(self.mode).map(Mode::results) {
            Ok(ResultsKind::Decisions) => " (decisions)",
            Ok(ResultsKind::Sql) => " (rulec(...))",
            _ => "",
        };
        format!("contract {} × {} × {}{results}", self.contract, self.shape, self.records)
    }
}

/// Every row of a run, the cross-format check and notes.
#[derive(Clone, Debug, Serialize)]
pub struct Matrix {
    pub machine: Machine,
    pub modes: Vec<&'static str>,
    pub threads: usize,
    pub rows: Vec<Row>,
    pub cross_format: Verdict,
    /// Sentences about what could not run (the DuckDB peer).
    pub notes: Vec<String>,
}

impl Matrix {
    pub fn new(plan: &Plan) -> Matrix {
        Matrix {
            machine: Machine::detect(),
            modes: plan.modes.iter().map(|m| m.name()).collect(),
            threads: plan.threads,
            rows: Vec::new(),
            cross_format: Verdict::default(),
            notes: Vec::new(),
        }
    }

    /// Runs the cross-format check, and sets each peer row's ratio.
    pub fn check(&mut self) {
        let cells: Vec<String> = self.rows.iter().map(Row::cell).collect();
        let results: Vec<Results<'_>> = self
            .rows
            .iter()
            .zip(&cells)
            .filter(|(row, _)| row.engine == "rulec")
            .filter_map(|(row, cell)| {
                row.results_sha256.as_deref().map(|sha256| Results {
                    format: format!("{} ({})", row.format, row.mode),
                    cell: cell.clone(),
                    sha256,
                })
            })
            .collect();
        self.cross_format = check::check(&results);
        let ratios: Vec<(Option<f64>, Option<f64>)> =
            self.rows.iter().map(|row| (self.ratio(row), self.over_twin(row))).collect();
        for (row, (ratio, over_twin)) in self.rows.iter_mut().zip(ratios) {
            row.rulec_over_duckdb = ratio;
            row.over_twin = over_twin;
        }
    }

    /// A row's wall time over its twin's ([`Mode::twin`]) on the same file.
    fn over_twin(&self, row: &Row) -> Option<f64> {
        let twin = Mode::parse(row.mode).ok()?.twin()?;
        let other = self.rows.iter().find(|r| {
            r.engine == "rulec"
                && r.mode == twin.name()
                && r.format == row.format
                && (&r.contract, r.shape, r.records) == (&row.contract, row.shape, row.records)
        })?;
        Some(row.wall_s? / other.wall_s?)
    }

    /// rulec's records/s over `peer`'s on the same cell.
    fn ratio(&self, peer: &Row) -> Option<f64> {
        if peer.engine != "duckdb" {
            return None;
        }
        let rulec = self.rows.iter().find(|r| {
            r.engine == "rulec" && r.mode == peer.mode && r.format == peer.format && r.cell() == peer.cell()
        })?;
        Some(rulec.records_per_s? / peer.records_per_s?)
    }

    /// Each rulec mode's records/s over the peer's, on the peer's cell.
    fn over_peer(&self, peer: &Row) -> Vec<String> {
        let rulec = self.rows.iter().filter(|r| {
            r.engine == "rulec"
                && r.format == peer.format
                && (&r.contract, r.shape, r.records) == (&peer.contract, peer.shape, peer.records)
        });
        rulec
            .filter_map(|r| Some(format!("{} {:.2}x", r.mode, r.records_per_s? / peer.records_per_s?)))
            .collect()
    }

    /// Whether every cell that ran finished, and the formats agree.
    pub fn passed(&self) -> bool {
        self.cross_format.mismatches.is_empty() && self.rows.iter().all(|r| r.failed.is_none())
    }

    /// The markdown report: the machine, the table, the check and notes.
    pub fn markdown(&self) -> String {
        let m = &self.machine;
        let mut out = format!(
            "machine: {} ({} cores), {}, commit {}\nmodes: {}, {} threads; in-process: wall time of each `rulec eval --input` process (start, contract load, evaluation, results written), peak RSS its own; http: wall time of one `POST /evaluations` to a `rulec serve` serving the contract (the body sent, the NDJSON results written), peak RSS the server's; decision: `rulec eval --input --fields decision`; sql, sql-decision: wall time of one `rulec sql` process calling `rulec(...)`, or `rulec_decision(...)` beside the contract's name and version, over the file, results written as NDJSON, peak RSS its own; cluster-1, cluster-2: wall time of one `rulec sql --cluster` with rulec(...) on a local cluster of a scheduler and one or two executors (started before, not timed; the threads shared among the executors), peak RSS the client's\n\n",
            m.cpu,
            m.cores,
            m.rustc,
            m.commit,
            self.modes.join(", "),
            self.threads
        );
        out.push_str("| engine | mode | format | contract | shape | records | B/record | wall s | records/s | MiB/s | peak RSS MiB | note |\n");
        out.push_str("| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
        for row in &self.rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                row.engine,
                row.mode,
                row.format,
                row.contract,
                row.shape,
                row.records,
                number(row.input_bytes.map(|b| b as f64 / row.records.max(1) as f64), 0),
                number(row.wall_s, 2),
                number(row.records_per_s, 0),
                number(row.mib_per_s, 1),
                number(row.peak_rss_mib, 1),
                note(row),
            );
        }
        out.push('\n');
        match (&self.cross_format.mismatches[..], self.cross_format.compared) {
            ([], 0) => out.push_str("cross-format check: nothing to compare (one format ran)\n"),
            ([], n) => {
                let _ = writeln!(
                    out,
                    "cross-format check: ok, every format and mode gave the same results ({n} cells)"
                );
            }
            (mismatches, _) => {
                for mismatch in mismatches {
                    let _ = writeln!(out, "cross-format check FAILED: {mismatch}");
                }
            }
        }
        for peer in self.rows.iter().filter(|r| r.rulec_over_duckdb.is_some()) {
            let _ = writeln!(
                out,
                "rulec/duckdb ({} × {} × {}, {}), the records/s: {}",
                peer.contract,
                peer.shape,
                peer.records,
                peer.format,
                self.over_peer(peer).join(", ")
            );
        }
        for row in self.rows.iter().filter(|r| r.over_twin.is_some()) {
            let _ = writeln!(
                out,
                "{} ({} × {} × {}, {}): {} took {:.2}x the wall time of {}",
                row.mode,
                row.contract,
                row.shape,
                row.records,
                row.format,
                what(row.mode),
                row.over_twin.unwrap_or_default(),
                twin(row.mode),
            );
        }
        for line in &self.notes {
            let _ = writeln!(out, "{line}");
        }
        out
    }
}

/// What a row with a twin ran, in the report's words.
fn what(mode: &str) -> &'static str {
    match Mode::parse(mode) {
        Ok(Mode::Sql) => "`rulec sql` with rulec(...)",
        Ok(Mode::SqlDecision) => "`rulec sql` with rulec_decision(...)",
        Ok(Mode::ClusterOne) => "`rulec sql --cluster` on one executor",
        Ok(Mode::ClusterTwo) => "`rulec sql --cluster` on two executors",
        _ => "the row",
    }
}

/// What a row's twin ran, in the report's words.
fn twin(mode: &str) -> &'static str {
    match Mode::parse(mode).ok().and_then(Mode::twin) {
        Some(Mode::InProcess) => "`rulec eval --input`",
        Some(Mode::Decision) => "`rulec eval --input --fields decision`",
        Some(Mode::Sql) => "in-process `rulec sql`",
        _ => "its twin",
    }
}

fn number(value: Option<f64>, places: usize) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.places$}"))
}

fn note(row: &Row) -> String {
    if let Some(why) = &row.skipped {
        return format!("skipped: {why}");
    }
    if let Some(why) = &row.failed {
        return format!("FAILED: {}", why.replace('|', "\\|"));
    }
    let agrees = if row.agrees_with_rulec == Some(true) { ", same results as rulec" } else { "" };
    match (row.rulec_over_duckdb, row.over_twin) {
        (Some(ratio), _) => format!("rulec/duckdb {ratio:.2}x{agrees}"),
        (None, Some(ratio)) => format!("{ratio:.2}x the wall time of {}", twin(row.mode)),
        (None, None) => agrees.trim_start_matches(", ").to_string(),
    }
}
