//! A file replaced whole: written beside its place and moved over it
//! once complete, so a write that fails (or is cut off) leaves what was
//! there, and a file being read while its replacement is written is read
//! whole (`rulec sql --output` onto one of the query's inputs, `rulec fmt`).

use std::path::Path;

/// A file written in place of another: created beside it (same folder,
/// same extension), moved over it by [`Staged::commit`], removed if
/// dropped before.
#[derive(Debug)]
pub struct Staged {
    file: tempfile::TempPath,
    target: std::path::PathBuf,
}

impl Staged {
    pub fn beside(target: &Path) -> Result<Staged, String> {
        let folder = match target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let extension = target.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
        let file = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(&format!(".partial{extension}"))
            .tempfile_in(folder)
            .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
        Ok(Staged { file: file.into_temp_path(), target: target.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.file
    }

    /// Moves the written file over the target, with the target's
    /// permissions if it existed, else a new file's (the temporary file
    /// is its owner's alone).
    pub fn commit(self) -> Result<(), String> {
        let failed = |e: std::io::Error| format!("cannot write {}: {e}", self.target.display());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let permissions = std::fs::metadata(&self.target)
                .map(|existing| existing.permissions())
                .unwrap_or_else(|_| std::fs::Permissions::from_mode(0o644));
            std::fs::set_permissions(&self.file, permissions).map_err(failed)?;
        }
        let target = self.target.clone();
        self.file.persist(&target).map_err(|e| failed(e.error))
    }
}
