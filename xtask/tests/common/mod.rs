//! What the workspace's invariant tests share: the workspace's root and
//! its members, as the root `Cargo.toml` lists them.

use std::path::{Path, PathBuf};

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The workspace's members, as the root `Cargo.toml` lists them.
pub fn members() -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).expect("Cargo.toml");
    let list =
        manifest.split("members = [").nth(1).and_then(|rest| rest.split(']').next()).expect("a members list");
    list.split(',').map(|m| m.trim().trim_matches('"').to_string()).filter(|m| !m.is_empty()).collect()
}
