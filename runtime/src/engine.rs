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

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use ir::quote::quote;
use ir::{Bundle, ChannelId, ComponentId};

use crate::budget::{Budget, Limit, OutOfTime};
use crate::context::Context;
use crate::data::{RecordRef, Slot};
use crate::host::{HostFn, HostValue, Signature, matches_type};
use crate::interp::{self, Interpreter};
use crate::model::{LoadedModel, ModelRuntime};
use crate::native::{NativeCompiler, NativeProgram, NativeRun, RecordRun};
use crate::program::Program;
use crate::records::Records;
use crate::request::{Envelope, Input, InvalidInput};
use crate::result::{Collect, Evaluation, ResultSink, RowSink, RuleTrace};
use crate::signals::{ChunkSignals, Entered, NO_SIGNALS, RecordSignals, Signals, WindowInputs, WindowState};
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
        callback: impl Fn(&[HostValue]) -> Result<HostValue, String> + Send + Sync + 'static,
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

/// Why a bundle could not be loaded into an engine.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LoadError {
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LoadError {}

/// Why a request could not be evaluated.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum EvaluateError {
    /// The request was validated for another contract.
    WrongContract { expected: String },
    /// The evaluation ran past its time limit and was stopped.
    OutOfTime { millis: u128 },
}

impl EvaluateError {
    /// The result line of an evaluation that did not finish:
    /// `{"error":{"kind":"timeout","message":...}}` when it ran out of
    /// time, the invalid-input line otherwise.
    pub fn to_json(&self) -> Vec<u8> {
        match self {
            EvaluateError::OutOfTime { .. } => {
                let mut out = b"{\"error\":{\"kind\":\"timeout\",\"message\":".to_vec();
                crate::value::write_json_str(&self.to_string(), &mut out);
                out.extend_from_slice(b"}}");
                out
            }
            EvaluateError::WrongContract { .. } => InvalidInput::one("", self.to_string()).to_json(),
        }
    }
}

impl From<OutOfTime> for EvaluateError {
    fn from(out: OutOfTime) -> EvaluateError {
        EvaluateError::OutOfTime { millis: out.millis }
    }
}

impl fmt::Display for EvaluateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvaluateError::WrongContract { expected } => {
                write!(f, "the request was validated for another contract than `{expected}`")
            }
            EvaluateError::OutOfTime { millis } => {
                write!(f, "the evaluation was stopped: it passed its time limit of {millis} ms")
            }
        }
    }
}

impl std::error::Error for EvaluateError {}

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
        let mut hosts = Vec::with_capacity(contract.externs.len());
        for ext in &contract.externs {
            let declared = describe(&contract, ext);
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

impl Contract {
    pub fn name(&self) -> &str {
        &self.program.contract.name
    }

    pub fn version(&self) -> &str {
        &self.program.contract.version
    }

    /// This loaded contract's identity (records and requests laid out
    /// for it carry it).
    pub(crate) fn id(&self) -> u64 {
        self.program.id
    }

    /// The contract as the interpreter runs it.
    pub fn interpreter(&self) -> Interpreter<'_> {
        Interpreter { program: &self.program, code: &self.code, hosts: &self.hosts }
    }

    /// The bundle's content hash.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    pub fn ir(&self) -> &ir::Contract {
        &self.program.contract
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Validates a request's JSON text (LANGUAGE.md's request shape).
    pub fn request<'r>(&self, text: &'r str) -> Result<Request<'r>, InvalidInput> {
        let envelope = Envelope::parse(text)?;
        self.request_from(&envelope)
    }

    /// Validates a request whose envelope is already parsed (for routing
    /// among several contracts).
    pub fn request_from<'r>(&self, envelope: &Envelope<'r>) -> Result<Request<'r>, InvalidInput> {
        if let Some(name) = &envelope.contract
            && name != self.name()
        {
            return Err(InvalidInput::one(
                "contract",
                format!("the request is for {}, not `{}`", quote(name), self.name()),
            ));
        }
        let context = self.context(
            envelope.channel.as_deref(),
            envelope.component.as_deref(),
            envelope.now.as_deref(),
        )?;
        let Some(input) = envelope.input else {
            return Err(InvalidInput::one("input", "missing"));
        };
        let input = Input::parse(&self.program, input.get())?;
        Ok(Request { contract_id: self.id(), context, input })
    }

    /// Validates a bare input record (batch evaluation) on `channel`.
    pub fn request_from_input<'r>(
        &self,
        input: &'r str,
        channel: Option<&str>,
    ) -> Result<Request<'r>, InvalidInput> {
        let context = self.context(channel, None, None)?;
        let input = Input::parse(&self.program, input)?;
        Ok(Request { contract_id: self.id(), context, input })
    }

    /// Resolves a request's channel, component and time.
    pub fn context(
        &self,
        channel: Option<&str>,
        component: Option<&str>,
        now: Option<&str>,
    ) -> Result<Context, InvalidInput> {
        let c = &self.program.contract;
        let mut details = Vec::new();
        let mut problem =
            |path: &str, message: String| details.push(crate::request::Detail { path: path.into(), message });
        let channel = match (channel, c.channels.is_empty()) {
            (None, true) => None,
            (None, false) => {
                problem(
                    "channel",
                    format!("missing: the contract declares channels ({})", c.channels.join(", ")),
                );
                None
            }
            (Some(name), _) => {
                let found = c.channel_by_name(name);
                if found.is_none() {
                    let known =
                        if c.channels.is_empty() { "none".to_string() } else { c.channels.join(", ") };
                    problem("channel", format!("unknown channel {} (declared: {known})", quote(name)));
                }
                found
            }
        };
        let component = match component {
            None => None,
            Some(name) => {
                let found = c.component_by_name(name);
                if found.is_none() {
                    let known =
                        if c.components.is_empty() { "none".to_string() } else { c.components.join(", ") };
                    problem("component", format!("unknown component {} (declared: {known})", quote(name)));
                }
                found
            }
        };
        let now = match now.map(ir::time::parse_timestamp) {
            None => None,
            Some(Ok(nanos)) => Some(nanos),
            Some(Err(message)) => {
                problem("now", message);
                None
            }
        };
        if !details.is_empty() {
            return Err(InvalidInput { details });
        }
        Ok(Context { channel, component, now, limit: self.timeout.map(Limit::After) })
    }

    fn check_request(&self, request: &Request<'_>) -> Result<(), EvaluateError> {
        if request.contract_id == self.id() {
            Ok(())
        } else {
            Err(EvaluateError::WrongContract { expected: self.name().to_string() })
        }
    }

    /// Evaluates a validated request, natively when native code is ready.
    pub fn evaluate(&self, request: &Request<'_>) -> Result<Evaluation<'_>, EvaluateError> {
        self.evaluate_entered(request, &mut Entered::default())
    }

    /// [`Contract::evaluate`], saying in `entered` where the record entered
    /// the contract's windows, for [`Contract::withdraw`] should the result
    /// never reach whoever asked (the server's timeout).
    pub fn evaluate_entered(
        &self,
        request: &Request<'_>,
        entered: &mut Entered,
    ) -> Result<Evaluation<'_>, EvaluateError> {
        let mut collect = Collect::default();
        self.check_request(request)?;
        match self.evaluate_slots(&request.context, request.input.record(), &mut collect, entered)? {
            Some(evaluation) => Ok(evaluation),
            // Native code gives every result to the sink it finishes.
            None => collect.into_evaluation().map_or_else(|| self.interpret(request), Ok),
        }
    }

    /// Withdraws a record from the windows it entered (`entered`, from
    /// [`Contract::evaluate_entered`]): its request was not answered with
    /// its result, and leaves no trace in window state (SIGNALS.md).
    pub fn withdraw(&self, entered: &Entered) {
        if let Some(state) = self.window_state() {
            state.withdraw(entered);
        }
    }

    /// Evaluates a validated request and gives the result to `sink`,
    /// straight from native code's state when native code finishes it
    /// (only the parts the sink asks for are built).
    pub fn evaluate_into<'c>(
        &'c self,
        request: &Request<'_>,
        sink: &mut dyn ResultSink<'c>,
    ) -> Result<(), EvaluateError> {
        if let Some(evaluation) = self.evaluate_to(request, sink)? {
            evaluation.replay(sink);
        }
        Ok(())
    }

    /// Evaluates row `row` of `records` (which must be valid, and laid out
    /// for this contract) in `context`, giving the result to `sink`.
    pub fn evaluate_record<'c>(
        &'c self,
        records: &Records<'_>,
        row: usize,
        context: &Context,
        sink: &mut dyn ResultSink<'c>,
    ) -> Result<(), EvaluateError> {
        if !records.is_for(&self.program) {
            return Err(EvaluateError::WrongContract { expected: self.name().to_string() });
        }
        if let Some(evaluation) =
            self.evaluate_slots(context, records.record(row), sink, &mut Entered::default())?
        {
            evaluation.replay(sink);
        }
        Ok(())
    }

    /// Evaluates every record of `records` in `context`, in order, giving
    /// each result (or its problem) to `sink`; returns how many records
    /// were not evaluated. Native code runs the records in one call of
    /// its batch entry when there is no time limit. A contract with
    /// signals has them computed first, for all the records
    /// ([`Contract::chunk_signals`]).
    pub fn evaluate_records<'c>(
        &'c self,
        records: &Records<'_>,
        context: &Context,
        sink: &mut dyn RowSink<'c>,
    ) -> usize {
        let signals = self.has_signals().then(|| self.chunk_signals(records, context, |enter| enter()));
        self.evaluate_rows(records, 0..records.len(), context, signals.as_ref(), sink)
    }

    /// Whether evaluations read values computed ahead of the rules:
    /// windows, or scores (`crate::signals`).
    pub fn has_signals(&self) -> bool {
        !self.program.windows.is_empty() || !self.program.scores.is_empty()
    }

    /// The signals of `records`' valid records (`crate::signals::chunk`):
    /// each record's window inputs computed, then the records entered into
    /// the contract's windows one after the other inside `ordered` (which
    /// runs what it is given once, when the records before these have
    /// entered: the rest may run in any order, on any thread), then every
    /// score site run once over all of them. Their rules may then run in
    /// any order, on any thread ([`Contract::evaluate_signalled`]).
    pub fn chunk_signals(
        &self,
        records: &Records<'_>,
        context: &Context,
        ordered: impl FnOnce(&mut dyn FnMut()),
    ) -> ChunkSignals {
        if !records.is_for(&self.program) {
            ordered(&mut || {});
            return ChunkSignals::skipped(records.len());
        }
        let budgets: Vec<Budget> = (0..records.len()).map(|_| Budget::new(context.limit)).collect();
        let state = self.window_state().map(|state| &**state);
        let mut entered = None;
        {
            let inputs = WindowInputs::compute(self.interpreter(), context, records, &budgets, state);
            ordered(&mut || entered = Some(inputs.enter(&self.program, state)));
        }
        let mut signals = entered.unwrap_or_else(|| ChunkSignals::skipped(records.len()));
        signals.score(self.interpreter(), context, records, budgets);
        signals
    }

    /// Evaluates the records `rows` of `records`, whose signals are
    /// `signals` ([`Contract::chunk_signals`] of the same records), as
    /// [`Contract::evaluate_records`] does, giving `sink` one result per
    /// row of `rows`, in order.
    pub fn evaluate_signalled<'c>(
        &'c self,
        records: &Records<'_>,
        rows: std::ops::Range<usize>,
        context: &Context,
        signals: &ChunkSignals,
        sink: &mut dyn RowSink<'c>,
    ) -> usize {
        self.evaluate_rows(records, rows, context, Some(signals), sink)
    }

    /// The records `rows` of `records`, whose signals are `signals` (`None`
    /// for a contract without them), into `sink`: with the batch entry
    /// when it can run them, else one at a time. Returns how many were
    /// not evaluated.
    fn evaluate_rows<'c>(
        &'c self,
        records: &Records<'_>,
        rows: std::ops::Range<usize>,
        context: &Context,
        signals: Option<&ChunkSignals>,
        sink: &mut dyn RowSink<'c>,
    ) -> usize {
        let rows = rows.start.min(records.len())..rows.end.min(records.len());
        if !records.is_for(&self.program) {
            let wrong = EvaluateError::WrongContract { expected: self.name().to_string() };
            rows.clone().for_each(|_| sink.failed(&wrong));
            return rows.len();
        }
        if let Some(failed) = self.run_batched(records, rows.clone(), context, signals, sink) {
            return failed;
        }
        let mut failed = 0;
        for row in rows {
            if let Some(problem) = records.problem(row) {
                sink.invalid(problem);
                failed += 1;
            } else if let Err(e) = self.evaluate_row(records, row, context, signals, sink) {
                sink.failed(&e);
                failed += 1;
            }
        }
        failed
    }

    /// [`Contract::evaluate_rows`] in calls of the batch entry, when there
    /// is no time limit and native code has a batch entry; `None` when it
    /// cannot.
    fn run_batched<'c>(
        &'c self,
        records: &Records<'_>,
        rows: std::ops::Range<usize>,
        context: &Context,
        signals: Option<&ChunkSignals>,
        sink: &mut dyn RowSink<'c>,
    ) -> Option<usize> {
        let native = self.native.get().filter(|_| context.limit.is_none())?;
        let (mut ran, mut fell, mut failed) = (0, 0, 0);
        let slots = signals.map_or(&[][..], ChunkSignals::all_slots);
        let batched = crate::native::run_records(
            &self.program,
            native,
            &self.hosts,
            context,
            records,
            rows,
            slots,
            |row, run| match run {
                RecordRun::Done(state) => {
                    ran += 1;
                    crate::native::finish(&self.program, native, state, sink);
                }
                RecordRun::Skipped => {
                    failed += 1;
                    if let Some(problem) = records.problem(row) {
                        sink.invalid(problem);
                    }
                }
                RecordRun::Fallback => {
                    fell += 1;
                    if let Err(e) = self.interpret_row(records, row, context, signals, sink) {
                        sink.failed(&e);
                        failed += 1;
                    }
                }
            },
        );
        if !batched {
            return None;
        }
        self.native_runs.fetch_add(ran, Ordering::Relaxed);
        self.fallbacks.fetch_add(fell, Ordering::Relaxed);
        Some(failed)
    }

    /// Row `row` of `records` (valid), whose chunk's signals are `signals`,
    /// on native code when it is ready, else the interpreter, into `sink`.
    fn evaluate_row<'c>(
        &'c self,
        records: &Records<'_>,
        row: usize,
        context: &Context,
        signals: Option<&ChunkSignals>,
        sink: &mut dyn RowSink<'c>,
    ) -> Result<(), EvaluateError> {
        let (row_signals, slots) = match signals {
            Some(signals) => (signals.row(row)?, signals.slots(row)),
            None => (NO_SIGNALS, Some(&[][..])),
        };
        // A fresh budget: the time a record waited for its chunk's other
        // records does not count against it.
        let budget = Budget::new(context.limit);
        if let Some(evaluation) =
            self.evaluate_with(context, records.record(row), row_signals, slots, &budget, sink)?
        {
            evaluation.replay(sink);
        }
        Ok(())
    }

    /// Row `row` of `records` (valid), whose chunk's signals are `signals`,
    /// on the interpreter, into `sink`.
    fn interpret_row<'c>(
        &'c self,
        records: &Records<'_>,
        row: usize,
        context: &Context,
        signals: Option<&ChunkSignals>,
        sink: &mut dyn RowSink<'c>,
    ) -> Result<(), EvaluateError> {
        let row_signals = signals.map_or(Ok(NO_SIGNALS), |signals| signals.row(row))?;
        let budget = Budget::new(context.limit);
        let input = records.record(row);
        self.interpreter().evaluate(context, input, row_signals, &budget)?.replay(sink);
        Ok(())
    }

    /// Runs native code into `sink` when it is ready, or else (and when it
    /// falls back) the interpreter, whose evaluation is returned.
    fn evaluate_to<'c>(
        &'c self,
        request: &Request<'_>,
        sink: &mut dyn ResultSink<'c>,
    ) -> Result<Option<Evaluation<'c>>, EvaluateError> {
        self.check_request(request)?;
        self.evaluate_slots(&request.context, request.input.record(), sink, &mut Entered::default())
    }

    /// Evaluates `input`: its signals (the record entered into the
    /// contract's windows, said in `entered`), then its rules.
    fn evaluate_slots<'c>(
        &'c self,
        context: &Context,
        input: RecordRef<'_>,
        sink: &mut dyn ResultSink<'c>,
        entered: &mut Entered,
    ) -> Result<Option<Evaluation<'c>>, EvaluateError> {
        let budget = Budget::new(context.limit);
        if self.has_signals() {
            let mut signals = self.signals(context, input, &budget, None)?;
            let evaluated = self.evaluate_with(context, input, signals.view(), None, &budget, sink);
            if let Err(EvaluateError::OutOfTime { .. }) = evaluated {
                // Not answered with its result: no trace in the windows.
                self.withdraw(&signals.entered);
            } else {
                *entered = std::mem::take(&mut signals.entered);
            }
            return evaluated;
        }
        self.evaluate_with(context, input, NO_SIGNALS, Some(&[]), &budget, sink)
    }

    /// Runs native code on `input`, whose signals are `signals` (`slots`:
    /// as native code reads them, when laid out already), into `sink`
    /// when it is ready, or else (and when it falls back) the
    /// interpreter, whose evaluation is returned.
    fn evaluate_with<'c>(
        &'c self,
        context: &Context,
        input: RecordRef<'_>,
        signals: Signals<'_>,
        slots: Option<&[Slot]>,
        budget: &Budget,
        sink: &mut dyn ResultSink<'c>,
    ) -> Result<Option<Evaluation<'c>>, EvaluateError> {
        if let Some(native) = self.native.get() {
            let laid_out;
            let slots = match slots {
                Some(slots) => slots,
                None => {
                    laid_out = signals.slots();
                    &laid_out
                }
            };
            match crate::native::run(&self.program, native, &self.hosts, context, input, slots, budget, sink)
            {
                NativeRun::Done => {
                    self.native_runs.fetch_add(1, Ordering::Relaxed);
                    return Ok(None);
                }
                NativeRun::OutOfTime(out) => return Err(out.into()),
                NativeRun::Fallback => {
                    self.fallbacks.fetch_add(1, Ordering::Relaxed);
                }
            }
        } else if self.jit == Jit::Auto && self.compiler.is_some() {
            let count = self.evaluations.fetch_add(1, Ordering::Relaxed) + 1;
            if count == self.hot_after {
                self.compile_in_background();
            }
        }
        Ok(Some(self.interpreter().evaluate(context, input, signals, budget)?))
    }

    /// The record's signals: its window values, the record entered into
    /// `state` (or the contract's own window state), then its scores.
    fn signals(
        &self,
        context: &Context,
        input: RecordRef<'_>,
        budget: &Budget,
        state: Option<&WindowState>,
    ) -> Result<RecordSignals, OutOfTime> {
        let state = state.or(self.window_state().map(|s| &**s));
        crate::signals::of_record(self.interpreter(), context, input, budget, state)
    }

    /// Checks `request` and runs `run` on the interpreter with the
    /// request's budget and its record's window values, the record
    /// entered into `state` (or the contract's own window state).
    fn interpreted<T>(
        &self,
        request: &Request<'_>,
        state: Option<&WindowState>,
        run: impl FnOnce(Signals<'_>, &Budget) -> Result<T, OutOfTime>,
    ) -> Result<T, EvaluateError> {
        self.check_request(request)?;
        let budget = Budget::new(request.context.limit);
        let signals = self.signals(&request.context, request.input.record(), &budget, state)?;
        run(signals.view(), &budget).map_err(|out| {
            // Not answered with its result: no trace in the windows.
            if let Some(state) = state.or(self.window_state().map(|s| &**s)) {
                state.withdraw(&signals.entered);
            }
            out.into()
        })
    }

    /// Evaluates with the interpreter only, whatever the engine; the
    /// record enters the contract's windows.
    pub fn interpret(&self, request: &Request<'_>) -> Result<Evaluation<'_>, EvaluateError> {
        self.interpret_in(request, None)
    }

    /// The interpreter's evaluation of `request`, its record entered into
    /// `state` (or the contract's own window state).
    fn interpret_in(
        &self,
        request: &Request<'_>,
        state: Option<&WindowState>,
    ) -> Result<Evaluation<'_>, EvaluateError> {
        self.interpreted(request, state, |signals, budget| {
            self.interpreter().evaluate(&request.context, request.input.record(), signals, budget)
        })
    }

    /// Empty window state for this contract, as [`Contract::evaluate_in`]
    /// takes (`rulec test` gives each case its own, and runs its
    /// `history:` in it first). `None` for a contract without windows.
    pub fn new_window_state(&self) -> Option<WindowState> {
        if self.program.windows.is_empty() {
            return None;
        }
        WindowState::new(&self.program, self.window_limits).ok()
    }

    /// Evaluates `request` with its record entered into `state` instead of
    /// the contract's own window state.
    pub fn evaluate_in(
        &self,
        request: &Request<'_>,
        state: &WindowState,
    ) -> Result<Evaluation<'_>, EvaluateError> {
        self.interpret_in(request, Some(state))
    }

    /// The contract's window state (`None` without windows).
    pub fn window_state(&self) -> Option<&Arc<WindowState>> {
        if self.program.windows.is_empty() {
            return None;
        }
        if let Some(state) = self.windows.get() {
            return Some(state);
        }
        let fresh = self.new_window_state()?;
        Some(self.windows.get_or_init(|| Arc::new(fresh)))
    }

    /// Takes over `previous`'s window state (the same contract's earlier
    /// revision) when the windows are the same, as SIGNALS.md says of a
    /// reload: the same keys, times, spans and aggregates, over the same
    /// lets. Returns whether it did; it cannot once this contract has
    /// evaluated a record.
    pub fn adopt_windows(&self, previous: &Contract) -> bool {
        let same =
            crate::signals::window_signature(self.ir()) == crate::signals::window_signature(previous.ir());
        match previous.windows.get() {
            Some(state) if same && !self.program.windows.is_empty() => {
                self.windows.set(state.clone()).is_ok()
            }
            _ => false,
        }
    }

    /// How many evaluations native code finished, and how many it handed
    /// back to the interpreter (errors, constructs it does not compile).
    pub fn native_counts(&self) -> (u64, u64) {
        (self.native_runs.load(Ordering::Relaxed), self.fallbacks.load(Ordering::Relaxed))
    }

    /// Which engine evaluates this contract now.
    pub fn native_status(&self) -> NativeStatus {
        self.status.lock().map(|s| s.clone()).unwrap_or(NativeStatus::Interpreted)
    }

    /// Compiles to native code now (`Jit::On`); a failure, or a panic in
    /// the compiler, leaves the contract interpreted and is kept in
    /// [`Contract::native_status`].
    pub fn compile_now(&self) {
        let Some(compiler) = &self.compiler else { return };
        let compiled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compiler.compile(&self.program)))
                .unwrap_or_else(|_| Err("the native compiler panicked".into()));
        let status = match compiled {
            Ok(native) => {
                let _ = self.native.set(native);
                NativeStatus::Native
            }
            Err(why) => NativeStatus::Failed(why),
        };
        if let Ok(mut slot) = self.status.lock() {
            *slot = status;
        }
    }

    /// Starts compiling on a background thread (once); evaluations go on
    /// interpreted and switch atomically when the code is ready.
    pub fn compile_in_background(&self) {
        if self.compiler.is_none() || self.native.get().is_some() {
            return;
        }
        {
            let Ok(mut status) = self.status.lock() else { return };
            if *status != NativeStatus::Interpreted {
                return;
            }
            *status = NativeStatus::Compiling;
        }
        let me = self.me.clone();
        let spawned = std::thread::Builder::new().name("rulec-jit".into()).spawn(move || {
            if let Some(contract) = me.upgrade() {
                contract.compile_now();
            }
        });
        if spawned.is_err()
            && let Ok(mut status) = self.status.lock()
        {
            *status = NativeStatus::Interpreted;
        }
    }

    /// Readies the contract for many evaluations: under `Jit::Auto`,
    /// compiles it to native code now (a batch is hot from its first
    /// record; a failure keeps it interpreted, as `compile_now` says).
    pub fn compile_for_batch(&self) {
        if self.jit == Jit::Auto
            && self.native.get().is_none()
            && self.native_status() == NativeStatus::Interpreted
        {
            self.compile_now();
        }
    }

    /// Evaluates and traces every rule, for `rulec eval --explain`.
    pub fn explain(&self, request: &Request<'_>) -> Result<(Evaluation<'_>, Vec<RuleTrace>), EvaluateError> {
        self.interpreted(request, None, |signals, budget| {
            self.interpreter().explain(&request.context, request.input.record(), signals, budget)
        })
    }

    /// Evaluates many requests in one call, appending results in order.
    pub fn evaluate_batch<'c>(
        &'c self,
        requests: &[Request<'_>],
        results: &mut Vec<Evaluation<'c>>,
    ) -> Result<(), EvaluateError> {
        if self.jit == Jit::Auto {
            self.compile_in_background();
        }
        results.reserve(requests.len());
        for request in requests {
            results.push(self.evaluate(request)?);
        }
        Ok(())
    }

    /// The channel called `name`, if declared.
    pub fn channel(&self, name: &str) -> Option<ChannelId> {
        self.program.contract.channel_by_name(name)
    }

    /// The component called `name`, if declared.
    pub fn component(&self, name: &str) -> Option<ComponentId> {
        self.program.contract.component_by_name(name)
    }
}
