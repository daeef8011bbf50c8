//! Command-line inputs: paths expanded to contract and bundle files, and
//! files read with errors that name them.

use std::path::{Path, PathBuf};

use crate::Failure;

/// What a file is, by its name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FileKind {
    Contract,
    Bundle,
}

pub fn kind_of(path: &Path) -> Option<FileKind> {
    let name = path.file_name()?.to_str()?;
    if name.ends_with(".bundle.json") {
        Some(FileKind::Bundle)
    } else if name.ends_with(".yaml") || name.ends_with(".yml") {
        Some(FileKind::Contract)
    } else {
        None
    }
}

/// Expands files and folders (recursively, sorted) to the files of the
/// accepted kinds. A file named directly is taken whatever its name.
pub fn expand(paths: &[PathBuf], accept: &[FileKind]) -> Result<Vec<PathBuf>, Failure> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path)
            .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))?;
        if meta.is_dir() {
            let before = out.len();
            walk(path, accept, &mut out)?;
            if out.len() == before {
                return Err(Failure::Usage(format!("{} holds no contract files", path.display())));
            }
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, accept: &[FileKind], out: &mut Vec<PathBuf>) -> Result<(), Failure> {
    let read = |e: std::io::Error| Failure::Usage(format!("cannot read {}: {e}", dir.display()));
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(read)?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, accept, out)?;
        } else if kind_of(&path).is_some_and(|k| accept.contains(&k)) {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads a whole file as bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))
}

/// Reads a contract as text; a file that is not UTF-8 is reported.
pub fn read_text(path: &Path) -> Result<String, Failure> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        anstream::eprintln!(
            "{}: error: the file is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        );
        Failure::Reported
    })
}
