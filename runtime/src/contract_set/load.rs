//! A set loaded from files and folders: the files [`walk`](super::walk)
//! finds, read; YAML compiled by the function the caller passes
//! ([`CompileYaml`]: compiling is the front end's job, and `runtime`
//! never depends on it), bundles decoded and verified; names checked for
//! duplicates (one error naming both files); then every bundle loaded
//! into an engine. Every problem of every file is reported, not only the
//! first; reading and compiling happen once, loading once per engine
//! (`rulec test` loads the same sources into two).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::path::{Path, PathBuf};

use ir::Bundle;

use super::ContractSet;
use super::walk::{self, FileKind, Found};
use crate::engine::Engine;

/// Compiles a contract's YAML text (`path` names it in messages): its
/// bundle, or its diagnostics, rendered (they name the file).
pub type CompileYaml<'a> = dyn FnMut(&Path, &str) -> Result<Bundle, String> + 'a;

/// A contract read from its file, not yet loaded into an engine.
#[derive(Clone, Debug)]
pub struct Source {
    pub path: PathBuf,
    pub bundle: Bundle,
}

/// Why a set could not be loaded.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum LoadFailure {
    /// A path could not be read, or a folder holds no contract.
    Io(String),
    /// Contracts are wrong: every problem, each naming its file (rendered
    /// diagnostics, a damaged bundle, a name defined twice, a host
    /// function the engine lacks).
    Contracts(Vec<String>),
}

impl fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadFailure::Io(message) => f.write_str(message),
            LoadFailure::Contracts(problems) => f.write_str(&problems.join("\n")),
        }
    }
}

impl std::error::Error for LoadFailure {}

/// Reads every contract and bundle under `paths` (folders walked), each
/// name defined once.
pub fn read(paths: &[PathBuf], compile: &mut CompileYaml<'_>) -> Result<Vec<Source>, LoadFailure> {
    let files = walk::find(paths, &[FileKind::Contract, FileKind::Bundle]).map_err(LoadFailure::Io)?;
    let mut sources = Vec::with_capacity(files.len());
    let mut problems = Vec::new();
    for file in &files {
        match read_one(file, compile)? {
            Ok(bundle) => sources.push(Source { path: file.path.clone(), bundle }),
            Err(problem) => problems.push(problem),
        }
    }
    let names = sources.iter().map(|s| (s.path.as_path(), s.bundle.contract().name.as_str()));
    problems.extend(duplicates(names));
    if problems.is_empty() { Ok(sources) } else { Err(LoadFailure::Contracts(problems)) }
}

/// A file's bundle, or the problem with it; an error when it cannot be
/// read at all.
fn read_one(file: &Found, compile: &mut CompileYaml<'_>) -> Result<Result<Bundle, String>, LoadFailure> {
    let path = &file.path;
    let bytes =
        std::fs::read(path).map_err(|e| LoadFailure::Io(format!("cannot read {}: {e}", path.display())))?;
    Ok(match file.kind {
        FileKind::Bundle => Bundle::from_json(&bytes).map_err(|e| format!("{}: error: {e}", path.display())),
        FileKind::Contract => match std::str::from_utf8(&bytes) {
            Ok(text) => compile(path, text),
            Err(e) => Err(format!(
                "{}: error: the file is not UTF-8 text (invalid byte at offset {})",
                path.display(),
                e.valid_up_to()
            )),
        },
    })
}

/// One error for each file that defines a contract an earlier file
/// defines, naming both files.
pub fn duplicates<'a>(defined: impl IntoIterator<Item = (&'a Path, &'a str)>) -> Vec<String> {
    let mut first: HashMap<&str, &Path> = HashMap::new();
    let mut problems = Vec::new();
    for (path, name) in defined {
        match first.entry(name) {
            Entry::Occupied(earlier) => problems.push(format!(
                "error: {} and {} both define the contract `{name}`",
                earlier.get().display(),
                path.display()
            )),
            Entry::Vacant(slot) => {
                slot.insert(path);
            }
        }
    }
    problems
}

/// Loads `sources` into `engine`, as one set.
pub fn load(engine: &Engine, sources: &[Source]) -> Result<ContractSet, LoadFailure> {
    let mut contracts = Vec::with_capacity(sources.len());
    let mut problems = Vec::new();
    for source in sources {
        match engine.load(source.bundle.clone()) {
            Ok(contract) => contracts.push(contract),
            Err(e) => problems.push(format!("{}: error: {e}", source.path.display())),
        }
    }
    if !problems.is_empty() {
        return Err(LoadFailure::Contracts(problems));
    }
    ContractSet::new(contracts).map_err(|problem| LoadFailure::Contracts(vec![problem]))
}

impl ContractSet {
    /// Reads (see [`read`]) and loads (see [`load`]) the contracts under
    /// `paths` into `engine`.
    pub fn load(
        engine: &Engine,
        paths: &[PathBuf],
        compile: &mut CompileYaml<'_>,
    ) -> Result<ContractSet, LoadFailure> {
        load(engine, &read(paths, compile)?)
    }
}
