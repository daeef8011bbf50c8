//! `rulec inspect --emit clif|asm [--target x86_64|aarch64]`: the
//! Cranelift IR of a contract, and its machine code for any supported
//! target (aarch64 from an x86-64 host too), the batch entry last;
//! [`object`]: the same code as
//! a relocatable ELF object, for linking into a test driver.

use cranelift_codegen::Context;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::{self, TargetIsa};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_module::{Module, default_libcall_names};
use cranelift_object::{ObjectBuilder, ObjectModule};
use runtime::program::Program;

use crate::plan::Plan;
use crate::{Compiling, batch, build_unit, declare, define_all, flags, units};

/// A target by its short name.
pub fn triple(target: &str) -> Result<&'static str, String> {
    match target {
        "x86_64" => Ok("x86_64-unknown-linux-gnu"),
        "aarch64" => Ok("aarch64-unknown-linux-gnu"),
        other => Err(format!("unknown target `{other}` (x86_64 or aarch64)")),
    }
}

fn module(target: &str) -> Result<ObjectModule, String> {
    let isa = isa::lookup_by_name(triple(target)?)
        .map_err(|e| format!("target {target}: {e}"))?
        .finish(flags(true))
        .map_err(|e| format!("target {target}: {e}"))?;
    let builder = ObjectBuilder::new(isa, "rulec", default_libcall_names()).map_err(|e| e.to_string())?;
    Ok(ObjectModule::new(builder))
}

/// A contract compiled ahead of time into a relocatable ELF object.
#[derive(Clone, Debug)]
pub struct Object {
    /// The ELF file. It exports `entry`, with the C signature
    /// `uint32_t entry(NativeCtx *ctx)` (`runtime::native`), and `batch`,
    /// `uint32_t batch(NativeCtx *ctx, const Slot *rows, uint64_t n,
    /// uint64_t *states, uint32_t *statuses)` (`NativeBatchFn`); the lets
    /// and rules are local functions. The helper table and program
    /// pointers are not relocated: generated code reads them from the
    /// context, so a helper-free contract runs with both null.
    pub bytes: Vec<u8>,
    /// How many zeroed 64-bit words of state `entry` expects
    /// ([`Plan::words`]).
    pub state_words: usize,
}

/// Compiles every function of `program` into an ELF object for `target`.
pub fn object(program: &Program, target: &str) -> Result<Object, String> {
    let mut module = module(target)?;
    let plan = Plan::new(program);
    let declared = define_all(&mut module, program, &plan)?;
    batch::define(&mut module, program, &plan, declared.entry)?;
    let bytes = module.finish().emit().map_err(|e| format!("cannot write the object: {e}"))?;
    Ok(Object { bytes, state_words: plan.words })
}

/// What to show of each function.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Emit {
    Clif,
    Asm,
}

/// The text of every function of `program`, for `target`.
pub fn emit(program: &Program, target: &str, what: Emit) -> Result<String, String> {
    let mut module = module(target)?;
    let plan = Plan::new(program);
    let declared = declare(&mut module, program)?;
    let mut context = Context::new();
    let mut fctx = FunctionBuilderContext::new();
    let mut out = String::new();
    for (unit, id) in units(&declared) {
        let parts = Compiling { program, plan: &plan, declared: &declared };
        build_unit(&mut module, &parts, (unit, id), &mut context, &mut fctx);
        show(&mut out, &mut context, module.isa(), &format!("{unit:?}"), what)?;
    }
    let batch = batch::declare(&mut module)?;
    batch::build_into(&mut module, &mut context, (program, &plan), declared.entry, batch);
    show(&mut out, &mut context, module.isa(), "Batch", what)?;
    Ok(out)
}

/// Appends the function in `context`, as `what`, under its name.
fn show(
    out: &mut String,
    context: &mut Context,
    isa: &dyn TargetIsa,
    name: &str,
    what: Emit,
) -> Result<(), String> {
    out.push_str(&format!("; {name}\n"));
    match what {
        Emit::Clif => out.push_str(&context.func.display().to_string()),
        Emit::Asm => {
            context.set_disasm(true);
            let compiled = context
                .compile(isa, &mut ControlPlane::default())
                .map_err(|e| format!("cannot compile {name}: {:?}", e.inner))?;
            out.push_str(compiled.vcode.as_deref().unwrap_or("(no disassembly)\n"));
        }
    }
    out.push('\n');
    context.clear();
    Ok(())
}
