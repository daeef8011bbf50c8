//! Criterion: one evaluation of each reference request, pre-validated
//! input to result structure, in native code.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};

fn eval_jit(c: &mut Criterion) {
    let engine = runtime::Engine::builder()
        .jit(runtime::Jit::On)
        .native(Arc::new(backend::Jit::with_verifier(false)))
        .build();
    let workload = benches::targets::Workload::new(
        benches::workload::TRANSFER_CONTRACT,
        benches::workload::TRANSFER_REQUESTS,
        &engine,
    )
    .expect("the reference workload loads");
    assert_eq!(workload.contract.native_status(), runtime::engine::NativeStatus::Native);
    for (i, line) in workload.lines.iter().enumerate() {
        let request = workload.contract.request(line).expect("a valid request");
        c.bench_function(&format!("eval_jit/transfer_{i}"), |b| {
            b.iter(|| workload.contract.evaluate(&request).expect("evaluates"))
        });
    }
}

criterion_group!(group, eval_jit);
criterion_main!(group);
