//! The served rule set and its reloads.
//!
//! A [`RuleSet`] is the folder's [`ContractSet`] (every contract,
//! compiled and verified together: the runtime's set, the one `rulec eval`
//! loads from the same folder) with its revision, named by its content
//! ([`ContractSet::revision`]: replicas serving the same files report the
//! same one, whatever their reload history), and its generation in this
//! process (1 at start, one more per reload). [`Rules`] holds the
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

/// The contracts served together: the runtime's set, its revision and
/// its generation.
#[derive(Debug)]
pub struct RuleSet {
    /// [`ContractSet::revision`]: the same for the same contracts, in any
    /// process.
    pub revision: Arc<str>,
    /// Which set this process loaded: 1 at start, one more per reload.
    pub generation: u64,
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
    next_generation: AtomicU64,
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
        let set = RuleSet::new(1, contracts);
        Ok(Rules {
            dir: dir.to_path_buf(),
            engine,
            current: ArcSwap::from_pointee(set),
            last_failure: Mutex::new(None),
            reloading: Mutex::new(()),
            next_generation: AtomicU64::new(2),
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
    /// old set stays. Returns the new set.
    pub fn reload(&self) -> Result<Arc<RuleSet>, String> {
        let _one_at_a_time = self.reloading.lock().map_err(|_| "a previous reload panicked".to_string())?;
        match load_dir(&self.engine, &self.dir) {
            Ok(contracts) => {
                carry_windows(&self.current(), &contracts);
                let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
                let set = Arc::new(RuleSet::new(generation, contracts));
                self.current.store(set.clone());
                self.reloads.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut failure) = self.last_failure.lock() {
                    *failure = None;
                }
                Ok(set)
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

impl RuleSet {
    fn new(generation: u64, contracts: ContractSet) -> RuleSet {
        RuleSet { revision: contracts.revision().into(), generation, loaded_at: SystemTime::now(), contracts }
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
