//! The DuckDB peer: the reference contract as one SQL query
//! (`benches/peers/duckdb_reference.py`), run by `python3` on the same
//! Arrow file as rulec, timed and measured the same way.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::child;
use super::report::Row;

/// The script, embedded so the binary runs it from anywhere.
const SCRIPT: &str = include_str!("../../peers/duckdb_reference.py");

/// What to say when the peer cannot run.
pub const HOW_TO_GET_IT: &str = "python3 -m pip install duckdb pyarrow";

/// The peer, ready to run.
#[derive(Debug)]
pub struct Peer {
    script: PathBuf,
}

impl Peer {
    /// The peer with its script in `work`, or the sentence saying why it
    /// cannot run and how to get it.
    pub fn find(work: &Path) -> Result<Peer, String> {
        let imports = Command::new("python3")
            .args(["-c", "import duckdb, pyarrow"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !imports.is_ok_and(|s| s.success()) {
            return Err(format!(
                "DuckDB peer skipped: `python3 -c 'import duckdb, pyarrow'` fails; get it with `{HOW_TO_GET_IT}`."
            ));
        }
        let script = work.join("duckdb_reference.py");
        std::fs::write(&script, SCRIPT).map_err(|e| format!("cannot write {}: {e}", script.display()))?;
        Ok(Peer { script })
    }

    /// Runs the query over `input` (transfers, Arrow IPC) with `threads`,
    /// results to an Arrow file in `work`, and fills `row`; then (not
    /// timed) compares them with rulec's results for the same records,
    /// `rulec_results`, when they are there.
    pub fn run(
        &self,
        input: &Path,
        work: &Path,
        threads: usize,
        row: Row,
        rulec_results: Option<&Path>,
    ) -> Row {
        let output = work.join("duckdb-results.arrow");
        let errors = work.join("duckdb-stderr.txt");
        let row = Row { engine: "duckdb", ..row };
        let stderr = match std::fs::File::create(&errors) {
            Ok(file) => file,
            Err(e) => return row.failed(format!("cannot create {}: {e}", errors.display())),
        };
        let mut command = Command::new("python3");
        command
            .arg(&self.script)
            .arg(input)
            .arg(&output)
            .args(["--channel", super::Family::Reference.channel(), "--threads", &threads.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        let row = match child::run(&mut command) {
            Ok((measured, status)) if status.success() => {
                let rows = super::last_line(&errors);
                if rows == format!("{} rows", row.records) {
                    let row = Row { results_sha256: None, ..row.measured(&measured, String::new()) };
                    match rulec_results {
                        Some(results) => self.compare(&output, results, &errors, row),
                        None => row,
                    }
                } else {
                    let why = format!("the query gave {rows} for {} records", row.records);
                    row.failed(why)
                }
            }
            Ok((_, status)) => row.failed(format!("{status}: {}", super::last_line(&errors))),
            Err(e) => row.failed(e),
        };
        let _ = std::fs::remove_file(&output);
        row
    }

    /// Whether DuckDB's results say what rulec's do, record for record.
    fn compare(&self, duckdb_results: &Path, rulec_results: &Path, errors: &Path, row: Row) -> Row {
        let stderr = match std::fs::File::create(errors) {
            Ok(file) => file,
            Err(e) => return row.failed(format!("cannot create {}: {e}", errors.display())),
        };
        let compared = Command::new("python3")
            .arg(&self.script)
            .arg("--compare")
            .arg(duckdb_results)
            .arg(rulec_results)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .status();
        match compared {
            Ok(status) if status.success() => Row { agrees_with_rulec: Some(true), ..row },
            Ok(_) => {
                let why = format!("its results and rulec's {}", super::last_line(errors));
                Row { agrees_with_rulec: Some(false), ..row.failed(why) }
            }
            Err(e) => row.failed(format!("cannot run python3: {e}")),
        }
    }
}
