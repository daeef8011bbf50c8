//! The served rule set and its reloads.
//!
//! A [`RuleSet`] is the folder's [`ContractSet`] (every contract,
//! compiled and verified together: the runtime's set, the one `rulec eval`
//! loads from the same folder) with a revision number. [`Rules`] holds the
//! current one behind an `ArcSwap`: a request takes an `Arc` of the set
//! once and uses it to the end, so it sees the old set or the new one,
//! never a mix. A reload compiles the whole folder off the request path
//! and swaps only when every file compiled; otherwise the old set stays
//! and the failure is kept for `/contracts` and `/metrics`. A replaced set
//! (and its native code) is freed when the last request holding it ends.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use arc_swap::ArcSwap;
use runtime::{ContractSet, Engine};

/// The contracts served together: the runtime's set, and its revision.
#[derive(Debug)]
pub struct RuleSet {
    pub revision: u64,
    pub loaded_at: SystemTime,
    pub contracts: ContractSet,
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
        let contracts = load_dir(&engine, dir)
            .map_err(|problems| format!("the rules in {} do not load:\n{problems}", dir.display()))?;
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
                carry_windows(&self.current(), &contracts);
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

/// A reload keeps a contract's window state when its windows are the
/// same, and starts them empty when they changed (SIGNALS.md).
fn carry_windows(old: &RuleSet, new: &ContractSet) {
    for contract in new.contracts() {
        if let Some(previous) = old.contracts.get(contract.name()) {
            contract.adopt_windows(previous);
        }
    }
}

/// Compiles (or reads) and loads every contract under `dir`, as every
/// command loads a folder (`runtime::contract_set`); every problem of
/// every file in the error.
fn load_dir(engine: &Engine, dir: &Path) -> Result<ContractSet, String> {
    ContractSet::load(engine, &[dir.to_path_buf()], &mut compile).map_err(|failure| failure.to_string())
}

/// A contract's YAML to its bundle, or its diagnostics (warnings are not
/// shown: the server has no terminal to show them on).
fn compile(path: &Path, text: &str) -> Result<ir::Bundle, String> {
    let compiled = frontend::compile_file(&path.display().to_string(), text);
    compiled.bundle.ok_or_else(|| compiled.diagnostics.render(false).trim_end().to_string())
}
