//! Criterion: a bundle file's bytes to a verified bundle
//! (`ir::Bundle::from_json`: decoding, verification, the hash).

use criterion::{Criterion, criterion_group, criterion_main};

fn bundle_load(c: &mut Criterion) {
    for (name, source) in benches::compile::bench_contracts() {
        let bytes = frontend::compile(&source).expect("compiles").to_json();
        c.bench_function(&format!("bundle_load/{name}"), |b| {
            b.iter(|| ir::Bundle::from_json(&bytes).expect("loads"))
        });
    }
}

criterion_group!(group, bundle_load);
criterion_main!(group);
