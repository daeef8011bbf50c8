//! Criterion: a prepared program to native code (the Cranelift JIT, every
//! function of the contract, including freeing the previous module).

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use runtime::native::NativeCompiler;

fn codegen(c: &mut Criterion) {
    let jit = backend::Jit::with_verifier(false);
    for (name, source) in benches::compile::bench_contracts() {
        let bundle = frontend::compile(&source).expect("compiles");
        let program = runtime::program::Program::new(Arc::new(bundle.contract().clone())).expect("prepares");
        c.bench_function(&format!("codegen/{name}"), |b| b.iter(|| jit.compile(&program).expect("compiles")));
    }
}

criterion_group!(group, codegen);
criterion_main!(group);
