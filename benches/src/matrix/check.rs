//! The cross-format check: every format's results for the same contract,
//! shape and count, in process or over HTTP, must be the same bytes once
//! written as NDJSON (the batch promise, INTERFACES.md), compared by
//! their SHA-256; results that come in no set order (SQL's) are compared
//! as the same lines in any order.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// One cell's results, for the check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Results<'a> {
    /// The format and mode, as the report names them.
    pub format: String,
    /// What must agree: contract, shape and count.
    pub cell: String,
    pub sha256: &'a str,
}

/// What the check found.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    /// Cells run in two formats or more, so compared.
    pub compared: usize,
    /// One sentence per cell whose formats disagree.
    pub mismatches: Vec<String>,
}

/// Compares the results of every cell across its formats.
pub fn check(results: &[Results<'_>]) -> Verdict {
    let mut cells: BTreeMap<&str, Vec<&Results<'_>>> = BTreeMap::new();
    for r in results {
        cells.entry(r.cell.as_str()).or_default().push(r);
    }
    let mut verdict = Verdict::default();
    for (cell, runs) in cells {
        if runs.len() < 2 {
            continue;
        }
        verdict.compared += 1;
        if runs.iter().any(|r| r.sha256 != runs[0].sha256) {
            let each: Vec<String> =
                runs.iter().map(|r| format!("{} {}", r.format, short(r.sha256))).collect();
            verdict.mismatches.push(format!("{cell}: the formats' results differ ({})", each.join(", ")));
        }
    }
    verdict
}

fn short(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

/// The SHA-256 of a file, hex, and its number of lines.
pub fn digest(path: &Path) -> Result<(String, usize), String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 1 << 20];
    let mut lines = 0;
    loop {
        let n = file.read(&mut buffer).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        lines += buffer[..n].iter().filter(|b| **b == b'\n').count();
        hasher.update(&buffer[..n]);
    }
    let hex = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((hex, lines))
}

/// A digest of a file's lines whatever their order (the wrapping sum of
/// the first 128 bits of each line's SHA-256, hex), and their number: for
/// results that come in no set order (SQL's, and the decisions compared
/// with them).
pub fn digest_unordered(path: &Path) -> Result<(String, usize), String> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let (mut sum, mut lines) = (0u128, 0);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        lines += usize::from(line.ends_with(b"\n"));
        let hash = Sha256::digest(&line);
        let mut low = [0u8; 16];
        low.copy_from_slice(&hash[..16]);
        sum = sum.wrapping_add(u128::from_le_bytes(low));
    }
    Ok((format!("{sum:032x}"), lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results<'a>(format: &str, cell: &str, sha256: &'a str) -> Results<'a> {
        Results { format: format.to_string(), cell: cell.to_string(), sha256 }
    }

    #[test]
    fn the_same_results_in_every_format_pass() {
        let verdict = check(&[
            results("ndjson", "6 flat 2000", "aaaa"),
            results("arrow", "6 flat 2000", "aaaa"),
            results("ndjson", "24 flat 2000", "bbbb"),
        ]);
        assert_eq!(verdict, Verdict { compared: 1, mismatches: vec![] });
    }

    #[test]
    fn a_format_with_other_results_fails_naming_the_cell() {
        let verdict = check(&[
            results("ndjson", "6 flat 2000", "aaaa"),
            results("arrow", "6 flat 2000", "abab"),
            results("ndjson", "6 wide 2000", "cccc"),
            results("arrow", "6 wide 2000", "cccc"),
        ]);
        assert_eq!(verdict.compared, 2);
        assert_eq!(
            verdict.mismatches,
            ["6 flat 2000: the formats' results differ (ndjson aaaa, arrow abab)"]
        );
    }

    #[test]
    fn an_unordered_digest_is_of_the_lines_in_any_order() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("written");
            digest_unordered(&path).expect("read")
        };
        let (ab, lines) = write("ab", "a\nb\n");
        assert_eq!(lines, 2);
        assert_eq!(write("ba", "b\na\n").0, ab);
        assert_ne!(write("aa", "a\na\n").0, ab);
        assert_ne!(write("a", "a\n").0, ab);
    }

    #[test]
    fn a_digest_is_of_the_bytes() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "{\"decision\":\"allow\"}\n").expect("written");
        std::fs::write(&b, "{\"decision\":\"deny\"}\n").expect("written");
        let (da, lines) = digest(&a).expect("read");
        assert_eq!(lines, 1);
        assert_ne!(da, digest(&b).expect("read").0);
        assert_eq!(da.len(), 64);
    }
}
