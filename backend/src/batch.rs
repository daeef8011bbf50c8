//! The batch entry (`runtime::native::NativeBatchFn`): one call runs the
//! entry point on every record of a window, so a batch pays for one call
//! into native code, not one per record.
//!
//! For record `i` it points the context at the record's slots and its
//! state area (the input's width and the state's size are constants of
//! the contract), refills the fuel, calls the entry point and stores its
//! status; a record whose status is already non-zero (`SKIP`, an invalid
//! input) is passed over.

use cranelift_codegen::Context;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, BlockArg, FuncRef, InstBuilder, MemFlagsData, Signature, UserFuncName, types,
};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module};
use runtime::budget::FUEL_STEP;
use runtime::data::Slot;
use runtime::native::NativeCtx;
use runtime::program::Program;

/// `(ctx, rows, n, states, statuses) -> status`.
pub fn batch_signature(module: &dyn Module) -> Signature {
    let mut sig = Signature::new(module.isa().default_call_conv());
    for _ in 0..5 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// Declares and defines the batch entry of `program`, which calls `entry`;
/// `state_words` is the size of one record's state area.
pub fn define(
    module: &mut dyn Module,
    program: &Program,
    entry: FuncId,
    state_words: usize,
) -> Result<FuncId, String> {
    let sig = batch_signature(module);
    let id = module
        .declare_function("batch", Linkage::Export, &sig)
        .map_err(|e| format!("cannot declare batch: {e}"))?;
    let mut context = module.make_context();
    context.func.signature = sig;
    context.func.name = UserFuncName::user(0, id.as_u32());
    let callee = module.declare_func_in_func(entry, &mut context.func);
    let row_bytes = (program.input_width() * std::mem::size_of::<Slot>()) as i64;
    let state_bytes = (state_words.max(1) * 8) as i64;
    build(&mut context, callee, row_bytes, state_bytes, module.isa().frontend_config());
    module.define_function(id, &mut context).map_err(|e| format!("cannot compile the batch entry: {e:?}"))?;
    module.clear_context(&mut context);
    Ok(id)
}

fn build(
    context: &mut Context,
    entry: FuncRef,
    row_bytes: i64,
    state_bytes: i64,
    config: TargetFrontendConfig,
) {
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut context.func, &mut fctx);
    let flags = MemFlagsData::trusted();
    let (start, header, body, run, next, done) = (
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
    );
    b.append_block_params_for_function_params(start);
    b.append_block_param(header, types::I64);
    b.switch_to_block(start);
    let params = b.block_params(start).to_vec();
    let (ctx, rows, n, states, statuses) = (params[0], params[1], params[2], params[3], params[4]);
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().jump(header, &[BlockArg::Value(zero)]);

    b.switch_to_block(header);
    let i = b.block_params(header)[0];
    let more = b.ins().icmp(IntCC::UnsignedLessThan, i, n);
    b.ins().brif(more, body, &[], done, &[]);

    b.switch_to_block(body);
    let offset = b.ins().imul_imm_s(i, 4);
    let status_at = b.ins().iadd(statuses, offset);
    let status = b.ins().load(types::I32, flags, status_at, 0);
    b.ins().brif(status, next, &[], run, &[]);

    b.switch_to_block(run);
    let input_offset = b.ins().imul_imm_s(i, row_bytes);
    let input = b.ins().iadd(rows, input_offset);
    b.ins().store(flags, input, ctx, NativeCtx::INPUT);
    let state_offset = b.ins().imul_imm_s(i, state_bytes);
    let state = b.ins().iadd(states, state_offset);
    b.ins().store(flags, state, ctx, NativeCtx::STATE);
    let fuel = b.ins().iconst(types::I64, FUEL_STEP);
    b.ins().store(flags, fuel, ctx, NativeCtx::FUEL);
    let call = b.ins().call(entry, &[ctx]);
    let result = b.inst_results(call)[0];
    b.ins().store(flags, result, status_at, 0);
    b.ins().jump(next, &[]);

    b.switch_to_block(next);
    let i = b.ins().iadd_imm_s(i, 1);
    b.ins().jump(header, &[BlockArg::Value(i)]);

    b.switch_to_block(done);
    let ok = b.ins().iconst(types::I32, 0);
    b.ins().return_(&[ok]);
    b.seal_all_blocks();
    b.finalize(config);
}
