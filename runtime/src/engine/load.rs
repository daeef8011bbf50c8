//! [`Engine::load`]: a verified bundle becomes a [`Contract`], its host
//! functions matched by signature, its models loaded, its program
//! prepared.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};

use ir::Bundle;

use crate::interp;
use crate::model::LoadedModel;
use crate::program::Program;
use crate::semantics::host::{HostFn, matches_type};
use crate::signals::WindowState;

use super::{Contract, Engine, EngineBuilder, Jit, LoadError, NativeStatus};

impl Engine {
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    pub fn jit(&self) -> Jit {
        self.jit
    }

    /// Prepares a (verified) bundle; fails when it needs a host function
    /// this engine does not provide, naming it.
    pub fn load(&self, bundle: Bundle) -> Result<Arc<Contract>, LoadError> {
        let contract = bundle.contract_arc();
        let models = self.load_models(&contract)?;
        let hosts = self.hosts_for(&contract)?;
        let mut program = Program::new(contract).map_err(|message| LoadError { message })?;
        program.models = models;
        if !program.windows.is_empty() {
            // The state itself is made at the first evaluation, unless the
            // contract adopts its previous revision's (`adopt_windows`).
            WindowState::new(&program, self.window_limits).map_err(|message| LoadError { message })?;
        }
        let compiler = if self.jit == Jit::Off { None } else { self.native.clone() };
        let contract = Arc::new_cyclic(|me| Contract {
            hash: bundle.hash().to_string(),
            code: interp::Code::new(&program.contract, &program.nodes),
            program,
            hosts,
            compiler,
            jit: self.jit,
            hot_after: self.hot_after,
            timeout: self.timeout,
            evaluations: AtomicU64::new(0),
            native_runs: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            native: OnceLock::new(),
            status: Mutex::new(NativeStatus::Interpreted),
            windows: OnceLock::new(),
            window_limits: self.window_limits,
            me: me.clone(),
        });
        if self.jit == Jit::On {
            contract.compile_now();
        }
        Ok(contract)
    }
}

impl Engine {
    /// The engine's host function for each of `contract`'s externs, in
    /// order; fails on one the engine does not provide or whose signature
    /// differs, naming both.
    fn hosts_for(&self, contract: &ir::Contract) -> Result<Vec<HostFn>, LoadError> {
        let mut hosts = Vec::with_capacity(contract.externs.len());
        for ext in &contract.externs {
            let declared = describe(contract, ext);
            let Some(host) = self.hosts.iter().find(|h| h.name == ext.name) else {
                return Err(LoadError {
                    message: format!(
                        "contract `{}` needs the host function `{}: {declared}`, which this engine does not provide",
                        contract.name, ext.name
                    ),
                });
            };
            let fits = host.signature.params.len() == ext.params.len()
                && ext
                    .params
                    .iter()
                    .zip(&host.signature.params)
                    .all(|(p, h)| matches_type(&contract.types, *p, h))
                && matches_type(&contract.types, ext.ret, &host.signature.ret);
            if !fits {
                return Err(LoadError {
                    message: format!(
                        "contract `{}` declares `{}: {declared}`, but the engine's host function is `{}`",
                        contract.name, ext.name, host.signature
                    ),
                });
            }
            hosts.push(host.clone());
        }
        Ok(hosts)
    }

    /// Loads and checks each of `contract`'s models with the engine's
    /// model runtime; the error names the model that does not load.
    fn load_models(&self, contract: &ir::Contract) -> Result<Vec<Arc<dyn LoadedModel>>, LoadError> {
        if contract.models.is_empty() {
            return Ok(Vec::new());
        }
        let Some(runtime) = &self.models else {
            return Err(LoadError {
                message: format!(
                    "contract `{}` declares models, and this engine was built without a model runtime",
                    contract.name
                ),
            });
        };
        contract
            .models
            .iter()
            .map(|model| {
                runtime.load(model).map_err(|e| LoadError {
                    message: format!(
                        "contract `{}`: model `{}` does not load: {e}",
                        contract.name, model.name
                    ),
                })
            })
            .collect()
    }
}

fn describe(contract: &ir::Contract, ext: &ir::Extern) -> String {
    let params: Vec<String> = ext.params.iter().map(|p| contract.types.display(*p).to_string()).collect();
    format!("({}) -> {}", params.join(", "), contract.types.display(ext.ret))
}
