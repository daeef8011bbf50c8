//! rulec's native backend: contracts compiled by Cranelift into machine
//! code for the host (x86-64 or aarch64), with the interpreter's results.
//!
//! [`Jit`] implements the runtime's [`NativeCompiler`]: one `JITModule` per
//! contract, holding one function per let, one per rule and an entry point
//! ([`translate`]), and a batch entry that runs the entry point over a
//! window of records ([`batch`]); the state area is planned in [`plan`]. The module is
//! freed when the contract is dropped. [`inspect`] shows the Cranelift IR
//! and the disassembly for any supported target, for `rulec inspect`.
//!
//! Generated code calls Rust only through the helper table behind its
//! context pointer (no relocations to Rust symbols), and helpers never let
//! a panic unwind into it. Codegen itself runs under `catch_unwind` in the
//! runtime, so a Cranelift panic leaves the contract interpreted.

pub mod batch;
pub mod conditions;
pub mod guards;
pub mod inspect;
pub mod plan;
pub mod translate;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use cranelift_codegen::Context;
use cranelift_codegen::ir::UserFuncName;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};
use runtime::native::{NativeBatchFn, NativeCompiler, NativeFn, NativeProgram};
use runtime::program::Program;

use crate::plan::Plan;
use crate::translate::{Callees, Unit, translate, unit_signature};

/// The Cranelift JIT, for `Engine::builder().native(...)`.
#[derive(Clone, Debug)]
pub struct Jit {
    /// Run Cranelift's IR verifier on every function (tests turn it on).
    pub verify: bool,
}

impl Default for Jit {
    fn default() -> Self {
        Jit { verify: cfg!(debug_assertions) }
    }
}

impl Jit {
    pub fn new() -> Jit {
        Jit::default()
    }

    pub fn with_verifier(verify: bool) -> Jit {
        Jit { verify }
    }
}

/// Cranelift's shared settings for rulec.
pub fn flags(verify: bool) -> settings::Flags {
    let mut builder = settings::builder();
    let set = |b: &mut settings::Builder, k: &str, v: &str| {
        let _ = b.set(k, v);
    };
    set(&mut builder, "opt_level", "none");
    set(&mut builder, "regalloc_algorithm", "single_pass");
    set(&mut builder, "is_pic", "false");
    set(&mut builder, "use_colocated_libcalls", "false");
    set(&mut builder, "enable_verifier", if verify { "true" } else { "false" });
    settings::Flags::new(builder)
}

/// The host's ISA (CPU features detected once per process and setting).
fn host_isa(verify: bool) -> Result<OwnedTargetIsa, String> {
    static HOST: [OnceLock<Result<OwnedTargetIsa, String>>; 2] = [OnceLock::new(), OnceLock::new()];
    HOST[usize::from(verify)]
        .get_or_init(|| {
            let builder = cranelift_native::builder().map_err(|e| format!("no native target: {e}"))?;
            builder.finish(flags(verify)).map_err(|e| format!("cannot build the target: {e}"))
        })
        .clone()
}

/// The JIT module of one contract; dropping it frees its code pages.
struct Code {
    module: Mutex<Option<JITModule>>,
}

impl Drop for Code {
    fn drop(&mut self) {
        if let Ok(mut module) = self.module.lock()
            && let Some(module) = module.take()
        {
            // SAFETY: the contract that owned the entry point is being
            // dropped, so no evaluation can still be running its code.
            unsafe { module.free_memory() };
        }
    }
}

/// What building a unit needs besides the unit itself.
pub(crate) struct Compiling<'a> {
    pub program: &'a Program,
    pub plan: &'a Plan,
    pub declared: &'a Declared,
}

/// The functions of one contract, declared in a module.
pub(crate) struct Declared {
    pub lets: Vec<FuncId>,
    /// Rules referred to by `rules.<id>` have a function; the others are
    /// computed inline by the entry point.
    pub rules: Vec<Option<FuncId>>,
    pub entry: FuncId,
}

/// Declares every function of `program` in `module`.
pub(crate) fn declare(module: &mut dyn Module, program: &Program) -> Result<Declared, String> {
    let sig = unit_signature(module.isa().default_call_conv());
    let mut declare = |name: String, linkage: Linkage| {
        module.declare_function(&name, linkage, &sig).map_err(|e| format!("cannot declare {name}: {e}"))
    };
    let c = &program.contract;
    let lets =
        (0..c.lets.len()).map(|i| declare(format!("let{i}"), Linkage::Local)).collect::<Result<_, _>>()?;
    let rules = (program.rules.iter().enumerate())
        .map(|(i, rule)| rule.referenced().then(|| declare(format!("rule{i}"), Linkage::Local)).transpose())
        .collect::<Result<_, _>>()?;
    let entry = declare("entry".to_string(), Linkage::Export)?;
    Ok(Declared { lets, rules, entry })
}

/// Every unit with its function id, in definition order.
pub(crate) fn units(declared: &Declared) -> Vec<(Unit, FuncId)> {
    let lets = declared.lets.iter().enumerate().map(|(i, id)| (Unit::Let(i), *id));
    let rules = declared.rules.iter().enumerate().filter_map(|(i, id)| id.map(|id| (Unit::Rule(i), id)));
    lets.chain(rules).chain([(Unit::Entry, declared.entry)]).collect()
}

/// Builds the Cranelift IR of one unit into `context`.
pub(crate) fn build_unit(
    module: &mut dyn Module,
    contract: &Compiling<'_>,
    (unit, id): (Unit, FuncId),
    context: &mut Context,
    fctx: &mut FunctionBuilderContext,
) {
    let (program, plan, declared) = (contract.program, contract.plan, contract.declared);
    context.func.signature = unit_signature(module.isa().default_call_conv());
    context.func.name = UserFuncName::user(0, id.as_u32());
    let func = &mut context.func;
    let config = module.isa().frontend_config();
    let callees = Callees { module, lets: &declared.lets, rules: &declared.rules, imported: HashMap::new() };
    translate(program, plan, unit, func, fctx, callees, config);
}

/// Whether any expression calls `now()`.
fn uses_now(c: &ir::Contract) -> bool {
    c.exprs.iter().any(|e| matches!(e.kind, ir::ExprKind::Call { func: ir::Builtin::Now, .. }))
}

/// Declares and compiles every function of `program` into `module`.
pub(crate) fn define_all(
    module: &mut dyn Module,
    program: &Program,
    plan: &Plan,
) -> Result<Declared, String> {
    let declared = declare(module, program)?;
    let mut context = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    for (unit, id) in units(&declared) {
        let parts = Compiling { program, plan, declared: &declared };
        build_unit(module, &parts, (unit, id), &mut context, &mut fctx);
        module.define_function(id, &mut context).map_err(|e| format!("cannot compile {unit:?}: {e:?}"))?;
        module.clear_context(&mut context);
    }
    Ok(declared)
}

impl NativeCompiler for Jit {
    fn compile(&self, program: &Program) -> Result<NativeProgram, String> {
        let isa = host_isa(self.verify)?;
        let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let plan = Plan::new(program);
        let declared = define_all(&mut module, program, &plan)?;
        let batch = batch::define(&mut module, program, &plan, declared.entry)?;
        module.finalize_definitions().map_err(|e| format!("cannot finalize: {e}"))?;
        let address = module.get_finalized_function(declared.entry);
        // SAFETY: `entry` was defined with the signature `NativeFn` has:
        // one pointer argument, an i32 result, the platform's C convention.
        let entry: NativeFn = unsafe { std::mem::transmute::<*const u8, NativeFn>(address) };
        let address = module.get_finalized_function(batch);
        // SAFETY: `batch` was defined with `batch::batch_signature`: five
        // word arguments and an i32 result, as `NativeBatchFn` has.
        let batch: NativeBatchFn = unsafe { std::mem::transmute::<*const u8, NativeBatchFn>(address) };
        Ok(NativeProgram {
            entry,
            batch: Some(batch),
            state_words: plan.words,
            layout: plan.layout,
            addresses: plan.addresses.words,
            uses_now: uses_now(&program.contract),
            checks_stack: plan.checks_stack,
            owner: Box::new(Code { module: Mutex::new(Some(module)) }),
        })
    }
}
