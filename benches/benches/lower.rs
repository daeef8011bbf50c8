//! Criterion: the checked IR to a sealed bundle (`ir::Bundle::new`: the
//! verifier, the canonical JSON form and its hash). The checker lowers as
//! it checks, so lowering proper is inside `check`; this is the rest of
//! the way to a bundle.

use criterion::{Criterion, criterion_group, criterion_main};

fn lower(c: &mut Criterion) {
    for (name, source) in benches::compile::bench_contracts() {
        let file = frontend::SourceFile::new(&name, &source);
        let ast = frontend::parse(&file, &mut Vec::new()).expect("parses");
        let contract = frontend::check::check(&file, &ast, &mut Vec::new()).expect("checks");
        c.bench_function(&format!("lower/{name}"), |b| {
            b.iter(|| ir::Bundle::new(contract.clone()).expect("seals"))
        });
    }
}

criterion_group!(group, lower);
criterion_main!(group);
