//! `rulec inspect --emit clif|asm [--target x86_64|aarch64]`: the
//! Cranelift IR of a contract, and its machine code for any supported
//! target (aarch64 from an x86-64 host too).

use cranelift_codegen::Context;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa;
use cranelift_frontend::FunctionBuilderContext;
use cranelift_module::{Module, default_libcall_names};
use cranelift_object::{ObjectBuilder, ObjectModule};
use runtime::program::Program;

use crate::plan::Plan;
use crate::{Compiling, build_unit, declare, flags, units};

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

/// What to show of each function.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Emit {
    Clif,
    Asm,
}

/// The text of every function of `program`, for `target`.
pub fn emit(program: &Program, target: &str, what: Emit) -> Result<String, String> {
    let mut module = module(target)?;
    let plan = Plan::new(&program.contract);
    let declared = declare(&mut module, program)?;
    let mut context = Context::new();
    let mut fctx = FunctionBuilderContext::new();
    let mut out = String::new();
    for (unit, id) in units(&declared) {
        let parts = Compiling { program, plan: &plan, declared: &declared };
        build_unit(&mut module, &parts, (unit, id), &mut context, &mut fctx);
        out.push_str(&format!("; {unit:?}\n"));
        match what {
            Emit::Clif => out.push_str(&context.func.display().to_string()),
            Emit::Asm => {
                context.set_disasm(true);
                let compiled = context
                    .compile(module.isa(), &mut ControlPlane::default())
                    .map_err(|e| format!("cannot compile {unit:?}: {:?}", e.inner))?;
                out.push_str(compiled.vcode.as_deref().unwrap_or("(no disassembly)\n"));
            }
        }
        out.push('\n');
        context.clear();
    }
    Ok(out)
}
