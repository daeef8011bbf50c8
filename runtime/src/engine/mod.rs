//! The embedding API: an [`Engine`] loads bundles into [`Contract`]s, which
//! validate requests and evaluate them. Contracts are `Send + Sync` and
//! shared through `Arc`.
//!
//! ```no_run
//! # fn demo(bytes: &[u8], request_json: &str) -> Result<(), Box<dyn std::error::Error>> {
//! use runtime::{Bundle, Engine, Jit};
//! let bundle = Bundle::from_json(bytes)?;
//! let engine = Engine::builder().jit(Jit::Auto).build();
//! let contract = engine.load(bundle)?;
//! let request = contract.request(request_json)?;
//! let result = contract.evaluate(&request)?;
//! println!("{}", String::from_utf8_lossy(&result.to_json()));
//! # Ok(()) }
//! ```

mod contract;
pub mod contract_tests;
mod error;
mod evaluate;
mod jit;
mod load;
mod rows;
mod windows;

pub use error::{EvaluateError, LoadError};

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use crate::input::request::Input;
use crate::interp;
use crate::model::ModelRuntime;
use crate::native::{NativeCompiler, NativeProgram};
use crate::program::Program;
use crate::program::context::Context;
use crate::semantics::host::{HostFn, Signature};
use crate::signals::WindowState;
use crate::value::Owned;
use crate::window::WindowLimits;

/// When contracts run as native code.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Jit {
    /// Always interpret.
    Off,
    /// Compile to native code at load.
    On,
    /// Interpret until a contract is hot, then compile in the background.
    #[default]
    Auto,
}

/// Evaluations after which `Jit::Auto` compiles a contract.
pub const DEFAULT_HOT_AFTER: u64 = 1000;

/// Builds an [`Engine`].
#[derive(Debug)]
pub struct EngineBuilder {
    jit: Jit,
    hosts: Vec<HostFn>,
    native: Option<Arc<dyn NativeCompiler>>,
    models: Option<Arc<dyn ModelRuntime>>,
    hot_after: u64,
    timeout: Option<Duration>,
    window_limits: WindowLimits,
}

impl Default for EngineBuilder {
    fn default() -> Self {
        EngineBuilder {
            jit: Jit::default(),
            hosts: Vec::new(),
            native: None,
            models: None,
            hot_after: DEFAULT_HOT_AFTER,
            timeout: None,
            window_limits: WindowLimits::DEFAULT,
        }
    }
}

impl EngineBuilder {
    pub fn jit(mut self, jit: Jit) -> Self {
        self.jit = jit;
        self
    }

    /// The compiler that turns contracts into native code (the `backend`
    /// crate's JIT). Without one, every contract is interpreted.
    pub fn native(mut self, compiler: Arc<dyn NativeCompiler>) -> Self {
        self.native = Some(compiler);
        self
    }

    /// The model runtime that loads and scores contracts' models (the
    /// `models` crate's tract). Without one, a contract that declares
    /// models does not load.
    pub fn models(mut self, runtime: Arc<dyn ModelRuntime>) -> Self {
        self.models = Some(runtime);
        self
    }

    /// How many evaluations make a contract hot under `Jit::Auto`.
    pub fn hot_after(mut self, evaluations: u64) -> Self {
        self.hot_after = evaluations;
        self
    }

    /// How long one evaluation may run (none by default): past it, it
    /// stops with [`EvaluateError::OutOfTime`] on either engine. A
    /// request's own [`Context::limit`] (the server's deadline) wins.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// The bounds on each window's state of a loaded contract
    /// ([`WindowLimits::DEFAULT`] by default): keys and bytes in all, past
    /// which the least recently seen key is dropped, and one key's records
    /// and bytes.
    pub fn window_limits(mut self, limits: WindowLimits) -> Self {
        self.window_limits = limits;
        self
    }

    /// Registers a host function under `name` with `signature`
    /// (`"(string) -> decimal"`).
    pub fn host_function(
        mut self,
        name: &str,
        signature: &str,
        callback: impl Fn(&[Owned]) -> Result<Owned, String> + Send + Sync + 'static,
    ) -> Result<Self, String> {
        let signature: Signature = signature.parse()?;
        self.hosts.retain(|h| h.name != name);
        self.hosts.push(HostFn::new(name, signature, callback));
        Ok(self)
    }

    pub fn build(self) -> Engine {
        Engine {
            jit: self.jit,
            hosts: self.hosts,
            native: self.native,
            models: self.models,
            hot_after: self.hot_after,
            timeout: self.timeout,
            window_limits: self.window_limits,
        }
    }
}

/// Loads contracts with a fixed set of host functions, JIT policy and
/// time limit.
#[derive(Debug, Default)]
pub struct Engine {
    jit: Jit,
    hosts: Vec<HostFn>,
    native: Option<Arc<dyn NativeCompiler>>,
    models: Option<Arc<dyn ModelRuntime>>,
    hot_after: u64,
    timeout: Option<Duration>,
    window_limits: WindowLimits,
}

/// Which engine evaluates a contract.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum NativeStatus {
    /// The interpreter (no JIT, or not hot yet).
    Interpreted,
    /// Native code is being compiled in the background.
    Compiling,
    /// Native code.
    Native,
    /// Compilation failed; the interpreter goes on, and this says why.
    Failed(String),
}

/// A loaded contract, ready to evaluate requests from any thread.
#[derive(Debug)]
pub struct Contract {
    hash: String,
    program: Program,
    /// The interpreter's code of the program's nodes, made at load.
    code: interp::Code,
    hosts: Vec<HostFn>,
    compiler: Option<Arc<dyn NativeCompiler>>,
    jit: Jit,
    hot_after: u64,
    /// The engine's limit of one evaluation.
    timeout: Option<Duration>,
    evaluations: AtomicU64,
    /// Evaluations native code finished, and those it handed back.
    native_runs: AtomicU64,
    fallbacks: AtomicU64,
    /// Set once, when native code is ready; read without locking.
    native: OnceLock<NativeProgram>,
    status: Mutex<NativeStatus>,
    /// The window state every evaluation of this contract enters its
    /// record into: made at the first use, or adopted from the previous
    /// revision (never for a contract without windows).
    windows: OnceLock<Arc<WindowState>>,
    window_limits: WindowLimits,
    me: Weak<Contract>,
}

/// A request validated for one contract.
#[derive(Debug)]
pub struct Request<'r> {
    contract_id: u64,
    pub context: Context,
    pub input: Input<'r>,
}

impl<'r> Request<'r> {
    /// A request from an already resolved context and validated input.
    pub fn new(contract: &Contract, context: Context, input: Input<'r>) -> Request<'r> {
        Request { contract_id: contract.id(), context, input }
    }
}
