//! The one folder walker: which files under the paths a command is given
//! are contracts (`.yaml`, `.yml`) and bundles (`.bundle.json`).
//!
//! Folders are walked recursively and their files sorted by path. A file
//! or folder inside them whose name starts with `.` is skipped (`.git`,
//! editors' swap files, the temporary file an atomic write renames into
//! place), whatever its extension; a path given by name is taken whatever
//! its name (a file that is not a bundle is read as a contract). Symbolic
//! links are followed; a folder reached twice is walked once.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What a file holds, by its name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FileKind {
    /// YAML source: `.yaml`, `.yml`.
    Contract,
    /// A compiled contract: `.bundle.json`.
    Bundle,
}

impl FileKind {
    /// The kind a file's name says, if any.
    pub fn of(path: &Path) -> Option<FileKind> {
        let name = path.file_name()?.to_str()?;
        if name.ends_with(".bundle.json") {
            Some(FileKind::Bundle)
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            Some(FileKind::Contract)
        } else {
            None
        }
    }

    fn describe(kinds: &[FileKind]) -> &'static str {
        match (kinds.contains(&FileKind::Contract), kinds.contains(&FileKind::Bundle)) {
            (true, true) => "contracts (`.yaml`, `.yml`) or bundles (`.bundle.json`)",
            (false, true) => "bundles (`.bundle.json`)",
            _ => "contracts (`.yaml`, `.yml`)",
        }
    }
}

/// A file to load.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Found {
    pub path: PathBuf,
    pub kind: FileKind,
}

/// The files of the `accept`ed kinds under `paths`, path after path. A
/// path that cannot be read, or a folder that holds no such file, is an
/// error saying so.
pub fn find(paths: &[PathBuf], accept: &[FileKind]) -> Result<Vec<Found>, String> {
    let mut found = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| cannot_read(path, &e))?;
        if !meta.is_dir() {
            let kind = FileKind::of(path).unwrap_or(FileKind::Contract);
            found.push(Found { path: path.clone(), kind });
            continue;
        }
        let files = walk(path, accept)?;
        if files.is_empty() {
            return Err(format!(
                "{} holds no {} (names starting with `.` are skipped)",
                path.display(),
                FileKind::describe(accept)
            ));
        }
        found.extend(files);
    }
    Ok(found)
}

/// The files of the accepted kinds in `root` and the folders below it,
/// sorted by path.
fn walk(root: &Path, accept: &[FileKind]) -> Result<Vec<Found>, String> {
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(folder) = pending.pop() {
        if !seen.insert(std::fs::canonicalize(&folder).map_err(|e| cannot_read(&folder, &e))?) {
            continue;
        }
        for path in entries(&folder)? {
            if path.is_dir() {
                pending.push(path);
            } else if let Some(kind) = FileKind::of(&path).filter(|kind| accept.contains(kind)) {
                files.push(Found { path, kind });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The entries of `folder` whose names do not start with `.`.
fn entries(folder: &Path) -> Result<Vec<PathBuf>, String> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(folder).map_err(|e| cannot_read(folder, &e))? {
        let entry = entry.map_err(|e| cannot_read(folder, &e))?;
        if !entry.file_name().as_encoded_bytes().starts_with(b".") {
            paths.push(entry.path());
        }
    }
    Ok(paths)
}

fn cannot_read(path: &Path, e: &std::io::Error) -> String {
    format!("cannot read {}: {e}", path.display())
}
