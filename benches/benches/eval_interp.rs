//! Criterion: one evaluation of each reference request, pre-validated
//! input to result structure, interpreted.

use criterion::{Criterion, criterion_group, criterion_main};

fn eval_interp(c: &mut Criterion) {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    let workload = benches::targets::Workload::new(
        benches::workload::TRANSFER_CONTRACT,
        benches::workload::TRANSFER_REQUESTS,
        &engine,
    )
    .expect("the reference workload loads");
    for (i, line) in workload.lines.iter().enumerate() {
        let request = workload.contract.request(line).expect("a valid request");
        c.bench_function(&format!("eval_interp/transfer_{i}"), |b| {
            b.iter(|| workload.contract.evaluate(&request).expect("evaluates"))
        });
    }
}

criterion_group!(group, eval_interp);
criterion_main!(group);
