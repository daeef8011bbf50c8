//! The served rule set and its reloads.
//!
//! A [`RuleSet`] is every contract of the folder, compiled and verified
//! together, with a revision number. [`Rules`] holds the current one behind
//! an `ArcSwap`: a request takes an `Arc` of the set once and uses it to
//! the end, so it sees the old set or the new one, never a mix. A reload
//! compiles the whole folder off the request path and swaps only when every
//! file compiled; otherwise the old set stays and the failure is kept for
//! `/contracts` and `/metrics`. A replaced set (and its native code) is
//! freed when the last request holding it ends.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use arc_swap::ArcSwap;
use runtime::{Contract, Engine};

/// The contracts served together.
#[derive(Debug)]
pub struct RuleSet {
    pub revision: u64,
    pub loaded_at: SystemTime,
    /// Sorted by name.
    pub contracts: Vec<Arc<Contract>>,
}

/// Why a request has no contract.
#[derive(Debug, PartialEq, Eq)]
pub enum RouteError {
    /// It names a contract that is not served (404).
    Unknown(String),
    /// It names none, and several are served (400).
    Ambiguous,
}

impl RuleSet {
    /// The contract a request is for: the one it names, or the only one.
    pub fn route(&self, name: Option<&str>) -> Result<&Arc<Contract>, RouteError> {
        match name {
            Some(name) => self
                .contracts
                .binary_search_by(|c| c.name().cmp(name))
                .map(|i| &self.contracts[i])
                .map_err(|_| RouteError::Unknown(name.to_string())),
            None if self.contracts.len() == 1 => Ok(&self.contracts[0]),
            None => Err(RouteError::Ambiguous),
        }
    }
}

/// A reload that failed: the old set kept serving.
#[derive(Clone, Debug)]
pub struct ReloadFailure {
    pub at: SystemTime,
    pub message: String,
}

/// The current rule set, and how to replace it.
pub struct Rules {
    dir: PathBuf,
    engine: Engine,
    current: ArcSwap<RuleSet>,
    last_failure: Mutex<Option<ReloadFailure>>,
    /// One reload at a time.
    reloading: Mutex<()>,
    next_revision: AtomicU64,
    pub reloads: AtomicU64,
    pub failed_reloads: AtomicU64,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rules({}, revision {})", self.dir.display(), self.current().revision)
    }
}

impl Rules {
    /// Compiles the folder for the first time; an error means nothing can
    /// be served.
    pub fn load(dir: &Path, engine: Engine) -> Result<Rules, String> {
        let contracts = load_dir(&engine, dir)?;
        let set = RuleSet { revision: 1, loaded_at: SystemTime::now(), contracts };
        Ok(Rules {
            dir: dir.to_path_buf(),
            engine,
            current: ArcSwap::from_pointee(set),
            last_failure: Mutex::new(None),
            reloading: Mutex::new(()),
            next_revision: AtomicU64::new(2),
            reloads: AtomicU64::new(0),
            failed_reloads: AtomicU64::new(0),
        })
    }

    /// The set serving now.
    pub fn current(&self) -> Arc<RuleSet> {
        self.current.load_full()
    }

    /// The last reload that failed, if the set serving now predates it.
    pub fn last_failure(&self) -> Option<ReloadFailure> {
        self.last_failure.lock().ok().and_then(|f| f.clone())
    }

    /// Compiles the folder again and swaps the new set in; on failure the
    /// old set stays. Returns the new revision.
    pub fn reload(&self) -> Result<u64, String> {
        let _one_at_a_time = self.reloading.lock().map_err(|_| "a previous reload panicked".to_string())?;
        match load_dir(&self.engine, &self.dir) {
            Ok(contracts) => {
                let revision = self.next_revision.fetch_add(1, Ordering::Relaxed);
                self.current.store(Arc::new(RuleSet { revision, loaded_at: SystemTime::now(), contracts }));
                self.reloads.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut failure) = self.last_failure.lock() {
                    *failure = None;
                }
                Ok(revision)
            }
            Err(message) => {
                self.failed_reloads.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut failure) = self.last_failure.lock() {
                    *failure = Some(ReloadFailure { at: SystemTime::now(), message: message.clone() });
                }
                Err(message)
            }
        }
    }
}

/// The contract and bundle files under `dir`, sorted, recursively.
fn rule_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries = std::fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", folder.display()))?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else if name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".bundle.json") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Compiles (or reads) and loads every contract under `dir`; every
/// problem of every file in the error.
pub fn load_dir(engine: &Engine, dir: &Path) -> Result<Vec<Arc<Contract>>, String> {
    let files = rule_files(dir)?;
    if files.is_empty() {
        return Err(format!("{}: no contracts (`.yaml`) or bundles (`.bundle.json`)", dir.display()));
    }
    let mut contracts: Vec<Arc<Contract>> = Vec::new();
    let mut problems = Vec::new();
    for path in &files {
        match load_file(engine, path) {
            Ok(contract) if contracts.iter().any(|c| c.name() == contract.name()) => {
                problems.push(format!(
                    "{}: error: the contract `{}` is served twice",
                    path.display(),
                    contract.name()
                ));
            }
            Ok(contract) => contracts.push(contract),
            Err(problem) => problems.push(problem),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    contracts.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(contracts)
}

fn load_file(engine: &Engine, path: &Path) -> Result<Arc<Contract>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: error: {e}", path.display()))?;
    let bundle = if path.to_string_lossy().ends_with(".bundle.json") {
        ir::Bundle::from_json(&bytes).map_err(|e| format!("{}: error: {e}", path.display()))?
    } else {
        let source = String::from_utf8(bytes).map_err(|_| format!("{}: error: not UTF-8", path.display()))?;
        let compiled = frontend::compile_file(&path.display().to_string(), &source);
        match compiled.bundle {
            Some(bundle) => bundle,
            None => return Err(compiled.diagnostics.render(false).trim_end().to_string()),
        }
    };
    engine.load(bundle).map_err(|e| format!("{}: error: {e}", path.display()))
}
